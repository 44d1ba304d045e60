"""The influence measure as a compute-run algorithm: planning batches by (publisher, day) and participants,
loading and computing a batch, storing its per-cascade influence and refreshing the daily aggregates.

A run covers a set of tweets; the planner groups them into batches of about ``SPREADWATCH_BATCH_NODES``
participants, so one task holds a bounded amount of data. A batch rewrites the daily aggregates of every
(publisher, day) pair its tweets belong to, so the planner keeps a pair's tweets in one batch and gives each batch
a contiguous range of pairs in the aggregates' key order (only a pair bigger than a batch is cut). A batch
loads its cascades and the follow edges among their participants, runs the forward and backward phases
(``compute``; CPU or GPU), and in one transaction replaces the per-cascade influence of its tweets and
recomputes the daily aggregates of its pairs.
Running a batch twice gives the same rows once: rows are replaced, not added (the runner skips a batch that is
already done under a row lock: ``monitor.services.runs``).

Inside a batch, cascades are computed in groups that share how their input must be read: rebuilt from
follows or given spreading graphs, with or without times, with or without follower counts. The workspace's
unit decides what a cascade without any count gives (``monitor/services/units.py``): n_v = 1 for everyone where
the workspace counts retweeters, 0 where it counts followers (its counts are unknown).

A batch whose cascades do not fit in GPU memory together is split in halves until they do, and a cascade that
alone does not fit runs on the CPU; the run's notes say so.

The data keeps its form from the database and back: each ``copy_out`` fills a named tuple of column arrays
(:class:`TweetRows`, :class:`RetweetRows`, ...), and each table the batch writes is staged from one
(:class:`InfluenceRows`, :class:`TweetOutcomes`), whose field names are the staging table's columns.

The modules: ``rows`` (the named columns and the codes of roles, statuses and units), ``batch`` (planning,
loading and computing a batch; the follower graph through ``monitor.graph_files``) and ``store`` (writing a
batch's rows and refreshing the aggregates); this one is the algorithm the runner calls.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import connection

from compute.batching import plan_batches

from ... import partitions
from ...db import analyze_after_bulk_write
from ...models import ComputeBatch, ComputeRun
from ..base import Algorithm, BatchOutcome, PlannedBatch, Stop, register
from .batch import (  # noqa: F401
    _GRAPHS,
    _GRAPHS_KEEP,
    BatchInput,
    BatchResult,
    GroupKey,
    _cascade_sizes,
    _collect,
    _compute,
    _compute_batch,
    _compute_group,
    _follow_participants,
    _given_graphs,
    _halves,
    _input_groups,
    _load,
    _load_follows_among,
    _packed_graphs,
    _planned_cascades,
    _rebuilt,
    _roles,
    _split_notes,
    _tweet_table,
    _without_times,
    workspace_graph,
)
from .changes import (  # noqa: F401
    _DailyChanges,
    _DailyRows,
    _key_positions,
    _per_key,
    _refresh_daily_keys,
    _replace_changed_influence,
    _row_codes,
    _rows_view,
    changed_rows,
)
from .copies import (  # noqa: F401
    _DAY_NUMBER,
    _LABEL_CASE,
    _LABELS,
    _ROLE_CASE,
    _copy_cascade_influence,
    _days_and_labels,
)
from .rows import (  # noqa: F401
    AGGREGATE_LOCK_CLASS,
    ORPHAN,
    ROLE_CODES,
    STATUS_COMPUTED,
    STATUS_REJECTED,
    UNIT_FOLLOWERS,
    UNIT_RETWEETERS,
    AllTimeDelta,
    CascadeGraphRow,
    FollowRows,
    GivenEdgeRows,
    InfluenceRows,
    RetweetRows,
    Rows,
    TweetOutcomes,
    TweetRows,
    _columns,
    _concat,
    _dtype,
    _empty,
    _select,
    _stage,
    _stage_ids,
)
from .store import (  # noqa: F401
    _GRAPH_ROW,
    CASCADE,
    DAILY,
    RESULT_TABLES,
    _insert_cascade_graphs,
    _insert_cascade_influence,
    _refresh_aggregates,
    _stage_touched_days,
    _store,
    _update_tweets,
    begin_cascade_load,
    result_tables,
)

log = logging.getLogger(__name__)

__all__ = ["INFLUENCE", "ROLE_CODES", "BatchResult", "Influence", "plan_batches"]


# --- the algorithm -------------------------------------------------------------------------------------------


class Influence(Algorithm):
    """The influence measure (docs/measure.md): per cascade, the audience each participant helped it reach."""

    name = "influence"
    label = "Influence measure"

    def plan(self, *, run: ComputeRun, tweet_pks: list[int]) -> list[PlannedBatch]:
        # a batch rewrites the daily aggregates of every (publisher, day) pair its tweets belong to: a pair's
        # tweets go in one batch, and a batch's pairs are a contiguous range of the aggregates' unique index
        sizes, pairs = _planned_cascades(tweet_pks, run.workspace_id) if tweet_pks else ({}, {})
        return [
            PlannedBatch(tweet_pks=pks, n_cascades=len(pks), n_nodes=sum(sizes[p] for p in pks))
            for pks in plan_batches(
                sizes,
                settings.SPREADWATCH_BATCH_NODES,
                workers=settings.SPREADWATCH_RUN_WORKERS,
                min_nodes=settings.SPREADWATCH_BATCH_MIN_NODES,
                groups=pairs,
            )
        ]

    def compute(self, *, run: ComputeRun, batch: ComputeBatch, backend: str, stop: Stop) -> BatchResult:
        # a workspace's first run: its per-cascade rows' partition made before any batch stores (store.py)
        begin_cascade_load(run.workspace_id, run.pk)
        return _compute_batch(batch, run, backend, stop)

    def store(self, *, run: ComputeRun, batch: ComputeBatch, result: BatchOutcome) -> None:
        _store(run, batch, result)

    def finish(self, *, run: ComputeRun) -> None:
        # the batches analysed the result tables once they had doubled: grown by a tenth since (by any number of
        # rows: once a run, and small tables sample whole), they are analysed here, in the last batch's
        # transaction, before the warm-up and the pages plan their reads with them
        with connection.cursor() as cur:
            # a workspace's first run loaded its per-cascade and daily rows without indexes: built once, here
            # (monitor.partitions)
            for table in (CASCADE, DAILY):
                partitions.derived_end(cur, table, run.workspace_id, run.pk)
            analyze_after_bulk_write(cur, result_tables(cur, run.workspace_id), None, floor=1)


INFLUENCE = register(Influence())
