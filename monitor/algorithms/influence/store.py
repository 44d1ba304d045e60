"""Storing one batch of the influence algorithm: its per-cascade rows and spreading graphs, the tweets' outcomes,
and the daily aggregates of the (publisher, day) pairs it touched (for a live-stream micro-batch, only the rows
that changed: ``changes``; the rows' binary COPY: ``copies``)."""

from __future__ import annotations

import logging
import struct
import time

import numpy as np
from django.db import connection, transaction

from compute.arrays import lexorder

from ... import partitions
from ...db import (
    COPY_HEADER,
    COPY_TRAILER,
    Dialect,
    analyze_after_bulk_write,
    copy_out,
    dialect,
    int_array,
    temp_table_name,
)
from ...models import ComputeBatch, ComputeRun, Tweet
from ..base import report_phase
from .batch import BatchResult
from .changes import _DailyChanges, _refresh_daily_keys, _replace_changed_influence
from .copies import _DAY_NUMBER, _LABEL_CASE, _copy_cascade_influence, _copy_daily, _DailyInput
from .rows import (
    AGGREGATE_LOCK_CLASS,
    ROLE_CODES,
    STATUS_COMPUTED,
    UNIT_FOLLOWERS,
    AllTimeDelta,
    CascadeGraphRow,
    InfluenceRows,
    TweetOutcomes,
    _concat,
    _stage,
    _stage_ids,
)

log = logging.getLogger(__name__)


#: the tables a batch's store writes in bulk, whose planner statistics it keeps fresh
RESULT_TABLES = ("monitor_cascadeinfluence", "monitor_cascadegraph", "monitor_dailyinfluence", "monitor_publisherday")


#: the daily aggregates: on PostgreSQL a partition per workspace (``monitor.partitions``, migration 0046)
DAILY = "monitor_dailyinfluence"


#: the per-cascade rows: the same (migration 0048)
CASCADE = "monitor_cascadeinfluence"


def result_tables(cur, ws: int) -> list[str]:
    """:data:`RESULT_TABLES` as a batch of workspace ``ws`` analyses them: its partition of the daily aggregates
    (none while it has none), not their parent (:func:`monitor.partitions.analyze_names`)."""
    return partitions.analyze_names(cur, ws, RESULT_TABLES)


#: the columns :func:`_update_tweets` writes (none of them indexed: migration 0036)
TWEET_OUTCOME_COLUMNS = tuple(Tweet._meta.get_field(name).column for name in Tweet.OUTCOME_FIELDS)


# --- one batch: storing ------------------------------------------------------------------------------------------


