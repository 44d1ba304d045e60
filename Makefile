# Spreadwatch. A fresh machine needs two commands: `make demo` (the app with sample data on
# http://127.0.0.1:8000, or HOST=addr:port) and `make test` (the whole suite against real PostgreSQL and Redis).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
HOST ?= 127.0.0.1:8000

.PHONY: demo serve test test-slow test-gpu lint audit bench-web venv clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[dev]"
	touch $@ $(VENV)/.installed

venv: $(VENV)/.installed-test

## The main job: install, migrate (SQLite in var/ unless DATABASE_URL says otherwise), create the demo analyst,
## import + compute the bundled samples, serve the dashboard; the login comes last, after the server's start-up
## lines. Ctrl-C stops the server; run again to serve again.
demo: $(VENV)/.installed
	@# the engine's CPU kernels are compiled (numba, about 25 s on 2 cores, cached on disk after) while the
	@# database is migrated, so the demo's first compute starts at once (compute/precompile.py)
	$(PY) -m compute.precompile & jit=$$!; \
	$(PY) manage.py migrate --noinput -v0 && $(PY) manage.py collectstatic --noinput -v0; rc=$$?; \
	wait $$jit || echo "make demo: compiling the kernels ahead failed; the first compute will compile them"; exit $$rc
	$(PY) manage.py demo_setup --host $(HOST) --login-later
	@# demo_serve is runserver printing the demo login (and how to be an admin) after its own start-up lines
	SPREADWATCH_EAGER_IN_BACKGROUND=1 $(PY) manage.py demo_serve $(HOST)

## Serve again without re-importing.
serve: $(VENV)/.installed
	$(PY) manage.py migrate --noinput -v0
	$(PY) manage.py collectstatic --noinput -v0
	SPREADWATCH_EAGER_IN_BACKGROUND=1 $(PY) manage.py demo_serve $(HOST)

## The whole test suite (what CI runs) against real PostgreSQL and Redis: DATABASE_URL / REDIS_URL if set, else
## the local default ports, else throwaway instances from installed binaries, else a clear error (exit 3).
## GPU tests skip with a reason where CuPy sees no GPU.
test: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(PY) scripts/audit_deps.py
	@# the browser tests (tests/browser) drive Debian's Chromium through Playwright: install it when missing
	@command -v chromium >/dev/null || [ "$$(id -u)" = 0 ] || { echo "make test: the browser tests need Chromium (/usr/bin/chromium) and only root can install it: run 'apt-get install chromium' as root, or run make test as root" >&2; exit 1; }
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)
	$(PY) scripts/with_services.py -- $(PY) -m pytest -m "not slow" -q

## The dependency audit alone (pip-audit; fails on a known vulnerability, and with --strict on an incomplete audit).
audit: $(VENV)/.installed-test
	$(PY) scripts/audit_deps.py --strict

## The minutes-long checks marked `slow` (full-size presets: tens of GiB of memory), against the same services.
test-slow: $(VENV)/.installed-test
	$(PY) scripts/with_services.py -- $(PY) -m pytest -m slow -q

## On the GPU machine: the gpu-marked tests, which are all under tests/compute (the engine's). They need only the
## engine's dependencies (NumPy, Numba, SciPy, CuPy) and pytest; a module that needs a test extra (hypothesis,
## networkx) is skipped where it is missing, and each skip (no GPU, a missing extra) prints its reason. Without
## pytest-django its two settings in pyproject.toml are unknown options: that warning is silenced.
test-gpu:
	$(PYTHON) -m pytest -m gpu -q -rfEs -p no:cacheprovider -p no:django \
	  -W "ignore:Unknown config option:pytest.PytestConfigWarning" tests/compute

## The web benchmark of issue 4: 1M retweets (v1.1 JSONL) imported and computed on PostgreSQL.
bench-web: $(VENV)/.installed-test
	@# the kernels compiled first, as `make demo` does while it migrates: the benchmark times an upload, not
	@# numba's one-time compile of a fresh checkout (compute/precompile.py; cached on disk after)
	$(PY) -m compute.precompile
	$(PY) scripts/with_services.py -- $(PY) benchmarks/web_bench.py

lint: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
