"""A worker killed with -9 and no human to cancel and retry (issue 20): the work it held stops beating its
heartbeat, beat's stalled-work sweep queues it again, and another worker does it once.

The broker's visibility timeout stays at its default (an hour), so nothing but the sweep can bring the work back
within the test's two minutes; ``SPREADWATCH_STALL_SECONDS=4`` (the sweep runs every second) keeps the test short,
where production waits 60 s (a batch then comes back within 60 + 15 s plus its own time)."""

from __future__ import annotations

import time

import pytest

from monitor import services
from monitor.models import Collection, ComputeRun

from .harness import run_ended, wait_for
from .test_database_restart import _counts
from .test_worker_killed import _assert_completed_once, _assert_nothing_of, _paused_batch

pytestmark = pytest.mark.django_db(transaction=True)

STALL = {"SPREADWATCH_STALL_SECONDS": "4"}
RECOVERED_WITHIN_S = 120


def test_a_batch_whose_whole_worker_was_killed_is_queued_again_by_the_sweep_and_computed_once(stored, faults):
    a = faults.worker("a", FAULTS_PAUSE_IN_STORE="1", **STALL).wait_ready()
    run = services.compute_run_start(workspace=stored, backend="cpu")
    assert run.n_batches >= 4
    victim, pid = _paused_batch(faults, a)
    assert pid == a.proc.pid
    a.kill9()
    killed_at = time.monotonic()
    _assert_nothing_of(victim)
    b = faults.worker("b", queues="cpu,default", **STALL).wait_ready()
    beat = faults.beat(**STALL).wait_ready()
    wait_for(lambda: run_ended(run.pk), "the run to finish", RECOVERED_WITHIN_S, logs=[b, beat])
    took = time.monotonic() - killed_at
    assert took < RECOVERED_WITHIN_S
    assert "monitor.tasks.requeue_stalled" in b.text()  # the sweep did it, not the broker
    run.refresh_from_db()
    assert any(f"batch {ComputeRun.objects.get(pk=run.pk).batches.get(pk=victim.pk).index}: queued again" in n
               for n in run.notes), run.notes  # fmt: skip
    _assert_completed_once(run, victim, faults, stored)


def test_an_import_whose_worker_was_killed_is_queued_again_by_the_sweep_and_completes(
    ws_a, ws_b, collection_files, faults, import_files, _eager_celery
):
    a = faults.worker("a", queues="ingest", FAULTS_PAUSE_INGEST="1", **STALL).wait_ready()
    c = services.collection_create(workspace=ws_a, files=collection_files, compute=False)  # sent at once
    wait_for(lambda: faults.marker("ingest-1"), "the import to pause with every row written", logs=[a])
    a.kill9()
    killed_at = time.monotonic()
    assert Collection.objects.get(pk=c.pk).status == Collection.Status.INGESTING
    assert _counts(ws_a)["retweets"] == 0  # its transaction died with it
    b = faults.worker("b", queues="ingest,default", **STALL).wait_ready()
    beat = faults.beat(**STALL).wait_ready()
    wait_for(
        lambda: Collection.objects.get(pk=c.pk).status not in ("queued", "ingesting"),
        "the import to end",
        RECOVERED_WITHIN_S,
        logs=[b, beat],
    )
    assert time.monotonic() - killed_at < RECOVERED_WITHIN_S
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE and c.attempts == 2, c.error
    # the same files imported without the fault, in this process, into another workspace
    eager = _eager_celery.conf.task_always_eager
    _eager_celery.conf.task_always_eager = True
    try:
        ref = import_files(ws_b, collection_files, compute=False)
    finally:
        _eager_celery.conf.task_always_eager = eager
    assert ref.status == Collection.Status.DONE
    assert _counts(ws_a) == _counts(ws_b) and c.counts == ref.counts
