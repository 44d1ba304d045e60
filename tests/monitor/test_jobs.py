"""Queueing tasks by name on commit (``monitor.jobs``): the names are registered, routed as before, and run
only once the transaction commits."""

from __future__ import annotations

import pytest
from django.conf import settings

from monitor import jobs
from monitor.models import ComputeBatch
from tests.webapp import THESIS

NAMES = [jobs.INGEST_COLLECTION, jobs.COMPUTE_BATCH, jobs.EVALUATE_ALERTS, jobs.DELIVER_WEBHOOK]


@pytest.mark.parametrize("name", NAMES)
def test_every_name_is_a_registered_task(name):
    assert jobs.registered_task(name).name == name


def test_the_tasks_keep_their_queues():
    routes = settings.CELERY_TASK_ROUTES
    assert routes[jobs.INGEST_COLLECTION] == {"queue": "ingest"}
    assert routes[jobs.COMPUTE_BATCH] == {"queue": settings.SPREADWATCH_COMPUTE_QUEUE}
    assert routes[jobs.EVALUATE_ALERTS] == {"queue": "default"}


def test_it_refuses_a_name_no_task_registered():
    with pytest.raises(LookupError, match=r"no Celery task is registered as 'monitor\.tasks\.nope'"):
        jobs.enqueue_on_commit("monitor.tasks.nope", 1)


def test_it_runs_the_task_when_the_transaction_commits(ws_a, import_files, django_capture_on_commit_callbacks):
    from monitor import services

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = services.compute_run_start(workspace=ws_a, backend="cpu")
    batch = run.batches.get()
    assert len(callbacks) == 1 and batch.status == ComputeBatch.Status.QUEUED  # queued, not run, before the commit
    callbacks[0]()  # the commit: eager Celery runs the task in this process
    batch.refresh_from_db()
    assert batch.status == ComputeBatch.Status.DONE


def test_a_graph_wide_analysis_batch_goes_to_the_analysis_queue_and_an_upload_s_to_the_compute_queue(
    ws_a, import_files, monkeypatch
):
    from monitor import services

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    influence = services.compute_run_start(workspace=ws_a, backend="cpu").batches.get()
    network = services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="network", params={}).batches.first()
    assert jobs.queue_for(jobs.COMPUTE_BATCH, (network.pk,)) == settings.SPREADWATCH_ANALYSIS_QUEUE == "analysis"
    assert jobs.queue_for(jobs.COMPUTE_BATCH, (influence.pk,)) is None  # its route: the compute queue
    assert jobs.queue_for(jobs.INGEST_COLLECTION, (1,)) is None
    sent = []
    monkeypatch.setattr(
        jobs.registered_task(jobs.COMPUTE_BATCH), "apply_async", lambda args, **kw: sent.append((args, kw.get("queue")))
    )
    jobs._publish(jobs.COMPUTE_BATCH, (network.pk,))
    jobs._publish(jobs.COMPUTE_BATCH, (influence.pk,))
    assert sent == [((network.pk,), "analysis"), ((influence.pk,), None)]
