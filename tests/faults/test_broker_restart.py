"""Redis (the broker) restarted during a run: the worker reconnects, the queued batches survive in the
append-only file (docker/compose.yml runs Redis with ``--appendonly yes``), and the run ends with the results of a
run without the fault. A Redis without persistence loses the queued tasks: without beat the run then stalls, and
cancel + retry recovers it to the same results (with beat, its sweep sends them again: test_lost_tasks.py)."""

from __future__ import annotations

import pytest

from monitor.models import ComputeBatch, ComputeRun
from monitor.services.runs import compute_run_cancel, compute_run_retry, compute_run_start

from .harness import assert_same, clean_recompute, queued, results, run_ended, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_finishes_a_run_when_redis_restarts_in_the_middle_of_it(stored, faults):
    w = faults.worker("w", FAULTS_PAUSE_IN_COMPUTE="2", SPREADWATCH_BROKER_VISIBILITY_TIMEOUT="5").wait_ready()
    run = compute_run_start(workspace=stored, backend="cpu")
    wait_for(lambda: next(faults.dir.glob("compute-*"), None), "the second batch to start", logs=[w])
    waiting = len(queued(faults.broker))
    assert waiting == run.n_batches - 2 > 0
    faults.broker.restart()
    assert len(queued(faults.broker)) == waiting  # the append-only file kept them
    faults.release()
    wait_for(lambda: run_ended(run.pk), "the run to finish", logs=[w])
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == run.n_batches, run.error
    assert "Connection to broker lost" in w.text()  # the worker did notice
    faulted, n_edges = results(stored), run.n_edges
    assert_same(faulted, clean_recompute(stored, faults.celery))
    assert n_edges == ComputeRun.objects.filter(workspace=stored).latest("pk").n_edges


@pytest.mark.parametrize("faults", [{"appendonly": False}], indirect=True)
def test_it_recovers_a_run_whose_queued_tasks_a_redis_without_persistence_lost_by_cancel_and_retry(stored, faults):
    w = faults.worker("w", FAULTS_PAUSE_IN_COMPUTE="2", SPREADWATCH_BROKER_VISIBILITY_TIMEOUT="5").wait_ready()
    run = compute_run_start(workspace=stored, backend="cpu")
    wait_for(lambda: next(faults.dir.glob("compute-*"), None), "the second batch to start", logs=[w])
    faults.broker.restart()
    assert queued(faults.broker) == []  # gone with the restart
    faults.release()
    # the batch in flight finishes; nothing else will ever come
    wait_for(lambda: ComputeRun.objects.get(pk=run.pk).batches_done == 2, "the batch in flight", logs=[w])
    assert ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.RUNNING
    assert run.batches.filter(status=ComputeBatch.Status.QUEUED).count() == run.n_batches - 2
    compute_run_cancel(run=run)
    compute_run_retry(run=ComputeRun.objects.get(pk=run.pk))
    wait_for(lambda: run_ended(run.pk), "the retried run to finish", logs=[w])
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == run.n_batches, run.error
    faulted, n_edges = results(stored), run.n_edges
    assert_same(faulted, clean_recompute(stored, faults.celery))
    assert n_edges == ComputeRun.objects.filter(workspace=stored).latest("pk").n_edges