def _store(run: ComputeRun, batch: ComputeBatch, res: BatchResult) -> None:
    """Replace the batch's cascades' rows with ``res`` and refresh the aggregates of the (publisher, day) pairs
    its tweets belong to; inside the runner's transaction."""
    d = dialect()
    ws = run.workspace_id
    loading = False  # the daily rows go into a partition without indexes (PostgreSQL, a first run's batch)
    with connection.cursor() as cur:
        if d.postgres:
            # the workspace's store lock, shared: the batches of a run (disjoint cascades) store side by side,
            # while the live stream's apply, which takes it exclusively, waits for them and they for it
            cur.execute("SELECT pg_advisory_xact_lock_shared(%s)", [ws])
        t = time.perf_counter()
        batch_table = _stage_ids(cur, "bt", batch.tweet_pks)
        touched = _stage_touched_days(cur, d, batch_table)
        # a live-stream micro-batch (``run.store_changes``) rewrites only the rows that changed: its cascades are
        # stored already, and a few new retweets leave most of their rows as they were (benchmarks/stream_web.md)
        changes = d.postgres and bool(getattr(run, "store_changes", False))
        influence_table = daily = written = None
        # the workspace's partition of the per-cascade rows: a first run writes into it without its index and
        # builds it at its end (monitor.partitions), as it does the daily rows'
        cascade_loading = _begin_cascade_rows(cur, ws, None if changes else run.pk) if d.postgres else False
        t = res.tick("store_cascade_partition_s", t)
        if not changes and (not cascade_loading or _stored_by_run(cur, batch_table, run.pk)):
            # (a partition this run loads holds only its batches' rows: nothing of this batch to delete, and a
            # delete without the index would scan it, unless the run stored some of these cascades already)
            cur.execute(
                f"""DELETE FROM monitor_cascadeinfluence
                    WHERE workspace_id = %s AND tweet_id IN (SELECT id FROM {batch_table})""",
                [ws],
            )
        cur.execute(f"DELETE FROM monitor_cascadegraph WHERE tweet_id IN (SELECT id FROM {batch_table})")
        t = res.tick("store_delete_s", t)
        _insert_cascade_graphs(cur, d, res.graphs)
        t = res.tick("store_graphs_s", t)
        if changes:
            daily = _replace_changed_influence(
                cur, ws, [int(p) for p in batch.tweet_pks], _concat(InfluenceRows, res.influence)
            )
        elif d.postgres:  # one binary COPY; its rows are also the aggregates' input (no read back)
            written = _copy_cascade_influence(cur, ws, _concat(InfluenceRows, res.influence))
        else:
            influence_table = _insert_cascade_influence(cur, d, ws, _concat(InfluenceRows, res.influence))
        t = res.tick("store_influence_s", t)
        outcomes_table = _update_tweets(cur, d, _concat(TweetOutcomes, res.outcomes), run_pk=run.pk)
        t = res.tick("store_tweets_s", t)
        report_phase("aggregates")
        if d.postgres:
            # aggregate refreshes of one workspace run one at a time (they delete and re-insert the same keys);
            # a refresh that waited here sees the rows of the one before it: each statement reads what has been
            # committed when it starts. Held to the commit, so the ANALYZE and the version bump below are in it
            cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [AGGREGATE_LOCK_CLASS, ws])
            t = res.tick("store_wait_aggregates_s", t)
            # the workspace's partition of the daily rows: a first run writes into it without indexes and builds
            # them at its end (monitor.partitions); every other writer finds it indexed
            loading = partitions.derived_begin(cur, DAILY, ws, None if changes else run.pk)
            t = res.tick("store_aggregates_partition_s", t)
        from ...cache import bump_data_version, record_all_time_delta, record_no_daily_rows

        # in this transaction: committed with the rows (monitor/cache.py). Before the refresh: from here to the
        # commit no other write can commit a version, so the daily rows read below are those of the version before
        version = bump_data_version(ws)
        if not changes:
            # a workspace's first run: the version before had no daily row, so the all-time sums after the run
            # are its batches' recorded changes alone, not a group-by of every daily row (the warm-up's overview)
            cur.execute("SELECT EXISTS (SELECT 1 FROM monitor_dailyinfluence WHERE workspace_id = %s)", [ws])
            if not cur.fetchone()[0]:
                record_no_daily_rows(ws, version - 1)
        if not changes and d.postgres:
            delta = _refresh_aggregates_in_engine(
                cur, ws, touched, batch_table, written, res, loading=loading,
                cascade_run=run.pk if cascade_loading else None,
            )  # fmt: skip
        else:
            delta = _refresh_aggregates(cur, d, ws, touched, changes=daily)
        if delta is not None:  # a micro-batch knows how it changed the all-time sums: the ranking applies it
            record_all_time_delta(ws, version, delta)
        t = res.tick("store_aggregates_s", t)
        tables = result_tables(cur, ws)
        later = getattr(run, "analyze_later", None)  # not a field: a stream consumer refreshes them beside its work
        if later is not None or changes:
            # the rows added: a stream micro-batch's cascades are stored already, and it adds only its new
            # participants' rows; else the cascades' rows
            added = daily.grown if daily is not None else int(batch.n_nodes or 0) + len(batch.tweet_pks)
            if later is not None:
                later(tables, added)
            else:
                analyze_after_bulk_write(cur, tables, added)
        else:
            # a compute batch: each table's rows as the server counts them, and analysed once it has doubled (the
            # run's end checks them again at a tenth: ``Influence.finish``)
            analyze_after_bulk_write(cur, tables, None, grown=1.0)
            # its tweets' statuses went from pending to computed, which pages filter on
            analyze_after_bulk_write(
                cur, ["monitor_tweet"], len(batch.tweet_pks), changed=True, columns=TWEET_OUTCOME_COLUMNS
            )
        t = res.tick("store_analyze_s", t)
        for tmp in (batch_table, touched, influence_table, outcomes_table):
            if tmp:
                cur.execute(f"DROP TABLE IF EXISTS {tmp}")


