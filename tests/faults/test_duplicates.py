"""The same task delivered twice, and several workers on one queue: every batch is stored once and the results
equal those of one worker without the fault."""

from __future__ import annotations

import pytest

from monitor import services
from monitor.models import ComputeBatch, ComputeRun

from .harness import assert_same, clean_recompute, queued, results, run_ended, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_stores_a_batch_once_when_its_task_is_delivered_twice_to_two_workers_at_once(stored, faults):
    run = services.compute_run_start(workspace=stored, backend="cpu")  # no worker yet: the tasks wait in Redis
    msgs = queued(faults.broker)
    assert len(msgs) == run.n_batches >= 4
    raw, task_id, args = msgs[0]
    # a second copy of the oldest message, byte for byte (same task id) right behind it: the first two
    # deliveries are the same task, and the barrier holds each worker's first batch until both are computing
    faults.broker.client().rpush("cpu", raw)
    a = faults.worker("a", FAULTS_BARRIER="2")
    b = faults.worker("b", FAULTS_BARRIER="2")
    wait_for(lambda: run_ended(run.pk), "the run to finish", logs=[a, b])
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    dup = ComputeBatch.objects.get(run=run, pk=int(args.strip("(),")))
    assert dup.status == ComputeBatch.Status.DONE and dup.attempts == 2  # both deliveries ran it ...
    # the run is done when the last batch commits; its task logs "succeeded" just after
    wait_for(lambda: task_id in a.task_ids("succeeded") and task_id in b.task_ids("succeeded"), "both copies")
    logs = a.text() + b.text()
    assert logs.count(f"compute batch {dup.pk} of run {run.pk} was already stored by another delivery") == 1
    assert run.batches_done == run.n_batches  # ... and it was counted once

    # a third copy, after the run finished, does nothing at all
    faults.broker.client().rpush("cpu", raw)
    wait_for(lambda: (a.task_ids("succeeded") + b.task_ids("succeeded")).count(task_id) == 3, "the third copy")
    dup.refresh_from_db()
    assert dup.attempts == 2

    faulted, n_edges = results(stored), ComputeRun.objects.get(pk=run.pk).n_edges
    assert_same(faulted, clean_recompute(stored, faults.celery))
    assert n_edges == ComputeRun.objects.filter(workspace=stored).latest("pk").n_edges  # not counted twice


def test_it_splits_a_run_over_two_workers_on_one_queue_with_the_results_of_one(stored, faults):
    a = faults.worker("a", FAULTS_BARRIER="2")
    b = faults.worker("b", FAULTS_BARRIER="2")
    a.wait_ready()
    b.wait_ready()
    run = services.compute_run_start(workspace=stored, backend="cpu")
    wait_for(lambda: run_ended(run.pk), "the run to finish", logs=[a, b])
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    # the run is done when the last batch commits; its task logs "succeeded" just after
    wait_for(lambda: len(a.task_ids("succeeded") + b.task_ids("succeeded")) >= run.n_batches, "the last task")
    done_a, done_b = a.task_ids("succeeded"), b.task_ids("succeeded")
    # the barrier makes both take part; together they ran every batch exactly once
    assert done_a and done_b
    assert sorted(done_a + done_b) == sorted(set(done_a + done_b)) and len(done_a + done_b) == run.n_batches
    assert set(run.batches.values_list("attempts", flat=True)) == {1}

    faulted, n_edges = results(stored), run.n_edges
    assert_same(faulted, clean_recompute(stored, faults.celery))
    assert n_edges == ComputeRun.objects.filter(workspace=stored).latest("pk").n_edges
