"""The embedded default as ``make demo`` runs it, for the tests that must see it: SQLite in a data folder of its
own, no Redis and no broker, tasks run in background threads of the web process (``runserver`` with
``SPREADWATCH_EAGER_IN_BACKGROUND=1``).

The rest of the suite runs against PostgreSQL inside pytest-django; SQLite's one-writer lock only shows between
real connections of a real server, so this server is a separate process with its own settings, started once per
test session (``embedded_server``) and stopped at its end.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tarfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[1]
TWITTER16_SAMPLE = ROOT / "monitor" / "fixtures" / "sample" / "twitter16.tar.xz"
PASSWORD = "embedded-default-pw-1"
USERS = ("ana", "bob")
WORKSPACES = ("form1440", "form390", "api1", "api2", "claims")
# what the server process must not inherit from `make test`: it is the embedded default, not the services' stack
_SERVICE_VARS = (
    "DATABASE_URL",
    "REDIS_URL",
    "CELERY_BROKER_URL",
    "CELERY_RESULT_BACKEND",
    "SPREADWATCH_TEST_DATABASE",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
    "SPREADWATCH_REQUIRE_SERVICES",
)

_SETUP = """
import json
from django.contrib.auth import get_user_model
from monitor import services
from monitor.models import Membership, Workspace
User = get_user_model()
users = {name: User.objects.create_user(name, f"{name}@example.com", PASSWORD) for name in USERS}
for slug in WORKSPACES:
    ws = services.workspace_create(name=slug, slug=slug)
    for u in users.values():
        Membership.objects.get_or_create(user=u, workspace=ws)
_, key = services.api_token_create(user=users["ana"], name="embedded test")
print("TOKEN=" + key)
"""


def twitter16_zip(dest: Path) -> Path:
    """The bundled Twitter16 sample (818 cascade trees and their labels) as a zip, the way an analyst would
    re-pack the tarball to upload it; returns its path."""
    out = dest / "twitter16.zip"
    if out.exists():
        return out
    with tarfile.open(TWITTER16_SAMPLE, "r:xz") as tar, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for member in tar.getmembers():
            if member.isfile():
                z.writestr(member.name, tar.extractfile(member).read())
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class EmbeddedServer:
    """A ``runserver`` on the embedded default, its data folder and what the tests log in with."""

    data_dir: Path
    url: str = ""
    token: str = ""
    proc: subprocess.Popen | None = None
    log_path: Path = field(init=False)

    def __post_init__(self):
        self.log_path = self.data_dir / "server.log"

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _SERVICE_VARS}
        env.update(
            SPREADWATCH_DATA_DIR=str(self.data_dir),
            SPREADWATCH_EAGER_IN_BACKGROUND="1",
            DJANGO_SETTINGS_MODULE="monitor.settings",
            PYTHONUNBUFFERED="1",
        )
        return env

    def manage(self, *args: str, stdin: str | None = None, timeout: float = 300) -> str:
        proc = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if proc.returncode:
            raise RuntimeError(f"manage.py {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc.stdout

    def start(self) -> EmbeddedServer:
        """Migrate a new data folder, create the users, workspaces and token, and serve."""
        self.manage("migrate", "--noinput", "-v0")
        self.manage("collectstatic", "--noinput", "-v0")
        head = f"PASSWORD = {PASSWORD!r}\nUSERS = {USERS!r}\nWORKSPACES = {WORKSPACES!r}\n"
        out = self.manage("shell", stdin=head + _SETUP)
        self.token = next(line[6:] for line in out.splitlines() if line.startswith("TOKEN="))
        return self.serve()

    def kill(self) -> None:
        """Stop the server as a power cut or ``kill -9`` would: no clean-up of any kind."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def serve(self) -> EmbeddedServer:
        """``runserver`` on the data folder as it is (``make serve``), on a new port."""
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=self.env,
            stdout=self.log_path.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the embedded server exited: {self.log()}")
            try:
                if requests.get(self.url + "/login/", timeout=5).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"the embedded server did not answer in 60 s: {self.log()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log(self, tail: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-tail:]
        except OSError:
            return "(no log)"

    def api(self, method: str, path: str, **kw) -> requests.Response:
        headers = {"Authorization": f"Token {self.token}", **kw.pop("headers", {})}
        url = self.url + "/api/v1" + path
        return requests.request(method, url, headers=headers, timeout=kw.pop("timeout", 600), **kw)

    def collection(self, ws: str, pk: int) -> dict:
        r = self.api("GET", f"/workspaces/{ws}/collections/{pk}/")
        r.raise_for_status()
        return r.json()

    def wait_collection(self, ws: str, pk: int, timeout: float = 600) -> dict:
        """The collection's API answer once its import (and compute) ended, whichever way."""
        deadline = time.monotonic() + timeout
        while True:
            c = self.collection(ws, pk)
            if c["status"] not in ("queued", "ingesting", "computing"):
                return c
            if time.monotonic() > deadline:
                raise AssertionError(f"collection {pk} still {c['status']} after {timeout} s: {self.log()}")
            time.sleep(1)


class LoginSession:
    """A second analyst on the site: logs in with the form (CSRF and all) and reloads pages."""

    def __init__(self, server: EmbeddedServer, username: str, timeout: float = 600):
        self.server, self.username, self.timeout = server, username, timeout
        self.session = requests.Session()

    def login(self) -> tuple[int, float]:
        """Log in afresh; (status of the answer after the redirect, seconds it took)."""
        self.session = requests.Session()
        t = time.monotonic()
        form = self.session.get(self.server.url + "/login/", timeout=self.timeout)
        token = self.session.cookies.get("csrftoken") or _csrf_from(form.text)
        r = self.session.post(
            self.server.url + "/login/",
            data={"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": token},
            headers={"Referer": self.server.url + "/login/"},
            timeout=self.timeout,
        )
        ok = r.status_code == 200 and "/login/" not in r.url
        return (r.status_code if ok else 401), time.monotonic() - t

    def get(self, path: str) -> int:
        return self.session.get(self.server.url + path, timeout=self.timeout).status_code


def _csrf_from(html: str) -> str:
    marker = 'name="csrfmiddlewaretoken" value="'
    i = html.index(marker) + len(marker)
    return html[i : html.index('"', i)]


@pytest.fixture(scope="session")
def embedded_server(tmp_path_factory) -> EmbeddedServer:
    """One embedded-default server for the session's tests that need it (see the module's docstring)."""
    server = EmbeddedServer(tmp_path_factory.mktemp("embedded-default"))
    try:
        yield server.start()
    finally:
        server.stop()


def upload_via_api(server: EmbeddedServer, ws: str, path: Path, **fields) -> dict:
    with path.open("rb") as fh:
        r = server.api("POST", f"/workspaces/{ws}/collections/", files={"files": (path.name, fh)}, data=fields)
    assert r.status_code in (201, 202), f"upload to {ws}: {r.status_code} {r.text[:500]}"
    return r.json()
