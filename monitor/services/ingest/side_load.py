"""A workspace's first follows and retweets loaded beside the import, on a second connection (PostgreSQL).

The import is one transaction on one connection, and from its merge on the machine's second core idles: the
merge's Python and its one PostgreSQL backend wait for each other (``benchmarks/data_layer.md``, 2026-12-06
(third)). The follows and the retweets are the largest tables a first import writes (2.3M and 1M rows at the 1M
benchmark, 13.9M and 10M at the 10M one) and the import reads neither back while it runs, so their COPYs and their
index builds run on a second connection in a thread while the import's connection stores the rest:

1. When the import first writes rows of such a table into a workspace that has no partition of it yet, the side
   connection (autocommit) creates a plain table ``<table>_w<ws>_load`` like the parent, with a
   ``CHECK (workspace_id = <ws>)`` that makes the later ATTACH skip its validating scan, and ``id`` numbered from
   the parent's identity sequence as rows routed through the parent are.
2. Each part's rows are COPYed into it there (the arrays are handed over; nothing reads them back).
3. Once the import's last part has queued its COPY, the side connection builds the partition's indexes on the
   table and ANALYZEs it; at the end of that part's merge the import's connection waits for that, then ``ATTACH
   PARTITION``s the table, renames it and its indexes to the partition's names and drops the helper constraint and
   default: from then on it is the workspace's partition, in the import's transaction, which commits or rolls back
   the attach with the rest.

What stays the same: nobody sees the rows before the import commits (the table is not a partition until the
attach, whose name only this import uses under the workspace's merge lock); a failed import stores nothing: the
attach rolls back with it and :meth:`SideLoad.close` drops the table after the rollback. A worker killed between
the two leaves the table behind: the next first load of the same workspace drops it before creating its own, and
:func:`monitor.partitions.drop_orphans` drops those of deleted workspaces.

Where the import must read such rows while it runs (a later part's retweets that an earlier part may have stored,
follows its in-memory check cannot tell, an old account's stored retweets), the table is attached at once,
unindexed, and the import goes on as it would without a side load (:meth:`SideLoad.attach_now`). The follower-count
snapshots are not loaded on the side: a later part raises the counts an earlier part stored, in the table.

A table's COPYs may run on several side connections at once (``SPREADWATCH_SIDE_LOAD_COPIES``, by default one
per three cores beyond the first two, from one to four: one on a 2-core machine, four on a 16-core one): each
part's COPY goes to the next connection in turn, all into the one load table, and the index build waits for every
one of them. The index is built with PostgreSQL's parallel workers where the machine has cores to spare for them
(``SPREADWATCH_SIDE_INDEX_WORKERS``, by default a third of the cores beyond the first two, at most seven: four on a
16-core machine; on a 2-core one PostgreSQL's own choice, where more workers measured slower). On a 16-core machine
(``benchmarks/side_load_bench.py``, 20M follows) the COPYs took 12.5 s on one connection, 5.2–6.6 s on three and
4.6–4.8 s on five; the index 7.4 s with PostgreSQL's choice, 4.8–5.4 s with four workers.

Only an import that owns its transaction loads on the side (:meth:`SideLoad.possible`): inside an outer
transaction (a test's) the committed table could not be rolled back with it. ``SPREADWATCH_SIDE_LOAD=0`` turns it
off. On SQLite nothing changes.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from django.conf import settings
from django.db import connection

from ... import partitions
from ...db import copy_in
from ...partitions import load_name
from .stager import add_timing

__all__ = ["SIDE_TABLES", "SideLoad"]

log = logging.getLogger(__name__)

#: the tables whose first rows may be loaded on the side
SIDE_TABLES = ("monitor_follow", "monitor_retweet")


class SideLoad:
    """One import's side loads (at most one per table of :data:`SIDE_TABLES`), their thread and its connection.

    The import's thread calls :meth:`begin`, :meth:`copy`, :meth:`last_rows` and :meth:`attach_all` (or
    :meth:`attach_now`) in that order for a table; the statements run one after the other on the side thread's
    own Django connection. The caller must call :meth:`close` after its transaction has ended, committed or
    not."""

    def __init__(self, ws: int):
        self.ws = int(ws)
        # per table, its lanes: one thread, and so one connection, each; a table's COPYs are spread over its lanes,
        # and the tables' lanes are apart, so that at the end their index builds run side by side
        self._lanes: dict[str, list[ThreadPoolExecutor]] = {}
        self._created: dict[str, Future] = {}  # table -> its load table's creation
        self._last: dict[str, list[Future | None]] = {}  # table -> each lane's last statement
        self._turn: dict[str, int] = {}  # table -> the lane of its next COPY
        self.loading: set[str] = set()  # tables whose load table exists and is not attached
        self.attached: set[str] = set()  # tables attached in the import's transaction
        self.analyzed: set[str] = set()  # partitions whose statistics the side connection made
        self.timings: dict[str, float] = {}  # seconds on the side connections, by step (a table's lanes summed)
        self._timing = threading.Lock()
        self._stopped = False

    @staticmethod
    def possible() -> bool:
        """Whether an import starting its transaction now may load on the side."""
        return (
            connection.vendor == "postgresql"
            and not connection.in_atomic_block
            and bool(getattr(settings, "SPREADWATCH_SIDE_LOAD", True))
        )

    def _submit(self, table: str, fn, *args, lane: int = 0, after: list[Future | None] = ()) -> Future:
        """Run ``fn(*args)`` on ``table``'s lane ``lane`` after that lane's last statement and ``after``."""
        last = self._last[table]
        before = [f for f in (last[lane], *after) if f is not None]

        def job():
            for f in before:
                f.result()  # a step that failed fails the ones after it
            if self._stopped:  # the import failed: what is left to load is not loaded
                return None
            return fn(*args)

        last[lane] = self._lanes[table][lane].submit(job)
        return last[lane]

    def _wait(self, table: str) -> None:
        """Until every statement queued for ``table`` has run; raises the first that failed."""
        for f in self._last.get(table, []):
            if f is not None:
                f.result()

    # ---- the side thread's statements (each on that thread's own connection, autocommit)

    def _create(self, table: str) -> None:
        t, load = time.perf_counter(), load_name(table, self.ws)
        with connection.cursor() as cur:
            cur.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
            (sequence,) = cur.fetchone()
            cur.execute(f"DROP TABLE IF EXISTS {load}")  # a killed import's (the merge lock keeps live ones out)
            partitions.create_like(cur, table, load)
            cur.execute(f"ALTER TABLE {load} ADD CONSTRAINT {load}_ws CHECK (workspace_id = {self.ws})")
            cur.execute(f"ALTER TABLE {load} ALTER COLUMN id SET DEFAULT nextval('{sequence}'::regclass)")
        add_timing(self.timings, f"side: create {table}", t)

    def _copy(self, table: str, cols, arrays, nulls) -> None:
        t = time.perf_counter()
        with connection.cursor() as cur:
            copy_in(cur, load_name(table, self.ws), cols, arrays, nulls=nulls)
        with self._timing:  # a table's lanes add their COPYs' seconds to one entry
            add_timing(self.timings, f"side: copy into {table}", t)

    def _finish(self, table: str) -> None:
        t, load = time.perf_counter(), load_name(table, self.ws)
        with connection.cursor() as cur:
            workers = index_workers()
            if workers:  # each worker sorts in its share of maintenance_work_mem, which PostgreSQL wants >= 32 MB
                cur.execute(f"SET max_parallel_maintenance_workers = {workers}")
                cur.execute(f"SET maintenance_work_mem = '{64 * (workers + 1)}MB'")
            partitions.build_indexes(cur, table, self.ws, relation=load)
            if workers:
                cur.execute("RESET max_parallel_maintenance_workers; RESET maintenance_work_mem")
            add_timing(self.timings, f"side: index {table}", t)
            t = time.perf_counter()
            cur.execute(f"ANALYZE {load}")
        add_timing(self.timings, f"side: analyze {table}", t)

    def _drop(self, table: str | None) -> None:
        try:
            if table is not None:
                with connection.cursor() as cur:
                    # still a plain table: the import's attach rolled back with it, or never came
                    cur.execute(f"DROP TABLE IF EXISTS {load_name(table, self.ws)}")
        finally:
            connection.close()

    # ---- the import's thread

    def begin(self, cur, table: str) -> bool:
        """Before the import's first rows of ``table`` (under the workspace's merge lock): whether they go to the
        side, which they do where the workspace has no partition of ``table`` yet; starts the load table."""
        if table not in SIDE_TABLES or table in self.attached:
            return False
        if table in self.loading:
            return True
        if partitions.exists(cur, table, self.ws):
            return False
        self.loading.add(table)
        n = copy_lanes()
        self._lanes[table] = [ThreadPoolExecutor(1, thread_name_prefix=f"side-load-{table}-{i}") for i in range(n)]
        self._last[table] = [None] * n
        self._created[table] = self._submit(table, self._create, table)
        self._turn[table] = 0
        return True

    def copy(self, table: str, cols, arrays, nulls=None) -> None:
        """Queue one COPY of rows into ``table``'s load table. The arrays must not change until it has run: those
        that own their memory are made read-only, so that a later write into them raises instead."""
        for a in arrays:
            if isinstance(a, np.ndarray) and a.flags.owndata:
                a.flags.writeable = False
        lane = self._turn[table]
        self._turn[table] = (lane + 1) % len(self._lanes[table])
        self._submit(table, self._copy, table, list(cols), list(arrays), nulls, lane=lane, after=[self._created[table]])

    def attach_all(self, cur, timings: dict[str, float]) -> None:
        """The end of the import's last merge: build each load table's index and statistics on the side, wait, and
        make it the workspace's partition in the import's transaction (``cur``); the side's times go into
        ``timings``. The index is queued once the last COPY is, so it is built while that merge stores the rest."""
        for table in sorted(self.loading):
            t = time.perf_counter()
            self._wait(table)
            timings[f"wait for side load {table}"] = round(time.perf_counter() - t, 3)
            self._attach(cur, table, indexed=True)
            self.analyzed.add(partitions.name(table, self.ws))
        timings.update(self.timings)

    def last_rows(self, table: str) -> None:
        """No more rows of ``table`` come (the import's last part has queued its COPY): queue the index build and
        the statistics."""
        if table in self.loading:
            self._submit(table, self._finish, table, after=self._last[table][1:])

    def attach_now(self, cur, table: str, unindexed: list[str]) -> None:
        """Before a read of ``table``'s rows in the import's transaction (``cur``): attach its load table now,
        unindexed, if it has one, and add ``table`` to ``unindexed`` (the stager's), so that the import's connection
        writes its other rows and builds its indexes itself, as without a side load."""
        if table not in self.loading:
            return
        t = time.perf_counter()
        self._wait(table)
        self.timings[f"wait for side load {table}"] = round(time.perf_counter() - t, 3)
        self._attach(cur, table, indexed=False)
        unindexed.append(table)

    def _attach(self, cur, table: str, *, indexed: bool) -> None:
        t, load, part = time.perf_counter(), load_name(table, self.ws), partitions.name(table, self.ws)
        partitions.lock_parents(cur, table)  # in the order every writer takes them
        # the CHECK implies the partition's constraint, so the attach validates nothing
        cur.execute(f"ALTER TABLE {table} ATTACH PARTITION {load} FOR VALUES IN ({self.ws})")
        cur.execute(f"ALTER TABLE {load} DROP CONSTRAINT {load}_ws, ALTER COLUMN id DROP DEFAULT")
        cur.execute(f"ALTER TABLE {load} RENAME TO {part}")
        if indexed:
            for suffix, _, _ in partitions.TABLES[table]:
                cur.execute(f"ALTER INDEX {load}_{suffix} RENAME TO {part}_{suffix}")
        self.loading.discard(table)
        self.attached.add(table)
        self.timings[f"attach {table}"] = round(time.perf_counter() - t, 3)

    def close(self, *, failed: bool) -> None:
        """After the import's transaction: drop the load tables left (``failed``: it rolled back, so every table it
        had attached is a plain table again) and close the side connections."""
        left = self.loading | (self.attached if failed else set())
        self._stopped = failed
        for table, lanes in self._lanes.items():
            with contextlib.suppress(Exception):  # raised to the import already, or it failed before it asked
                self._wait(table)
            try:
                # lane 0 drops the table; every lane closes its connection
                done = [
                    lane.submit(self._drop, table if i == 0 and table in left else None) for i, lane in enumerate(lanes)
                ]
                for f in done:
                    f.result()
            except Exception:
                log.warning("could not drop %s; the next load or sweep does", load_name(table, self.ws), exc_info=True)
            finally:
                for lane in lanes:
                    lane.shutdown()


def _spare_cores() -> int:
    """A third of the machine's cores beyond the first two (the import's thread and its PostgreSQL backend)."""
    return max(0, (os.cpu_count() or 2) - 2) // 3


def copy_lanes() -> int:
    """How many side connections a table's COPYs are spread over (``SPREADWATCH_SIDE_LOAD_COPIES``; 0: by the
    machine's cores, one per three beyond the first two, from one to four)."""
    n = int(getattr(settings, "SPREADWATCH_SIDE_LOAD_COPIES", 0) or 0)
    return n if n > 0 else max(1, min(4, _spare_cores()))


def index_workers() -> int:
    """The parallel workers asked for a side load's index builds (``SPREADWATCH_SIDE_INDEX_WORKERS``; -1: by the
    machine's cores, a third of those beyond the first two, at most seven; 0: PostgreSQL's own choice)."""
    n = int(getattr(settings, "SPREADWATCH_SIDE_INDEX_WORKERS", -1))
    return n if n >= 0 else min(7, _spare_cores())
