"""Settings from the environment and the system checks that warn about dangerous combinations."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from monitor.checks import spreadwatch_config
from monitor.env import env_bool, env_choice, env_int


def _ids() -> set[str]:
    return {w.id for w in spreadwatch_config(None)}


def test_it_refuses_a_malformed_boolean(monkeypatch):
    monkeypatch.setenv("DEBUG", "flase")
    with pytest.raises(ImproperlyConfigured, match="DEBUG='flase'"):
        env_bool("DEBUG")


def test_it_names_the_variable_of_a_bad_integer_or_choice(monkeypatch):
    monkeypatch.setenv("SPREADWATCH_BATCH_NODES", "lots")
    with pytest.raises(ImproperlyConfigured, match="SPREADWATCH_BATCH_NODES"):
        env_int("SPREADWATCH_BATCH_NODES", 1)
    monkeypatch.setenv("SPREADWATCH_BACKEND", "tpu")
    with pytest.raises(ImproperlyConfigured, match="want one of auto, cpu, gpu"):
        env_choice("SPREADWATCH_BACKEND", "auto", ("auto", "cpu", "gpu"))


def test_it_warns_about_the_gpu_backend_without_cupy(settings, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "cupy" else real(name, *a))
    settings.SPREADWATCH_BACKEND = "gpu"
    assert "spreadwatch.W001" in _ids()


def test_it_warns_about_sqlite_with_real_workers(settings, monkeypatch):
    monkeypatch.setitem(settings.DATABASES["default"], "ENGINE", "django.db.backends.sqlite3")
    settings.SPREADWATCH_HAS_BROKER = True
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assert "spreadwatch.W003" in _ids()


def test_it_warns_about_a_gpu_queue_with_the_cpu_backend(settings):
    settings.SPREADWATCH_COMPUTE_QUEUE = "gpu"
    settings.SPREADWATCH_BACKEND = "cpu"
    assert "spreadwatch.W002" in _ids()


def test_it_is_quiet_for_the_default_demo_setup(settings, monkeypatch):
    monkeypatch.setitem(settings.DATABASES["default"], "ENGINE", "django.db.backends.sqlite3")
    settings.SPREADWATCH_HAS_BROKER = False
    settings.SPREADWATCH_BACKEND = "auto"
    settings.SPREADWATCH_COMPUTE_QUEUE = "cpu"
    assert _ids() == set()


def test_postgres_connections_start_with_jit_off_unless_left_to_the_server():
    from monitor.settings import postgres_options

    assert postgres_options({}, jit="off") == {"options": "-c jit=off"}
    # options the URL gave are kept, and the other keys as they are
    given = {"options": "-c search_path=app", "sslmode": "require"}
    assert postgres_options(given, jit="off") == {"options": "-c search_path=app -c jit=off", "sslmode": "require"}
    assert postgres_options(given, jit="server") is given


@pytest.mark.django_db
def test_the_app_s_postgresql_connection_runs_without_jit():
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's setting")
    with connection.cursor() as cur:
        cur.execute("SHOW jit")
        assert cur.fetchone()[0] == "off"
