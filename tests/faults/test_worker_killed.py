"""kill -9 of a compute worker in the middle of a batch: the task comes back and completes once; the killed
process's uncommitted rows are gone and the results equal those of a run without the fault.

Two ways, one per pool of docker/compose.yml: the CPU worker's prefork pool process killed (the OOM killer's
choice: it holds the data), which its parent notices at once (``acks_late`` + ``reject_on_worker_lost`` requeue
the task); and a whole solo worker killed (the GPU worker, or a lost machine), whose unacknowledged task Redis hands
to another worker after the visibility timeout."""

from __future__ import annotations

import os
import signal

import pytest

from monitor import services
from monitor.models import CascadeInfluence, ComputeBatch, ComputeRun

from .harness import assert_same, clean_recompute, results, run_ended, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def _paused_batch(faults, w) -> tuple[ComputeBatch, int]:
    marker = wait_for(lambda: next(faults.dir.glob("store-*"), None), f"{w.name} to pause in a store", logs=[w])
    wait_for(marker.read_text, "the marker's pid")
    return ComputeBatch.objects.get(pk=int(marker.name.split("-")[1])), int(marker.read_text())


def _assert_nothing_of(batch: ComputeBatch) -> None:
    """The killed batch left no row: its transaction died with its database connection."""
    batch.refresh_from_db()
    assert batch.status == ComputeBatch.Status.RUNNING and batch.attempts == 1
    assert not CascadeInfluence.objects.filter(tweet_id__in=batch.tweet_pks).exists()


def _assert_completed_once(run: ComputeRun, victim: ComputeBatch, faults, stored) -> None:
    run.refresh_from_db()
    victim.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    assert victim.status == ComputeBatch.Status.DONE and victim.attempts == 2
    assert run.batches_done == run.n_batches
    assert set(run.batches.exclude(pk=victim.pk).values_list("attempts", flat=True)) == {1}
    faulted, n_edges = results(stored), run.n_edges
    assert_same(faulted, clean_recompute(stored, faults.celery))
    assert n_edges == ComputeRun.objects.filter(workspace=stored).latest("pk").n_edges


def test_it_requeues_a_batch_whose_pool_process_was_killed_while_storing_and_completes_it_once(stored, faults):
    # the default visibility timeout (an hour): the task can only come back because the parent requeues it
    w = faults.worker("w", pool="prefork", FAULTS_PAUSE_IN_STORE="1").wait_ready()
    run = services.compute_run_start(workspace=stored, backend="cpu")
    assert run.n_batches >= 4
    victim, pid = _paused_batch(faults, w)
    assert pid != w.proc.pid  # the pool process, not the worker's main process
    [task_id] = w.task_ids("received")
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: "WorkerLostError" in w.text(), "the worker to notice", logs=[w])
    wait_for(lambda: run_ended(run.pk), "the run to finish", logs=[w])
    assert w.task_ids("received").count(task_id) == 2  # the same message, delivered again
    wait_for(lambda: task_id in w.task_ids("succeeded"), "its task to end", logs=[w])
    assert w.task_ids("succeeded").count(task_id) == 1
    _assert_completed_once(run, victim, faults, stored)


def test_it_redelivers_a_batch_whose_whole_worker_was_killed_while_storing_and_completes_it_once(stored, faults):
    # worker A pauses inside its first batch's store transaction: rows written, not committed
    a = faults.worker("a", FAULTS_PAUSE_IN_STORE="1", SPREADWATCH_BROKER_VISIBILITY_TIMEOUT="3").wait_ready()
    run = services.compute_run_start(workspace=stored, backend="cpu")
    assert run.n_batches >= 4
    victim, pid = _paused_batch(faults, a)
    assert pid == a.proc.pid
    [task_id] = a.task_ids("received")
    a.kill9()
    _assert_nothing_of(victim)

    b = faults.worker("b", SPREADWATCH_BROKER_VISIBILITY_TIMEOUT="3").wait_ready()
    wait_for(lambda: run_ended(run.pk), "the run to finish", logs=[b])
    # the same message (same task id) came back to worker B after the visibility timeout, and ran once
    assert task_id in b.task_ids("received")
    wait_for(lambda: task_id in b.task_ids("succeeded"), "its task to end", logs=[b])
    _assert_completed_once(run, victim, faults, stored)
