"""The merge stores only what is new without ``ON CONFLICT``: rows on keys this upload created go straight in,
rows on old keys are checked against the stored ones in one pass; the workspace's merge lock is held until the
import ends (``monitor.services.ingest.merge``)."""

from __future__ import annotations

import csv
import datetime as dt
import importlib

import numpy as np
import pytest
from django.db import connection, transaction

from monitor.db import dialect
from monitor.models import Account, Collection, Follow, FollowerCount, Retweet, Tweet
from monitor.services.ingest import load_files
from monitor.services.ingest.merge import MERGE_LOCK_CLASS
from tests.webapp import THESIS

merge = importlib.import_module("monitor.services.ingest.merge")  # the package's name ``merge`` is its function
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


def test_an_upload_names_accounts_known_from_follows_and_rewrites_no_unchanged_name(ws_a, import_files, tmp_path):
    follows = tmp_path / "follows.csv"
    follows.write_text("follower_id,followee_id\n301,300\n302,300\n")  # accounts without names
    assert import_files(ws_a, [follows]).status == Collection.Status.DONE
    first = tmp_path / "first.csv"
    first.write_text(CSV_HEAD + "9000,,300,2020-01-01T00:00:00Z,2,pub\n9001,9000,301,2020-01-01T00:00:01Z,1,one\n")
    c = import_files(ws_a, [first])
    assert c.status == Collection.Status.DONE, c.error
    assert c.counts["accounts_renamed"] == 2  # their first names
    names = dict(Account.objects.filter(workspace=ws_a).values_list("twitter_id", "screen_name"))
    assert names == {300: "pub", 301: "one", 302: ""}

    def row_versions():  # PostgreSQL's row version of each account: a rewritten row gets a new one
        with connection.cursor() as cur:
            cur.execute("SELECT twitter_id, xmin::text FROM monitor_account WHERE workspace_id = %s", [ws_a.pk])
            return dict(cur.fetchall())

    before = row_versions() if connection.vendor == "postgresql" else None
    again = tmp_path / "again.csv"  # 300 and 301 with the names stored, 302 renamed from nothing
    again.write_text(CSV_HEAD + "9002,9000,301,2020-01-01T00:00:02Z,1,one\n9003,9000,302,2020-01-01T00:00:03Z,1,two\n"
                     "9004,,300,2020-01-01T00:00:04Z,2,pub\n")  # fmt: skip
    c = import_files(ws_a, [again])
    assert c.status == Collection.Status.DONE, c.error
    assert c.counts["accounts_renamed"] == 1
    names = dict(Account.objects.filter(workspace=ws_a).values_list("twitter_id", "screen_name"))
    assert names == {300: "pub", 301: "one", 302: "two"}
    if before is not None:
        after = row_versions()
        assert after[300] == before[300] and after[301] == before[301] and after[302] != before[302]


def test_an_original_given_again_is_rewritten_only_when_it_changes_the_stored_row(
    ws_a, import_files, tmp_path, monkeypatch
):
    """An original uploaded again with nothing the stored row lacks is not rewritten (the tweets' upsert touches
    no row for it); one that brings a label or a follower count is rewritten with it, and keeps the rest."""
    head = "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name,text,label\n"
    first = tmp_path / "first.csv"
    first.write_text(head + "7000,,70,2020-01-01T00:00:00Z,,p,said once,\n7001,,71,2020-01-01T00:01:00Z,5,q,,false\n"
                     "7002,,72,2020-01-01T00:02:00Z,6,r,#tag and more,\n")  # fmt: skip
    assert import_files(ws_a, [first]).status == Collection.Status.DONE
    written: list[int] = []
    real = merge._Merge.run

    def run(self, sql, params=()):
        n = real(self, sql, params)
        if sql.split()[:3] == ["INSERT", "INTO", "monitor_tweet"]:
            written.append(n)  # rows inserted or rewritten
        return n

    monkeypatch.setattr(merge._Merge, "run", run)

    def rows():
        return {t: r for t, *r in Tweet.objects.filter(workspace=ws_a).values_list(
            "tweet_id", "text", "label", "author_followers")}  # fmt: skip

    again = tmp_path / "again.csv"  # 7000 and 7001 with nothing new (an empty text, no label); 7002 gains a label
    again.write_text(head + "7000,,70,2020-01-01T00:00:00Z,,p,,\n7001,,71,2020-01-01T00:01:00Z,9,q,,\n"
                     "7002,,72,2020-01-01T00:02:00Z,6,r,,true\n")  # fmt: skip
    assert import_files(ws_a, [again]).status == Collection.Status.DONE
    assert written == [1]
    assert rows() == {
        7000: ["said once", "unknown", None],
        7001: ["", "false", 5.0],
        7002: ["#tag and more", "true", 6.0],
    }
    gains = tmp_path / "gains.csv"  # 7000 gains the follower count it lacked, and keeps its text
    gains.write_text(head + "7000,,70,2020-01-01T00:00:00Z,3,p,,\n")
    assert import_files(ws_a, [gains]).status == Collection.Status.DONE
    assert written == [1, 1] and rows()[7000] == ["said once", "unknown", 3.0]


