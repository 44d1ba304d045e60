"""The bulk tables partitioned by workspace (PostgreSQL; SQLite keeps plain tables): the follows, the retweets and
the follower-count snapshots.

``monitor_follow``, ``monitor_retweet`` and ``monitor_followercount`` (migrations 0040-0042) are partitioned by
``workspace_id``
(``PARTITION BY LIST``) and the parents have no index: each workspace's partition ``<table>_w<id>`` carries its own
indexes (:data:`TABLES`: the model's unique key and its other indexes; none on ``id``, below). So the first
import into a workspace, the bulk of its rows, creates the partition without indexes, attaches it while it is
empty, writes the rows through the parent and builds the indexes once, in the import's transaction: building a
B-tree from sorted rows costs about a third of keeping it up row by row (``benchmarks/bulk_layout_bench.py``: 2.3M
follows 3.5 s against 6.3 s, 1M retweets 2.0 s against 6.2 s). Later imports write into the workspace's own,
smaller B-trees as before.

Why this shape (``docs/data-layer.md``, "Follows, retweets and snapshots partitioned by workspace"):

* **No DEFAULT partition**: attaching a partition beside one takes an ACCESS EXCLUSIVE lock on the default
  partition until the commit, which would stall every unpruned read of the table for the rest of an import. A
  workspace without rows in a table has no partition of it; only the merge writes these rows, and it creates the
  partition first.
* **Attach while empty, then load**: ``ATTACH PARTITION`` takes a SHARE UPDATE EXCLUSIVE lock on the parent, which
  readers and writers of other workspaces do not wait for; on an empty table it validates nothing. Until the
  import commits, no other session sees the partition, so nobody waits for its index builds either. Two imports
  creating partitions at once run their attaches one after the other (the lock is held to the commit).
* **Indexes per partition, none on the parent**: a partitioned unique index must include the partition key, and
  the merge's keys ((follower, followee), (tweet, retweeter)) are unique within a workspace; the ``id`` values come
  from the parent's one identity sequence, so they stay unique across partitions without an index spanning them.
* Reads name the workspace (``workspace_id = <constant>``), so the planner opens one partition.
* **No index on ``id``** (migration 0045): the merge, the compute, the pages and the exports find these rows by
  their natural keys and the workspace, never by ``id``, and the identity sequence keeps ``id`` unique on its own.
  Its unique index took 4.9-7.9 s to build per table at the 10M benchmark (``benchmarks/data_layer.md``,
  2026-12-03 (second)) and its upkeep in every later import. The admin lists these rows in their unique key's
  order; a row opened there by its ``id`` is found by a scan of the table's partitions.

The models' state still says their unique constraints, indexes and a primary key on ``id``; in the database they
are these per-partition indexes, and ``id`` has none. A later migration that alters them must be written for this
layout.
"""

from __future__ import annotations

import logging
import time

from django.db import OperationalError, connection, transaction

__all__ = [
    "TABLES",
    "analyze_names",
    "begin_load",
    "build_indexes",
    "create",
    "drop_after_commit",
    "drop_orphans",
    "empty",
    "name",
]

log = logging.getLogger(__name__)

#: each partitioned table's per-partition indexes: (suffix, unique, columns)
TABLES: dict[str, tuple[tuple[str, bool, str], ...]] = {
    "monitor_follow": (("pair", True, "follower_id, followee_id"),),
    "monitor_retweet": (
        ("pair", True, "tweet_id, retweeter_id"),
        ("by_account", False, "retweeter_id"),
    ),
    "monitor_followercount": (("snapshot", True, "account_id, observed_at"),),
}


def name(table: str, ws: int) -> str:
    """Workspace ``ws``'s partition of ``table``."""
    return f"{table}_w{int(ws)}"


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def exists(cur, table: str, ws: int) -> bool:
    """Whether workspace ``ws`` has its partition of ``table`` (PostgreSQL)."""
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", [name(table, ws)])
    return bool(cur.fetchone()[0])


