"""Compute runs (``monitor.services.runs``): starting a run of a registered algorithm, idempotent batch tasks,
cancelling and retrying a run, a lost database connection."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from monitor import algorithms, services
from monitor.algorithms import base, influence
from monitor.models import CascadeInfluence, ComputeBatch, ComputeRun, DailyInfluence, PublisherDay, Tweet
from monitor.services.runs import compute_run_cancel, compute_run_retry
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name


def _rows(ws):
    return (
        sorted(CascadeInfluence.objects.filter(tweet__workspace=ws).values_list("tweet_id", "account_id", "influence")),
        sorted(
            DailyInfluence.objects.filter(workspace=ws).values_list("publisher_id", "account_id", "day", "influence")
        ),
        sorted(PublisherDay.objects.filter(workspace=ws).values_list("publisher_id", "day", "tweets")),
    )


def test_it_gives_the_same_rows_once_when_a_batch_runs_twice(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    before = _rows(ws_a)
    batch = ComputeBatch.objects.get(run__workspace=ws_a)
    # a redelivered task for a finished batch is a no-op
    services.compute_batch_run(batch_id=batch.pk)
    assert _rows(ws_a) == before
    # a batch redone from scratch (e.g. its worker died after writing) rewrites the same rows, once
    ComputeBatch.objects.filter(pk=batch.pk).update(status=ComputeBatch.Status.QUEUED)
    services.compute_batch_run(batch_id=batch.pk)
    assert _rows(ws_a) == before
    run = ComputeRun.objects.get(pk=batch.run_id)
    assert run.batches_done == run.n_batches == 1


# --- cancelling and retrying a run ---------------------------------------------------------------------------


@pytest.fixture
def two_batches(ws_a, import_files, settings):
    """The thesis example stored, not computed; runs plan one batch per cascade (6 and 5 participants)."""
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    settings.SPREADWATCH_BATCH_NODES = 6
    return ws_a


def _aggregates_match_rows(ws) -> bool:
    from tests.faults.harness import aggregates_from_rows, results

    now, want = results(ws), aggregates_from_rows(ws)
    return now["daily"] == want["daily"] and now["publisher_days"] == want["publisher_days"]


def test_it_cancels_a_queued_run_and_its_late_batch_tasks_do_nothing(two_batches, alice):
    run = services.compute_run_start(workspace=two_batches, backend="cpu")  # tasks not run: still queued
    run = compute_run_cancel(run=run, user=alice)
    assert run.status == ComputeRun.Status.CANCELLED and run.finished_at is not None
    assert run.error == "cancelled by alice: 0 of 2 batches had finished and keep their results; 2 stored nothing"
    for b in run.batches.all():
        assert services.compute_batch_run(batch_id=b.pk).status == ComputeBatch.Status.CANCELLED
    assert set(run.batches.values_list("status", "attempts")) == {("cancelled", 0)}
    assert not CascadeInfluence.objects.filter(tweet__workspace=two_batches).exists()
    assert not DailyInfluence.objects.filter(workspace=two_batches).exists()


def _paused_in_store(monkeypatch):
    """Make the first influence store to get there wait, inside its transaction, once it has written its
    cascades' rows and before it refreshes the aggregates (which the batches of a workspace take turns at)."""
    import threading

    in_store, release = threading.Event(), threading.Event()
    real = influence.store._update_tweets

    def update_tweets(*args, **kwargs):
        out = real(*args, **kwargs)
        if not in_store.is_set():
            in_store.set()
            release.wait(60)
        return out

    monkeypatch.setattr(influence.store, "_update_tweets", update_tweets)
    return in_store, release


def _in_thread(fn, **kwargs):
    import threading

    from django.db import connection

    out: dict = {}

    def go():
        try:
            out["result"] = fn(**kwargs)
        except BaseException as exc:  # handed to the test
            out["error"] = exc
        finally:
            connection.close()

    t = threading.Thread(target=go)
    t.start()
    return t, out


