"""A real Celery worker process, consuming from Redis, imports and computes an upload (no eager mode)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from monitor import services
from monitor.models import Collection
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

ROOT = Path(__file__).resolve().parents[2]


def _database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.mark.django_db(transaction=True)
def test_it_imports_and_computes_through_a_worker_on_redis(ws_a, alice, settings, _eager_celery, tmp_path):
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.fail("REDIS_URL is not set: run the suite with `make test` (scripts/with_services.py provides Redis)")
    if connection.vendor != "postgresql":
        pytest.fail("a worker process needs a database it can share: run with DATABASE_URL=postgres://...")
    app = _eager_celery
    app.conf.task_always_eager = False
    app.conf.broker_url = redis_url
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "SPREADWATCH_BACKEND": "cpu",
    }
    log = tmp_path / "worker.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "monitor", "worker", "-Q", "ingest,cpu,default", "--pool=solo",
             "--without-heartbeat", "--without-mingle", "--without-gossip", "--purge", "-l", "info",
             "-n", f"test-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.time() + 60
        while "ready." not in log.read_text():
            assert proc.poll() is None, f"the worker exited:\n{log.read_text()[-3000:]}"
            assert time.time() < deadline, f"the worker did not start:\n{log.read_text()[-3000:]}"
            time.sleep(0.2)
        c = services.collection_create(
            workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"], user=alice
        )
        deadline = time.time() + 90
        while True:
            c.refresh_from_db()
            if c.status in (Collection.Status.DONE, Collection.Status.FAILED):
                break
            assert time.time() < deadline, f"still {c.status} after 90 s:\n{log.read_text()[-3000:]}"
            time.sleep(0.3)
        assert c.status == Collection.Status.DONE, c.error
        assert total_by_name(ws_a) == EXPECTED_TOTAL
        text = log.read_text()
        assert "monitor.tasks.ingest_collection" in text and "monitor.tasks.compute_batch" in text
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
