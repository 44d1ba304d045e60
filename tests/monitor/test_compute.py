"""Planning and running compute batches: idempotent tasks, given graphs, the cycle policy, cancelling and
retrying a run, a GPU that runs out of memory."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from monitor import selectors, services
from monitor.models import CascadeInfluence, ComputeBatch, ComputeRun, DailyInfluence, PublisherDay, Tweet
from monitor.services.compute import compute_run_cancel, compute_run_retry, plan_batches
from tests.webapp import DATA, EXPECTED_TOTAL, THESIS, total_by_name


def test_it_plans_batches_largest_first_under_the_budget():
    sizes = {1: 5, 2: 50, 3: 7, 4: 3, 5: 120}
    plan = plan_batches(sizes, budget=60)
    assert plan == [[5], [2, 3], [1, 4]]
    assert sorted(pk for b in plan for pk in b) == [1, 2, 3, 4, 5]


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


def test_it_recomputes_the_whole_workspace_with_another_orphan_policy(ws_a, import_files, run_tasks):
    import_files(ws_a, [THESIS / "tweets.csv"])  # no follows: every retweeter is an orphan
    assert set(CascadeInfluence.objects.filter(tweet__workspace=ws_a).values_list("role", flat=True)) == {
        "publisher",
        "orphan",
    }
    run = run_tasks(services.compute_run_start, workspace=ws_a, orphans="attach", backend="cpu")
    run.refresh_from_db()
    assert run.status == "done" and run.orphans == "attach"
    # attached to the publisher, everyone's followers reach b: 2 + (8+1+4+16+32) on day 1, 2 + (16+32+4+1) on day 2
    assert total_by_name(ws_a)["b"] == 2 + 61 + 2 + 53


def test_it_rejects_a_cyclic_given_graph_without_times(ws_a, import_files, tmp_path):
    import numpy as np

    from compute.structures import Cascades, SpreadingGraphs, save_archive

    cascades = Cascades(
        node_offsets=np.array([0, 3, 5]),
        user_ids=np.array([11, 12, 13, 21, 22]),
        followers=np.array([1.0, 2.0, 4.0, 1.0, 2.0]),
        publisher=np.array([0, 3]),
        tweet_ids=np.array([7001, 7002]),
        times=None,
    )
    # tweet 7001: 12 <-> 13 is a cycle above the publisher; tweet 7002 is a plain edge 22 -> 21
    graphs = SpreadingGraphs(cascades, np.array([0, 3, 4]), np.array([1, 1, 2, 4]), np.array([0, 2, 1, 3]))
    save_archive(graphs, tmp_path / "given.npz")
    c = import_files(ws_a, [tmp_path / "given.npz"])
    assert c.status == "done", c.error
    cyclic = Tweet.objects.get(workspace=ws_a, tweet_id=7001)
    plain = Tweet.objects.get(workspace=ws_a, tweet_id=7002)
    assert cyclic.compute_status == Tweet.ComputeStatus.REJECTED and cyclic.reach is None
    assert not CascadeInfluence.objects.filter(tweet=cyclic).exists()
    assert plain.compute_status == Tweet.ComputeStatus.COMPUTED and plain.reach == 3.0
    assert any("cycle" in n for n in c.compute_runs.get().notes), c.compute_runs.get().notes


def test_it_keeps_units_apart_for_cascades_with_and_without_follower_counts(ws_a, import_files, run_tasks, tmp_path):
    import tarfile

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    arc = tmp_path / "trees.tar"
    with tarfile.open(arc, "w") as tf:
        tf.add(DATA / "formats" / "trees" / "good", arcname="good")
    import_files(ws_a, [arc])
    # one run over everything: both kinds land in the same batch
    run = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    assert ComputeRun.objects.get(pk=run.pk).n_batches == 1
    units = dict(Tweet.objects.filter(workspace=ws_a).values_list("tweet_id", "unit"))
    assert units[1000] == units[2000] == "followers"
    assert {u for t, u in units.items() if t not in (1000, 2000)} == {"retweeters"}
    b = selectors.account_get(ws_a, 102)
    assert total_by_name(ws_a, publisher=b) == EXPECTED_TOTAL


def test_it_stores_each_cascades_spreading_edges(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    t = Tweet.objects.get(workspace=ws_a, tweet_id=1000)
    g = selectors.cascade_graph(t)
    name = {a.pk: a.screen_name for a in ws_a.accounts.all()}
    edges = {(name[s], name[d]) for s, d in zip(g["src"].tolist(), g["dst"].tolist())}
    # DESIGN §1's worked example, tweet 0: BE = {(a,b), (c,b), (d,b), (e,b), (c,a), (e,c), (f,e)}
    assert edges == {("a", "b"), ("c", "b"), ("d", "b"), ("e", "b"), ("c", "a"), ("e", "c"), ("f", "e")}
    assert len(g["nodes"]) == 6


def test_it_tells_whom_an_account_amplified_and_who_amplified_it(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    e = selectors.account_get(ws_a, 105)
    amp = selectors.account_amplification(ws_a, e)
    # e retweeted from b (both tweets) and from c (tweet 1000); f retweeted from e in both tweets
    assert {(r["account"].screen_name, r["cascades"]) for r in amp["amplified"]} == {("b", 2), ("c", 1)}
    assert [(r["account"].screen_name, r["cascades"]) for r in amp["amplified_by"]] == [("f", 2)]


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


@pytest.mark.parametrize("when", ["before its cascades", "before its store"])
def test_it_stores_nothing_of_a_batch_whose_run_is_cancelled_while_it_computes(two_batches, monkeypatch, when):
    from monitor.services import compute

    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    real_compute, real_batch = compute._compute, compute._compute_batch

    def cancel_then_compute(*args, **kwargs):
        compute_run_cancel(run=run)
        return real_compute(*args, **kwargs)

    def compute_then_cancel(*args, **kwargs):
        res = real_batch(*args, **kwargs)
        compute_run_cancel(run=run)
        return res

    if when == "before its cascades":
        monkeypatch.setattr(compute, "_compute", cancel_then_compute)
    else:
        monkeypatch.setattr(compute, "_compute_batch", compute_then_cancel)
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

    from monitor.services import compute

    run = services.compute_run_start(workspace=two_batches, backend="cpu")
    batch = run.batches.first()
    real = compute._compute_batch
    monkeypatch.setattr(compute, "_compute_batch", lambda *a, **k: (_ for _ in ()).throw(OperationalError("gone")))
    with pytest.raises(OperationalError):
        services.compute_batch_run(batch_id=batch.pk)
    # not recorded as the batch's failure: the task retries, and the retry may run it
    assert ComputeBatch.objects.get(pk=batch.pk).status == ComputeBatch.Status.RUNNING
    assert ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.RUNNING
    monkeypatch.setattr(compute, "_compute_batch", real)
    assert services.compute_batch_run(batch_id=batch.pk).status == ComputeBatch.Status.DONE
    assert ComputeBatch.objects.get(pk=batch.pk).attempts == 2


# --- a GPU out of memory -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("holds", "note", "on_cpu"),
    [
        (8, "computed in 2 parts", []),
        (5, "computed in 2 parts, 1 of them on the CPU", [1000]),
        (4, "computed in 2 parts, 2 of them on the CPU", [1000, 2000]),
    ],
)
def test_it_splits_a_batch_the_gpu_cannot_hold_with_the_same_results(
    ws_a, import_files, run_tasks, monkeypatch, holds, note, on_cpu
):
    """A fake GPU of ``holds`` participants (no GPU needed): the batch of 11 participants is halved, and a cascade
    that alone does not fit runs on the CPU; the numbers do not change."""
    from monitor.services import compute

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    real_forward, real_backward = compute.forward, compute.backward

    def fits(n):
        if n > holds:
            raise RuntimeError("cudaErrorMemoryAllocation: out of memory")

    def forward(cascades, graph, *, orphans, backend):
        if backend == "gpu":
            fits(cascades.n_nodes)
        return real_forward(cascades, graph, orphans=orphans, backend="cpu")

    def backward(graphs, *, backend):
        if backend == "gpu":
            fits(graphs.cascades.n_nodes)
        return real_backward(graphs, backend="cpu")

    monkeypatch.setattr(compute, "resolve_backend", lambda name: "gpu")
    monkeypatch.setattr(compute, "device_name", lambda b: "fake GPU" if b == "gpu" else "CPU")
    monkeypatch.setattr(compute, "forward", forward)
    monkeypatch.setattr(compute, "backward", backward)
    run = run_tasks(services.compute_run_start, workspace=ws_a, backend="gpu")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    notes = " ".join(run.notes)
    assert f"GPU out of memory on 2 cascades (11 participants) at once: {note}" in notes
    if on_cpu:
        assert f"ran on the CPU (tweets {', '.join(map(str, on_cpu))})" in notes
        assert run.devices == ["fake GPU", "CPU"]
    else:
        assert "ran on the CPU" not in notes and run.devices == ["fake GPU"]


def test_it_does_not_split_a_batch_on_errors_other_than_gpu_memory(ws_a, import_files, run_tasks, monkeypatch):
    from monitor.services import compute

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    monkeypatch.setattr(compute, "resolve_backend", lambda name: "gpu")
    monkeypatch.setattr(compute, "forward", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("a kernel bug")))
    run = run_tasks(services.compute_run_start, workspace=ws_a, backend="gpu")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.FAILED and run.error == "batch 0: RuntimeError: a kernel bug"
    assert compute.is_device_oom(RuntimeError("CUDA_ERROR_OUT_OF_MEMORY")) and not compute.is_device_oom(MemoryError())
