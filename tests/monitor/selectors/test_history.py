"""The rank chart: ``mean`` ranks like ``total`` (T is the same for everyone in a period), so the two share one
query over the daily rows; ``participation`` has its own."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from monitor import selectors
from tests.webapp import THESIS


@pytest.fixture(autouse=True)
def _read_cache_on(settings):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60


def test_the_mean_chart_ranks_like_the_total_chart_from_its_query(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    pub = selectors.account_get(ws_a, 102)
    total = selectors.rank_history(ws_a, publisher=pub, bucket="day")
    with CaptureQueriesContext(connection) as q:
        mean = selectors.rank_history(ws_a, publisher=pub, bucket="day", aggregate="mean")
    sql = " ".join(x["sql"] for x in q.captured_queries)
    assert "monitor_dailyinfluence" not in sql and "monitor_publisherday" in sql  # T per period only
    assert mean["periods"] == total["periods"] and mean["ranked"] == total["ranked"]
    assert [s["ranks"] for s in mean["series"]] == [s["ranks"] for s in total["series"]]
    tweets = {p: 0 for p in total["periods"]}
    for t in ws_a.tweets.filter(author=pub):
        tweets[t.created_at.date()] += 1
    for m, t in zip(mean["series"], total["series"], strict=True):
        for p, ms, ts in zip(total["periods"], m["scores"], t["scores"], strict=True):
            assert (ms is None) == (ts is None) and (ms is None or ms == pytest.approx(ts / tweets[p]))
    with CaptureQueriesContext(connection) as q:
        selectors.rank_history(ws_a, publisher=pub, bucket="day", aggregate="participation")
    assert "monitor_dailyinfluence" in " ".join(x["sql"] for x in q.captured_queries)
