"""A real Celery worker process, consuming from Redis, imports and computes an upload (no eager mode).

The broker is a redis-server of the test's own (tests/faults' fixture): the shared Redis of ``make test`` serves
other test runs at the same time, whose workers would take this test's tasks (and whose queues a ``--purge``
would empty)."""

from __future__ import annotations

import pytest

from monitor import services
from monitor.models import Collection
from tests.faults import fixtures
from tests.faults.harness import wait_for
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

faults = fixtures.faults


@pytest.mark.django_db(transaction=True)
def test_it_imports_and_computes_through_a_worker_on_redis(ws_a, alice, faults):
    w = faults.worker("w", queues="ingest,cpu,default").wait_ready()
    c = services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"], user=alice)
    wait_for(
        lambda: Collection.objects.get(pk=c.pk).status in (Collection.Status.DONE, Collection.Status.FAILED),
        "the import and its compute",
        logs=[w],
    )
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE, c.error
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    text = w.text()
    assert "monitor.tasks.ingest_collection" in text and "monitor.tasks.compute_batch" in text
