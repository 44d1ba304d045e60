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


def test_it_serves_a_repeated_account_page_and_cascade_explorer_from_the_cache(ws_a, import_files, settings):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    from django.db import connection

    e = ws_a.accounts.get(screen_name="e")
    t = ws_a.tweets.get(tweet_id=1000)
    first = (
        selectors.account_summary(ws_a, e),
        selectors.account_amplification(ws_a, e),
        selectors.cascade_explorer_data(ws_a, t, limit=400),
    )
    with CaptureQueriesContext(connection) as q:
        again = (
            selectors.account_summary(ws_a, e),
            selectors.account_amplification(ws_a, e),
            selectors.cascade_explorer_data(ws_a, t, limit=400),
        )
    assert len(q.captured_queries) == 0
    assert again[0]["total"] == first[0]["total"] == EXPECTED_TOTAL["e"]
    assert sorted(r["account"].screen_name for r in again[1]["amplified"]) == ["b", "c"]  # edges eb, ec
    assert again[2] == first[2]


def test_a_new_import_refreshes_a_cached_account_page(ws_a, import_files, settings, tmp_path):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    b = ws_a.accounts.get(screen_name="b")
    before = selectors.account_summary(ws_a, b)["follower_counts"]
    later = tmp_path / "later.csv"  # b tweets again a year later, with 999 followers by then
    later.write_text("tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n"
                     f"3000,,{b.twitter_id},2021-01-01T00:00:00Z,999,b\n")  # fmt: skip
    c = import_files(ws_a, [later])
    assert c.status == "done", c.error
    after = selectors.account_summary(ws_a, b)["follower_counts"]
    assert [c.count for c in after][:1] == [999]
    assert len(after) == len(before) + 1


def test_a_cold_value_another_process_is_computing_is_waited_for_not_computed_again(
    ws_a, import_files, settings, monkeypatch
):
    from django.core.cache import cache

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    settings.SPREADWATCH_READ_CACHE_WAIT = 5.0
    first = selectors.workspace_counts(ws_a)
    key = selectors.workspace_counts.key_for(ws_a)
    assert cache.get(key) == first
    cache.delete(key)
    cache.add(key + ":building", 1, timeout=60)  # "another process" is building it
    slept = []

    def other_process_finishes(seconds):
        slept.append(seconds)
        if len(slept) == 3:
            cache.set(key, {**first, "from": "the other process"}, timeout=60)

    monkeypatch.setattr("time.sleep", other_process_finishes)
    from django.db import connection

    with CaptureQueriesContext(connection) as q:
        got = selectors.workspace_counts(ws_a)
    assert got["from"] == "the other process" and len(slept) == 3
    assert len(q.captured_queries) == 0


def test_a_builder_that_never_finishes_only_delays_the_value(ws_a, import_files, settings, monkeypatch):
    from django.core.cache import cache

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    settings.SPREADWATCH_READ_CACHE_WAIT = 0.2
    want = selectors.workspace_counts(ws_a)
    key = selectors.workspace_counts.key_for(ws_a)
    cache.delete(key)
    cache.add(key + ":building", 1, timeout=60)  # a builder that died: its lock outlives it
    assert selectors.workspace_counts(ws_a) == want  # computed here after the wait
    assert cache.get(key) == want and cache.get(key + ":building") is None