def test_first_names_with_commas_quotes_braces_and_backslashes_are_stored_as_given(ws_a, import_files, tmp_path):
    follows = tmp_path / "follows.csv"
    follows.write_text("follower_id,followee_id\n401,400\n402,400\n403,400\n404,400\n")
    assert import_files(ws_a, [follows]).status == Collection.Status.DONE
    names = {400: 'a,b "c"', 401: "{x,y}", 402: "back\\slash", 403: "naïve 名前", 404: "NULL"}
    rows = [[9100, "", 400, "2020-01-01T00:00:00Z", 2, names[400]]]
    rows += [[9100 + u - 400, 9100, u, f"2020-01-01T00:00:0{u - 400}Z", 1, names[u]] for u in (401, 402, 403, 404)]
    tweets = tmp_path / "named.csv"
    with tweets.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_HEAD.strip().split(","))
        w.writerows(rows)
    c = import_files(ws_a, [tweets])
    assert c.status == Collection.Status.DONE, c.error
    assert c.counts["accounts_renamed"] == 5
    got = dict(Account.objects.filter(workspace=ws_a).values_list("twitter_id", "screen_name"))
    assert got == names


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


# times where converting epoch seconds any other way than ``to_timestamp`` does (float8 ``x - 946684800``, times
# 10**6, ``rint``) stores another microsecond, e.g. ``round(x * 1e6)`` minus the epoch's microseconds
AWKWARD = {501: 1474796801.8115046, 502: 1474796802.0941286, 503: 1474796804.9279394, 504: 1474796805.2187154,
           505: 1474796810.0000005}  # fmt: skip


def _at(cur, table: str, column: str, key: str, ws, user: int, seconds: float) -> int:
    """How many rows of ``user`` in ``table`` have ``column`` at the time the database gives ``seconds``."""
    ts = dialect().epoch_to_ts("%s")
    cur.execute(
        f"""SELECT count(*) FROM {table} x JOIN monitor_account a ON a.id = x.{key}
            WHERE a.workspace_id = %s AND a.twitter_id = %s AND x.{column} = {ts}""",
        [ws.pk, user, seconds],
    )
    return cur.fetchone()[0]


