"""Redis (broker and cache) stopped for 20 s during an upload and a compute (issue 20), with no human action:

* the web process keeps answering from PostgreSQL: a login, the ranking pages and the API ranking answer as usual;
* an API upload made during the outage answers 201; its ingest task, which the broker refused, waits in the outbox
  (PostgreSQL) and beat sends it once Redis is back, so the collection is imported and computed;
* a compute batch that commits during the outage bumps the data version (in PostgreSQL, with its rows) and the
  alert evaluation it queues waits in the outbox too: the alerts come once Redis is back;
* the results equal a run without the fault.
"""

from __future__ import annotations

import time

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from monitor import jobs, services
from monitor.alerts import services as alerts
from monitor.alerts.models import Alert, AlertRule
from monitor.models import Collection, ComputeBatch, OutboxTask, Workspace
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

from .harness import assert_same, clean_recompute, results, run_ended, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

OUTAGE_S = 20.0
ENV = {"SPREADWATCH_STALL_SECONDS": "4", "SPREADWATCH_BROKER_VISIBILITY_TIMEOUT": "5"}


def test_a_20_s_redis_outage_during_an_upload_and_a_compute_ends_well_by_itself(
    stored, faults, alice, bob, client, settings
):
    settings.CACHES = {"default": {"BACKEND": "monitor.softcache.SoftRedisCache", "LOCATION": faults.broker.cache_url}}
    settings.SPREADWATCH_READ_CACHE_SECONDS = 300
    settings.SPREADWATCH_BATCH_NODES = 10**6  # one batch: the one that commits during the outage is the last
    rule = alerts.rule_create(workspace=stored, owner=alice, name="any", kind=AlertRule.Kind.CASCADE_REACH, reach=0)
    w = faults.worker("w", queues="cpu,ingest,default", FAULTS_PAUSE_IN_STORE="1", **ENV).wait_ready()
    beat = faults.beat(**ENV).wait_ready()
    run = services.compute_run_start(workspace=stored, backend="cpu", user=alice)
    assert run.n_batches == 1
    wait_for(lambda: next(faults.dir.glob("store-*"), None), "the batch to pause in its store", logs=[w])
    version = Workspace.objects.get(pk=stored.pk).data_version

    faults.broker.stop()
    stopped = time.monotonic()
    # the web process, Redis away
    r = client.post(reverse("login"), {"username": "alice", "password": "alice-pass-123"})
    assert r.status_code == 302, r.content[:500]
    for name, kw in [("overview", {}), ("ranking", {})]:
        assert client.get(reverse(name, kwargs={"ws": stored.slug, **kw})).status_code == 200, name
    assert client.get(f"/api/v1/workspaces/{stored.slug}/ranking/").status_code == 200
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {services.api_token_create(user=bob)[1]}")
    with open(THESIS / "tweets.csv", "rb") as t, open(THESIS / "follows.csv", "rb") as f:
        up = api.post("/api/v1/workspaces/lab/collections/", {"files": [t, f]}, format="multipart")
    assert up.status_code == 201, up.content
    uploaded = Collection.objects.get(pk=up.json()["id"])
    assert uploaded.status == Collection.Status.QUEUED
    assert OutboxTask.objects.filter(name=jobs.INGEST_COLLECTION, args=[uploaded.pk]).exists()
    # the batch commits while Redis is away
    faults.release()
    wait_for(lambda: run.batches.get().status == ComputeBatch.Status.DONE, "the batch to commit", logs=[w])
    assert Workspace.objects.get(pk=stored.pk).data_version > version  # bumped with its rows
    wait_for(
        lambda: OutboxTask.objects.filter(name=jobs.EVALUATE_ALERTS, args=[stored.pk]).exists(),
        "the worker to keep the alert evaluation in the outbox",
        logs=[w],
    )
    assert not Alert.objects.filter(rule=rule).exists()
    time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - stopped)))
    assert time.monotonic() - stopped >= OUTAGE_S
    faults.broker.start()

    # no human from here on
    wait_for(lambda: Alert.objects.filter(rule=rule).exists(), "the alerts", logs=[w, beat])
    wait_for(
        lambda: Collection.objects.get(pk=uploaded.pk).status in ("done", "failed"), "the upload's import", logs=[w]
    )
    uploaded.refresh_from_db()
    assert uploaded.status == Collection.Status.DONE, uploaded.error
    wait_for(lambda: not OutboxTask.objects.exists(), "the outbox to empty", logs=[w, beat])
    assert run_ended(run.pk)
    run.refresh_from_db()
    assert run.status == "done" and run.batches_done == run.n_batches == 1
    assert total_by_name(uploaded.workspace) == EXPECTED_TOTAL
    faulted = results(stored)
    assert_same(faulted, clean_recompute(stored, faults.celery))
