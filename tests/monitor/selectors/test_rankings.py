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
from monitor.models import DailyInfluence, Tweet
from monitor.selectors import rankings, windows
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

TWITTER16 = THESIS.parent / "twitter16"


@pytest.fixture(autouse=True)
def _read_cache_on(settings):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60  # the snapshot lives only while the read cache is on


def _from_days(ws, labels, sort):
    where, params = windows.daily_where(ws, None, selectors.Window(), labels)
    return rankings._ranked_from_days(where, params, sort, 10**6, 0)


def _score(row, sort):
    _, total, tv = row
    return {"cascades": (tv, total), "participation": (total / tv,)}.get(sort, (total,))


def _assert_same(ws):
    """Every account, value and position agrees with the SQL (positions up to exact float ties)."""
    snap = rankings._all_time(ws)
    labels_seen = sorted(set(DailyInfluence.objects.filter(workspace=ws).values_list("label", flat=True)))
    filters = [None, *([x] for x in labels_seen), labels_seen[:2], labels_seen]
    for labels, sort in itertools.product(filters, selectors.SORTS):
        days, n_days = _from_days(ws, labels, sort)
        mine, n_mine = snap.page(labels, sort, 10**6, 0)
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
        page, n = snap.page(labels, sort, 5, 3)
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


def test_without_the_read_cache_there_is_no_snapshot(ws_a, import_files, settings):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = 0
    assert rankings._all_time(ws_a) is None
    assert total_by_name(ws_a) == EXPECTED_TOTAL  # from the daily rows
