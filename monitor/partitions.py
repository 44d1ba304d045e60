"""The bulk tables partitioned by workspace (PostgreSQL; SQLite keeps plain tables): the follows, the retweets and
the follower-count snapshots the import writes, and the daily aggregates a compute run writes.

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
  creating partitions at once run their attaches one after the other (the lock is held to the commit); the first
  attach takes the lock on all three parents in one order (:func:`lock_parents`), so that writers attaching them
  in different orders cannot deadlock.
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

**The engine's per-cascade rows and daily aggregates** (``monitor_cascadeinfluence``, migration 0048, and
``monitor_dailyinfluence``, migration 0046; :data:`DERIVED`) are partitioned the same way, their partitions UNLOGGED
as the tables were (``monitor.services.derived_rows``), and loaded the same way by a workspace's **first compute
run**: its first batch creates each partition without indexes and names the run in the partition's comment
(:func:`derived_begin`); the run's batches write their rows into them unindexed, and its end builds the indexes once
(:func:`derived_end`, in the last batch's transaction, before the warm-up reads them). At the 10M benchmark the
daily rows' COPY took 25.5 s into the two indexes against 6.2 s without them and 8.0 s to build both
(``benchmarks/data_layer.md``, 2026-12-04 (fifth)); the per-cascade rows' 31.4 s into their unique key against
13.2 s and 5.8 s (2026-12-05 (fourth)). A batch of the run reads the stored rows only where an earlier batch of
the run may have written them (``monitor.algorithms.influence.store``): the daily rows of the (publisher, day)
pairs it cut, the per-cascade rows of its own tweets that the run computed already (a batch stored again) and of
the cut pairs' other tweets; without indexes each such read scans the partition, so it is skipped where there is
nothing to find. Any other writer (a later run, a live-stream micro-batch) finds a partition loaded by another run
and builds its indexes first; so does the recovery sweep for a run that failed or was cancelled while loading
(:func:`derived_abandoned`). Until then, pages read the workspace's rows without indexes: the same rows, slower.
"""

from __future__ import annotations

import logging
import time

from django.db import OperationalError, connection, transaction

