"""The follows, the retweets and the follower-count snapshots, one partition per workspace with indexes built after
its first load (monitor/partitions.py)."""

from __future__ import annotations

import datetime as dt
import importlib

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection

from monitor import partitions, services
from monitor.models import Collection, Follow, FollowerCount, Retweet, Tweet
from tests.webapp import THESIS

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")

FILES = [THESIS / "tweets.csv", THESIS / "follows.csv"]
TABLES = ("monitor_follow", "monitor_retweet", "monitor_followercount")
MODELS = {"monitor_follow": Follow, "monitor_retweet": Retweet, "monitor_followercount": FollowerCount}


def _partitions() -> dict[str, str]:
    """Each partition of the two tables with its bound."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i
               JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = ANY(%s::regclass[])""",
            [list(TABLES)],
        )
        return dict(cur.fetchall())


def _indexes(table: str) -> dict[str, str]:
    with connection.cursor() as cur:
        cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [table])
        return dict(cur.fetchall())


def _rows_in(table: str) -> int:
    with connection.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {table}")
        return cur.fetchone()[0]


def _steps(c: Collection) -> dict:
    return c.timings["merge_steps_s"]


@pytest.mark.parametrize("table", TABLES)
def test_a_workspaces_first_rows_get_a_partition_of_their_own_indexed_after_the_load(table, ws_a, ws_b, import_files):
    assert not {partitions.name(table, ws_a.pk), partitions.name(table, ws_b.pk)} & set(_partitions())
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.DONE

    part = partitions.name(table, ws_a.pk)
    assert _partitions()[part] == f"FOR VALUES IN ('{ws_a.pk}')"
    indexes = _indexes(part)
    assert set(indexes) == {f"{part}_{suffix}" for suffix, _, _ in partitions.TABLES[table]}
    for suffix, unique, columns in partitions.TABLES[table]:
        assert ("UNIQUE" in indexes[f"{part}_{suffix}"]) == unique and f"({columns})" in indexes[f"{part}_{suffix}"]
    assert not [d for d in indexes.values() if "(id)" in d]  # nothing finds these rows by id (migration 0045)
    assert not _indexes(table)  # none on the parent
    n = MODELS[table].objects.filter(workspace=ws_a).count()
    assert n > 0 and _rows_in(part) == n
    assert f"index {table}" in _steps(c)  # built once, after the rows

    import_files(ws_b, FILES)  # the other workspace: a partition of its own, the first untouched
    assert _rows_in(partitions.name(table, ws_b.pk)) == n and _rows_in(part) == n


def test_a_retweet_carries_its_tweets_workspace_and_a_snapshot_its_accounts(ws_a, ws_b, import_files):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    for ws in (ws_a, ws_b):
        rts = Retweet.objects.filter(workspace=ws)
        assert rts.exists() and set(rts.values_list("tweet__workspace", flat=True)) == {ws.pk}
        snapshots = FollowerCount.objects.filter(workspace=ws)
        assert snapshots.exists() and set(snapshots.values_list("account__workspace", flat=True)) == {ws.pk}
    assert Retweet.objects.count() == 2 * Retweet.objects.filter(workspace=ws_a).count()
    assert FollowerCount.objects.count() == 2 * FollowerCount.objects.filter(workspace=ws_a).count()


def test_a_later_import_writes_through_the_partitions_indexes_and_stores_each_row_once(ws_a, import_files):
    import_files(ws_a, FILES)
    follows, retweets, snapshots = (M.objects.filter(workspace=ws_a).count() for M in (Follow, Retweet, FollowerCount))
    again = import_files(ws_a, FILES)
    assert again.status == Collection.Status.DONE
    assert again.counts["follows_new"] == 0 and not {f"index {t}" for t in TABLES} & set(_steps(again))
    assert Follow.objects.filter(workspace=ws_a).count() == follows
    assert Retweet.objects.filter(workspace=ws_a).count() == retweets
    assert FollowerCount.objects.filter(workspace=ws_a).count() == snapshots
    f = Follow.objects.filter(workspace=ws_a).first()
    with pytest.raises(IntegrityError, match=r"monitor_follow_w\d+_pair"), connection.cursor() as cur:  # the key
        cur.execute(
            "INSERT INTO monitor_follow (workspace_id, follower_id, followee_id) VALUES (%s, %s, %s)",
            [ws_a.pk, f.follower_id, f.followee_id],
        )


