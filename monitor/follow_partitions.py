"""The follows table, one partition per workspace (PostgreSQL; SQLite keeps one plain table).

``monitor_follow`` is partitioned by ``workspace_id`` (``PARTITION BY LIST``, migration 0040) and the parent has
no index: each workspace's partition ``monitor_follow_w<id>`` carries its own unique index on (follower, followee)
(the model's ``follow_unique_pair``) and its own unique index on ``id``. So the first import into a workspace, the
bulk of its follows, creates the partition without indexes, attaches it while it is empty, writes the rows through
the parent and builds the two indexes once, in the import's transaction: building a B-tree from sorted rows costs
about a third of keeping it up row by row (``benchmarks/bulk_layout_bench.py``: 2.3M follows 3.5 s against 6.3 s).
Later imports write into the workspace's own, smaller B-trees as before.

Why this shape (``docs/data-layer.md``, "Follows partitioned by workspace"):

* **No DEFAULT partition**: attaching a partition beside one takes an ACCESS EXCLUSIVE lock on the default
  partition until the commit, which would stall every unpruned read of the follows for the rest of an import. A
  workspace without follows has no partition; only the merge writes follows, and it creates the partition first.
* **Attach while empty, then load**: ``ATTACH PARTITION`` takes a SHARE UPDATE EXCLUSIVE lock on the parent, which
  readers and writers of other workspaces do not wait for; on an empty table it validates nothing. Until the
  import commits, no other session sees the partition, so nobody waits for its index builds either. Two imports
  creating partitions at once run their attaches one after the other (the lock is held to the commit).
* **Indexes per partition, none on the parent**: a partitioned unique index must include the partition key, and
  the merge's key is (follower, followee) within a workspace; the ``id`` values come from the parent's one identity
  sequence, so they stay unique across partitions without an index that spans them.
* Every read names the workspace (``workspace_id = %s``), so the planner opens one partition.

The model's state still says ``follow_unique_pair`` and a primary key on ``id``; in the database they are these
per-partition indexes. A later migration that alters those constraints must be written for this layout.
"""

from __future__ import annotations

import logging
import time

from django.db import OperationalError, connection, transaction

__all__ = ["analyze_name", "begin_load", "build_indexes", "create", "drop_after_commit", "empty", "exists", "name"]

log = logging.getLogger(__name__)

PARENT = "monitor_follow"


def name(ws: int) -> str:
    """The partition of workspace ``ws``."""
    return f"{PARENT}_w{int(ws)}"


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def exists(cur, ws: int) -> bool:
    """Whether workspace ``ws`` has its partition (PostgreSQL)."""
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", [name(ws)])
    return bool(cur.fetchone()[0])


def _attach_empty(cur, ws: int) -> None:
    """Create workspace ``ws``'s partition without indexes and attach it, empty (no validation scan)."""
    part = name(ws)
    # the columns, NOT NULLs and CHECK constraints of the parent (ATTACH requires them); no identity: rows come
    # through the parent, whose identity numbers them
    cur.execute(f"CREATE TABLE {part} (LIKE {PARENT} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
    cur.execute(f"ALTER TABLE {PARENT} ATTACH PARTITION {part} FOR VALUES IN ({int(ws)})")


def build_indexes(cur, ws: int) -> None:
    """Build the partition's two indexes (after its rows are in)."""
    part = name(ws)
    cur.execute(f"CREATE UNIQUE INDEX {part}_pair ON {part} (follower_id, followee_id)")
    cur.execute(f"CREATE UNIQUE INDEX {part}_id ON {part} (id)")


def begin_load(cur, ws: int) -> bool:
    """Before the merge writes follows of workspace ``ws``: on PostgreSQL, create and attach its partition if it
    has none, and return True: the caller writes the rows through the parent, then calls :func:`build_indexes`.
    False where the partition exists (its indexes are kept up as rows arrive) and on SQLite. The caller holds the
    workspace's merge lock, so no other merge creates the same partition meanwhile."""
    if not _postgres() or exists(cur, ws):
        return False
    _attach_empty(cur, ws)
    return True


def create(cur, ws: int) -> None:
    """Workspace ``ws``'s partition with its indexes, empty (migrations, tests); nothing if it exists or on
    SQLite."""
    if begin_load(cur, ws):
        build_indexes(cur, ws)


def analyze_name(cur, ws: int) -> str | None:
    """The table to ANALYZE after writing workspace ``ws``'s follows: its partition (ANALYZE of the parent would
    sample every workspace's partition), the table itself on SQLite, None where nothing was written."""
    if not _postgres():
        return PARENT
    return name(ws) if exists(cur, ws) else None


def empty(cur, ws: int) -> int:
    """Delete every follow of workspace ``ws`` (a purge): TRUNCATE of its partition, which locks only that
    partition, instead of a DELETE of each row; returns how many there were."""
    if not _postgres():
        cur.execute(f"DELETE FROM {PARENT} WHERE workspace_id = %s", [ws])
        return max(cur.rowcount, 0)
    if not exists(cur, ws):
        return 0
    part = name(ws)
    cur.execute(f"SELECT count(*) FROM {part}")
    n = int(cur.fetchone()[0])
    cur.execute(f"TRUNCATE {part}")
    return n


def drop_after_commit() -> None:
    """Once a workspace's deletion commits, drop its (emptied) partition. Dropping a partition locks the
    parent exclusively, so it waits at most a second for readers of other workspaces and otherwise leaves the
    empty table for the next deletion to retry (:func:`_drop_orphans`)."""
    if _postgres():
        transaction.on_commit(_drop_orphans)


def _drop_orphans() -> None:
    """Drop the partitions of workspaces that no longer exist, each in its own short transaction."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
               WHERE i.inhparent = %s::regclass""",
            [PARENT],
        )
        parts = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT id FROM monitor_workspace")
        live = {name(r[0]) for r in cur.fetchall()}
    for part in sorted(p for p in parts if p not in live):
        t = time.perf_counter()
        try:
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute("SET LOCAL lock_timeout = '1s'")
                cur.execute(f"DROP TABLE IF EXISTS {part}")
        except OperationalError as exc:  # a lock wait over a second: left for the next deletion
            log.info("follows partition %s not dropped (%s); the next workspace deletion retries", part, exc)
        else:
            log.info("dropped follows partition %s in %.3f s", part, time.perf_counter() - t)
