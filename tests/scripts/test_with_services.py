"""scripts/with_services.py: the wrapper `make test` runs the suite under; no Django, no real services needed.

Only TCP reachability is checked for URLs given in the environment, so listening sockets opened here stand in
for PostgreSQL and Redis.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "with_services.py"
SERVICE_VARS = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "SPREADWATCH_REQUIRE_SERVICES")
PRINT_ENV_CHILD = [
    sys.executable,
    "-c",
    f"import json, os; print(json.dumps({{k: os.environ.get(k) for k in {list(SERVICE_VARS)!r}}}))",
]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A socket that accepts TCP connections (the kernel completes them from the backlog; nobody needs to accept)."""
    sock = socket.create_server(("127.0.0.1", 0))
    yield sock
    sock.close()


@pytest.fixture
def services(listener: socket.socket) -> Iterator[dict[str, str]]:
    """DATABASE_URL and REDIS_URL pointing at reachable listeners, in a clean copy of the environment."""
    redis_sock = socket.create_server(("127.0.0.1", 0))
    env = {k: v for k, v in os.environ.items() if k not in SERVICE_VARS}
    env["DATABASE_URL"] = f"postgres://postgres@127.0.0.1:{listener.getsockname()[1]}/spreadwatch"
    env["REDIS_URL"] = f"redis://127.0.0.1:{redis_sock.getsockname()[1]}/0"
    yield env
    redis_sock.close()


def closed_port() -> int:
    # bind then close: the port was free a moment ago and nothing listens on it now
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_script(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=30, check=False
    )


@pytest.fixture
def ws(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The script as a module, fresh for each test so monkeypatched state can't leak between tests."""
    spec = importlib.util.spec_from_file_location("with_services", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses look their module up in sys.modules while the class body is processed
    monkeypatch.setitem(sys.modules, "with_services", module)
    spec.loader.exec_module(module)
    return module


def test_it_fails_with_exit_3_naming_an_unreachable_database_url(services: dict[str, str], tmp_path: Path) -> None:
    url = f"postgres://postgres@127.0.0.1:{closed_port()}/spreadwatch"
    marker = tmp_path / "ran"
    done = run_script(
        ["--", sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"], {**services, "DATABASE_URL": url}
    )
    assert done.returncode == 3, done.stderr
    assert url in done.stderr
    assert "PostgreSQL is missing" in done.stderr
    assert not marker.exists(), "the command must not run when a service is missing"


def test_it_fails_with_exit_3_naming_an_unreachable_redis_url(services: dict[str, str]) -> None:
    url = f"redis://127.0.0.1:{closed_port()}/0"
    done = run_script(["--", sys.executable, "-c", "pass"], {**services, "REDIS_URL": url})
    assert done.returncode == 3, done.stderr
    assert url in done.stderr
    assert "REDIS_URL=redis://host:port/0" in done.stderr  # says how to provide it


def test_it_exports_the_service_urls_to_the_child(services: dict[str, str]) -> None:
    done = run_script(["--", *PRINT_ENV_CHILD], services)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {
        "DATABASE_URL": services["DATABASE_URL"],
        "REDIS_URL": services["REDIS_URL"],
        "CELERY_BROKER_URL": services["REDIS_URL"],
        "SPREADWATCH_REQUIRE_SERVICES": "1",
    }
    assert f"PostgreSQL at {services['DATABASE_URL']} (from DATABASE_URL)" in done.stderr
    assert f"Redis at {services['REDIS_URL']} (from REDIS_URL)" in done.stderr


def test_it_keeps_an_explicit_celery_broker_url(services: dict[str, str]) -> None:
    broker = "amqp://guest@127.0.0.1:5672//"
    done = run_script(["--", *PRINT_ENV_CHILD], {**services, "CELERY_BROKER_URL": broker})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["CELERY_BROKER_URL"] == broker


def test_it_passes_the_childs_exit_status_through(services: dict[str, str]) -> None:
    done = run_script(["--", sys.executable, "-c", "import sys; sys.exit(7)"], services)
    assert done.returncode == 7, done.stderr


def test_it_prints_shell_exports_with_print_env(services: dict[str, str]) -> None:
    done = run_script(["--print-env"], services)
    assert done.returncode == 0, done.stderr
    assert f"export DATABASE_URL={services['DATABASE_URL']}" in done.stdout.splitlines()
    assert "export SPREADWATCH_REQUIRE_SERVICES=1" in done.stdout.splitlines()
    # what eval would see: the same values back from a shell
    shell = subprocess.run(
        ["sh", "-c", done.stdout + 'printf %s "$REDIS_URL"'], capture_output=True, text=True, check=True
    )
    assert shell.stdout == services["REDIS_URL"]


def test_it_reports_every_missing_service_and_how_to_provide_it(
    ws: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # in-process, with nothing reachable and no binaries found, so the outcome doesn't depend on this machine
    for var in SERVICE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(ws, "_tcp_ok", lambda *a, **k: False)
    monkeypatch.setattr(ws, "_find_pg_binaries", lambda: None)
    monkeypatch.setattr(ws.shutil, "which", lambda name: None)
    ran = []
    monkeypatch.setattr(ws, "_run", lambda *a: ran.append(a) or 0)

    assert ws.main(["--", "true"]) == 3
    err = capsys.readouterr().err
    assert "PostgreSQL is missing" in err and "Redis is missing" in err
    assert "127.0.0.1:5432" in err and "127.0.0.1:6379" in err
    assert "DATABASE_URL=postgres://user@host:port/db" in err
    assert "redis-server" in err
    assert ran == []


def test_it_refuses_throwaway_instances_with_print_env(
    ws: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for var in SERVICE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(ws, "_tcp_ok", lambda *a, **k: False)
    monkeypatch.setattr(ws, "_find_pg_binaries", lambda: ("/bin/initdb", "/bin/pg_ctl"))
    monkeypatch.setattr(ws.shutil, "which", lambda name: f"/bin/{name}")

    assert ws.main(["--print-env"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "refused with --print-env" in captured.err


def test_it_skips_the_default_ports_when_asked(ws: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("WITH_SERVICES_SKIP_DEFAULT_PORTS", "1")
    monkeypatch.setattr(ws, "_tcp_ok", lambda *a, **k: True)
    monkeypatch.setattr(ws, "_find_pg_binaries", lambda: None)
    plan = ws.plan_postgres(allow_throwaway=True)
    assert plan.url is None
    assert any("skipped" in t for t in plan.tried)


def test_it_masks_passwords_in_what_it_prints(ws: ModuleType) -> None:
    assert ws._redact("postgres://u:secret@h:5432/db") == "postgres://u:***@h:5432/db"
    assert ws._redact("redis://h:6379/0") == "redis://h:6379/0"


def test_it_stops_the_suite_when_make_test_finds_no_postgresql(tmp_path):
    """Under ``make test`` (SPREADWATCH_REQUIRE_SERVICES=1) a run that would fall back to SQLite stops with an
    error instead of quietly testing something else."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SPREADWATCH_TEST_DATABASE")}
    env.update(SPREADWATCH_REQUIRE_SERVICES="1", SPREADWATCH_DATA_DIR=str(tmp_path), REDIS_URL="")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/monitor/test_settings.py"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 3, r.stdout[-2000:] + r.stderr[-2000:]
    assert "not PostgreSQL" in r.stdout + r.stderr
