"""Workers survive any run: a run beyond its workspace's memory ceiling fails saying why while the worker process
that ran it lives on and takes the next task; a batch that killed its worker again and again (a poison message:
the OOM killer, a crash in native code) is not delivered again once it has done so
``SPREADWATCH_MAX_DELIVERIES`` times, and its run fails saying why.

Real processes: a prefork worker as the CPU worker of docker/compose.yml, killed with SIGKILL by the test (the
kernel's OOM killer does the same to the pool process that holds the memory), which requeues the message at once
(``acks_late`` + ``reject_on_worker_lost``). The memory test runs under a stand-in for the OOM killer (1.5 GB per
process) so that the code before the ceiling, whose sampling grew without bound, is killed instead of taking the
test machine's memory."""

from __future__ import annotations

import os
import signal

import pytest
from django.db import transaction

from monitor.models import Account, ComputeBatch, ComputeRun, Workspace
from monitor.services.runs import compute_run_start
from tests.webapp import THESIS

from .fixtures import _import_here
from .harness import oom_killer, run_ended, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 90.0  # each run here ends in seconds (a fresh pool process compiles its kernels first, on a busy machine)


@pytest.fixture
def two_theses(ws_a, ws_b, import_files, _eager_celery) -> tuple[Workspace, Workspace]:
    for ws in (ws_a, ws_b):
        _import_here(import_files, _eager_celery, ws, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a, ws_b


def _ran_in(faults, batch: ComputeBatch) -> int:
    marker = faults.dir / f"ran-{batch.pk}"
    return int(wait_for(lambda: marker.exists() and marker.read_text(), f"batch {batch.pk}'s task to end"))


def test_an_imm_run_beyond_its_workspace_s_memory_ceiling_fails_saying_why_and_its_worker_takes_the_next_task(
    two_theses, faults
):
    ws_a, ws_b = two_theses
    # one worker for both queues: the planner's batch goes to the analysis queue, the other run's to cpu
    w = faults.worker("w", queues="cpu,analysis", pool="prefork", FAULTS_MARK_BATCHES="1").wait_ready()
    publisher = Account.objects.get(workspace=ws_a, twitter_id=102).pk
    with oom_killer(w, 1536) as killed:
        # an estimate that was wrong: the run's cost estimate let it through (planned with eps = 0.5), and its
        # batch meets eps = 1e-9 and a ceiling of 256 MB when it runs (both set before its task is sent, at commit)
        with transaction.atomic():
            run = compute_run_start(
                workspace=ws_a, backend="cpu", algorithm="influence_max",
                params={"publisher": publisher, "k": 500, "eps": 0.5, "batches": 1, "evaluate": 100},
            )  # fmt: skip
            ComputeRun.objects.filter(pk=run.pk).update(params={**run.params, "eps": 1e-9})
            Workspace.objects.filter(pk=ws_a.pk).update(budget_run_memory_mb=256)
        wait_for(lambda: run_ended(run.pk), "the run to end", WAIT_S, logs=[w])
        run.refresh_from_db()
        assert run.status == ComputeRun.Status.FAILED, run.status
        assert "k=500" in run.error and "eps=1e-09" in run.error and "256 MB" in run.error, run.error
        assert "lower k or raise eps" in run.error, run.error
        [batch] = run.batches.all()
        assert batch.status == ComputeBatch.Status.FAILED and batch.attempts == 1
        pid = _ran_in(faults, batch)

        # the same pool process takes another workspace's batch and computes it
        other = compute_run_start(workspace=ws_b, backend="cpu")
        wait_for(lambda: run_ended(other.pk), "the other workspace's run to end", WAIT_S, logs=[w])
        other.refresh_from_db()
        assert other.status == ComputeRun.Status.DONE, other.error
        assert _ran_in(faults, other.batches.get()) == pid
    assert killed == []
    assert "WorkerLostError" not in w.text()


def test_a_batch_that_killed_its_worker_three_times_is_not_delivered_again_and_its_run_says_why(two_theses, faults):
    ws_a, ws_b = two_theses
    w = faults.worker("w", pool="prefork", FAULTS_PAUSE_EACH_DELIVERY="1", SPREADWATCH_MAX_DELIVERIES="3").wait_ready()
    run = compute_run_start(workspace=ws_a, backend="cpu")
    [batch] = run.batches.all()
    for attempt in (1, 2, 3):  # each delivery is killed as the OOM killer would kill it
        marker = faults.dir / f"compute-{batch.pk}-{attempt}"
        pid = int(wait_for(lambda m=marker: m.exists() and m.read_text(), f"delivery {attempt}", WAIT_S, logs=[w]))
        assert pid != w.proc.pid
        os.kill(pid, signal.SIGKILL)
    wait_for(lambda: run_ended(run.pk), "the run to end", WAIT_S, logs=[w])
    run.refresh_from_db()
    batch.refresh_from_db()
    assert run.status == ComputeRun.Status.FAILED and batch.status == ComputeBatch.Status.FAILED
    assert batch.attempts == 3  # the fourth delivery did not claim it
    assert not (faults.dir / f"compute-{batch.pk}-4").exists()
    assert "ended its worker 3 times" in run.error and "not run again" in run.error, run.error

    # the worker lives on, and a fresh one started after it is not handed the batch again
    w.stop()
    fresh = faults.worker("fresh", pool="prefork", SPREADWATCH_BROKER_VISIBILITY_TIMEOUT="2").wait_ready()
    other = compute_run_start(workspace=ws_b, backend="cpu")
    wait_for(lambda: run_ended(other.pk), "the other workspace's run to end", WAIT_S, logs=[fresh])
    assert ComputeRun.objects.get(pk=other.pk).status == ComputeRun.Status.DONE
    assert not (faults.dir / f"compute-{batch.pk}-4").exists()
    assert "WorkerLostError" not in fresh.text() and fresh.proc.poll() is None
