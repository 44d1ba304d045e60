"""The read cache of rankings and overview sums: served from the cache, and never staler than the last
compute commit."""

from __future__ import annotations

from django.test.utils import CaptureQueriesContext

from monitor import selectors, services
from monitor.models import Tweet
from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name


def test_it_serves_a_repeated_ranking_from_the_cache(ws_a, import_files, settings):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    from django.db import connection

    first = selectors.ranking(ws_a)
    with CaptureQueriesContext(connection) as q:
        again = selectors.ranking(ws_a)
    assert len(q.captured_queries) == 0
    assert [r["total"] for r in again.rows] == [r["total"] for r in first.rows]


def test_it_drops_cached_rankings_when_a_compute_run_commits(ws_a, import_files, run_tasks, settings):
    import_files(ws_a, [THESIS / "tweets.csv"])  # no follows yet: everyone but b is an orphan
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    assert total_by_name(ws_a)["b"] == 4.0  # cached now
    import_files(ws_a, [THESIS / "follows.csv"])  # import + recompute bump the data version on commit
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    Tweet.objects.filter(workspace=ws_a, tweet_id=1000).update(label="false")
    run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    assert selectors.ranking(ws_a, labels=["false"]).tweets == 1