def begin_cascade_load(ws: int, run_pk: int) -> None:
    """Before a batch of compute run ``run_pk`` computes (PostgreSQL, outside any transaction): where workspace
    ``ws`` has no partition of the per-cascade rows (its first run), create it, loading by this run, and commit.
    So the run's batches find it made and store side by side: created in a batch's store, under the aggregate
    lock held to that store's commit, it would keep every other batch of the run waiting for that commit."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        return
    with connection.cursor() as cur:
        there, _ = partitions.loading_state(cur, CASCADE, ws)
    if not there:
        with transaction.atomic(), connection.cursor() as cur:
            _begin_cascade_rows(cur, ws, run_pk)


def _begin_cascade_rows(cur, ws: int, run_pk: int | None) -> bool:
    """Before a batch writes workspace ``ws``'s per-cascade rows (PostgreSQL): whether they go into a partition
    without its index that compute run ``run_pk`` loads (:func:`monitor.partitions.derived_begin`). Where the
    partition is there with its index (every run but a workspace's first) or loading by this run (its first),
    nothing is locked: the batches of a run store their disjoint cascades side by side (a writer that builds the
    index meanwhile waits for their commits, and their rows are new either way). Otherwise the workspace's
    aggregate lock is taken first (held to the commit, as the aggregates' refresh takes it anyway), under which
    the partition is created (:func:`begin_cascade_load` had not) or built where another run left it loading."""
    there, loading = partitions.loading_state(cur, CASCADE, ws)
    if there and loading is None:
        return False
    if there and run_pk is not None and loading == int(run_pk):
        return True
    cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [AGGREGATE_LOCK_CLASS, ws])
    return partitions.derived_begin(cur, CASCADE, ws, run_pk)


def _stored_by_run(cur, batch_table: str, run_pk: int) -> bool:
    """Whether compute run ``run_pk`` stored any of the batch's cascades already (a batch stored again): their
    tweets name the run that last stored them."""
    cur.execute(
        f"""SELECT EXISTS (SELECT 1 FROM {batch_table} b JOIN monitor_tweet t ON t.id = b.id
                           WHERE t.compute_run_id = %s)""",
        [run_pk],
    )
    return bool(cur.fetchone()[0])


def _stage_touched_days(cur, d: Dialect, batch_table: str) -> str:
    """A temporary table of the (publisher, day) pairs whose aggregates change, taken from the tweets themselves."""
    keys = temp_table_name("keys")
    cur.execute(f"DROP TABLE IF EXISTS {keys}")
    cur.execute(
        f"""CREATE TEMP TABLE {keys} AS SELECT DISTINCT t.author_id AS publisher, {d.ts_to_day("t.created_at")}
            AS day FROM {batch_table} b {d.join} monitor_tweet t ON t.id = b.id"""
    )
    return keys


def _insert_cascade_graphs(cur, d: Dialect, graphs: list[CascadeGraphRow]) -> None:
    if d.postgres:
        # binary COPY: text COPY would send every edge byte as two hex digits
        raw = cur.cursor if hasattr(cur, "cursor") else cur
        with raw.copy("COPY monitor_cascadegraph (tweet_id, n_edges, edges) FROM STDIN (FORMAT BINARY)") as cp:
            cp.write(COPY_HEADER)
            for row in graphs:
                cp.write(_GRAPH_ROW.pack(3, 8, row.tweet, 4, row.n_edges, len(row.edges)) + row.edges)
            cp.write(COPY_TRAILER)
    else:
        cur.executemany("INSERT INTO monitor_cascadegraph (tweet_id, n_edges, edges) VALUES (%s, %s, %s)", graphs)


_GRAPH_ROW = struct.Struct(">hiqiii")  # fields; tweet_id (8 bytes); n_edges (4); the edges' length, then their bytes


def _insert_cascade_influence(cur, d: Dialect, ws: int, rows: InfluenceRows) -> str:
    """Insert workspace ``ws``'s per-cascade influence rows, with the tweet's day and label, through a staging
    table, which it returns (SQLite; PostgreSQL writes them by one binary COPY: :func:`_copy_cascade_influence`)."""
    staged = _stage(cur, "inf", InfluenceRows, rows)
    role_sql = "CASE i.role " + " ".join(f"WHEN {k} THEN '{v}'" for k, v in ROLE_CODES.items()) + " END"
    cur.execute(
        f"""INSERT INTO monitor_cascadeinfluence (workspace_id, tweet_id, account_id, publisher_id, day, label,
                influence, followers, role)
            SELECT t.workspace_id, i.tweet, i.account, i.publisher, {d.ts_to_day("t.created_at")}, t.label,
                i.influence, i.followers, {role_sql}
            FROM {staged} i {d.join} monitor_tweet t ON t.id = i.tweet WHERE t.workspace_id = %s""",
        [ws],
    )
    return staged


def _update_tweets(cur, d: Dialect, outcomes: TweetOutcomes, *, run_pk: int) -> str:
    """Record each cascade's outcome on its tweet; returns the staging table."""
    staged = _stage(cur, "tstat", TweetOutcomes, outcomes)
    cur.execute(
        f"""UPDATE monitor_tweet SET
                compute_status = CASE s.status WHEN {STATUS_COMPUTED} THEN 'computed' ELSE 'rejected' END,
                n_participants = s.nodes, n_edges = s.edges, n_orphans = s.orphans,
                reach = {d.nan_to_null("s.reach")},
                unit = CASE s.unit WHEN {UNIT_FOLLOWERS} THEN 'followers' ELSE 'retweeters' END,
                computed_at = CURRENT_TIMESTAMP, compute_run_id = %s
            FROM {staged} s WHERE monitor_tweet.id = s.tweet""",
        [run_pk],
    )
    return staged


def _refresh_aggregates(
    cur, d: Dialect, ws: int, touched: str, *, changes: _DailyChanges | None = None
) -> AllTimeDelta | None:
    """Recompute the daily aggregates of the touched (publisher, day) pairs from the per-cascade rows; with
    ``changes`` (a live-stream micro-batch: :func:`_replace_changed_influence`), only the daily rows of the keys
    whose per-cascade rows changed (:func:`_refresh_daily_keys`), and then returns how the all-time sums per
    (account, label) changed (None otherwise: the whole refresh does not read what it deletes)."""
    tables = ["monitor_dailyinfluence", "monitor_publisherday"]
    delta = None
    if changes is not None:
        delta = _refresh_daily_keys(cur, ws, changes)
        tables = tables[1:]
    for table in tables:
        if d.postgres:  # a join the planner drives from the few keys through the unique index
            cur.execute(
                f"""DELETE FROM {table} x USING {touched} k
                    WHERE x.workspace_id = %s AND x.publisher_id = k.publisher AND x.day = k.day""",
                [ws],
            )
        else:
            cur.execute(
                f"""DELETE FROM {table} WHERE workspace_id = %s AND EXISTS (SELECT 1 FROM {touched} k
                    WHERE k.publisher = {table}.publisher_id AND k.day = {table}.day)""",
                [ws],
            )
    if changes is None:
        # the keys' per-cascade rows through their tweets (the publisher's tweets of that UTC day, then the rows by
        # the (tweet, account) key): the per-cascade table has no (publisher, day) index, whose upkeep cost every
        # write of its rows about a quarter (migration 0023). A row's publisher and day are its tweet's author and
        # UTC day, which never change once the tweet is stored
        cur.execute(
            f"""INSERT INTO monitor_dailyinfluence (workspace_id, publisher_id, account_id, day, label, influence,
                    cascades)
                SELECT %s, ci.publisher_id, ci.account_id, ci.day, ci.label, SUM(ci.influence), COUNT(*)
                FROM {touched} k {d.join} monitor_tweet t ON t.author_id = k.publisher
                    AND {d.ts_to_day("t.created_at")} = k.day
                {d.join} monitor_cascadeinfluence ci ON ci.tweet_id = t.id
                WHERE t.workspace_id = %s GROUP BY ci.publisher_id, ci.account_id, ci.day, ci.label""",
            [ws, ws],
        )
    cur.execute(
        f"""INSERT INTO monitor_publisherday (workspace_id, publisher_id, day, label, tweets, reach)
            SELECT %s, t.author_id, {d.ts_to_day("t.created_at")}, t.label, COUNT(*), COALESCE(SUM(t.reach), 0)
            FROM {touched} k {d.join} monitor_tweet t ON t.author_id = k.publisher
                AND {d.ts_to_day("t.created_at")} = k.day
            WHERE t.workspace_id = %s AND t.compute_status = 'computed'
            GROUP BY t.author_id, {d.ts_to_day("t.created_at")}, t.label""",
        [ws, ws],
    )
    return delta


def _refresh_aggregates_in_engine(
    cur,
    ws: int,
    touched: str,
    batch_table: str,
    written: _DailyInput | None,
    res: BatchResult,
    *,
    loading: bool = False,
    cascade_run: int | None = None,
) -> AllTimeDelta | None:
    """A compute batch's refresh on PostgreSQL: the daily rows of the touched (publisher, day) pairs summed here,
    in NumPy, from the batch's own per-cascade rows (``written``: just copied in, not read back) and the stored
    rows of the pairs' other tweets, then written by one binary COPY in key order instead of an
    ``INSERT ... SELECT`` whose join and hash aggregate fed the table's B-trees in no order
    (benchmarks/data_layer.md). The publishers' day totals are small and stay in SQL.

    Returns how the batch changed the all-time sums per (account, label, own): the daily rows it wrote less the
    rows of the touched pairs it deleted, read (summed) before the delete. The ranking's snapshots and the
    warm-up's all-time sums advance by it instead of grouping every daily row again (at 10M retweets 5.4-6.5 s of
    PostgreSQL, a fifth of a small run's 30 s warm-up bound, benchmarks/data_layer.md).

    ``loading``: the workspace's daily rows are in a partition without indexes that this batch's run loads
    (``monitor.partitions``, its first run). Its stored daily rows are then those earlier batches of the run
    wrote, of pairs whose other tweets have per-cascade rows (read here anyway): the read and delete of the old
    rows, which would scan the partition, are made only for those pairs, and not at all where the batch's pairs
    were not cut (the planner keeps a pair in one batch unless it is bigger than a batch).

    ``cascade_run``: the workspace's per-cascade rows are in a partition without its index that this compute run
    loads. Its stored rows are then those of the tweets the run's earlier batches stored, and the other tweets'
    rows are read only for those (found by the tweets' index), not by a join that would scan the partition.

    Its steps' seconds are added to ``res.timings`` under ``store_aggregates_<step>_s`` (the benchmarks' table)."""
    t = time.perf_counter()
    other_cols = f"""SELECT ci.publisher_id, ci.account_id, {_DAY_NUMBER.format(col="ci.day")},
        ({_LABEL_CASE.format(col="ci.label")})::bigint, ci.influence"""
    other_types = [("p", "bigint"), ("a", "bigint"), ("d", "bigint"), ("l", "bigint"), ("i", "float")]
    if cascade_run is None:
        other_rows = copy_out(
            cur,
            f"""{other_cols} FROM {touched} k JOIN monitor_tweet t ON {_PAIR_TWEETS}
                JOIN monitor_cascadeinfluence ci ON ci.workspace_id = %s AND ci.tweet_id = t.id
                WHERE t.id NOT IN (SELECT id FROM {batch_table})""",
            [ws, ws],
            other_types,
        )
    else:
        cur.execute(
            f"""SELECT t.id FROM {touched} k JOIN monitor_tweet t ON {_PAIR_TWEETS}
                WHERE t.compute_run_id = %s AND t.id NOT IN (SELECT id FROM {batch_table})""",
            [ws, cascade_run],
        )
        stored = [r[0] for r in cur.fetchall()]
        other_rows = (
            copy_out(
                cur,
                f"{other_cols} FROM monitor_cascadeinfluence ci WHERE ci.workspace_id = %s "
                f"AND ci.tweet_id = ANY({int_array(stored)})",
                [ws],
                other_types,
            )
            if stored
            else [np.zeros(0, np.float64 if k == "float" else np.int64) for _, k in other_types]
        )
    others = _DailyInput(*other_rows)
    t = res.tick("store_aggregates_others_s", t)
    pairs, none_stored = f"{touched} k", False
    if loading:  # only the pairs an earlier batch of the run wrote (see above)
        cut = np.unique(np.stack([others.publisher, others.day], axis=1), axis=0)
        none_stored = not len(cut)
        pairs = f"""(SELECT g.publisher, DATE '2000-01-01' + g.n::int AS day
                     FROM unnest({int_array(cut[:, 0])}, {int_array(cut[:, 1])}) AS g(publisher, n)) k"""
    if none_stored:
        old = [np.zeros(0, kind) for kind in (np.int64, np.int64, np.float64, np.int64, np.int64)]
    else:
        old = copy_out(
            cur,
            f"""SELECT x.account_id, ({_LABEL_CASE.format(col="x.label")})::bigint, SUM(x.influence),
                    SUM(x.cascades)::bigint, CASE WHEN x.account_id = x.publisher_id THEN 1 ELSE 0 END
                FROM {pairs} JOIN monitor_dailyinfluence x
                    ON x.workspace_id = %s AND x.publisher_id = k.publisher AND x.day = k.day
                GROUP BY 1, 2, 5""",
            [ws],
            [("a", "bigint"), ("l", "bigint"), ("i", "float"), ("c", "bigint"), ("o", "int")],
        )
        cur.execute(
            f"""DELETE FROM monitor_dailyinfluence x USING {pairs}
                WHERE x.workspace_id = %s AND x.publisher_id = k.publisher AND x.day = k.day""",
            [ws],
        )
    t = res.tick("store_aggregates_old_s", t)
    parts = [others] if written is None else [written, others]
    rows = _DailyInput(*(np.concatenate([getattr(p, f) for p in parts]) for f in _DailyInput._fields))
    added = AllTimeDelta.empty()._replace(own=np.zeros(0, bool))
    if len(rows.publisher):
        if (rows.label < 0).any():
            raise ValueError("daily aggregates: a per-cascade row has a label outside Label")
        order = lexorder((rows.account, rows.label, rows.day, rows.publisher))  # the unique key's order
        rows = _DailyInput(*(c[order] for c in rows))
        keys = (rows.publisher, rows.day, rows.label, rows.account)
        new = np.ones(len(rows.publisher), bool)
        for k in keys:
            new[1:] &= k[1:] == k[:-1]
        new = ~new
        new[0] = True
        first = np.flatnonzero(new)
        counts = np.diff(np.append(first, len(rows.publisher)))
        sums = np.add.reduceat(rows.influence, first)  # in row order within a key
        t = res.tick("store_aggregates_sum_s", t)
        _copy_daily(cur, ws, *(k[first] for k in keys), sums, counts)
        t = res.tick("store_aggregates_copy_s", t)
        pub, acc = rows.publisher[first], rows.account[first]
        added = AllTimeDelta(acc, rows.label[first], sums, counts.astype(np.int64), acc == pub)
    cur.execute(
        f"""DELETE FROM monitor_publisherday x USING {touched} k
            WHERE x.workspace_id = %s AND x.publisher_id = k.publisher AND x.day = k.day""",
        [ws],
    )
    # the computed tweets counted by FILTER, not in the join's WHERE: statistics taken while the tweets were pending
    # say almost none is computed, and with that estimate the planner joined every tweet against every pair by a
    # nested loop (113 s in one batch of the 10M benchmark, benchmarks/data_layer.md)
    cur.execute(
        f"""INSERT INTO monitor_publisherday (workspace_id, publisher_id, day, label, tweets, reach)
            SELECT %s, g.author_id, g.day, g.label, g.tweets, g.reach FROM (
                SELECT t.author_id, (t.created_at AT TIME ZONE 'UTC')::date AS day, t.label,
                    COUNT(*) FILTER (WHERE t.compute_status = 'computed') AS tweets,
                    COALESCE(SUM(t.reach) FILTER (WHERE t.compute_status = 'computed'), 0) AS reach
                FROM {touched} k JOIN monitor_tweet t ON {_PAIR_TWEETS}
                GROUP BY 1, 2, 3) g
            WHERE g.tweets > 0""",
        [ws, ws],
    )
    res.tick("store_aggregates_publisherday_s", t)
    gone = AllTimeDelta(old[0], old[1], -old[2], -old[3], old[4].astype(bool))
    # kept in Redis for ``cache.ALL_TIME_DELTA_TTL``: narrowed as the cached sums are, 22 bytes a row (a batch of the
    # 10M benchmark's first run writes about 0.93M daily rows, 10.2M over its 11 batches: 20 MB each)
    dtypes = (np.int64, np.int8, np.float64, np.int32, bool)
    return AllTimeDelta(*(np.concatenate([a, g]).astype(t) for a, g, t in zip(added, gone, dtypes, strict=True)))


#: the tweets of the touched pair ``k`` (publisher, UTC day) as a range of the (workspace, author, created_at) index,
#: not a cast of every tweet's time: one parameter, the workspace
_PAIR_TWEETS = """t.workspace_id = %s AND t.author_id = k.publisher
    AND t.created_at >= (k.day::timestamp AT TIME ZONE 'UTC')
    AND t.created_at < ((k.day + 1)::timestamp AT TIME ZONE 'UTC')"""
