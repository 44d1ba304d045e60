# Spreadwatch: the two commands a fresh machine needs are `make demo` (later issue) and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: test test-slow test-gpu lint bench venv clean

$(VENV)/.installed-test: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[dev]"
	touch $@

venv: $(VENV)/.installed-test

## The whole test suite (what CI runs). GPU tests skip with a reason where CuPy sees no GPU.
test: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -m "not slow" -q

## Full-size preset checks (minutes, tens of GiB of disk-free memory): run by hand before a release.
test-slow: $(VENV)/.installed-test
	$(PY) -m pytest -m slow -q

## On the GPU machine: the gpu-marked tests.
test-gpu:
	$(PYTHON) -m pytest -m gpu -q -p no:cacheprovider

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
