"""The merge stores only what is new without ``ON CONFLICT``: rows on keys this upload created go straight in,
rows on old keys are checked against the stored ones in one pass; the workspace's merge lock is held until the
import ends (``monitor.services.ingest.merge``)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection, transaction

from monitor.models import Account, Collection, Follow, FollowerCount, Retweet
from monitor.services.ingest import load_files
from monitor.services.ingest.merge import MERGE_LOCK_CLASS
from tests.webapp import THESIS

UTC = dt.UTC
CSV_HEAD = "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n"


def _retweet(ws, tweet_id: int, user_id: int) -> Retweet:
    return Retweet.objects.get(tweet__workspace=ws, tweet__tweet_id=tweet_id, retweeter__twitter_id=user_id)


def test_a_partly_stored_upload_stores_what_is_new_and_moves_stored_retweets_earlier(ws_a, import_files, tmp_path):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    follows_before = Follow.objects.filter(workspace=ws_a).count()
    snapshots_before = FollowerCount.objects.filter(account__workspace=ws_a).count()
    tweets = tmp_path / "more.csv"
    tweets.write_text(
        CSV_HEAD
        + "1003,1000,103,2020-01-01T00:00:03Z,4,c\n"  # stored exactly: nothing new
        + "1007,1000,103,2020-01-01T00:00:00.5Z,4,cc\n"  # c retweeted 1000 earlier than stored, renamed
        + "1008,1000,104,2020-01-01T00:00:09Z,8,d\n"  # d retweeted 1000 later than stored: a snapshot only
        + "2005,2000,104,2020-01-02T00:00:05Z,8,d\n"  # an old account retweets an old tweet: new
        + "2006,2000,108,2020-01-02T00:00:06Z,64,h\n"  # a new account: new
    )
    follows = tmp_path / "more_follows.csv"
    follows.write_text("follower_id,followee_id\n102,101\n104,105\n108,102\n")  # stored, old-old new, new
    c = import_files(ws_a, [tweets, follows])
    assert c.status == Collection.Status.DONE, c.error
    assert c.counts["accounts_new"] == 1 and c.counts["accounts_renamed"] == 1
    assert c.counts["retweets_stored"] == 3  # (1000, c) moved earlier, (2000, d) and (2000, h) new
    assert c.counts["follows_new"] == 2 and c.counts["follower_counts_new"] == 4
    moved = _retweet(ws_a, 1000, 103)
    assert moved.created_at == dt.datetime(2020, 1, 1, 0, 0, 0, 500000, tzinfo=UTC) and moved.retweet_id == 1007
    assert _retweet(ws_a, 1000, 104).created_at == dt.datetime(2020, 1, 1, 0, 0, 1, tzinfo=UTC)
    assert Retweet.objects.filter(tweet__workspace=ws_a, tweet__tweet_id=2000).count() == 6
    assert Account.objects.get(workspace=ws_a, twitter_id=103).screen_name == "cc"
    assert Follow.objects.filter(workspace=ws_a).count() == follows_before + 2
    assert FollowerCount.objects.filter(account__workspace=ws_a).count() == snapshots_before + 4

    again = import_files(ws_a, [tweets, follows])  # the same upload again: nothing at all
    assert again.status == Collection.Status.DONE, again.error
    assert again.counts["accounts_new"] == 0 and again.counts.get("accounts_renamed", 0) == 0
    assert again.counts["retweets_stored"] == 0 and again.counts["follows_new"] == 0
    assert again.counts["follower_counts_new"] == 0


@pytest.mark.django_db(transaction=True)
def test_the_merge_holds_the_workspace_lock_until_the_import_ends(ws_a):
    if connection.vendor != "postgresql":
        pytest.skip("the merge lock is a PostgreSQL advisory lock (SQLite has one writer)")
    coll = Collection.objects.create(workspace=ws_a, name="locked")
    held_sql = """SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND objid = %s
                  AND pid = pg_backend_pid()"""
    with transaction.atomic():
        load_files(
            [(THESIS / "tweets.csv", "tweets.csv", "auto")],
            workspace_id=ws_a.pk,
            collection_id=coll.pk,
            mode="strict",
            store=True,
        )
        with connection.cursor() as cur:
            cur.execute(held_sql, [MERGE_LOCK_CLASS, ws_a.pk])
            assert cur.fetchone()[0] == 1
        transaction.set_rollback(True)
    with connection.cursor() as cur:
        cur.execute(held_sql, [MERGE_LOCK_CLASS, ws_a.pk])
        assert cur.fetchone()[0] == 0


def _stored(ws) -> dict:
    """Every row an import writes in ``ws``, by natural ids (primary keys differ between workspaces)."""
    from monitor.models import Publisher, Tweet

    def rows(qs, *fields):
        return sorted(qs.values_list(*fields))

    return {
        "accounts": rows(Account.objects.filter(workspace=ws), "twitter_id", "screen_name"),
        "tweets": rows(
            Tweet.objects.filter(workspace=ws),
            "tweet_id",
            "author__twitter_id",
            "created_at",
            "text",
            "label",
            "author_followers",
            "graph_source",
            "times_known",
        ),
        "retweets": rows(
            Retweet.objects.filter(tweet__workspace=ws),
            "tweet__tweet_id",
            "retweeter__twitter_id",
            "retweet_id",
            "created_at",
            "followers_count",
        ),
        "snapshots": rows(
            FollowerCount.objects.filter(account__workspace=ws), "account__twitter_id", "observed_at", "count"
        ),
        "follows": rows(Follow.objects.filter(workspace=ws), "follower__twitter_id", "followee__twitter_id"),
        "publishers": rows(Publisher.objects.filter(workspace=ws), "account__twitter_id"),
    }


def _three_uploads(ws, import_files, base, more):
    """A first import, a skip-bad upload that partly contradicts it, and that upload again."""
    first = import_files(ws, base, compute=False)
    second = import_files(ws, more, compute=False, mode="skip-bad")
    again = import_files(ws, more, compute=False, mode="skip-bad")
    out = []
    for c in (first, second, again):
        assert c.status == Collection.Status.DONE, c.error
        out.append((c.counts, c.report.get("notes"), c.report.get("read")))
    return out


def test_a_tiny_partition_and_chunk_setting_stores_exactly_what_the_default_stores(
    ws_a, ws_b, import_files, tmp_path, settings, monkeypatch
):
    """The partitioned merge gives the same rows, counts, notes and bad records whatever the partitions and the
    chunks: 50 partitions of a few dozen rows and 97-record chunks (each group split over many chunks) against
    the defaults."""
    from monitor.services.ingest import reading

    from .synthetic import write_v1

    base = write_v1(tmp_path / "base", retweets=2_000, seed=11)
    # the same original ids with other authors and times: conflicts with the stored tweets (left out in
    # skip-bad), their retweets still stored; new retweets, renames, snapshots and follows besides
    more = write_v1(tmp_path / "more", retweets=800, seed=12)
    want = _three_uploads(ws_a, import_files, base, more)

    settings.SPREADWATCH_INGEST_PARTITIONS = 50
    monkeypatch.setattr(reading, "TWEET_CHUNK", 97)
    monkeypatch.setattr(reading, "FOLLOW_CHUNK", 97)
    got = _three_uploads(ws_b, import_files, base, more)

    assert want[1][0]["conflicts_with_stored"] > 0 and want[1][0]["retweets_stored"] > 0
    assert want[2][0]["retweets_stored"] == 0 and want[2][0]["follows_new"] == 0  # a re-upload stores nothing
    assert got == want
    assert _stored(ws_b) == _stored(ws_a)
