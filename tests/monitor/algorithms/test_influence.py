"""The influence measure as a compute-run algorithm: planning by cascade size, given graphs, the cycle policy,
units, stored spreading edges, a GPU that runs out of memory."""

from __future__ import annotations

import datetime as dt
import importlib

import numpy as np
import pytest
from django.db import connection

from compute.backends import is_device_oom
from monitor import selectors, services
from monitor.algorithms import influence
from monitor.algorithms.influence import plan_batches
from monitor.models import CascadeInfluence, ComputeRun, DailyInfluence, PublisherDay, Tweet
from monitor.services import runs
from tests.webapp import DATA, EXPECTED_TOTAL, THESIS, publisher_day_lines, total_by_name


def test_it_plans_batches_largest_first_under_the_budget():
    sizes = {1: 5, 2: 50, 3: 7, 4: 3, 5: 120}
    plan = plan_batches(sizes, budget=60)
    assert plan == [[5], [2, 3], [1, 4]]
    assert sorted(pk for b in plan for pk in b) == [1, 2, 3, 4, 5]


def test_a_run_for_several_workers_is_cut_into_smaller_batches_with_the_same_result(
    ws_a, import_files, run_tasks, settings
):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_RUN_WORKERS, settings.SPREADWATCH_BATCH_MIN_NODES = 3, 1
    run = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    run.refresh_from_db()
    assert run.status == "done"
    assert run.batches.count() == 2  # the thesis' two cascades: one each, not one batch for both
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def _daily(ws) -> dict:
    rows = DailyInfluence.objects.filter(workspace=ws).values_list(
        "publisher__twitter_id", "account__twitter_id", "day", "label", "influence", "cascades"
    )
    return {r[:4]: (round(r[4], 9), r[5]) for r in rows}