@pytest.mark.django_db(transaction=True)
def test_the_batches_of_one_run_store_side_by_side(two_batches, monkeypatch):
    # the run's row lock used to be held for a batch's whole store, and the workspace lock for its whole
    # store too: a second worker's batch waited for the first one's commit (two GPUs ran no faster than one)
    from monitor import jobs

    monkeypatch.setattr(jobs, "enqueue_on_commit", lambda *a: None)  # the threads below run the batches
    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    first, second = run.batches.order_by("index")
    in_store, release = _paused_in_store(monkeypatch)
    ta, out_a = _in_thread(services.compute_batch_run, batch_id=first.pk)
    try:
        assert in_store.wait(60), out_a
        tb, out_b = _in_thread(services.compute_batch_run, batch_id=second.pk)
        tb.join(30)
        assert not tb.is_alive(), "the second batch waited for the first one's store"
        assert "error" not in out_b, out_b
        assert ComputeBatch.objects.get(pk=second.pk).status == ComputeBatch.Status.DONE
        assert ComputeRun.objects.get(pk=run.pk).batches_done == 1  # the first is not committed yet
    finally:
        release.set()
        ta.join(60)
    assert "error" not in out_a, out_a
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == 2
    assert total_by_name(two_batches) == EXPECTED_TOTAL
    assert _aggregates_match_rows(two_batches)


@pytest.mark.django_db(transaction=True)
def test_a_cancel_does_not_wait_for_a_store_and_that_store_is_undone(two_batches, monkeypatch):
    from monitor import jobs

    monkeypatch.setattr(jobs, "enqueue_on_commit", lambda *a: None)
    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    first = run.batches.order_by("index").first()
    in_store, release = _paused_in_store(monkeypatch)
    ta, out_a = _in_thread(services.compute_batch_run, batch_id=first.pk)
    try:
        assert in_store.wait(60), out_a
        tc, out_c = _in_thread(compute_run_cancel, run=run)
        tc.join(30)
        assert not tc.is_alive(), "the cancel waited for a batch's store"
        assert out_c["result"].status == ComputeRun.Status.CANCELLED
    finally:
        release.set()
        ta.join(60)
    assert out_a["result"].status == ComputeBatch.Status.CANCELLED
    assert not CascadeInfluence.objects.filter(tweet__workspace=two_batches).exists()
    assert not DailyInfluence.objects.filter(workspace=two_batches).exists()
    assert ComputeRun.objects.get(pk=run.pk).batches_done == 0


@pytest.mark.parametrize("when", ["before its cascades", "before its store"])
def test_it_stores_nothing_of_a_batch_whose_run_is_cancelled_while_it_computes(two_batches, monkeypatch, when):
    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    real_compute, real_batch = influence._compute, influence._compute_batch

    def cancel_then_compute(*args, **kwargs):
        compute_run_cancel(run=run)
        return real_compute(*args, **kwargs)

    def compute_then_cancel(*args, **kwargs):
        res = real_batch(*args, **kwargs)
        compute_run_cancel(run=run)
        return res

    if when == "before its cascades":
        monkeypatch.setattr(influence.batch, "_compute", cancel_then_compute)
    else:
        monkeypatch.setattr(influence, "_compute_batch", compute_then_cancel)
    b = services.compute_batch_run(batch_id=run.batches.first().pk)
    assert b.status == ComputeBatch.Status.CANCELLED and b.attempts == 1
    assert not CascadeInfluence.objects.filter(tweet__workspace=two_batches).exists()
    assert not Tweet.objects.filter(workspace=two_batches, compute_status="computed").exists()
    assert ComputeRun.objects.get(pk=run.pk).batches_done == 0


def test_it_keeps_the_batches_that_finished_before_a_cancel_with_aggregates_that_match_them(two_batches):
    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    first, second = run.batches.order_by("index")
    services.compute_batch_run(batch_id=first.pk)
    compute_run_cancel(run=run)
    assert services.compute_batch_run(batch_id=second.pk).status == ComputeBatch.Status.CANCELLED
    run.refresh_from_db()
    assert run.batches_done == 1 and "1 of 2 batches had finished" in run.error
    stored = set(CascadeInfluence.objects.filter(tweet__workspace=two_batches).values_list("tweet_id", flat=True))
    assert stored == set(first.tweet_pks)
    assert _aggregates_match_rows(two_batches)
    assert DailyInfluence.objects.filter(workspace=two_batches).exists()


