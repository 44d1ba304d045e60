"""The all-time ranking across publishers, served from the per-process snapshot: it ranks like the query over
the daily aggregates for every sort, label filter and page, and it follows imports, recomputes and label
changes (the data version changes)."""

from __future__ import annotations

import datetime as dt
import itertools
import shutil

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitor import selectors, services
from monitor.cache import bump_data_version
from monitor.models import DailyInfluence, Tweet
from monitor.selectors import rankings, windows
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

TWITTER16 = THESIS.parent / "twitter16"


@pytest.fixture(autouse=True)
def _read_cache_on(settings):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60  # the snapshot lives only while the read cache is on


def _from_days(ws, labels, sort, spreaders_only=False):
    where, params = windows.daily_where(ws, None, selectors.Window(), labels)
    if spreaders_only:
        where, params = rankings.without_publisher(where, params, None)
    return rankings._ranked_from_days(where, params, sort, 10**6, 0)


def _score(row, sort):
    _, total, tv = row
    return {"cascades": (tv, total), "participation": (total / tv,)}.get(sort, (total,))


def _assert_same(ws):
    """Every account, value and position agrees with the SQL (positions up to exact float ties)."""
    snap = rankings._all_time(ws)
    labels_seen = sorted(set(DailyInfluence.objects.filter(workspace=ws).values_list("label", flat=True)))
    filters = [None, *([x] for x in labels_seen), labels_seen[:2], labels_seen]
    # the spreaders' rankings of the pages too: each publisher's rows on its own tweets left out
    for labels, sort, spreaders in itertools.product(filters, selectors.SORTS, (False, True)):
        days, n_days = _from_days(ws, labels, sort, spreaders)
        mine, n_mine = snap.page(labels, sort, 10**6, 0, spreaders_only=spreaders)
        assert n_mine == n_days == len(days) == len(mine), (labels, sort)
        want = {pk: (float(t), int(tv)) for pk, t, tv in days}
        for pk, total, tv in mine:
            assert total == pytest.approx(want[pk][0], rel=1e-12) and tv == want[pk][1], (labels, sort, pk)
        # the order: scores never increase; equal scores in account order, as ORDER BY ... , account_id
        for a, b in itertools.pairwise(mine):
            sa, sb = _score(a, sort), _score(b, sort)
            assert sa >= tuple(x - 1e-9 * abs(x) for x in sb), (labels, sort)
            if sa == sb:
                assert a[0] < b[0]
        page, n = snap.page(labels, sort, 5, 3, spreaders_only=spreaders)
        assert page == mine[3:8] and n == n_mine


@pytest.fixture
def twitter16_zip(tmp_path):
    return shutil.make_archive(str(tmp_path / "twitter16"), "zip", TWITTER16)


def test_the_snapshot_ranks_like_the_daily_aggregates_for_every_sort_label_and_page(ws_a, import_files, twitter16_zip):
    import_files(ws_a, [twitter16_zip])
    assert len(set(DailyInfluence.objects.filter(workspace=ws_a).values_list("label", flat=True))) >= 3
    _assert_same(ws_a)


def test_the_snapshot_follows_a_second_import_and_a_relabelled_recompute(ws_a, import_files, run_tasks):
    import_files(ws_a, [THESIS / "tweets.csv"])  # no follows yet: every retweeter an orphan
    assert total_by_name(ws_a)["b"] == 4.0
    _assert_same(ws_a)
    import_files(ws_a, [THESIS / "follows.csv"])  # recomputed: a new data version, a new snapshot
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    _assert_same(ws_a)
    Tweet.objects.filter(workspace=ws_a, tweet_id=1000).update(label="false")
    run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    _assert_same(ws_a)
    assert [r["screen_name"] for r in selectors.ranking(ws_a, labels=["false"]).rows][:3] == ["b", "e", "f"]
    top = selectors.top_spreaders(ws_a, labels=["false"], limit=2)
    assert [(r["screen_name"], r["total"]) for r in top] == [("b", 63.0), ("e", 48.0)]  # cascade 1000 alone