def test_retweets_and_snapshots_are_copied_in_as_to_timestamp_stores_them_with_their_nulls(
    ws_a, import_files, tmp_path
):
    tweets = tmp_path / "awkward.csv"
    tweets.write_text(
        CSV_HEAD
        + "5000,,500,1474796800,10,p\n"
        + f"5001,5000,501,{AWKWARD[501]!r},,q\n"  # no follower count: NULL, not NaN (and no snapshot)
        + f"0,5000,502,{AWKWARD[502]!r},3,r\n"  # no retweet id: NULL
        + "".join(f"{5000 + u},5000,{u},{AWKWARD[u]!r},{u - 496},s{u}\n" for u in (503, 504, 505))
    )
    c = import_files(ws_a, [tweets])
    assert c.status == Collection.Status.DONE, c.error
    assert c.counts["retweets_stored"] == 5 and c.counts["follower_counts_new"] == 5
    with connection.cursor() as cur:
        for u, seconds in AWKWARD.items():
            assert _at(cur, "monitor_retweet", "created_at", "retweeter_id", ws_a, u, seconds) == 1, u
            if u != 501:
                assert _at(cur, "monitor_followercount", "observed_at", "account_id", ws_a, u, seconds) == 1, u
    rts = {r.retweeter.twitter_id: r for r in Retweet.objects.filter(tweet__workspace=ws_a).select_related("retweeter")}
    assert rts[501].followers_count is None and rts[503].followers_count == 7.0
    assert rts[502].retweet_id is None and rts[503].retweet_id == 5503
    assert {r.collection_id for r in rts.values()} == {c.pk}
    snapshots = FollowerCount.objects.filter(account__workspace=ws_a)
    assert set(snapshots.values_list("collection_id", flat=True)) == {c.pk}
    assert dict(snapshots.values_list("account__twitter_id", "count")) == {500: 10, 502: 3, 503: 7, 504: 8, 505: 9}

    again = import_files(ws_a, [tweets])  # found again by those times: nothing stored twice, nothing moved
    assert again.status == Collection.Status.DONE, again.error
    assert again.counts["retweets_stored"] == 0 and again.counts["follower_counts_new"] == 0
    assert Retweet.objects.filter(tweet__workspace=ws_a).count() == 5 and snapshots.count() == 5

    earlier = tmp_path / "earlier.csv"  # 503 retweeted earlier than stored (by 0.3 s), 504 later: only 503 moves
    earlier.write_text(CSV_HEAD + "6503,5000,503,1474796804.6279394,7,s503\n6504,5000,504,1474796806.2187154,8,s504\n")
    moved = import_files(ws_a, [earlier])
    assert moved.status == Collection.Status.DONE, moved.error
    assert moved.counts["retweets_stored"] == 1 and moved.counts["follower_counts_new"] == 2
    with connection.cursor() as cur:
        assert _at(cur, "monitor_retweet", "created_at", "retweeter_id", ws_a, 503, 1474796804.6279394) == 1
        assert _at(cur, "monitor_retweet", "created_at", "retweeter_id", ws_a, 504, AWKWARD[504]) == 1
    assert _retweet(ws_a, 5000, 503).retweet_id == 6503 and _retweet(ws_a, 5000, 504).retweet_id == 5504


@pytest.mark.parametrize("array_max", [None, 0], ids=["keys read by array", "keys read staged"])
def test_new_accounts_are_copied_in_with_their_names_and_their_keys_found(
    ws_a, import_files, tmp_path, monkeypatch, array_max
):
    if array_max is not None:  # an upload too large to read its accounts' keys by an array literal
        monkeypatch.setattr(importlib.import_module("monitor.services.ingest.merge"), "ARRAY_LOOKUP_MAX", array_max)
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    before = dict(Account.objects.filter(workspace=ws_a).values_list("twitter_id", "id"))
    names = {600: "tab\there", 601: "back\\slash \\N", 602: "naïve 名前 🙂", 603: "x" * 70, 604: 'a,b "c"',
             605: "line\nbreak", 606: ""}  # fmt: skip
    tweets = tmp_path / "new.csv"
    with tweets.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(CSV_HEAD.strip().split(","))
        w.writerow([7003, 1000, 103, "2020-01-01T00:00:30Z", 4, "c"])  # an old account, its name unchanged
        w.writerows([7000 + u, 1000, u, f"2020-01-01T00:01:{u - 600:02d}Z", u, names[u]] for u in names)
    follows = tmp_path / "follows.csv"
    follows.write_text("follower_id,followee_id\n600,102\n607,600\n")  # 607: named nowhere
    c = import_files(ws_a, [tweets, follows])
    assert c.status == Collection.Status.DONE, c.error
    assert c.counts["accounts_new"] == 8 and c.counts.get("accounts_renamed", 0) == 0
    got = dict(Account.objects.filter(workspace=ws_a).values_list("twitter_id", "screen_name"))
    assert {u: got[u] for u in names} == {u: n[:64] for u, n in names.items()} and got[607] == ""
    keys = dict(Account.objects.filter(workspace=ws_a).values_list("twitter_id", "id"))
    assert {u: keys[u] for u in before} == before  # the old accounts keep their keys
    assert sorted(keys[u] for u in (*names, 607)) == [keys[u] for u in sorted((*names, 607))]  # in key order
    # every row hangs on the right account
    retweeters = Retweet.objects.filter(tweet__workspace=ws_a, collection=c).values_list(
        "retweeter__twitter_id", "retweet_id"
    )
    assert sorted(retweeters) == sorted((u, 7000 + u) for u in names)
    pairs = Follow.objects.filter(workspace=ws_a, collection=c).values_list(
        "follower__twitter_id", "followee__twitter_id"
    )
    assert sorted(pairs) == [(600, 102), (607, 600)]
    assert again_nothing(import_files(ws_a, [tweets, follows]))


