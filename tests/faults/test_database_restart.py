"""PostgreSQL restarted during an import (on a throwaway cluster this test owns): the import is never half-stored.
Restarted while the import's transaction is open, the import fails cleanly (nothing stored, the error says why)
and the analyst's retry resumes it; if the database is still down when the import notices, the task retries
itself until it is back. Either way the end state equals an import without the fault."""

from __future__ import annotations

import contextlib

import dj_database_url
import psycopg
import pytest
from django.core.management import call_command
from django.db import connection

from monitor import services
from monitor.models import Account, CascadeInfluence, Collection, DailyInfluence, Follow, Retweet, Tweet
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

from .harness import Postgres, wait_for


@pytest.fixture(scope="module")
def postgres():
    pg = Postgres()
    try:
        pg.init()
        pg.start()
        yield pg
    finally:
        pg.close()


@contextlib.contextmanager
def using_database(url: str, django_db_blocker):
    """This process's ORM on ``url`` instead of the test database, for the length of the block."""
    saved = dict(connection.settings_dict)
    target = dj_database_url.parse(url)
    connection.close()
    connection.settings_dict.update({k: target[k] for k in ("NAME", "USER", "PASSWORD", "HOST", "PORT")})
    try:
        with django_db_blocker.unblock():
            yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


def _counts(ws) -> dict[str, int]:
    return {
        "accounts": Account.objects.filter(workspace=ws).count(),
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "retweets": Retweet.objects.filter(tweet__workspace=ws).count(),
        "follows": Follow.objects.filter(workspace=ws).count(),
        "influence": CascadeInfluence.objects.filter(tweet__workspace=ws).count(),
        "daily": DailyInfluence.objects.filter(workspace=ws).count(),
    }


def _status(c: Collection) -> str:
    connection.close()  # the test's own connection may have died with the server
    return Collection.objects.get(pk=c.pk).status


def test_it_never_half_stores_an_import_when_postgresql_restarts_and_resumes_or_retries_it(
    postgres, faults, django_db_blocker, _eager_celery
):
    url = postgres.url("faults_ingest")
    with psycopg.connect(postgres.url("postgres"), autocommit=True) as pg:
        pg.execute("DROP DATABASE IF EXISTS faults_ingest")
        pg.execute("CREATE DATABASE faults_ingest")
    w = faults.worker("w", queues="ingest,cpu,default", db_url=url, FAULTS_PAUSE_INGEST="1,2")
    files = [THESIS / "tweets.csv", THESIS / "follows.csv"]
    with using_database(url, django_db_blocker):
        call_command("migrate", verbosity=0)
        # the reference: the same upload imported here without any fault
        ref = services.workspace_create(name="Reference", slug="reference")
        _eager_celery.conf.task_always_eager = True
        services.collection_create(workspace=ref, files=files)
        _eager_celery.conf.task_always_eager = False
        want = _counts(ref)
        assert want["tweets"] == 2 and total_by_name(ref) == EXPECTED_TOTAL

        ws = services.workspace_create(name="Newsroom", slug="newsroom")
        w.wait_ready()
        c = services.collection_create(workspace=ws, files=files)

        # 1. restarted while the import's transaction holds every row, uncommitted
        wait_for(lambda: faults.marker("ingest-1"), "the import to write its rows", logs=[w])
        postgres.stop()
        postgres.start()
        faults.release("ingest-1")
        wait_for(lambda: _status(c) == Collection.Status.FAILED, "the import to fail", logs=[w])
        c.refresh_from_db()
        assert "OperationalError" in c.error, c.error  # says why: the connection was terminated
        assert set(_counts(ws).values()) == {0}  # nothing of it was stored

        # the analyst retries; 2. this time the server is still down when the import notices
        services.collection_retry(collection=c)
        wait_for(lambda: faults.marker("ingest-2"), "the retried import to write its rows", logs=[w])
        postgres.stop()
        faults.release("ingest-2")
        wait_for(lambda: "Retry in" in w.text(), "the task to schedule its retry", logs=[w])
        postgres.start()
        wait_for(lambda: _status(c) == Collection.Status.DONE, "the import to be retried to the end", logs=[w])
        wait_for(lambda: c.compute_runs.filter(status="done").exists(), "its compute run", logs=[w])
        assert _counts(ws) == want
        assert total_by_name(ws) == EXPECTED_TOTAL