def test_a_stored_retweet_said_to_be_earlier_moves_in_its_partition_beside_a_new_snapshot(ws_a, import_files, tmp_path):
    import_files(ws_a, FILES)
    r = Retweet.objects.filter(workspace=ws_a).select_related("tweet", "retweeter").order_by("pk").first()
    earlier = r.created_at - dt.timedelta(seconds=1)
    header = (THESIS / "tweets.csv").read_text().splitlines()[0]
    row = f"{10**15},{r.tweet.tweet_id},{r.retweeter.twitter_id},{earlier:%Y-%m-%dT%H:%M:%SZ},42,"
    (tmp_path / "tweets.csv").write_text(f"{header}\n{row}\n")
    c = import_files(ws_a, [tmp_path / "tweets.csv"])
    assert c.status == Collection.Status.DONE, c.report
    r.refresh_from_db()
    assert r.created_at == earlier and r.retweet_id == 10**15
    assert FollowerCount.objects.get(workspace=ws_a, account=r.retweeter, observed_at=earlier).count == 42


def test_an_import_that_fails_after_its_rows_leaves_no_partition(ws_a, import_files, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("the disk is full")

    # the merge's step after the follows, which come after the retweets
    monkeypatch.setattr(importlib.import_module("monitor.services.ingest.merge"), "_given_edges", fail)
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.FAILED
    assert not {partitions.name(t, ws_a.pk) for t in TABLES} & set(_partitions())
    assert not Follow.objects.filter(workspace=ws_a).exists() and not Tweet.objects.filter(workspace=ws_a).exists()

    monkeypatch.undo()  # the upload again: a first load as if nothing had happened
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.DONE and {f"index {t}" for t in TABLES} <= set(_steps(c))


def test_a_purge_empties_the_partitions_and_a_deleted_workspace_loses_them(
    ws_a, ws_b, import_files, django_capture_on_commit_callbacks
):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    rows = {t: _rows_in(partitions.name(t, ws_a.pk)) for t in TABLES}

    counts = services.workspace_purge(workspace=ws_a, delete_workspace=False)
    assert counts["follow"] == rows["monitor_follow"] and counts["retweet"] == rows["monitor_retweet"]
    assert counts["followercount"] == rows["monitor_followercount"]
    for t in TABLES:
        assert _rows_in(partitions.name(t, ws_a.pk)) == 0 and partitions.name(t, ws_a.pk) in _partitions()
    import_files(ws_a, FILES)  # into the emptied partitions, through their indexes
    assert {t: _rows_in(partitions.name(t, ws_a.pk)) for t in TABLES} == rows

    a = ws_a.pk  # None once deleted
    with django_capture_on_commit_callbacks(execute=True):
        services.workspace_purge(workspace=ws_a)
    for t in TABLES:
        assert partitions.name(t, a) not in _partitions() and partitions.name(t, ws_b.pk) in _partitions()
        assert _rows_in(partitions.name(t, ws_b.pk)) == rows[t]


def test_reads_of_a_workspaces_rows_open_only_its_partition(ws_a, ws_b, import_files):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    with connection.cursor() as cur:
        for sql in (
            "SELECT f.follower_id FROM monitor_follow f WHERE f.workspace_id = %s AND f.follower_id = 1",
            # the tweets' workspace given, the retweets' is derived from the join's equality
            """SELECT r.retweeter_id FROM monitor_retweet r
               JOIN monitor_tweet t ON t.id = r.tweet_id AND t.workspace_id = r.workspace_id
               WHERE t.workspace_id = %s""",
        ):
            cur.execute("EXPLAIN " + sql, [ws_a.pk])
            plan = "\n".join(r[0] for r in cur.fetchall())
            table = "monitor_follow" if "monitor_follow" in sql else "monitor_retweet"
            assert partitions.name(table, ws_a.pk) in plan and partitions.name(table, ws_b.pk) not in plan, plan


@pytest.mark.django_db(transaction=True)
def test_the_test_suites_flush_drops_the_partitions_it_emptied(ws_a, import_files):
    """A transactional test's flush empties every table and drops none: the suite's plugin (``tests/webapp.py``)
    drops the partitions of the workspaces it deleted, or every later flush would truncate them all again."""
    import_files(ws_a, FILES)
    assert {partitions.name(t, ws_a.pk) for t in TABLES} <= set(_partitions())
    call_command("flush", interactive=False, verbosity=0)
    assert not _partitions()