def again_nothing(c) -> bool:
    """An upload stored before stores nothing again."""
    assert c.status == Collection.Status.DONE, c.error
    keys = ("accounts_new", "retweets_stored", "follows_new", "follower_counts_new")
    return all(c.counts.get(k, 0) == 0 for k in keys) and not c.counts.get("accounts_renamed")


def test_an_uploads_tweets_are_written_in_time_order_whatever_the_files_order(ws_a, import_files, tmp_path):
    # the newest-first reads walk the time index: rows written in time order are neighbours in the table's pages
    tweets = tmp_path / "reversed.csv"
    rows = [f"{5000 + i},,{300 + i % 3},2021-03-{28 - i:02d}T12:00:00Z,10,u{i % 3}\n" for i in range(20)]
    tweets.write_text(CSV_HEAD + "".join(rows))  # ids ascending, times descending
    c = import_files(ws_a, [tweets])
    assert c.status == Collection.Status.DONE, c.error
    # the order they were inserted in: their keys, drawn from the sequence row by row (their places in the pages
    # follow it too where the table has no free space earlier on, which a test database cannot promise)
    inserted = list(Tweet.objects.filter(workspace=ws_a).order_by("pk").values_list("created_at", flat=True))
    assert len(inserted) == 20 and inserted == sorted(inserted)


def test_new_accounts_keys_not_found_above_the_key_before_the_copy_are_read_by_twitter_id(
    ws_a, ws_b, import_files, caplog
):
    """Where the table gives the new accounts' keys (SQLite), they are read along the primary key above the highest
    one before the rows went in; where those are not exactly the new accounts (here: a bound below keys of
    accounts from before), they are read by Twitter id through a staging table, and the log says so."""
    import logging
    from types import SimpleNamespace

    from monitor.services.ingest.stager import Stager

    merge = importlib.import_module("monitor.services.ingest.merge")
    import_files(ws_b, [THESIS / "tweets.csv", THESIS / "follows.csv"])  # keys of another workspace between
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    stored = dict(Account.objects.filter(workspace=ws_a).values_list("twitter_id", "id"))
    new_users = np.array(sorted(stored)[2:], np.int64)  # the first two taken for accounts from before
    with transaction.atomic(), connection.cursor() as cur, caplog.at_level(logging.WARNING):
        m = SimpleNamespace(cur=cur, ws=ws_a.pk, d=dialect(), st=Stager(cur, mode="strict", report=None))
        got = merge._new_keys(m, 0, new_users)
        m.st.drop()
    assert got.twitter_id.tolist() == new_users.tolist()
    assert got.pk.tolist() == [stored[u] for u in new_users.tolist()]
    assert "read by Twitter id" in caplog.text


def test_an_accounts_rows_at_one_time_store_one_snapshot_with_their_highest_count(ws_a, import_files, tmp_path):
    """Several rows of one account at one time (an original's author embedded in each of its retweets, say) are one
    snapshot with the highest count they give, in whatever row it comes; other times and accounts are their own."""
    tweets = tmp_path / "counts.csv"
    tweets.write_text(
        CSV_HEAD
        + "7000,,700,2020-01-01T00:00:00Z,40,p\n"
        + "7001,,700,2020-01-01T00:00:00Z,90,p\n"  # the same author and time: the highest count wins
        + "7002,,700,2020-01-01T00:00:00Z,60,p\n"
        + "7003,,700,2020-01-01T00:00:01Z,5,p\n"  # a second later: a snapshot of its own
        + "7004,7000,701,2020-01-01T00:01:00Z,3,q\n"
        + "7005,7001,701,2020-01-01T00:01:00Z,3,q\n"  # equal counts at one time: one snapshot
        + "7006,7002,702,2020-01-01T00:02:00Z,12,r\n"
        + "7007,7003,702,2020-01-01T00:02:00Z,17,r\n"
    )
    c = import_files(ws_a, [tweets])
    assert c.status == Collection.Status.DONE, c.error
    got = sorted(
        FollowerCount.objects.filter(account__workspace=ws_a).values_list("account__twitter_id", "observed_at", "count")
    )
    t0 = dt.datetime(2020, 1, 1, tzinfo=UTC)
    s = dt.timedelta(seconds=1)
    assert got == [(700, t0, 90), (700, t0 + s, 5), (701, t0 + 60 * s, 3), (702, t0 + 120 * s, 17)]
    assert c.counts["follower_counts_new"] == 4