def test_the_all_time_ranking_reads_the_snapshot_and_other_windows_the_daily_rows(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    lo, hi = selectors.data_span(ws_a)
    wide = selectors.Window(lo - dt.timedelta(days=29), hi)  # "last 30 days of data" reaching past the start
    selectors.ranking(ws_a, window=wide)  # builds the snapshot
    with CaptureQueriesContext(connection) as q:
        page = selectors.ranking(ws_a, window=wide, sort="cascades", offset=1)
    assert "monitor_dailyinfluence" not in " ".join(x["sql"] for x in q.captured_queries)
    assert [r["rank"] for r in page.rows] == [2, 3, 4, 5, 6]
    assert {r["screen_name"]: r["total"] for r in selectors.ranking(ws_a, window=wide).rows} == EXPECTED_TOTAL
    after = selectors.Window(hi + dt.timedelta(days=1), None)  # after the data: nothing, from the daily rows
    with CaptureQueriesContext(connection) as q:
        assert selectors.ranking(ws_a, window=after).rows == []
    assert "monitor_dailyinfluence" in " ".join(x["sql"] for x in q.captured_queries)


def test_a_rankings_variants_read_its_tweet_count_and_unit_once_per_data_version(ws_a, import_files):
    """T and the unit are the same for every aggregate, sort and page of a ranking: read once per data version, not
    by each variant (across publishers each reads every computed tweet or publisher-day of the workspace); a new
    version reads them again."""
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    first = selectors.ranking(ws_a)
    variants = [{"aggregate": "mean"}, {"sort": "cascades"}, {"offset": 1}, {"aggregate": "participation", "limit": 3}]
    with CaptureQueriesContext(connection) as q:
        pages = [selectors.ranking(ws_a, **v) for v in variants]
    sql = " ".join(x["sql"] for x in q.captured_queries)
    assert "monitor_publisherday" not in sql and '"unit"' not in sql
    assert {(p.tweets, p.unit) for p in pages} == {(first.tweets, first.unit)} == {(2, "followers reached")}
    # a new data version (what a recompute, an import or a relabelling makes) reads them again
    Tweet.objects.filter(workspace=ws_a).update(unit="retweeters")  # as if computed so: the words must follow
    bump_data_version(ws_a.pk)
    with CaptureQueriesContext(connection) as q:
        again = selectors.ranking(ws_a, aggregate="mean")
    sql = " ".join(x["sql"] for x in q.captured_queries)
    assert "monitor_publisherday" in sql and '"unit"' in sql
    assert (again.tweets, again.unit) == (2, "retweeters reached")


def test_the_cached_all_time_sums_take_22_bytes_a_pair_and_rank_as_before(ws_a, import_files, twitter16_zip):
    import numpy as np

    import_files(ws_a, [twitter16_zip])
    *cols, version = rankings.all_time_sums(ws_a)
    assert [c.dtype for c in cols] == [np.int64, np.int8, np.float64, np.int32, np.bool_]
    assert sum(c.dtype.itemsize for c in cols) == 22 and version is not None
    assert set(cols[1].tolist()) <= set(rankings._LABEL_CODES.values())
    _assert_same(ws_a)


def test_without_the_read_cache_there_is_no_snapshot(ws_a, import_files, settings):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = 0
    assert rankings._all_time(ws_a) is None
    assert total_by_name(ws_a) == EXPECTED_TOTAL  # from the daily rows


# --- the snapshot's orders, grouped once per label filter ------------------------------------------------------


def _reference_order(account, label, influence, cascades, own, labels, sort, spreaders_only):
    """Each sort of the snapshot, transcribed row by row: sums per account, then score descending, ties by
    account ascending (``cascades``: T_v, then total)."""
    codes = {rankings._LABEL_CODES[x] for x in labels} if labels else None
    sums: dict[int, list] = {}
    for a, lab, i, c, o in zip(account.tolist(), label.tolist(), influence.tolist(), cascades.tolist(), own.tolist()):
        if (codes is not None and lab not in codes) or (spreaders_only and o):
            continue
        s = sums.setdefault(a, [0.0, 0])
        s[0] += i
        s[1] += c
    key = {
        "total": lambda a: (-sums[a][0], a),
        "mean": lambda a: (-sums[a][0], a),
        "participation": lambda a: (-(sums[a][0] / max(sums[a][1], 1)), a),
        "cascades": lambda a: (-sums[a][1], -sums[a][0], a),
    }[sort]
    return [(a, sums[a][0], sums[a][1]) for a in sorted(sums, key=key)]


@pytest.mark.parametrize("spread", [1, 1000], ids=["keys in one run", "keys spread wide"])
def test_every_sort_of_the_snapshot_ranks_like_its_rows_summed_one_by_one(spread):
    import numpy as np

    rng = np.random.default_rng(5)
    n = 3000
    account = 100 + rng.integers(0, 400, n) * spread  # few distinct accounts: many rows each, many ties
    label = rng.integers(0, 3, n)
    influence = rng.integers(0, 4, n).astype(float) / 2  # halves: ties in the totals, exact sums
    cascades = rng.integers(1, 3, n)
    own = rng.random(n) < 0.1
    snap = rankings._AllTime(account, label, influence, cascades, own, version=1)
    labels_of = [None, [rankings.Label.choices[1][0]], [x for x, _ in rankings.Label.choices[:2]]]
    for labels, sort, spreaders_only in itertools.product(labels_of, rankings.SORTS, [False, True]):
        ids, total, t_v = snap.ordered(labels, sort, spreaders_only)
        got = list(zip(ids.tolist(), total.tolist(), t_v.tolist(), strict=True))
        want = _reference_order(account, label, influence, cascades, own, labels, sort, spreaders_only)
        assert got == want, (labels, sort, spreaders_only)
    # the mean's order is the total's (T is the same for every account): one order kept, not two
    assert snap.ordered(None, "mean", True) is snap.ordered(None, "total", True)


@pytest.mark.parametrize("top_min", [16, 1024])
def test_a_page_of_the_snapshot_sorts_only_the_top_and_reads_like_the_whole_order(top_min, monkeypatch):
    """A page is read from the first accounts alone (picked by a partition, every tie at the cut picked, then
    sorted): every sort, filter and depth reads as the whole order does, and a deeper page orders more."""
    import numpy as np

    monkeypatch.setattr(rankings._AllTime, "TOP_MIN", top_min)
    rng = np.random.default_rng(9)
    n = 60_000
    account = rng.integers(1, 20_000, n)
    label = rng.integers(0, 3, n)
    influence = rng.integers(0, 8, n).astype(float) / 4  # quarters: many equal totals, exact sums
    cascades = rng.integers(1, 4, n)
    own = rng.random(n) < 0.1
    labels_of = [None, [rankings.Label.choices[1][0]]]
    for labels, sort, spreaders_only in itertools.product(labels_of, rankings.SORTS, [False, True]):
        paged = rankings._AllTime(account, label, influence, cascades, own, version=1)
        whole = rankings._AllTime(account, label, influence, cascades, own, version=1)
        ids, total, t_v = whole.ordered(labels, sort, spreaders_only)
        everything = list(zip(ids.tolist(), total.tolist(), t_v.tolist(), strict=True))
        for offset, limit in [(0, 50), (50, 50), (0, 10), (900, 50), (3000, 100), (len(ids) - 20, 50)]:
            rows, count = paged.page(labels, sort, limit, offset, spreaders_only=spreaders_only)
            assert count == len(ids) and rows == everything[offset : offset + limit], (labels, sort, offset)
        key = (tuple(labels) if labels else None, "total" if sort == "mean" else sort, spreaders_only)
        if top_min == 1024:  # the first pages came from the top alone, not from a whole order
            fresh = rankings._AllTime(account, label, influence, cascades, own, version=1)
            fresh.page(labels, sort, 50, 0, spreaders_only=spreaders_only)
            assert key not in fresh._orders and len(fresh._tops[key][0]) < len(ids)


# --- a live stream: each version's recorded change added to the snapshot before it -------------------------------


def test_adding_recorded_changes_sums_per_pair_and_drops_pairs_left_without_a_daily_row():
    import numpy as np

    from monitor.algorithms.influence import AllTimeDelta

    base = rankings._AllTime(np.array([7, 7, 9]), np.array([0, 1, 0]), np.array([5.0, 2.0, 1.5]),
                             np.array([2, 1, 1]), version=3)  # fmt: skip
    # version 4: account 7's label-1 rows rewritten (2.0 -> 3.25), account 9's only row deleted, account 11 new
    four = AllTimeDelta(np.array([7, 7, 9, 11]), np.array([1, 1, 0, 4]), np.array([3.25, -2.0, -1.5, 8.0]),
                        np.array([1, -1, -1, 2]))  # fmt: skip
    snap = base.advanced([four, AllTimeDelta.empty()], 5)
    got = {(int(a), int(lab)): (float(i), int(c)) for a, lab, i, c in
           zip(snap.account, snap.label, snap.influence, snap.cascades, strict=True)}  # fmt: skip
    assert got == {(7, 0): (5.0, 2), (7, 1): (3.25, 1), (11, 4): (8.0, 2)}
    assert (snap.version, snap.depth) == (5, 2)
    assert snap.page(None, "total", 10, 0) == ([(7, 8.25, 3), (11, 8.0, 2)], 2)


def test_a_snapshot_in_pair_order_and_one_in_no_order_advance_to_the_same_sums_as_its_rows_summed_one_by_one():
    import numpy as np

    from monitor.algorithms.influence import AllTimeDelta

    rng = np.random.default_rng(7)
    n = 3000
    acc, lab, own = rng.integers(1, 800, n), rng.integers(-1, 5, n), rng.integers(0, 2, n).astype(bool)
    inf, tv = rng.integers(1, 50, n).astype(float), rng.integers(1, 4, n)
    rows = {}
    for a, la, o, i, t in zip(acc.tolist(), lab.tolist(), own.tolist(), inf.tolist(), tv.tolist(), strict=True):
        s, c = rows.get((a, la, o), (0.0, 0))
        rows[(a, la, o)] = (s + i, c + t)
    keys = list(rows)
    shuffled = rankings._AllTime(*(np.array(x) for x in zip(*[(k[0], k[1], *rows[k], k[2]) for k in keys])), version=1)
    in_order = shuffled.advanced([], 1)  # regrouped: pairs in code order
    assert (np.diff(rankings._pair_codes(in_order.account, in_order.label, in_order.own)) > 0).all()
    # two versions of changes: some pairs emptied, some grown (several rows a pair), some new
    d1 = [(k[0], k[1], k[2], -rows[k][0], -rows[k][1]) for k in keys[:200]]
    fresh = zip(rng.integers(1, 900, 500), rng.integers(-1, 5, 500), rng.integers(0, 2, 500), rng.integers(1, 9, 500))
    d2 = [(int(a), int(la), bool(o), float(i), 1) for a, la, o, i in fresh]
    for a, la, o, i, t in d1 + d2:
        s, c = rows.get((a, la, o), (0.0, 0))
        rows[(a, la, o)] = (s + i, c + t)
    want = {k: v for k, v in rows.items() if v[1] > 0}

    def delta(part):
        a, la, o, i, t = (np.array(x) for x in zip(*part))
        return AllTimeDelta(a, la, i.astype(float), t, o.astype(bool))

    for base in (shuffled, in_order):
        snap = base.advanced([delta(d1), delta(d2)], 3)
        cols = (snap.account, snap.label, snap.influence, snap.cascades, snap.own)
        got = {(a, la, o): (i, t) for a, la, i, t, o in zip(*(c.tolist() for c in cols), strict=True)}
        assert got == want and snap.version == 3


def test_the_label_codes_of_the_recorded_changes_are_the_snapshots():
    from monitor.algorithms import influence

    assert [rankings._LABEL_CODES[v] for v in influence._LABELS] == list(range(len(influence._LABELS)))


@pytest.fixture
def counted_reads(monkeypatch):
    """How many times the snapshot's sums were read whole (``all_time_sums``)."""
    calls = []
    whole = rankings.all_time_sums

    def counting(ws):
        calls.append(ws.pk)
        return whole(ws)

    counting.key_for, counting.key_at = whole.key_for, whole.key_at  # what the warm-up and the carry-over ask
    monkeypatch.setattr(rankings, "all_time_sums", counting)
    rankings._ALL_TIME.clear()
    yield calls
    rankings._ALL_TIME.clear()


def test_after_each_stream_micro_batch_the_snapshot_adds_its_recorded_change_and_ranks_like_the_daily_rows(
    ws_a, run_tasks, counted_reads
):
    if connection.vendor != "postgresql":
        pytest.skip("a stream micro-batch rewrites only its changed daily rows (and records it) on PostgreSQL")
    from monitor.cache import data_version
    from monitor.services.stream.apply import apply_events
    from tests.monitor.services.stream.test_apply import add_events, thesis_records

    tweets, follows = thesis_records()
    run_tasks(apply_events, workspace_id=ws_a.pk, event_ids=add_events(ws_a, follows + tweets[:4]))
    _assert_same(ws_a)
    assert len(counted_reads) == 1 and rankings._all_time(ws_a).depth == 0
    # three more micro-batches (a retweet of the first cascade arriving late in the last); the follows-only one
    # changes no sum, and records that
    rest = tweets[4:]
    batches = [rest[1 : len(rest) // 2], [{"follower": 999, "followee": 998}], rest[len(rest) // 2 :] + rest[:1]]
    for depth, records in enumerate(batches, start=1):
        before = data_version(ws_a)
        run_tasks(apply_events, workspace_id=ws_a.pk, event_ids=add_events(ws_a, records))
        assert data_version(ws_a) != before
        snap = rankings._all_time(ws_a)
        assert (len(counted_reads), snap.depth) == (1, depth)  # not read whole
        _assert_same(ws_a)
    assert total_by_name(ws_a) == EXPECTED_TOTAL  # the worked example's answer, as a batch upload gives it


def test_a_version_with_no_recorded_change_is_read_whole(ws_a, run_tasks, counted_reads, import_files):
    if connection.vendor != "postgresql":
        pytest.skip("only a PostgreSQL micro-batch records its change")
    from django.core.cache import cache

    from monitor.cache import _all_time_delta_key, data_version
    from monitor.services.stream.apply import apply_events
    from tests.monitor.services.stream.test_apply import add_events, thesis_records

    tweets, follows = thesis_records()
    run_tasks(apply_events, workspace_id=ws_a.pk, event_ids=add_events(ws_a, follows + tweets[:5]))
    rankings._all_time(ws_a)
    run_tasks(apply_events, workspace_id=ws_a.pk, event_ids=add_events(ws_a, tweets[5:8]))
    cache.delete(_all_time_delta_key(data_version(ws_a)))  # Redis lost it (or it expired)
    assert rankings._all_time(ws_a).depth == 0 and len(counted_reads) == 2
    _assert_same(ws_a)
    reads = len(counted_reads)
    services.workspace_purge(workspace=ws_a, delete_workspace=False)  # a purge records nothing: read whole
    assert rankings._all_time(ws_a).depth == 0 and len(counted_reads) == reads + 1
    assert rankings._all_time(ws_a).page(None, "total", 10, 0) == ([], 0)


@pytest.fixture
def row_passes(monkeypatch):
    """The SQL of every pass over a workspace's daily rows that ``all_time_sums`` groups (not a call of it)."""
    from monitor import db

    grouped: list[str] = []
    real = db.copy_out

    def spy(cur, sql, *args, **kwargs):
        if "FROM monitor_dailyinfluence WHERE workspace_id" in sql:
            grouped.append(sql)
        return real(cur, sql, *args, **kwargs)

    monkeypatch.setattr(db, "copy_out", spy)
    rankings._ALL_TIME.clear()
    yield grouped
    rankings._ALL_TIME.clear()


def test_an_import_and_the_compute_run_after_it_record_their_changes_and_the_snapshot_adds_them(
    ws_a, import_files, run_tasks, row_passes
):
    if connection.vendor != "postgresql":
        pytest.skip("a compute batch records its change on PostgreSQL (its aggregates are summed in the engine)")
    from monitor.cache import data_version

    import_files(ws_a, [THESIS / "tweets.csv"])  # no follows yet: every retweeter an orphan
    _assert_same(ws_a)
    passes = len(row_passes)
    before = data_version(ws_a)
    import_files(ws_a, [THESIS / "follows.csv"])  # an import (no sum changed), then the run that recomputes
    assert data_version(ws_a) != before
    snap = rankings._all_time(ws_a)
    assert len(row_passes) == passes and snap.depth >= 2  # advanced over both versions, not grouped again
    _assert_same(ws_a)
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    # a run over one cascade, relabelled: its pairs' old daily rows out, the new ones in
    Tweet.objects.filter(workspace=ws_a, tweet_id=1000).update(label="false")
    pks = list(Tweet.objects.filter(workspace=ws_a, tweet_id=1000).values_list("pk", flat=True))
    run_tasks(services.compute_run_start, workspace=ws_a, tweet_pks=pks, backend="cpu")
    assert len(row_passes) == passes and rankings._all_time(ws_a).depth > snap.depth
    _assert_same(ws_a)
    assert [r["screen_name"] for r in selectors.ranking(ws_a, labels=["false"]).rows][:3] == ["b", "e", "f"]


def test_a_workspaces_first_run_builds_its_all_time_sums_from_its_changes_alone(
    ws_a, import_files, run_tasks, row_passes, monkeypatch
):
    """Before a workspace's first run there is no daily row: its batches record that the version before them had
    none, and the run's warm-up adds their changes to empty sums instead of grouping every daily row."""
    if connection.vendor != "postgresql":
        pytest.skip("a compute batch records its change on PostgreSQL")
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])  # the import and its run
    assert len(_warmed_sums(ws_a, row_passes, monkeypatch)[0]) > 0
    # a later run of the same workspace finds daily rows: it records nothing of the kind
    from monitor.cache import all_time_empty, current_version

    number = int(current_version(ws_a).rpartition(":")[2])
    run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    after = int(current_version(ws_a).rpartition(":")[2])
    assert all_time_empty(ws_a, list(range(number, after + 1))) == set()


def test_a_runs_warm_up_builds_the_new_all_time_sums_from_the_cached_ones_and_its_change(
    ws_a, import_files, run_tasks, row_passes, monkeypatch
):
    """The cached sums of the version a run commits are those of the rows, without a pass over every daily row:
    the previous version's cached sums with the recorded change added."""
    if connection.vendor != "postgresql":
        pytest.skip("a compute batch records its change on PostgreSQL")
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert rankings.all_time_sums(ws_a)[-1] is not None  # cached for this version, as the warm-up leaves them
    row_passes.clear()
    run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    _warmed_sums(ws_a, row_passes, monkeypatch)


def _warmed_sums(ws, row_passes: list, monkeypatch) -> tuple:
    """The all-time sums a run's warm-up cached, asserted built without a pass over the daily rows and equal, pair
    by pair and in their columns' types, to the same sums grouped from the rows."""
    from django.core.cache import cache

    key = rankings.all_time_sums.key_for(ws)
    warmed = cache.get(key)
    assert warmed is not None and row_passes == []  # warmed by the run, without grouping the rows
    cache.delete(key)
    monkeypatch.setattr(rankings, "_sums_advanced", lambda ws: None)
    whole = rankings.all_time_sums(ws)  # grouped from the rows
    assert len(row_passes) == 1 and warmed[-1] == whole[-1]

    def pairs(sums):
        *cols, _ = sums
        return sorted(zip(*(c.tolist() for c in cols), strict=True))

    assert pairs(warmed) == pairs(whole)
    assert [c.dtype for c in warmed[:-1]] == [c.dtype for c in whole[:-1]]
    return warmed


def _assert_publisher_pages(ws) -> list:
    """Every publisher page of ``ws`` from the grouped sums against the page's own query; its publishers."""
    lo, hi = selectors.data_span(ws)
    pubs = [selectors.account_get(ws, p["twitter_id"]) for p in selectors.publishers_summary(ws, limit=3)]
    labels_seen = sorted(set(DailyInfluence.objects.filter(workspace=ws).values_list("label", flat=True)))
    late = selectors.Window(lo + (hi - lo) / 2, None)
    for pub, window, labels, sort, spreaders in itertools.product(
        pubs, [selectors.Window(), late], [None, labels_seen[:1]], selectors.SORTS, (False, True)
    ):
        where, params = windows.daily_where(ws, pub, window, labels)
        if spreaders:
            where, params = rankings.without_publisher(where, params, pub)
        grouped = rankings._days_grouped(ws, publisher=pub, window=window, labels=labels, spreaders_only=spreaders)
        for limit, offset in ((10**6, 0), (5, 0), (5, 3), (3, 10**6)):
            days, n_days = rankings._ranked_from_days(where, params, sort, limit, offset)
            mine, n_mine = grouped.page(sort, limit, offset)
            assert n_mine == n_days, (pub.twitter_id, window, labels, sort)
            assert [r[0] for r in mine] == [r[0] for r in days], (pub.twitter_id, window, labels, sort, offset)
            for (_, total, tv), (_, t2, tv2) in zip(mine, days, strict=True):
                assert total == pytest.approx(float(t2), rel=1e-12) and tv == int(tv2)
    return pubs


def test_a_publishers_pages_come_from_its_grouped_sums_and_rank_like_the_daily_aggregates(
    ws_a, ws_b, import_files, twitter16_zip
):
    """A publisher's ranking (any window, labels, sort, page, spreaders or not) is paged from its sums grouped once
    per data version: the same rows and order as the page's own query over the daily rows. The worked example's
    publisher has two cascades, so its accounts' T_v differ (the cascades sort); Twitter16 has many publishers."""
    import_files(ws_b, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    _assert_publisher_pages(ws_b)
    import_files(ws_a, [twitter16_zip])
    pubs = _assert_publisher_pages(ws_a)
    # the ranking reads the grouped sums (no page query of its own once they are cached) ...
    selectors.ranking(ws_a, publisher=pubs[0])
    with CaptureQueriesContext(connection) as q:
        page = selectors.ranking(ws_a, publisher=pubs[0], sort="participation", offset=2)
    assert "GROUP BY d.account_id" not in " ".join(x["sql"] for x in q.captured_queries)
    assert [r["rank"] for r in page.rows][:2] == [3, 4]
    # ... and so does a window holding every day with data (its rows are the same)
    lo, hi = selectors.data_span(ws_a)
    wide = selectors.Window(lo - dt.timedelta(days=3), hi + dt.timedelta(days=3))
    with CaptureQueriesContext(connection) as q:
        assert (
            selectors.ranking(ws_a, publisher=pubs[0], window=wide).rows
            == selectors.ranking(ws_a, publisher=pubs[0]).rows
        )
    assert "GROUP BY d.account_id" not in " ".join(x["sql"] for x in q.captured_queries)


@pytest.mark.parametrize("sort", selectors.SORTS)
def test_a_grouped_page_orders_like_the_pages_query_through_every_tie(sort):
    import numpy as np

    rng = np.random.default_rng(3)
    n = 500
    acc = rng.permutation(np.arange(10, 10 + n))
    cas = rng.integers(1, 4, n)
    inf = rng.integers(0, 6, n) * 1.5  # few distinct values: ties everywhere
    grouped = rankings._Grouped(acc, inf, cas)
    key = {
        "participation": lambda i: (-(inf[i] / cas[i]), acc[i]),  # ORDER BY Σ influence / Σ T_v DESC, account
        "cascades": lambda i: (-cas[i], -inf[i], acc[i]),  # Σ T_v DESC, Σ influence DESC, account
    }.get(sort, lambda i: (-inf[i], acc[i]))
    want = sorted(range(n), key=key)
    for limit, offset in ((n, 0), (7, 0), (7, 93), (50, 480), (5, n)):
        rows, total = grouped.page(sort, limit, offset)
        assert total == n
        assert rows == [(int(acc[i]), float(inf[i]), int(cas[i])) for i in want[offset : offset + limit]]