def test_it_retries_a_cancelled_run_to_the_results_of_an_uncancelled_one(two_batches, run_tasks):
    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    first = run.batches.order_by("index").first()
    services.compute_batch_run(batch_id=first.pk)
    compute_run_cancel(run=run)
    run = run_tasks(compute_run_retry, run=ComputeRun.objects.get(pk=run.pk))
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == 2 and run.error == ""
    assert total_by_name(two_batches) == EXPECTED_TOTAL
    assert ComputeBatch.objects.get(pk=first.pk).attempts == 1  # the finished batch was not redone
    before = _rows(two_batches)
    clean = run_tasks(services.compute_run_start, workspace=two_batches, backend="cpu")
    assert _rows(two_batches) == before
    assert ComputeRun.objects.get(pk=clean.pk).n_edges == run.n_edges


def test_it_refuses_to_cancel_a_finished_run_or_retry_a_running_one(two_batches, run_tasks):
    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    with pytest.raises(ValidationError, match="only a failed or cancelled run can be retried"):
        compute_run_retry(run=run)
    done = run_tasks(services.compute_run_start, workspace=two_batches, backend="cpu")
    with pytest.raises(ValidationError, match="a run that is done cannot be cancelled"):
        compute_run_cancel(run=ComputeRun.objects.get(pk=done.pk))


def test_it_leaves_a_batch_to_its_task_retry_when_the_database_connection_is_lost(two_batches, monkeypatch):
    from django.db import OperationalError

    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    batch = run.batches.first()
    real = influence._compute_batch
    monkeypatch.setattr(influence, "_compute_batch", lambda *a, **k: (_ for _ in ()).throw(OperationalError("gone")))
    with pytest.raises(OperationalError):
        services.compute_batch_run(batch_id=batch.pk)
    # not recorded as the batch's failure: the task retries, and the retry may run it
    assert ComputeBatch.objects.get(pk=batch.pk).status == ComputeBatch.Status.RUNNING
    assert ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.RUNNING
    monkeypatch.setattr(influence, "_compute_batch", real)
    assert services.compute_batch_run(batch_id=batch.pk).status == ComputeBatch.Status.DONE
    assert ComputeBatch.objects.get(pk=batch.pk).attempts == 2


# --- the run's algorithm -----------------------------------------------------------------------------------------


def test_it_refuses_to_start_a_run_of_an_unknown_algorithm(ws_a):
    with pytest.raises(ValidationError, match=r"no algorithm is called 'pagerank' \(known: .*influence"):
        services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="pagerank")
    assert not ComputeRun.objects.exists()


def test_it_records_the_algorithm_of_every_run(ws_a, import_files):
    from monitor.api.serializers import ComputeRunSerializer

    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    run = c.compute_runs.get()
    assert run.algorithm == "influence"
    assert ComputeRunSerializer(run).data["algorithm"] == "influence"


def _required_params(name: str, ws) -> dict:
    """The parameters an algorithm cannot run without (the counter-campaign planner needs its publisher, who
    amplifies whom its seed accounts)."""
    if name == "influence_max":
        return {"publisher": ws.accounts.get(twitter_id=102).pk, "k": 2, "evaluate": 200}
    if name == "wtf":
        return {"accounts": ["102", "105"]}
    return {}


@pytest.mark.parametrize("name", algorithms.names())
def test_a_run_of_every_registered_algorithm_plans_and_stores_its_batches(two_batches, run_tasks, name):
    params = _required_params(name, two_batches)
    run = run_tasks(services.compute_run_start, workspace=two_batches, backend="cpu", algorithm=name, params=params)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    assert run.algorithm == name and run.n_batches >= 1 and run.batches_done == run.n_batches
    for batch in run.batches.all():
        assert batch.status == ComputeBatch.Status.DONE and "store_s" in batch.timings


