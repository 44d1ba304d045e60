"""Planning and running compute batches: idempotent tasks, given graphs, the cycle policy."""

from __future__ import annotations

from monitor import selectors, services
from monitor.models import CascadeInfluence, ComputeBatch, ComputeRun, DailyInfluence, PublisherDay, Tweet
from monitor.services.compute import plan_batches
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