__all__ = [
    "DERIVED",
    "LOAD_SUFFIX",
    "TABLES",
    "analyze_names",
    "begin_load",
    "build_indexes",
    "create",
    "create_like",
    "derived_abandoned",
    "derived_begin",
    "derived_end",
    "drop_after_commit",
    "drop_orphans",
    "empty",
    "lock_parents",
    "load_name",
    "loading_state",
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

#: the engine's derived tables partitioned by workspace, their partitions UNLOGGED: (suffix, unique, columns)
DERIVED: dict[str, tuple[tuple[str, bool, str], ...]] = {
    "monitor_cascadeinfluence": (("unique", True, "tweet_id, account_id"),),
    "monitor_dailyinfluence": (("unique", True, "publisher_id, day, label, account_id"), ("by_day", False, "day")),
}

_INDEXES = {**TABLES, **DERIVED}

#: a derived partition's comment while a compute run loads it without indexes (the run's primary key follows)
_LOADING = "loading by compute run "


#: the name's end of a plain table into which a workspace's first rows are loaded before it becomes the partition
LOAD_SUFFIX = "_load"


def name(table: str, ws: int) -> str:
    """Workspace ``ws``'s partition of ``table``."""
    return f"{table}_w{int(ws)}"


def _postgres() -> bool:
    return connection.vendor == "postgresql"


#: the partitions of those named that exist, with their comments, read from ``pg_class`` by the statement's
#: snapshot. Not through ``to_regclass``: its name lookup goes through the server process's catalog cache, which
#: can still hold "no such table" after this session waited for an advisory lock (the aggregate or the merge lock)
#: while another created the partition and committed (the cache catches up at a table lock or a transaction's
#: start, not at an advisory lock), and the writer would then create the partition a second time and fail
_FOUND = """SELECT c.relname, obj_description(c.oid, 'pg_class') FROM pg_class c
            WHERE c.relname = ANY(%s::text[]) AND c.relnamespace = current_schema()::regnamespace"""


def _found(cur, parts: list[str]) -> dict[str, str | None]:
    cur.execute(_FOUND, [parts])
    return {r[0]: r[1] for r in cur.fetchall()}


def exists(cur, table: str, ws: int) -> bool:
    """Whether workspace ``ws`` has its partition of ``table`` (PostgreSQL)."""
    part = name(table, ws)
    return part in _found(cur, [part])


def load_name(table: str, ws: int) -> str:
    """The plain table workspace ``ws``'s first rows of ``table`` are loaded into before it becomes the partition
    (``monitor.services.ingest.side_load``)."""
    return name(table, ws) + LOAD_SUFFIX


def build_indexes(cur, table: str, ws: int, relation: str | None = None) -> None:
    """Build the partition's indexes (after its rows are in); ``relation``: on that table instead, named after it
    (a load table, before it becomes the partition)."""
    part = relation or name(table, ws)
    for suffix, unique, columns in _INDEXES[table]:
        cur.execute(f"CREATE {'UNIQUE ' if unique else ''}INDEX {part}_{suffix} ON {part} ({columns})")


def create_like(cur, table: str, relation: str) -> None:
    """A plain table ``relation`` with the columns, NOT NULLs and CHECK constraints of ``table``'s parent, which
    ATTACH requires (unlogged as a derived table's partitions are); no identity: rows come through the parent,
    whose identity numbers them."""
    unlogged = "UNLOGGED " if table in DERIVED else ""
    cur.execute(f"CREATE {unlogged}TABLE {relation} (LIKE {table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)")


def begin_load(cur, table: str, ws: int) -> bool:
    """Before the merge writes rows of workspace ``ws`` into ``table``: on PostgreSQL, create and attach its
    partition if it has none, and return True: the caller writes the rows through the parent, then calls
    :func:`build_indexes` (an import merged in parts: in its last part). False where the partition exists (its
    indexes are kept up as rows arrive) and on SQLite. The caller holds the workspace's merge lock, so no other
    merge creates the same partition meanwhile."""
    if not _postgres() or exists(cur, table, ws):
        return False
    part = name(table, ws)
    lock_parents(cur, table)
    create_like(cur, table, part)
    cur.execute(f"ALTER TABLE {table} ATTACH PARTITION {part} FOR VALUES IN ({int(ws)})")
    return True


def lock_parents(cur, table: str) -> None:
    """Before a partition of ``table`` is attached: the lock ATTACH takes on the parent (SHARE UPDATE EXCLUSIVE,
    held to the commit), taken on every parent of :data:`TABLES` at once, in one order, where ``table`` is one of
    them. Writers attach these partitions in different orders (an import loading follows and retweets on a second
    connection attaches them at its end, after the snapshots': ``monitor.services.ingest.side_load``; a live
    stream's micro-batch as its merge meets them), and two that each held one parent while waiting for the other's
    would deadlock. ``ONLY``: not the workspaces' partitions, whose ANALYZE takes the same lock. Nothing outside a
    transaction (autocommit: the attach's lock ends with its statement, and LOCK TABLE is refused there)."""
    if table not in TABLES or not connection.in_atomic_block:
        return  # the derived tables' writers attach one at a time; in autocommit the attach's lock ends with it
    cur.execute("LOCK TABLE " + ", ".join(f"ONLY {t}" for t in sorted(TABLES)) + " IN SHARE UPDATE EXCLUSIVE MODE")


def create(cur, ws: int, tables=tuple(TABLES)) -> None:
    """Workspace ``ws``'s partitions of ``tables`` with their indexes, empty (tests that write rows themselves);
    nothing where one exists or on SQLite."""
    for table in tables:
        if begin_load(cur, table, ws):
            build_indexes(cur, table, ws)


def analyze_names(cur, ws: int, tables=tuple(TABLES)) -> list[str]:
    """The tables to ANALYZE after writing workspace ``ws``'s rows into ``tables``, in their order: for a table
    partitioned by workspace its partition, where it has one (ANALYZE of a parent would sample every workspace's
    partition, and the server counts a transaction's new rows in the partition they went to); any other table
    itself; the tables themselves on SQLite."""
    if not _postgres():
        return list(tables)
    parts = [name(t, ws) for t in tables if t in _INDEXES]
    there = set(_found(cur, parts))
    named = (name(t, ws) if t in _INDEXES else t for t in tables)
    return [t for t in named if t in there or t in tables]


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
            [list(_INDEXES)],
        )
        parts = [r[0] for r in cur.fetchall()]
        # and the plain tables an import loading a workspace's first rows on a second connection left behind
        # (monitor.services.ingest.side_load: a worker killed before its import ended)
        cur.execute(
            """SELECT relname FROM pg_class
               WHERE relkind = 'r' AND relname ~ %s AND relnamespace = current_schema()::regnamespace""",
            [f"^({'|'.join(TABLES)})_w[0-9]+{LOAD_SUFFIX}$"],
        )
        parts += [r[0] for r in cur.fetchall()]
        cur.execute("SELECT id FROM monitor_workspace")
        live = {made(t, r[0]) for r in cur.fetchall() for t in _INDEXES for made in (name, load_name)}
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