def build_indexes(cur, table: str, ws: int) -> None:
    """Build the partition's indexes (after its rows are in)."""
    part = name(table, ws)
    for suffix, unique, columns in TABLES[table]:
        cur.execute(f"CREATE {'UNIQUE ' if unique else ''}INDEX {part}_{suffix} ON {part} ({columns})")


def begin_load(cur, table: str, ws: int) -> bool:
    """Before the merge writes rows of workspace ``ws`` into ``table``: on PostgreSQL, create and attach its
    partition if it has none, and return True: the caller writes the rows through the parent, then calls
    :func:`build_indexes` (an import merged in parts: in its last part). False where the partition exists (its
    indexes are kept up as rows arrive) and on SQLite. The caller holds the workspace's merge lock, so no other
    merge creates the same partition meanwhile."""
    if not _postgres() or exists(cur, table, ws):
        return False
    part = name(table, ws)
    # the columns, NOT NULLs and CHECK constraints of the parent (ATTACH requires them); no identity: rows come
    # through the parent, whose identity numbers them
    cur.execute(f"CREATE TABLE {part} (LIKE {table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")
    cur.execute(f"ALTER TABLE {table} ATTACH PARTITION {part} FOR VALUES IN ({int(ws)})")
    return True


def create(cur, ws: int, tables=tuple(TABLES)) -> None:
    """Workspace ``ws``'s partitions of ``tables`` with their indexes, empty (tests that write rows themselves);
    nothing where one exists or on SQLite."""
    for table in tables:
        if begin_load(cur, table, ws):
            build_indexes(cur, table, ws)


def analyze_names(cur, ws: int) -> list[str]:
    """The tables to ANALYZE after writing workspace ``ws``'s rows: its partitions (ANALYZE of a parent would
    sample every workspace's partition); the tables themselves on SQLite."""
    if not _postgres():
        return list(TABLES)
    cur.execute("SELECT n FROM unnest(%s::text[]) n WHERE to_regclass(n) IS NOT NULL", [[name(t, ws) for t in TABLES]])
    return [r[0] for r in cur.fetchall()]


def empty(cur, table: str, ws: int) -> int:
    """Delete every row of workspace ``ws`` from ``table`` (a purge): TRUNCATE of its partition, which locks only
    that partition, instead of a DELETE of each row; returns how many there were."""
    if not _postgres():
        cur.execute(f"DELETE FROM {table} WHERE workspace_id = %s", [ws])
        return max(cur.rowcount, 0)
    if not exists(cur, table, ws):
        return 0
    part = name(table, ws)
    cur.execute(f"SELECT count(*) FROM {part}")
    n = int(cur.fetchone()[0])
    cur.execute(f"TRUNCATE {part}")
    return n


def drop_after_commit() -> None:
    """Once a workspace's deletion commits, drop its (emptied) partitions. Dropping a partition locks the parent
    exclusively, so it waits at most a second for readers of other workspaces and otherwise leaves the empty
    table for the next deletion to retry."""
    if _postgres():
        transaction.on_commit(drop_orphans)


def drop_orphans() -> None:
    """Drop the partitions of workspaces that no longer exist, each in its own short transaction (after a
    workspace's deletion; the test suite's flushes)."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
               WHERE i.inhparent = ANY(%s::regclass[])""",
            [list(TABLES)],
        )
        parts = [r[0] for r in cur.fetchall()]
        cur.execute("SELECT id FROM monitor_workspace")
        live = {name(t, r[0]) for r in cur.fetchall() for t in TABLES}
    for part in sorted(p for p in parts if p not in live):
        t = time.perf_counter()
        try:
            with transaction.atomic(), connection.cursor() as cur:
                cur.execute("SET LOCAL lock_timeout = '1s'")
                cur.execute(f"DROP TABLE IF EXISTS {part}")
        except OperationalError as exc:  # a lock wait over a second: left for the next deletion
            log.info("partition %s not dropped (%s); the next workspace deletion retries", part, exc)
        else:
            log.info("dropped partition %s in %.3f s", part, time.perf_counter() - t)
