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


# --- lifetime and pruning: entries outlive a quiet spell, superseded versions are dropped --------------------------


def _redis_or_skip():
    """The raw Redis client behind the cache (``make test`` always has one: it refuses to run without Redis)."""
    import pytest

    from monitor.cache import redis_client

    client = redis_client()
    if client is None:
        pytest.skip("the read cache is not Redis here (REDIS_URL is not set)")
    return client


def _bump(ws) -> None:
    from django.db import transaction

    from monitor.cache import bump_data_version

    with transaction.atomic():
        bump_data_version(ws.pk)


def test_a_cached_read_outlives_a_quiet_spell(ws_a, import_files, settings):
    """The entries are keyed by the data version, so their TTL is only a bound: it is a week by default, where a
    300 s TTL made every page cold again after five quiet minutes."""
    from django.core.cache import cache

    import monitor.settings
    from monitor.cache import DEFAULT_TTL

    client = _redis_or_skip()
    assert monitor.settings.SPREADWATCH_READ_CACHE_SECONDS == DEFAULT_TTL >= 24 * 3600
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = DEFAULT_TTL
    selectors.ranking(ws_a)
    ttl = client.ttl(cache.make_key(selectors.ranking.key_for(ws_a)))
    assert DEFAULT_TTL - 60 < ttl <= DEFAULT_TTL


def test_pruning_drops_superseded_versions_and_keeps_the_current_two(client, alice, ws_a, import_files, settings):
    from django.core.cache import cache
    from django.urls import reverse

    from monitor import services
    from monitor.cache import current_version, data_version, fragment_key, prune_superseded, versioned_key
    from monitor.models import Workspace

    _redis_or_skip()
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_READ_CACHE_SECONDS = 600
    client.force_login(alice)
    url = reverse("ranking", kwargs={"ws": ws_a.slug})

    def reads() -> list[str]:  # a cached read and a rendered fragment of the current version
        selectors.ranking(ws_a)
        assert client.get(url).status_code == 200
        return [selectors.ranking.key_for(ws_a), fragment_key(data_version(ws_a), "ranking_results", url)]

    old = reads()
    _bump(ws_a)
    previous = reads()
    _bump(ws_a)
    now = reads()
    assert all(cache.get(k) is not None for k in old + previous + now)
    # a warm-up pins the next version before its transaction commits: newer than the row, kept
    number = Workspace.objects.get(pk=ws_a.pk).data_version
    ahead = versioned_key(current_version(ws_a).rpartition(":")[0] + f":{number + 1}", "warmed")
    cache.set(ahead, 1, timeout=600)
    # another workspace that is gone, and another database sharing this Redis
    gone = services.workspace_create(name="Gone", slug="gone")
    gone_key = versioned_key(current_version(gone), "read")
    cache.set(gone_key, 1, timeout=600)
    Workspace.objects.filter(pk=gone.pk).delete()
    other_db = "sw:read:another_database:1:0:abc"
    cache.set(other_db, 1, timeout=600)

    out = prune_superseded()
    assert out["deleted"] >= 3
    assert all(cache.get(k) is None for k in old), "the superseded version's entries were kept"
    assert cache.get(gone_key) is None, "a deleted workspace's entries were kept"
    assert all(cache.get(k) is not None for k in previous + now + [ahead, other_db])
    assert client.get(url).status_code == 200 and cache.get(now[1]) is not None


def test_pruning_runs_on_beat_in_the_default_queue(settings):
    from monitor.tasks import read_cache_prune

    entry = [e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == read_cache_prune.name]
    assert entry and entry[0]["schedule"] <= 300
    assert settings.CELERY_TASK_ROUTES[read_cache_prune.name] == {"queue": "default"}


def test_a_revised_read_never_meets_the_entries_of_its_previous_shape(ws_a, settings):
    """A deploy does not bump the data version: a read whose answer changed shape raises its revision, and its
    key is then another than the one the previous code wrote under the same version."""
    from monitor.cache import cached

    def sums(ws):
        return ws.pk

    before, after = cached(sums), cached(rev=1)(sums)
    assert before.key_for(ws_a) != after.key_for(ws_a)
    assert cached(rev=0)(sums).key_for(ws_a) == before.key_for(ws_a)  # every unrevised key stays as it was
    assert after(ws_a) == ws_a.pk


def test_a_change_recorded_in_a_transaction_is_read_by_it_alone_and_not_after_it_rolled_back(ws_a, settings):
    """The run's warm-up reads the change its own batch recorded before the commit; nothing else may: not another
    transaction, and not this one once the bump and the record rolled back (the version number comes again)."""
    from django.db import connection, transaction

    from monitor.algorithms.influence import AllTimeDelta
    from monitor.cache import all_time_deltas, bump_data_version, record_all_time_delta

    if connection.vendor != "postgresql":
        import pytest

        pytest.skip("a change is recorded on PostgreSQL only")
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    ws_a.refresh_from_db()

    class RolledBack(Exception):
        pass

    try:
        with transaction.atomic():
            n = bump_data_version(ws_a.pk)
            record_all_time_delta(ws_a.pk, n, AllTimeDelta.empty())
            assert all_time_deltas(ws_a, n, n) is not None  # this transaction's own read
            raise RolledBack
    except RolledBack:
        pass
    assert all_time_deltas(ws_a, n, n) is None  # its bump rolled back: the record with it
    with transaction.atomic():
        assert bump_data_version(ws_a.pk) == n  # the same number again, for another change
        assert all_time_deltas(ws_a, n, n) is None