def _collection(tmp_path) -> list:
    """4 publishers x 3 days x 6 tweets, each retweeted by 0-19 of 40 accounts, and random follows among them."""
    rng = np.random.default_rng(7)
    lines, follows = publisher_day_lines(rng, publishers=4, days=3, tweets=6, accounts=40, retweets=(0, 20)), set()
    for a, b in rng.integers(0, 44, (300, 2)):
        ids = [100 + x if x < 40 else x - 40 for x in (a, b)]
        if ids[0] != ids[1]:
            follows.add(tuple(ids))
    (tmp_path / "tweets.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "follows.csv").write_text("follower_id,followee_id\n" + "".join(f"{a},{b}\n" for a, b in follows))
    return [tmp_path / "tweets.csv", tmp_path / "follows.csv"]


def _daily(ws) -> dict:
    rows = DailyInfluence.objects.filter(workspace=ws).values_list(
        "publisher__twitter_id", "account__twitter_id", "day", "label", "influence", "cascades"
    )
    return {r[:4]: (round(r[4], 9), r[5]) for r in rows}


def test_a_runs_batches_hold_whole_publisher_days_and_store_what_one_batch_does(
    ws_a, ws_b, import_files, settings, tmp_path
):
    files = _collection(tmp_path)
    import_files(ws_a, files)  # one batch
    settings.SPREADWATCH_BATCH_NODES = 150  # of about 800 participants; a publisher's day has about 65
    c = import_files(ws_b, files)
    assert c.status == c.Status.DONE, c.error
    run = ComputeRun.objects.filter(workspace=ws_b).latest("pk")
    assert run.status == "done" and run.batches.count() >= 5
    pair_of = {
        pk: (author, created.date())
        for pk, author, created in Tweet.objects.filter(workspace=ws_b).values_list("pk", "author_id", "created_at")
    }
    assert len(set(pair_of.values())) == 12
    where: dict = {}
    for i, pks in enumerate(run.batches.values_list("tweet_pks", flat=True)):
        for pk in pks:
            where.setdefault(pair_of[pk], set()).add(i)
    assert all(len(batches) == 1 for batches in where.values()), f"pairs spread over several batches: {where}"
    # each batch rewrites its pairs' daily rows from all of their cascades: the same rows as one batch
    assert _daily(ws_b) == _daily(ws_a) and _daily(ws_a)


def test_a_plan_counts_the_same_participants_by_a_scan_of_the_retweets_as_by_probing_them(
    ws_a, import_files, tmp_path, monkeypatch
):
    """A run over most of the workspace's tweets counts their retweets by one scan of the workspace's partition,
    a smaller one by probing the pair index per tweet: the same sizes and (publisher, day) pairs."""
    import_files(ws_a, _collection(tmp_path))
    batch = importlib.import_module("monitor.algorithms.influence.batch")
    pks = sorted(Tweet.objects.filter(workspace=ws_a).values_list("pk", flat=True))
    asked = []
    real = batch._counts_all_retweets
    monkeypatch.setattr(batch, "_counts_all_retweets", lambda *a: asked.append(real(*a)) or asked[-1])
    probed = batch._planned_cascades(pks, ws_a.pk)
    monkeypatch.setattr(batch, "_PLAN_SCAN_MIN", 1)
    scanned = batch._planned_cascades(pks, ws_a.pk)
    few = batch._planned_cascades(pks[: len(pks) // 5], ws_a.pk)  # a fifth of the tweets: probed
    assert asked == [False, connection.vendor == "postgresql", False]
    assert scanned == probed and sum(probed[0].values()) > len(pks)
    assert few == ({k: probed[0][k] for k in few[0]}, {k: probed[1][k] for k in few[0]})


def test_a_publishers_day_totals_count_its_computed_tweets_only(ws_a, import_files, run_tasks, tmp_path):
    import_files(ws_a, _collection(tmp_path))
    day = dt.date(2020, 3, 1)
    pair = Tweet.objects.filter(workspace=ws_a, author__twitter_id=0, created_at__date=day).order_by("pk")
    assert pair.count() == 6
    first, pending = pair[0], pair[1]
    Tweet.objects.filter(pk=pending.pk).update(compute_status="pending", reach=None)
    run_tasks(services.compute_run_start, workspace=ws_a, tweet_pks=[first.pk], backend="cpu")
    totals = PublisherDay.objects.filter(workspace=ws_a, publisher=first.author, day=day)
    assert sum(totals.values_list("tweets", flat=True)) == 5  # the pending tweet is not counted
    computed = pair.filter(compute_status="computed")
    assert sum(totals.values_list("reach", flat=True)) == pytest.approx(sum(t.reach for t in computed))


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


def _tweet_updates() -> tuple[int, int]:
    """This transaction's updates of tweet rows so far: all of them, and those made in place (HOT)."""
    with connection.cursor() as cur:
        cur.execute("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = 'monitor_tweet'")
        row = cur.fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="HOT updates and fillfactor are PostgreSQL's")
def test_a_run_updates_its_tweets_in_place_without_touching_their_indexes(ws_a, import_files, run_tasks):
    import_files(ws_a, [THESIS / "tweets.csv"])
    upd0, hot0 = _tweet_updates()
    run_tasks(services.compute_run_start, workspace=ws_a, orphans="attach", backend="cpu")
    upd, hot = _tweet_updates()
    # the second run writes another run into each tweet: no index may cover what it writes (migration 0036)
    assert upd - upd0 >= Tweet.objects.filter(workspace=ws_a).count() > 0
    assert hot - hot0 == upd - upd0
    with connection.cursor() as cur:  # and the pages the table fills leave room for the new versions
        cur.execute("SELECT reloptions FROM pg_class WHERE relname = 'monitor_tweet'")
        assert "fillfactor=50" in (cur.fetchone()[0] or [])


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


def test_cascades_without_follower_counts_count_followers_in_a_workspace_that_counts_followers(
    ws_a, import_files, run_tasks, tmp_path
):
    import tarfile

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    arc = tmp_path / "trees.tar"
    with tarfile.open(arc, "w") as tf:
        tf.add(DATA / "formats" / "trees" / "good", arcname="good")
    import_files(ws_a, [arc])
    # one run over everything: both kinds land in the same batch
    run = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    assert ComputeRun.objects.get(pk=run.pk).n_batches == 1
    # the workspace's first data (the worked example) carried counts: every cascade counts followers, the trees'
    # participants (no count known) 0 each, never a per-cascade "retweeters" that a first count would overturn
    units = dict(Tweet.objects.filter(workspace=ws_a).values_list("tweet_id", "unit"))
    assert set(units.values()) == {"followers"}
    trees = Tweet.objects.filter(workspace=ws_a).exclude(tweet_id__in=(1000, 2000))
    assert trees.exists() and set(trees.values_list("reach", flat=True)) == {0.0}
    assert any("no known follower count" in n for n in ComputeRun.objects.get(pk=run.pk).notes)
    b = selectors.account_get(ws_a, 102)
    assert total_by_name(ws_a, publisher=b) == EXPECTED_TOTAL


def test_it_stores_each_cascades_spreading_edges(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    t = Tweet.objects.get(workspace=ws_a, tweet_id=1000)
    g = selectors.cascade_graph(t)
    name = {a.pk: a.screen_name for a in ws_a.accounts.all()}
    edges = {(name[s], name[d]) for s, d in zip(g["src"].tolist(), g["dst"].tolist())}
    # the thesis' worked example (Fig. 2.1), tweet 0: BE = {(a,b), (c,b), (d,b), (e,b), (c,a), (e,c), (f,e)}
    assert edges == {("a", "b"), ("c", "b"), ("d", "b"), ("e", "b"), ("c", "a"), ("e", "c"), ("f", "e")}
    assert len(g["nodes"]) == 6


def test_it_tells_whom_an_account_amplified_and_who_amplified_it(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    e = selectors.account_get(ws_a, 105)
    amp = selectors.account_amplification(ws_a, e)
    # e retweeted from b (both tweets) and from c (tweet 1000); f retweeted from e in both tweets
    assert {(r["account"].screen_name, r["cascades"]) for r in amp["amplified"]} == {("b", 2), ("c", 1)}
    assert [(r["account"].screen_name, r["cascades"]) for r in amp["amplified_by"]] == [("f", 2)]


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
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    real_both, real_backward = influence.batch.both_phases, influence.batch.backward

    def fits(n):
        if n > holds:
            raise RuntimeError("cudaErrorMemoryAllocation: out of memory")

    def both_phases(cascades, graph, *, orphans, backend):
        if backend == "gpu":
            fits(cascades.n_nodes)
        return real_both(cascades, graph, orphans=orphans, backend="cpu")

    def backward(graphs, *, backend):
        if backend == "gpu":
            fits(graphs.cascades.n_nodes)
        return real_backward(graphs, backend="cpu")

    monkeypatch.setattr(runs, "resolve_backend", lambda name: "gpu")
    monkeypatch.setattr(runs, "device_name", lambda b: "fake GPU" if b == "gpu" else "CPU")
    monkeypatch.setattr(influence.batch, "both_phases", both_phases)
    monkeypatch.setattr(influence.batch, "backward", backward)
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
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    monkeypatch.setattr(runs, "resolve_backend", lambda name: "gpu")
    monkeypatch.setattr(
        influence.batch, "both_phases", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("a kernel bug"))
    )
    run = run_tasks(services.compute_run_start, workspace=ws_a, backend="gpu")
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.FAILED and run.error == "batch 0: RuntimeError: a kernel bug"
    assert is_device_oom(RuntimeError("CUDA_ERROR_OUT_OF_MEMORY")) and not is_device_oom(MemoryError())


def _cascades_with_given_edges(seed: int):
    import numpy as np

    from compute.structures import Cascades
    from monitor.algorithms.influence import GivenEdgeRows

    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, size=60)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    # each cascade's participants: distinct accounts, shared across cascades, in no particular order
    users = np.concatenate([rng.choice(500, size=n, replace=False) + 10**9 for n in sizes])
    c = Cascades(
        node_offsets=offsets,
        user_ids=users,
        followers=np.ones(len(users)),
        publisher=offsets[:-1].copy(),
        tweet_ids=np.arange(60, dtype=np.int64) * 7 + 3,
    )
    tweet, src, dst = [], [], []
    for k, n in enumerate(sizes):
        for _ in range(int(rng.integers(0, 3 * n))):
            a, b = rng.integers(0, n, size=2)
            tweet.append(c.tweet_ids[k])
            src.append(users[offsets[k] + a])
            dst.append(users[offsets[k] + b])
    edges = GivenEdgeRows(np.array(tweet), np.array(src), np.array(dst))
    return c, edges


@pytest.mark.parametrize("seed", [0, 1])
def test_given_edges_find_the_node_of_their_account_in_their_own_cascade(seed):
    import numpy as np

    c, edges = _cascades_with_given_edges(seed)
    g = influence._given_graphs(c, edges)
    # per edge, by a direct look-up: the node of the named account within the edge's cascade
    want = {}
    for k in range(c.n_cascades):
        for node in range(c.node_offsets[k], c.node_offsets[k + 1]):
            want[(int(c.tweet_ids[k]), int(c.user_ids[node]))] = node
    expected = sorted(
        (want[(t, s)], want[(t, d)]) for t, s, d in zip(edges.tweet.tolist(), edges.src.tolist(), edges.dst.tolist())
    )
    assert sorted(zip(g.edge_src.tolist(), g.edge_dst.tolist())) == expected
    cascade_of = c.cascade_of_node()
    for k in range(c.n_cascades):  # each cascade's edges lie in its own slice
        lo, hi = g.edge_offsets[k], g.edge_offsets[k + 1]
        assert (cascade_of[g.edge_src[lo:hi]] == k).all() and (cascade_of[g.edge_dst[lo:hi]] == k).all()
    assert len(g.edge_src) == len(edges.tweet) and np.diff(g.edge_offsets).min() >= 0


def test_a_given_edge_naming_an_account_outside_its_cascade_is_refused():
    import numpy as np

    from monitor.algorithms.influence import GivenEdgeRows

    c, edges = _cascades_with_given_edges(0)
    src = edges.src.copy()
    src[5] = 7  # no participant of any cascade
    with pytest.raises(ValueError, match="not a participant of its cascade"):
        influence._given_graphs(c, GivenEdgeRows(edges.tweet, src, edges.dst))
    other = c.user_ids[c.node_offsets[edges.tweet[5] // 7 + 1] :]  # accounts of later cascades only
    stranger = np.setdiff1d(
        other, c.user_ids[c.node_offsets[edges.tweet[5] // 7] : c.node_offsets[edges.tweet[5] // 7 + 1]]
    )
    src[5] = stranger[0]  # a participant of another cascade, not of this one
    with pytest.raises(ValueError, match="not a participant of its cascade"):
        influence._given_graphs(c, GivenEdgeRows(edges.tweet, src, edges.dst))


@pytest.fixture
def follow_reads(follow_row_reads):
    return follow_row_reads


def test_a_run_maps_the_follower_graph_once_for_all_its_batches_and_the_next_run_keeps_it(
    ws_a, import_files, run_tasks, settings, follow_reads
):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    settings.SPREADWATCH_RUN_WORKERS, settings.SPREADWATCH_BATCH_MIN_NODES = 3, 1
    first = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    first.refresh_from_db()
    assert first.status == "done" and first.batches.count() == 2
    assert follow_reads == []  # the import wrote the graph's file (monitor/graph_files.py): no rows read back
    assert sum(b.timings.get("graph_kept", 0) for b in first.batches.all()) == 1
    second = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    second.refresh_from_db()
    assert second.status == "done" and follow_reads == []
    assert sum(b.timings.get("graph_kept", 0) for b in second.batches.all()) == 2
    assert total_by_name(ws_a) == EXPECTED_TOTAL


def test_new_follows_make_the_next_run_read_the_new_version(ws_a, import_files, follow_reads):
    from monitor.models import Workspace

    import_files(ws_a, [THESIS / "tweets.csv"])  # computed without follows: everyone but the publisher an orphan
    token = Workspace.objects.get(pk=ws_a.pk).follows_token
    assert len(follow_reads) == 1 and total_by_name(ws_a) != EXPECTED_TOTAL  # the first reader built the file
    c = import_files(ws_a, [THESIS / "follows.csv"])  # recomputes the cascades the new follows touch
    assert c.status == "done", c.error
    assert Workspace.objects.get(pk=ws_a.pk).follows_token != token
    assert len(follow_reads) == 1  # the import wrote the new version from the one before
    assert total_by_name(ws_a) == EXPECTED_TOTAL  # a kept graph without the follows would give the orphans' numbers


def test_a_follows_write_that_rolls_back_leaves_the_token_as_it_was(ws_a):
    from django.db import connection, transaction

    from monitor.db import renew_follows_token
    from monitor.models import Workspace

    before = Workspace.objects.get(pk=ws_a.pk).follows_token
    with pytest.raises(RuntimeError), transaction.atomic(), connection.cursor() as cur:
        renew_follows_token(cur, ws_a.pk)
        assert Workspace.objects.get(pk=ws_a.pk).follows_token != before
        raise RuntimeError("the import failed")
    assert Workspace.objects.get(pk=ws_a.pk).follows_token == before


def test_a_live_stream_batch_reads_only_the_follows_among_its_participants(ws_a, import_files, follow_reads):
    from monitor.models import ComputeBatch

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    pks = list(Tweet.objects.filter(workspace=ws_a).values_list("pk", flat=True))
    run = ComputeRun(workspace_id=ws_a.pk, algorithm="influence", orphans="strict", backend="cpu")  # no row
    res = influence.Influence().compute(
        run=run, batch=ComputeBatch(run=run, tweet_pks=pks), backend="cpu", stop=lambda: False
    )
    assert follow_reads == [] and not influence._GRAPHS
    assert res.n_edges == 11  # the thesis' two spreading graphs: 7 + 4 edges


def test_changed_rows_writes_new_and_different_rows_and_deletes_gone_and_different_ones():
    np = pytest.importorskip("numpy")
    nan = float("nan")
    # columns: tweet, account, then the values compared (influence, role)
    old = [np.array([1, 1, 1, 2, 2]), np.array([10, 11, 12, 10, 13]),
           np.array([5.0, 3.0, nan, 1.0, 2.0]), np.array([0, 2, 2, 0, 2])]  # fmt: skip
    new = [np.array([2, 1, 1, 1, 3]), np.array([10, 12, 10, 11, 10]),
           np.array([1.5, nan, 5.0, 3.0, 7.0]), np.array([0, 2, 0, 1, 0])]  # fmt: skip
    write, gone = influence.changed_rows(old, new)
    # (1, 10) and (1, 12) are unchanged (NaN equals NaN); (1, 11) changed role, (2, 10) changed influence;
    # (2, 13) is gone and (3, 10) is new
    assert write.tolist() == [True, False, False, True, True]
    assert gone.tolist() == [False, True, False, True, True]
    nothing_old = influence.changed_rows([a[:0] for a in old], new)
    assert nothing_old[0].all() and not len(nothing_old[1])


@pytest.mark.parametrize("big", [False, True], ids=["int64 codes", "ids too far apart: structured"])
def test_key_positions_finds_each_rows_key_as_a_lookup_would(big):
    import numpy as np

    rng = np.random.default_rng(7)
    span = 2**40 if big else 50  # four columns of 2**40 values overflow one int64 code
    keys = np.unique(rng.integers(0, span, size=(300, 4)), axis=0)  # unique and sorted, as the callers give
    rows = np.concatenate([keys[rng.integers(0, len(keys), 500)], rng.integers(0, span, size=(200, 4))])
    pos, hit = influence._key_positions(keys, rows)
    index = {tuple(k): i for i, k in enumerate(keys.tolist())}
    want = [i for i, r in enumerate(rows.tolist()) if tuple(r) in index]
    assert hit.tolist() == want
    assert [int(pos[i]) for i in want] == [index[tuple(rows[i].tolist())] for i in want]


@pytest.mark.parametrize(
    "radices", [[5, 4], [3], [300, 300], [1, 1]], ids=["label and role", "one column", "a wide key", "one combination"]
)
def test_code_groups_give_each_combination_of_codes_its_rows_in_order(radices):
    # what the binary COPY of the per-cascade and daily rows writes as one block per combination of text values
    rng = np.random.default_rng(3)
    n = 3000
    codes = [rng.integers(0, r, n).astype(np.int8 if r < 100 else np.int64) for r in radices]
    got = [(combo, rows.tolist()) for combo, rows in influence.copies._code_groups(codes, n)]
    stacked = np.stack(codes, axis=1)
    want = [
        (tuple(c.tolist()), np.flatnonzero((stacked == c).all(axis=1)).tolist()) for c in np.unique(stacked, axis=0)
    ]
    assert got == want


def test_code_groups_of_no_coded_column_no_row_or_a_negative_code():
    groups = influence.copies._code_groups
    assert [(c, r.tolist()) for c, r in groups([], 3)] == [((), [0, 1, 2])]
    assert list(groups([np.zeros(0, np.int64)], 0)) == []
    with pytest.raises(ValueError, match="negative code"):
        list(groups([np.array([0, -1, 2])], 3))


def _daily_rows(ws) -> list[tuple]:
    from monitor.models import DailyInfluence

    rows = DailyInfluence.objects.filter(workspace=ws).values_list(
        "publisher_id", "day", "label", "account_id", "influence", "cascades"
    )
    return sorted(rows)


def _daily_by_definition(ws) -> list[tuple]:
    """The daily aggregates as their definition says: the per-cascade rows grouped by (publisher, day, label,
    account), summed and counted, straight from the table."""
    from django.db.models import Count, Sum

    rows = (
        CascadeInfluence.objects.filter(tweet__workspace=ws)
        .values_list("publisher_id", "day", "label", "account_id")
        .annotate(s=Sum("influence"), n=Count("id"))
    )
    return sorted(rows)


def test_the_daily_aggregates_equal_their_definition_when_a_publisher_s_day_is_split_over_batches(
    ws_a, import_files, run_tasks, settings, tmp_path
):
    # the thesis' second cascade moved to the first one's day: one publisher and day, five accounts in both
    same_day = tmp_path / "tweets.csv"
    same_day.write_text((THESIS / "tweets.csv").read_text().replace("2020-01-02T00", "2020-01-01T12"))
    import_files(ws_a, [same_day, THESIS / "follows.csv"])
    originals = Tweet.objects.filter(workspace=ws_a, n_participants__gt=1)
    assert len({(t.author_id, t.created_at.date()) for t in originals}) == 1 and originals.count() == 2
    settings.SPREADWATCH_RUN_WORKERS, settings.SPREADWATCH_BATCH_MIN_NODES = 3, 1
    for _ in range(2):  # a first run, then the same again: rows replaced, never added twice
        run = run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
        run.refresh_from_db()
        assert run.status == "done" and run.batches.count() == 2
        assert _daily_rows(ws_a) == _daily_by_definition(ws_a)
        assert sum(n for *_, n in _daily_rows(ws_a)) == CascadeInfluence.objects.filter(tweet__workspace=ws_a).count()
    assert total_by_name(ws_a) == EXPECTED_TOTAL
