"""``make test-gpu`` on the GPU machine. It runs as written where only the engine's dependencies (NumPy, Numba,
SciPy, CuPy) and pytest are installed: no module errors for want of Django, msgspec, billiard or a test extra,
and the only gpu tests lost are those of modules skipped for a missing test extra. Where Django is installed
(``benchmarks/gpu_stack.sh`` installs it for the worker benchmarks) the web folders are not collected either."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What the GPU machine has: the engine's dependencies (CuPy's own ones included), pytest and what pytest needs.
BARE = {"numpy", "numba", "llvmlite", "scipy", "cupy", "cupy_backends", "cupyx", "fastrlock"}
BARE |= {"pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "pygments", "exceptiongroup", "tomli"}

# A sitecustomize that makes every other installed top-level module unimportable (None in sys.modules: an import
# raises ModuleNotFoundError, importlib.util.find_spec answers None), as if it were not installed.
SITECUSTOMIZE = f"""
import pkgutil, site, sys
_paths = [*site.getsitepackages(), site.getusersitepackages()]
for _m in pkgutil.iter_modules(_paths):
    if _m.name not in {sorted(BARE)!r} and _m.name not in sys.modules:
        sys.modules[_m.name] = None
"""

# the only modules that may skip as a whole, and why: a test extra or CuPy missing, the parallel reader's billiard,
# or networkit (communities: a CPU library with no GPU twin)
SKIP_REASON = re.compile(r"could not import '(hypothesis|networkx|networkit|cupy)'|billiard, which is not installed")


def _gpu_machine_env() -> dict[str, str]:
    """This environment less what the suite's own run sets (pytest's options, ``make test``'s demand for the
    services): the GPU machine has none of it."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "DJANGO_", "SPREADWATCH_"))}


def _bare_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = _gpu_machine_env()
    # no plugin is loaded by itself (none is installed there); --co: collect only, the GPU tests run on the GPU
    return env | {"PYTHONPATH": str(tmp_path), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": "--co"}


def _ids(stdout: str) -> set[str]:
    return {line for line in stdout.splitlines() if "::" in line and not line.startswith("SKIPPED")}


def test_make_test_gpu_runs_as_written_with_only_the_engines_dependencies(tmp_path):
    env = _bare_env(tmp_path)
    names = ("django", "msgspec", "billiard", "celery", "psycopg", "hypothesis", "networkx")
    probe = f"import importlib.util as u; print([m for m in {names!r} if u.find_spec(m)])"
    hidden = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
    assert hidden.stdout.strip() == "[]", hidden.stdout + hidden.stderr  # the bare machine is simulated

    out = subprocess.run(
        ["make", "-s", "test-gpu", f"PYTHON={sys.executable}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = out.stdout[-5000:] + out.stderr[-3000:]
    assert out.returncode == 0, log
    last = out.stdout.strip().splitlines()[-1]
    assert "error" not in last.lower() and "warning" not in last.lower(), log
    bare = _ids(out.stdout)
    assert bare and all(i.startswith("tests/compute/") for i in bare), log

    skipped = re.findall(r"^SKIPPED \[\d+\] (tests/\S+?\.py):\d+: (.*)$", out.stdout, re.M)
    assert all(SKIP_REASON.search(reason) for _, reason in skipped), skipped

    # with everything installed the same command collects more gpu tests only in the modules skipped above
    full_env = _gpu_machine_env() | {"PYTEST_ADDOPTS": "--co"}
    full = subprocess.run(
        ["make", "-s", "test-gpu", f"PYTHON={sys.executable}"],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert full.returncode == 0, full.stdout[-3000:] + full.stderr[-3000:]
    lost = _ids(full.stdout) - bare
    assert bare <= _ids(full.stdout)
    assert {i.split("::")[0] for i in lost} <= {path for path, _ in skipped}, sorted(lost)


def test_without_pytest_django_only_the_engines_tests_are_collected():
    """A GPU machine with Django installed (gpu_stack.sh) and no path given: the web folders are not collected."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "--co", "-p", "no:cacheprovider", "-p", "no:django"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert ids and all(line.startswith("tests/compute/") for line in ids), ids[:5]
    assert "error" not in out.stdout.lower().splitlines()[-1]
