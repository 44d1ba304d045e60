"""The health check, and the production settings passing ``manage.py check --deploy`` without a warning."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from monitor import health

ROOT = Path(__file__).resolve().parents[2]


def test_healthz_answers_ok_without_login(client, db):
    r = client.get("/healthz")
    assert r.status_code == 200
    # stream: the live streams with anything queued, waiting or dead (none here; tests/monitor/test_health_stream.py)
    assert r.json() == {"status": "ok", "checks": {"database": "ok", "cache": "ok"}, "stream": {}}
    assert "no-cache" in r["Cache-Control"] or "max-age=0" in r["Cache-Control"]


@pytest.mark.parametrize("broken", ["database", "cache"])
def test_healthz_names_what_failed(client, db, monkeypatch, broken):
    def boom():
        raise ConnectionError("secret-host:5432 refused")

    monkeypatch.setitem(health.CHECKS, broken, boom)
    r = client.get("/healthz")
    assert r.status_code == 503
    body = r.json()
    assert body["status"] == "fail" and body["failed"] == [broken]
    assert body["checks"][broken] == "fail: ConnectionError" and "secret-host" not in r.content.decode()


def test_security_headers_are_always_set(client, db):
    r = client.get("/login/")
    assert r["X-Content-Type-Options"] == "nosniff"
    assert r["Referrer-Policy"] == "same-origin"
    assert r["X-Frame-Options"] == "DENY"


def _production_env(tmp_path, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPREADWATCH_", "SECURE_", "CELERY_"))}
    for k in ("DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_SETTINGS_MODULE"):
        env.pop(k, None)
    env.update(
        DJANGO_SETTINGS_MODULE="monitor.settings",
        DEBUG="0",
        SPREADWATCH_HTTPS="1",
        SECRET_KEY=secrets.token_urlsafe(50)[:50],
        ALLOWED_HOSTS="spreadwatch.example.org",
        DATABASE_URL=os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/spreadwatch",
        REDIS_URL=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/15",
        CELERY_BROKER_URL=os.environ.get("CELERY_BROKER_URL")
        or os.environ.get("REDIS_URL")
        or "redis://127.0.0.1:6379/15",
        SPREADWATCH_DATA_DIR=str(tmp_path / "data"),
        **extra,
    )
    return env


def _check(env):
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_the_deploy_check(tmp_path):
    r = _check(_production_env(tmp_path))
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "WARNINGS" not in out and "issues" not in out.replace("no issues", ""), out


def test_behind_a_proxy_the_forwarded_proto_is_trusted(tmp_path):
    env = _production_env(tmp_path, SPREADWATCH_BEHIND_PROXY="1")
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SECURE_PROXY_SSL_HEADER, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD)"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.split("\n")[0] == "('HTTP_X_FORWARDED_PROTO', 'https') True True True 31536000 True False", (
        r.stdout + r.stderr
    )


def test_without_https_the_deploy_check_warns(tmp_path):
    env = _production_env(tmp_path)
    env.pop("SPREADWATCH_HTTPS")
    r = _check(env)
    assert r.returncode != 0 and "security.W008" in r.stdout + r.stderr
