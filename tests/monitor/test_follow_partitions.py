"""The follows, one partition per workspace with indexes built after its first load (monitor/follow_partitions.py)."""

from __future__ import annotations

import importlib

import pytest
from django.db import IntegrityError, connection

from monitor import follow_partitions, services
from monitor.models import Collection, Follow
from tests.webapp import THESIS

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="partitions are PostgreSQL's")

FILES = [THESIS / "tweets.csv", THESIS / "follows.csv"]


def _partitions() -> dict[str, str]:
    """Each partition of the follows with its bound."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i
               JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'monitor_follow'::regclass"""
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


def test_a_workspaces_first_follows_get_a_partition_of_their_own_indexed_after_the_load(ws_a, ws_b, import_files):
    assert not {follow_partitions.name(ws_a.pk), follow_partitions.name(ws_b.pk)} & set(_partitions())
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.DONE

    part = follow_partitions.name(ws_a.pk)
    assert _partitions()[part] == f"FOR VALUES IN ('{ws_a.pk}')"
    indexes = _indexes(part)
    assert set(indexes) == {f"{part}_pair", f"{part}_id"}
    assert "UNIQUE" in indexes[f"{part}_pair"] and "(follower_id, followee_id)" in indexes[f"{part}_pair"]
    assert "UNIQUE" in indexes[f"{part}_id"] and "(id)" in indexes[f"{part}_id"]
    assert not _indexes("monitor_follow")  # none on the parent
    n = Follow.objects.filter(workspace=ws_a).count()
    assert n == c.counts["follows_new"] > 0 and _rows_in(part) == n
    assert "index monitor_follow" in c.timings["merge_steps_s"]  # built once, after the rows

    import_files(ws_b, FILES)  # the other workspace: a partition of its own, the first untouched
    assert _rows_in(follow_partitions.name(ws_b.pk)) == n and _rows_in(part) == n


def test_a_later_import_writes_through_the_partitions_indexes_and_stores_each_follow_once(ws_a, import_files):
    import_files(ws_a, FILES)
    n = Follow.objects.filter(workspace=ws_a).count()
    again = import_files(ws_a, FILES)
    assert again.status == Collection.Status.DONE
    assert again.counts["follows_new"] == 0 and "index monitor_follow" not in again.timings["merge_steps_s"]
    assert Follow.objects.filter(workspace=ws_a).count() == n
    with pytest.raises(IntegrityError, match=r"monitor_follow_w\d+_pair"), connection.cursor() as cur:  # the key holds
        f = Follow.objects.filter(workspace=ws_a).first()
        cur.execute(
            "INSERT INTO monitor_follow (workspace_id, follower_id, followee_id) VALUES (%s, %s, %s)",
            [ws_a.pk, f.follower_id, f.followee_id],
        )


def test_an_import_that_fails_after_its_follows_leaves_no_partition(ws_a, import_files, monkeypatch):
    def fail(*args, **kwargs):
        raise RuntimeError("the disk is full")

    # the merge's step after the follows
    monkeypatch.setattr(importlib.import_module("monitor.services.ingest.merge"), "_given_edges", fail)
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.FAILED
    assert follow_partitions.name(ws_a.pk) not in _partitions()
    assert not Follow.objects.filter(workspace=ws_a).exists()

    monkeypatch.undo()  # the upload again: a first load as if nothing had happened
    c = import_files(ws_a, FILES)
    assert c.status == Collection.Status.DONE and "index monitor_follow" in c.timings["merge_steps_s"]


def test_a_purge_empties_the_partition_and_a_deleted_workspace_loses_it(
    ws_a, ws_b, import_files, django_capture_on_commit_callbacks
):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    part_a, part_b = follow_partitions.name(ws_a.pk), follow_partitions.name(ws_b.pk)
    n = _rows_in(part_a)

    counts = services.workspace_purge(workspace=ws_a, delete_workspace=False)
    assert counts["follow"] == n and _rows_in(part_a) == 0 and part_a in _partitions()
    import_files(ws_a, FILES)  # into the emptied partition, through its indexes
    assert _rows_in(part_a) == n

    with django_capture_on_commit_callbacks(execute=True):
        services.workspace_purge(workspace=ws_a)
    assert part_a not in _partitions() and part_b in _partitions()
    assert _rows_in(part_b) == n


def test_reads_of_a_workspaces_follows_open_only_its_partition(ws_a, ws_b, import_files):
    import_files(ws_a, FILES)
    import_files(ws_b, FILES)
    with connection.cursor() as cur:
        cur.execute(
            "EXPLAIN SELECT f.follower_id FROM monitor_follow f WHERE f.workspace_id = %s AND f.follower_id = 1",
            [ws_a.pk],
        )
        plan = "\n".join(r[0] for r in cur.fetchall())
    assert follow_partitions.name(ws_a.pk) in plan and follow_partitions.name(ws_b.pk) not in plan
