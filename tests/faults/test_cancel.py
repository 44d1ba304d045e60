"""A compute run cancelled by the user while a worker is in the middle of it: finished batches keep their rows,
the running batch stores nothing, the queued ones do nothing, the aggregates agree with the rows that stay, and a
retry ends with the results of a run that was never cancelled."""

from __future__ import annotations

import pytest

from monitor.models import CascadeInfluence, ComputeBatch, ComputeRun, Tweet
from monitor.services.runs import compute_run_cancel, compute_run_retry, compute_run_start

from .harness import aggregates_from_rows, assert_same, clean_recompute, results, run_ended, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_cancels_a_run_mid_batch_keeping_whole_batches_and_retries_it_to_the_uncancelled_results(
    stored, faults, alice
):
    w = faults.worker("w", FAULTS_PAUSE_IN_COMPUTE="3").wait_ready()
    run = compute_run_start(workspace=stored, backend="cpu")
    assert run.n_batches >= 6
    marker = wait_for(lambda: next(faults.dir.glob("compute-*"), None), "the third batch to start", logs=[w])
    running = ComputeBatch.objects.get(pk=int(marker.name.split("-")[1]))

    compute_run_cancel(run=run, user=alice)
    faults.release()
    # every task is still delivered: the paused one stops at its safe point, the queued ones skip
    wait_for(lambda: len(w.task_ids("succeeded")) == run.n_batches, "every task to be taken", logs=[w])
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.CANCELLED and "cancelled by alice" in run.error
    done = list(run.batches.filter(status=ComputeBatch.Status.DONE))
    assert len(done) == run.batches_done == 2
    assert set(run.batches.exclude(status="done").values_list("status", flat=True)) == {"cancelled"}
    text = w.text()
    assert f"compute batch {running.pk} of run {run.pk} stopped: the run was cancelled; nothing was stored" in text
    assert text.count(f"of run {run.pk} skipped: the run was cancelled") == run.n_batches - 3

    # whole batches only: rows for exactly the finished batches' cascades, aggregates that match them
    kept = {pk for b in done for pk in b.tweet_pks}
    assert set(CascadeInfluence.objects.filter(tweet__workspace=stored).values_list("tweet_id", flat=True)) == kept
    assert set(Tweet.objects.filter(workspace=stored, compute_status="computed").values_list("pk", flat=True)) == kept
    now = results(stored)
    expected = aggregates_from_rows(stored)
    assert_same({"daily": now["daily"], "publisher_days": now["publisher_days"]}, expected)
    assert now["daily"], "the finished batches' aggregates are there"

    compute_run_retry(run=run)
    wait_for(lambda: run_ended(run.pk), "the retried run to finish", logs=[w])
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == run.n_batches, run.error
    assert running.pk in run.batches.filter(attempts=2).values_list("pk", flat=True)
    faulted, n_edges = results(stored), run.n_edges
    assert_same(faulted, clean_recompute(stored, faults.celery))
    assert n_edges == ComputeRun.objects.filter(workspace=stored).latest("pk").n_edges
