"""The suite's root: fixtures every folder shares, and the web application's plugin (``tests/webapp.py``).

Where Django is not installed (the GPU machine: ``make test-gpu``) the web folders are not collected, so the
engine's tests, GPU ones included, run there as written.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.register_assert_rewrite("tests.webapp")  # a plugin's asserts are rewritten only if it is named first

from tests.webapp import WEB_TESTS  # noqa: E402

DATA = Path(__file__).parent / "data"

pytest_plugins = ["tests.webapp"]

if importlib.util.find_spec("django") is None:
    collect_ignore = [*WEB_TESTS, "scripts"]
else:
    # a server on the embedded default (SQLite, tasks in the web process), one per session: tests/embedded.py
    from tests.embedded import embedded_server  # noqa: F401


def pytest_ignore_collect(collection_path, config):
    """Without pytest-django (``-p no:django``, as ``make test-gpu`` runs) the web folders are not collected
    either: a GPU machine that has Django installed (``benchmarks/gpu_stack.sh`` installs it) still runs the
    engine's tests as written instead of failing to import the web tests."""
    if config.pluginmanager.has_plugin("django"):
        return None
    root = Path(__file__).parent
    if collection_path.parent == root and collection_path.name in (*WEB_TESTS, "scripts"):
        return True
    return None


@pytest.fixture
def data_dir() -> Path:
    return DATA


def _gpu_skip_reason() -> str | None:
    from compute.backends import gpu_unavailable_reason

    reason = gpu_unavailable_reason()
    if reason:
        return f"no GPU here: {reason}"
    try:
        import compute.gpu  # noqa: F401
    except ImportError as exc:
        return f"no GPU backend in this build ({exc})"
    return None


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def backend(request) -> str:
    """Every test that takes ``backend`` runs on the CPU reference and, where a GPU is, on the GPU twin."""
    if request.param == "gpu":
        reason = _gpu_skip_reason()
        if reason:
            pytest.skip(reason)
    return request.param


def pytest_sessionstart(session):
    """Under ``make test`` the web tests must see PostgreSQL and Redis, or the run stops (never a silent skip)."""
    import os

    if os.environ.get("SPREADWATCH_REQUIRE_SERVICES") == "1":
        from tests.webapp import require_services

        require_services()