class Recorder(algorithms.Algorithm):
    """An algorithm that plans one batch per tweet and records the steps the runner asks of it."""

    name = "recorder"
    label = "Recorder"

    def __init__(self):
        self.calls = []

    def plan(self, *, run, tweet_pks):
        return [algorithms.PlannedBatch(tweet_pks=[pk], n_cascades=1, n_nodes=10) for pk in sorted(tweet_pks)]

    def compute(self, *, run, batch, backend, stop):
        self.calls.append(("compute", batch.index, backend))
        if stop():
            raise algorithms.RunCancelled()
        return algorithms.BatchOutcome(notes=["computed"], timings={"compute_s": 0.5}, n_edges=3)

    def store(self, *, run, batch, result):
        self.calls.append(("store", batch.index, result.n_edges))


def test_it_lets_the_runs_algorithm_plan_compute_and_store(two_batches, run_tasks, monkeypatch):
    recorder = Recorder()
    monkeypatch.setitem(base._REGISTRY, recorder.name, recorder)
    run = run_tasks(services.compute_run_start, workspace=two_batches, backend="cpu", algorithm="recorder")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.algorithm == "recorder"
    assert (run.n_batches, run.n_cascades, run.n_nodes, run.n_edges) == (2, 2, 20, 6)
    assert run.notes == ["batch 0: computed", "batch 1: computed"] and run.timings["compute_s"] == 1.0
    assert recorder.calls == [("compute", 0, "cpu"), ("store", 0, 3), ("compute", 1, "cpu"), ("store", 1, 3)]
    assert not CascadeInfluence.objects.filter(tweet__workspace=two_batches).exists()  # influence did not run


def test_it_cancels_a_run_of_another_algorithm_at_its_safe_point(two_batches, monkeypatch):
    recorder = Recorder()
    monkeypatch.setitem(base._REGISTRY, recorder.name, recorder)
    run = services.compute_run_start(workspace=two_batches, backend="cpu", algorithm="recorder")
    compute_run_cancel(run=run)
    ComputeBatch.objects.filter(run=run).update(status=ComputeBatch.Status.QUEUED)  # as if the mark came late
    real_compute = recorder.compute

    def cancel_then_compute(**kwargs):
        ComputeBatch.objects.filter(pk=kwargs["batch"].pk).update(status=ComputeBatch.Status.CANCELLED)
        return real_compute(**kwargs)

    monkeypatch.setattr(recorder, "compute", cancel_then_compute)
    b = services.compute_batch_run(batch_id=run.batches.first().pk)
    assert b.status == ComputeBatch.Status.CANCELLED
    assert [c[0] for c in recorder.calls] == ["compute"]  # stopped before its store


class Sources(algorithms.Algorithm):
    """A graph-wide algorithm: its run takes parameters, and it plans by ranges of sources, not by cascades."""

    name = "sources"
    label = "Sources"

    def clean_params(self, params):
        unknown = set(params) - {"k", "seed"}
        if unknown:
            raise ValueError(f"unknown parameter(s): {', '.join(sorted(unknown))}")
        k = int(params.get("k", 4))
        if k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        return {"k": k, "seed": int(params.get("seed", 0))}

    def plan(self, *, run, tweet_pks):
        k = run.params["k"]
        return [algorithms.PlannedBatch([], 0, 0, params={"sources": [i, min(i + 2, k)]}) for i in range(0, k, 2)]

    def compute(self, *, run, batch, backend, stop):
        lo, hi = batch.params["sources"]
        return algorithms.BatchOutcome(notes=[f"sources {lo}-{hi} of {run.params['k']}"])

    def store(self, *, run, batch, result):
        pass


def test_a_run_records_its_algorithms_parameters_and_each_batch_its_share(ws_a, run_tasks, monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "sources", Sources())
    run = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu", algorithm="sources", params={"k": 5})
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.params == {"k": 5, "seed": 0}
    assert [b.params for b in run.batches.order_by("index")] == [
        {"sources": [0, 2]},
        {"sources": [2, 4]},
        {"sources": [4, 5]},
    ]
    assert run.notes == ["batch 0: sources 0-2 of 5", "batch 1: sources 2-4 of 5", "batch 2: sources 4-5 of 5"]


