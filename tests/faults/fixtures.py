"""Fixtures of the fault tests: the generated collection, a workspace holding it, and the ``faults`` toolbox
(a throwaway Redis that this process publishes to, and workers started on the test database)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest
from django.db import connection

from . import harness

BATCH_NODES = 100  # ~4 cascades per batch: the generated collection makes 10 batches


@pytest.fixture(scope="session")
def collection_files(tmp_path_factory) -> list[Path]:
    """A generated Twitter-like collection: 40 cascades, 1,000 retweets, and the follows among its participants
    (all a batch reads of the follower graph)."""
    from compute.generators import generate

    folder = tmp_path_factory.mktemp("collection")
    generate("twitter", folder / "full", retweets=1000, fmt="csv", seed=3)
    with open(folder / "full" / "tweets.csv") as fh:
        users = {row["user_id"] for row in csv.DictReader(fh)}
    with open(folder / "full" / "follows.csv") as src, open(folder / "follows.csv", "w") as dst:
        dst.write(src.readline())
        for line in src:
            a, b = line.rstrip("\n").split(",")
            if a in users and b in users:
                dst.write(line)
    (folder / "full" / "tweets.csv").rename(folder / "tweets.csv")
    return [folder / "tweets.csv", folder / "follows.csv"]


def _import_here(import_files, app, ws, files):
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True  # in this process, whatever broker the test uses
    try:
        c = import_files(ws, files, compute=False)
    finally:
        app.conf.task_always_eager = eager
    assert c.status == c.Status.DONE, c.error
    return ws


@pytest.fixture
def stored(ws_a, collection_files, import_files, settings, _eager_celery):
    """Workspace A with the generated collection imported (in this process) and not computed yet; runs started
    from here plan batches of ``BATCH_NODES`` participants."""
    settings.SPREADWATCH_BATCH_NODES = BATCH_NODES
    return _import_here(import_files, _eager_celery, ws_a, collection_files)


@pytest.fixture
def thesis(ws_a, import_files, _eager_celery):
    """Workspace A with the thesis example imported (in this process) and not computed yet."""
    from tests.webapp import THESIS

    return _import_here(import_files, _eager_celery, ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])


def database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.fixture
def faults(request, tmp_path, settings, _eager_celery):
    """A throwaway Redis as broker and cache (with its append-only file unless the test parametrizes
    ``{"appendonly": False}``), this process publishing to it, and a factory of workers on the test database.
    Everything started is stopped at the end."""
    if connection.vendor != "postgresql":
        pytest.fail("the fault tests need PostgreSQL shared with worker processes: run under scripts/with_services.py")
    app = _eager_celery
    started: list[harness.Worker] = []
    options = getattr(request, "param", {})
    with harness.redis_server(appendonly=options.get("appendonly", True)) as redis:
        marks = tmp_path / "marks"
        marks.mkdir()

        class Faults:
            dir = marks
            broker = redis
            workers = started
            celery = app

            @staticmethod
            def worker(
                name: str, *, queues: str = "cpu", pool: str = "solo", db_url: str | None = None, **env: str
            ) -> harness.Worker:
                e = {
                    **os.environ,
                    "DATABASE_URL": db_url or database_url(),
                    "CELERY_BROKER_URL": redis.url,
                    "REDIS_URL": redis.cache_url,
                    "CELERY_TASK_ALWAYS_EAGER": "0",
                    "MEDIA_ROOT": str(settings.MEDIA_ROOT),
                    "SPREADWATCH_BACKEND": "cpu",
                    "FAULTS_DIR": str(marks),
                    **env,
                }
                w = harness.Worker(name, tmp_path, e, queues, pool)
                started.append(w)
                return w

            @staticmethod
            def beat(name: str = "beat", **env: str) -> harness.Beat:
                """``celery beat`` on this Redis, with the environment of :meth:`worker` plus ``env``."""
                e = {
                    **os.environ,
                    "DATABASE_URL": database_url(),
                    "CELERY_BROKER_URL": redis.url,
                    "REDIS_URL": redis.cache_url,
                    "CELERY_TASK_ALWAYS_EAGER": "0",
                    "FAULTS_DIR": str(marks),
                    **env,
                }
                b = harness.Beat(name, tmp_path, e)
                started.append(b)
                return b

            @staticmethod
            def release(marker: str = "") -> None:
                """Let every paused batch go on, or only the one paused at ``marker``."""
                (marks / (f"release-{marker}" if marker else "release")).touch()

            @staticmethod
            def marker(name: str) -> bool:
                return (marks / name).exists()

        old = app.conf.get("broker_write_url"), app.conf.task_always_eager
        _publish_to(app, redis.url)
        app.conf.task_always_eager = False
        try:
            yield Faults
        finally:
            (marks / "release").touch()  # a test that failed may have left a worker paused
            harness.stop_all(started)
            _publish_to(app, old[0])
            app.conf.task_always_eager = old[1]


def _publish_to(app, url: str | None) -> None:
    """Send this process's tasks to ``url`` (``None``: back to the configured broker). ``broker_write_url``, not
    ``broker_url``: Celery reads the latter from the CELERY_BROKER_URL variable before its configuration. The
    pooled connections are dropped (kombu keeps them per URL, process-wide)."""
    from kombu import pools

    pools.reset()
    app._pool = None
    app.amqp._producer_pool = None
    app.conf.broker_write_url = url
