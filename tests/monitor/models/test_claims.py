"""The tweets' search documents (``TweetDocument``, migration 0038): PostgreSQL's triggers keep one row per tweet,
equal to the tweet's key, workspace, time, status id and ``search`` tsvector, whatever writes the tweets (the
import's merge, the ORM), and leave it alone when a compute batch updates a tweet's outcome. The search's walk reads
them (``tests/monitor/selectors/test_claims.py`` checks its answers against the other two ways)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection

from monitor import services
from monitor.models import Account, Tweet, TweetDocument
from tests.claimed import claimed_csv

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL keeps the documents; SQLite searches without them"
)


def _rows(sql: str, params=()) -> set[tuple]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return set(cur.fetchall())


def _tweets(ws) -> set[tuple]:
    return _rows(
        "SELECT id, workspace_id, created_at, tweet_id, search FROM monitor_tweet WHERE workspace_id = %s", [ws.pk]
    )


def _documents(ws) -> set[tuple]:
    sql = "SELECT tweet_id, workspace_id, created_at, status_id, search FROM monitor_tweetdocument"
    return _rows(sql + " WHERE workspace_id = %s", [ws.pk])


@pytest.fixture
def claimed(ws_a, import_files, tmp_path):
    import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    return ws_a


def test_every_imported_tweet_has_its_document(claimed):
    tweets = _tweets(claimed)
    assert len(tweets) > 5
    assert _documents(claimed) == tweets


def test_a_tweet_written_by_the_orm_gets_its_document_and_it_follows_the_tweets_text(ws_a):
    author = Account.objects.create(workspace=ws_a, twitter_id=1, screen_name="a")
    at = dt.datetime(2020, 3, 1, 8, tzinfo=dt.UTC)
    t = Tweet.objects.create(workspace=ws_a, tweet_id=7, author=author, created_at=at, text="masks work")
    Tweet.objects.bulk_create(
        [Tweet(workspace=ws_a, tweet_id=8 + i, author=author, created_at=at, text=f"word{i}") for i in range(3)]
    )
    assert _documents(ws_a) == _tweets(ws_a) and len(_tweets(ws_a)) == 4
    Tweet.objects.filter(pk=t.pk).update(text="masks do not work", hashtags="5g")
    assert _documents(ws_a) == _tweets(ws_a)
    (search,) = _rows("SELECT search::text FROM monitor_tweetdocument WHERE tweet_id = %s", [t.pk])
    assert "'not'" in search[0] and "'5g':" in search[0]


def _versions(ws) -> set[tuple]:
    return _rows("SELECT tweet_id, xmin::text FROM monitor_tweetdocument WHERE workspace_id = %s", [ws.pk])


def test_a_compute_batchs_update_leaves_the_documents_unwritten_and_a_text_change_rewrites_them(claimed):
    """The outcome columns are not what a document is made of: their update keeps every document's row version
    (``xmin``); a change of the text rewrites each document."""
    before = _versions(claimed)
    Tweet.objects.filter(workspace=claimed).update(
        compute_status=Tweet.ComputeStatus.COMPUTED, reach=12.5, n_participants=3, computed_at=dt.datetime.now(dt.UTC)
    )
    assert _versions(claimed) == before
    Tweet.objects.filter(workspace=claimed).update(text="another text")
    after = _versions(claimed)
    assert {t for t, _ in after} == {t for t, _ in before} and before.isdisjoint(after)
    assert _documents(claimed) == _tweets(claimed)


def test_deleting_tweets_deletes_their_documents(claimed, ws_b, import_files, tmp_path):
    import_files(ws_b, [claimed_csv(tmp_path / "b.csv")])
    one = Tweet.objects.filter(workspace=claimed).order_by("pk").first()
    one.delete()
    assert _documents(claimed) == _tweets(claimed)
    services.workspace_purge(workspace=claimed, delete_workspace=False)
    assert not TweetDocument.objects.filter(workspace_id=claimed.pk).exists()
    assert _documents(ws_b) == _tweets(ws_b) and _tweets(ws_b)  # the other workspace's stay
