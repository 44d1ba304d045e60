"""``make demo``'s commands: the login (address, demo analyst, how to be an admin) comes last, after the server's
start-up lines, where an analyst still sees it once the logs have scrolled by. Before, ``demo_setup`` printed it
and ``runserver``'s start-up lines pushed it off the screen, and nothing said how to open /admin/."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from monitor.management.commands.demo_setup import admin_names, login_banner, read_login, write_login

ROOT = Path(__file__).resolve().parents[2]


def _serve_until_banner(data_dir: Path, timeout: float = 120.0) -> list[str]:
    """The lines ``demo_serve`` prints until its banner's last line (the server is then stopped)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SPREADWATCH_DATA_DIR")}
    env.update(SPREADWATCH_DATA_DIR=str(data_dir), PYTHONUNBUFFERED="1", SPREADWATCH_EAGER_IN_BACKGROUND="1")
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "demo_serve", "--noreload", "127.0.0.1:0"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:  # a thread: the server never closes its output, and readline() must not block the test
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and not any(line.startswith("  admin ") for line in seen):
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                continue
            if line is None:
                break
            seen.append(line)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return seen


def test_demo_serve_prints_the_login_after_the_servers_start_up_lines(tmp_path, settings):
    settings.DATA_DIR = tmp_path
    write_login("analyst", "s3cret-pass")
    lines = _serve_until_banner(tmp_path)
    text = "\n".join(lines)
    assert any(line.startswith("  admin ") for line in lines), text
    quit_at = next(i for i, line in enumerate(lines) if line.startswith("Quit the server with"))
    ready_at = next(i for i, line in enumerate(lines) if "Spreadwatch demo is ready." in line)
    assert quit_at < ready_at, text
    banner = lines[ready_at:]
    assert banner[1].startswith("  open     http://127.0.0.1:") and banner[1].endswith("/")
    assert "  user     analyst" in banner and "  password s3cret-pass" in banner
    assert "manage.py createsuperuser" in banner[-1]  # a fresh data folder has no admin yet
    assert (tmp_path / "demo-login.json").stat().st_mode & 0o077 == 0  # the owner's alone


def test_the_login_file_round_trips_and_a_missing_one_says_how_to_get_one(tmp_path, settings):
    settings.DATA_DIR = tmp_path
    assert read_login() is None
    lines = login_banner("http://127.0.0.1:8000/", None, [])
    assert "make demo" in lines[2]
    (tmp_path / "demo-login.json").write_text("{not json")
    assert read_login() is None
    write_login("analyst", "pw")
    assert read_login() == {"username": "analyst", "password": "pw"}


@pytest.mark.django_db
def test_the_banner_names_the_admins_when_there_are_some():
    get_user_model().objects.create_superuser("root", "root@example.com", "x")
    lines = login_banner("http://127.0.0.1:8000/", {"username": "analyst", "password": "pw"}, admin_names())
    assert lines[-1] == "  admin    http://127.0.0.1:8000/admin/ as root"


def test_make_demo_serves_with_the_login_last():
    makefile = (ROOT / "Makefile").read_text()
    demo = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    steps = [line.strip() for line in demo.splitlines() if line.startswith("\t") and not line.strip().startswith("@#")]
    assert "demo_setup --host $(HOST) --login-later" in steps[-2]
    assert steps[-1].endswith("manage.py demo_serve $(HOST)")
    serve = makefile.split("\nserve:", 1)[1].split("\n\n", 1)[0]
    assert serve.rstrip().endswith("manage.py demo_serve $(HOST)")