def test_it_refuses_parameters_the_algorithm_does_not_take_and_stores_nothing(ws_a, monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "sources", Sources())
    with pytest.raises(ValidationError, match=r"k must be at least 1, not 0"):
        services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="sources", params={"k": 0})
    with pytest.raises(ValidationError, match=r"influence takes no parameters \(got seed\)"):
        services.compute_run_start(workspace=ws_a, backend="cpu", params={"seed": 1})
    assert not ComputeRun.objects.exists()


# --- the algorithm's finish hook ---------------------------------------------------------------------------------


class Finisher(Recorder):
    """Records when the runner asks it to finish the run and how many of the run's batches were done then (the
    last one's store is visible: the same transaction); fails its first finish when asked to."""

    name = "finisher"
    label = "Finisher"

    def __init__(self, fail_first: bool = False):
        super().__init__()
        self.fail_first = fail_first

    def finish(self, *, run):
        done = run.batches.filter(status=ComputeBatch.Status.DONE).count()
        self.calls.append(("finish", done, run.n_batches))
        if self.fail_first:
            self.fail_first = False
            raise RuntimeError("could not add the partial sums up")


def test_it_finishes_a_run_once_after_its_last_batch_in_that_batchs_transaction(two_batches, run_tasks, monkeypatch):
    finisher = Finisher()
    monkeypatch.setitem(base._REGISTRY, finisher.name, finisher)
    run = run_tasks(services.compute_run_start, workspace=two_batches, backend="cpu", algorithm="finisher")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE
    assert finisher.calls == [
        ("compute", 0, "cpu"),
        ("store", 0, 3),
        ("compute", 1, "cpu"),
        ("store", 1, 3),
        ("finish", 2, 2),
    ]
    # a redelivered batch of the finished run does not finish it again
    services.compute_batch_run(batch_id=run.batches.last().pk)
    assert [c[0] for c in finisher.calls].count("finish") == 1


def test_it_never_finishes_a_cancelled_run(two_batches, monkeypatch):
    finisher = Finisher()
    monkeypatch.setitem(base._REGISTRY, finisher.name, finisher)
    run = services.compute_run_start(workspace=two_batches, backend="cpu", algorithm="finisher")
    first, second = run.batches.order_by("index")
    services.compute_batch_run(batch_id=first.pk)
    compute_run_cancel(run=run)
    services.compute_batch_run(batch_id=second.pk)
    assert ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.CANCELLED
    assert "finish" not in [c[0] for c in finisher.calls]


def test_a_finish_that_fails_fails_the_last_batch_and_its_retry_finishes_the_run(two_batches, monkeypatch):
    finisher = Finisher(fail_first=True)
    monkeypatch.setitem(base._REGISTRY, finisher.name, finisher)
    run = services.compute_run_start(workspace=two_batches, backend="cpu", algorithm="finisher")
    first, second = run.batches.order_by("index")
    services.compute_batch_run(batch_id=first.pk)
    with pytest.raises(RuntimeError, match="could not add the partial sums up"):
        services.compute_batch_run(batch_id=second.pk)
    run.refresh_from_db()
    second.refresh_from_db()
    assert run.status == ComputeRun.Status.FAILED and "could not add the partial sums up" in run.error
    assert second.status == ComputeBatch.Status.FAILED and run.batches_done == 1  # its store was rolled back
    compute_run_retry(run=run)
    services.compute_batch_run(batch_id=second.pk)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == 2
    assert [c for c in finisher.calls if c[0] == "finish"] == [("finish", 2, 2), ("finish", 2, 2)]


def test_a_retry_that_finds_every_batch_done_finishes_the_run(two_batches, run_tasks, monkeypatch):
    finisher = Finisher()
    monkeypatch.setitem(base._REGISTRY, finisher.name, finisher)
    run = services.compute_run_start(workspace=two_batches, backend="cpu", algorithm="finisher")
    # the last batch committed while the run was marked failed elsewhere: nobody finished it
    run.batches.update(status=ComputeBatch.Status.DONE)
    ComputeRun.objects.filter(pk=run.pk).update(status=ComputeRun.Status.FAILED, batches_done=2, error="lost")
    run_tasks(compute_run_retry, run=run)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE
    assert [c for c in finisher.calls if c[0] == "finish"] == [("finish", 2, 2)]
