"""The health page's queue depths read Redis as kombu fills it: the analysis queue holds an analysis's batches
while no worker serves it, the compute queue an upload's, priority lists included; a worker's unacknowledged
messages are counted apart."""

from __future__ import annotations

import pytest

from monitor import jobs, services
from monitor.selectors.health import health_overview

pytestmark = pytest.mark.django_db(transaction=True)


def test_queue_depths_count_each_queue_and_its_priority_lists(faults, thesis, admin_user, client):
    run = services.compute_run_start(workspace=thesis, backend="cpu", algorithm="network", params={"samples": 0})
    depths = jobs.queue_depths()
    assert depths["analysis"]["waiting"] == run.n_batches and depths["cpu"]["waiting"] == 0
    # a message at another priority step lands in kombu's "<queue>\x06\x163" list and is counted too
    jobs.registered_task(jobs.INGEST_COLLECTION).apply_async((1,), priority=3)
    depths = jobs.queue_depths()
    assert depths["ingest"]["waiting"] == 1 and depths["ingest"]["by_priority"] == {"3": 1}
    assert {q["name"]: q["waiting"] for q in health_overview().queues}["analysis"] == run.n_batches
    client.force_login(admin_user)
    page = client.get("/health/").content.decode()
    assert f'<td class="num" data-waiting>{run.n_batches}</td>' in page.split('data-queue="analysis"', 1)[1]