def _run_in(note: str | None) -> int | None:
    """The compute run a partition's comment says loads it (None: no run does)."""
    return int(note[len(_LOADING) :]) if note and note.startswith(_LOADING) else None


def _loading_run(cur, part: str) -> tuple[bool, int | None]:
    """Whether partition ``part`` exists, and the compute run loading it without indexes (None: it has them)."""
    found = _found(cur, [part])
    return part in found, _run_in(found.get(part))


def loading_state(cur, table: str, ws: int) -> tuple[bool, int | None]:
    """Whether workspace ``ws`` has its partition of the derived ``table``, and the compute run loading it without
    indexes (None: it has them); (True, None) on SQLite, whose tables have their indexes. A read without a lock:
    a writer takes the aggregate lock and calls :func:`derived_begin` unless the partition is there with its
    indexes (which no writer undoes)."""
    if not _postgres():
        return True, None
    return _loading_run(cur, name(table, ws))


def derived_begin(cur, table: str, ws: int, run_pk: int | None) -> bool:
    """Before a write of workspace ``ws``'s rows into the derived ``table`` (:data:`DERIVED`), under the
    workspace's aggregate lock (``monitor.algorithms.influence.store``), which keeps every other writer of them
    out until the commit. ``run_pk``: the compute run whose batch writes, or None (a live-stream micro-batch).

    Returns True when the rows go into a partition without indexes that this run loads: one it creates now (the
    workspace has none: its first compute run) or one an earlier batch of the same run created. Otherwise the
    partition has its indexes when this returns: created with them (a micro-batch first), or built now, where
    another run had left it loading (it failed or was cancelled); False, and on SQLite."""
    if not _postgres():
        return False
    part = name(table, ws)
    there, loading = _loading_run(cur, part)
    if not there:
        begin_load(cur, table, ws)
        if run_pk is None:
            build_indexes(cur, table, ws)
            return False
        cur.execute(f"COMMENT ON TABLE {part} IS '{_LOADING}{int(run_pk)}'")
        return True
    if loading is None:
        return False
    if run_pk is not None and loading == int(run_pk):
        return True
    _build_loaded(cur, table, ws, loading)
    return False


def _build_loaded(cur, table: str, ws: int, run_pk: int) -> None:
    t = time.perf_counter()
    part = name(table, ws)
    build_indexes(cur, table, ws)
    cur.execute(f"COMMENT ON TABLE {part} IS NULL")
    log.info("built the indexes of %s, loaded by compute run %s, in %.3f s", part, run_pk, time.perf_counter() - t)


def derived_end(cur, table: str, ws: int, run_pk: int) -> bool:
    """At the end of compute run ``run_pk`` (in its last batch's transaction): build the indexes of workspace
    ``ws``'s partition of ``table`` if the run loaded it; returns whether it did."""
    if not _postgres():
        return False
    _, loading = _loading_run(cur, name(table, ws))
    if loading != int(run_pk):
        return False
    _build_loaded(cur, table, ws, loading)
    return True


def derived_abandoned(active_runs, lock_class: int) -> list[str]:
    """Build the indexes of every derived partition whose loading run is no longer active (failed or cancelled
    while it loaded; ``active_runs``: a callable taking the loading runs' keys and returning those still queued,
    waiting or running), each in its own transaction under its workspace's aggregate lock
    (``pg_advisory_xact_lock(lock_class, ws)``, the lock every writer of them takes); returns the partitions
    built. The recovery sweep calls it."""
    if not _postgres():
        return []
    with connection.cursor() as cur:
        cur.execute(
            """SELECT c.relname, p.relname, obj_description(c.oid, 'pg_class')
               FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
               WHERE i.inhparent = ANY(%s::regclass[]) AND obj_description(c.oid, 'pg_class') LIKE %s""",
            [list(DERIVED), _LOADING + "%"],
        )
        loading = [(part, table, _run_in(note)) for part, table, note in cur.fetchall()]
    if not loading:
        return []
    active = set(active_runs(sorted({run for _, _, run in loading})))
    built = []
    for part, table, run_pk in loading:
        if run_pk in active:
            continue
        ws = int(part.rsplit("_w", 1)[1])
        with transaction.atomic(), connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [int(lock_class), ws])
            if derived_end(cur, table, ws, run_pk):  # not when a writer built them meanwhile
                built.append(part)
    return built
