"""Tasks lost after they were sent, with no human to cancel and retry (issue 20): a Redis without persistence
restarts and forgets every queued message. Beat's sweep looks into the broker, finds queued work whose message
is neither waiting nor delivered, and sends its task again; the work completes once, with the results of a run
without the fault. ``SPREADWATCH_STALL_SECONDS=4`` keeps the test short (production: 60 s)."""

from __future__ import annotations

import pytest

from monitor import services
from monitor.models import Collection, ComputeBatch, ComputeRun

from .fixtures import _import_here
from .harness import assert_same, clean_recompute, queued, results, run_ended, wait_for
from .test_database_restart import _counts

pytestmark = pytest.mark.django_db(transaction=True)

STALL = {"SPREADWATCH_STALL_SECONDS": "4"}
RECOVERED_WITHIN_S = 120


@pytest.mark.parametrize("faults", [{"appendonly": False}], indirect=True)
def test_the_batches_a_restarted_redis_forgot_are_sent_again_by_the_sweep_and_the_run_completes(stored, faults):
    w = faults.worker("w", queues="cpu,default", FAULTS_PAUSE_IN_COMPUTE="2", **STALL).wait_ready()
    run = services.compute_run_start(workspace=stored, backend="cpu")
    wait_for(lambda: next(faults.dir.glob("compute-*"), None), "the second batch to start", logs=[w])
    faults.broker.restart()
    assert queued(faults.broker) == []  # gone with the restart
    lost = run.batches.filter(status=ComputeBatch.Status.QUEUED).count()
    assert lost == run.n_batches - 2 > 0
    faults.release()
    beat = faults.beat(**STALL).wait_ready()
    wait_for(lambda: run_ended(run.pk), "the run to finish", RECOVERED_WITHIN_S, logs=[w, beat])
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == run.n_batches, run.error
    assert sum("the broker had lost it" in n for n in run.notes) == lost, run.notes
    assert set(run.batches.values_list("attempts", flat=True)) == {1}  # each computed once
    faulted, n_edges = results(stored), run.n_edges
    assert_same(faulted, clean_recompute(stored, faults.celery))
    assert n_edges == ComputeRun.objects.filter(workspace=stored).latest("pk").n_edges


@pytest.mark.parametrize("faults", [{"appendonly": False}], indirect=True)
def test_an_import_whose_task_a_restarted_redis_forgot_is_sent_again_once_and_completes(
    ws_a, ws_b, collection_files, faults, import_files, _eager_celery
):
    from monitor.services.recovery import stalled_requeue

    c = services.collection_create(workspace=ws_a, files=collection_files, compute=False)  # sent; no worker yet
    assert [args for _, _, args in queued(faults.broker, "ingest")] == [f"({c.pk},)"]
    assert stalled_requeue()["imports_resent"] == 0  # queued just now, and its message is waiting
    faults.broker.restart()
    assert queued(faults.broker, "ingest") == []
    # a sweep that cannot look into the broker concludes nothing
    faults.broker.stop()
    assert stalled_requeue(now=_later())["imports_resent"] == 0
    faults.broker.start()
    assert stalled_requeue(now=_later())["imports_resent"] == 1
    assert stalled_requeue(now=_later())["imports_resent"] == 0  # its message waits now: not sent twice
    assert len(queued(faults.broker, "ingest")) == 1
    i = faults.worker("i", queues="ingest", **STALL).wait_ready()
    wait_for(
        lambda: Collection.objects.get(pk=c.pk).status not in ("queued", "ingesting"),
        "the import to end",
        RECOVERED_WITHIN_S,
        logs=[i],
    )
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE and c.attempts == 1, c.error
    _import_here(import_files, _eager_celery, ws_b, collection_files)  # the same files without the fault
    ref = Collection.objects.filter(workspace=ws_b).get()
    assert _counts(ws_a) == _counts(ws_b) and c.counts == ref.counts


def _later():
    import datetime as dt

    from django.utils import timezone

    from monitor.services.recovery import stall_seconds

    return timezone.now() + dt.timedelta(seconds=stall_seconds() + 1)
