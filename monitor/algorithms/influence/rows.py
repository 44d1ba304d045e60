"""The influence algorithm's named columns: what ``copy_out`` reads and ``copy_in`` writes, one NumPy array per
column, and the constants its rows are coded with."""

from __future__ import annotations

import logging
from typing import NamedTuple, TypeVar

import numpy as np

from ...db import (
    copy_in,
    copy_out,
    create_temp,
    temp_table_name,
)

log = logging.getLogger(__name__)

# the class of the per-workspace advisory lock an aggregate refresh holds (two-int key space, beside the merge's
# 20_001; the one-key lock on the workspace id is the store lock: shared by compute batches, exclusive for the stream)
AGGREGATE_LOCK_CLASS = 20_002
ROLE_CODES = {0: "publisher", 1: "spreader", 2: "leaf", 3: "orphan"}
ORPHAN = 3
STATUS_COMPUTED, STATUS_REJECTED = 1, 2  # TweetOutcomes.status
UNIT_FOLLOWERS, UNIT_RETWEETERS = 0, 1  # TweetOutcomes.unit


# --- named columns: what copy_out reads and copy_in writes -----------------------------------------------------
# Each tuple holds one NumPy array per column; ``SQL`` gives the columns' types for copy_out / create_temp.


class TweetRows(NamedTuple):
    """The batch's tweets, one entry per tweet."""

    pk: np.ndarray
    author: np.ndarray
    time: np.ndarray  # epoch seconds
    followers: np.ndarray  # the author's follower count, -1 where unknown
    times_known: np.ndarray  # 1 where the retweet times are real
    given: np.ndarray  # 1 where the spreading graph was uploaded, 0 where it is rebuilt from follows
    SQL = ("bigint", "bigint", "float", "float", "int", "int")


class RetweetRows(NamedTuple):
    """The retweets of the batch's tweets."""

    tweet: np.ndarray
    user: np.ndarray
    time: np.ndarray
    followers: np.ndarray  # -1 where unknown
    SQL = ("bigint", "bigint", "float", "float")


class FollowRows(NamedTuple):
    """Follow edges among the participants of the cascades rebuilt from follows."""

    follower: np.ndarray
    followee: np.ndarray
    SQL = ("bigint", "bigint")


class GivenEdgeRows(NamedTuple):
    """The uploaded spreading edges of the batch's given cascades (account pks)."""

    tweet: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    SQL = ("bigint", "bigint", "bigint")


class InfluenceRows(NamedTuple):
    """Per node of an accepted cascade: a ``monitor_cascadeinfluence`` row before its day and label are joined."""

    tweet: np.ndarray
    account: np.ndarray
    publisher: np.ndarray
    influence: np.ndarray
    followers: np.ndarray
    role: np.ndarray  # a ROLE_CODES key
    SQL = ("bigint", "bigint", "bigint", "float", "float", "int")


class TweetOutcomes(NamedTuple):
    """Per cascade: what ``monitor_tweet`` records of its computation."""

    tweet: np.ndarray
    status: np.ndarray  # STATUS_COMPUTED or STATUS_REJECTED
    nodes: np.ndarray
    edges: np.ndarray
    orphans: np.ndarray
    reach: np.ndarray  # NaN where rejected
    unit: np.ndarray  # UNIT_FOLLOWERS or UNIT_RETWEETERS
    SQL = ("bigint", "int", "bigint", "bigint", "bigint", "float", "int")


class CascadeGraphRow(NamedTuple):
    """A ``monitor_cascadegraph`` row: an accepted cascade's spreading edges as account pks, packed."""

    tweet: int
    n_edges: int
    edges: bytes


Rows = TypeVar("Rows", TweetRows, RetweetRows, FollowRows, GivenEdgeRows, InfluenceRows, TweetOutcomes)


def _columns(rows_type: type[Rows]) -> list[tuple[str, str]]:
    return list(zip(rows_type._fields, rows_type.SQL))


def _dtype(sql_type: str) -> type:
    return np.float64 if sql_type == "float" else np.int64


def _select(
    cur, rows_type: type[Rows], sql: str, params: list | None = None, *, gather: bool = True, epoch: str = ""
) -> Rows:
    """``sql``'s rows as ``rows_type``; ``gather=False`` for follower-graph reads, which may exceed what one
    gathered value holds (``monitor.db.copy_out``); ``epoch``: the field that ``sql`` selects as
    ``Dialect.epoch_column`` gives, a time read as epoch seconds."""
    columns = [(name, "epoch" if name == epoch else kind) for name, kind in _columns(rows_type)]
    return rows_type._make(copy_out(cur, sql, params or [], columns, gather=gather))


def _empty(rows_type: type[Rows]) -> Rows:
    return rows_type._make(np.zeros(0, _dtype(kind)) for kind in rows_type.SQL)


def _concat(rows_type: type[Rows], parts: list[Rows]) -> Rows:
    """The parts as one, each column in the type its table column takes."""
    if not parts:
        return _empty(rows_type)
    return rows_type._make(
        np.concatenate([p[i] for p in parts]).astype(_dtype(kind)) for i, kind in enumerate(rows_type.SQL)
    )


def _stage(cur, prefix: str, rows_type: type[Rows], rows: Rows) -> str:
    """A new temporary table holding ``rows`` (its columns named after the tuple's fields); returns its name."""
    name = temp_table_name(prefix)
    columns = _columns(rows_type)
    create_temp(cur, name, columns)
    copy_in(cur, name, columns, list(rows))
    return name


def _stage_ids(cur, prefix: str, ids) -> str:
    name = temp_table_name(prefix)
    create_temp(cur, name, [("id", "bigint")])
    copy_in(cur, name, [("id", "bigint")], [np.asarray(ids, dtype=np.int64)])
    return name


class AllTimeDelta(NamedTuple):
    """What a write added to the all-time sums per (account, label) of the daily aggregates: one row per daily
    row written (positive) or deleted (negative), in any order, several rows per pair allowed. ``label`` is the
    code of :class:`~monitor.models.Label` in its order (``_LABELS``), ``cascades`` counts T_v, ``own`` marks a
    row of an account on its own tweets (the spreaders' rankings leave those out; None: no such row)."""

    account: np.ndarray
    label: np.ndarray
    influence: np.ndarray
    cascades: np.ndarray
    own: np.ndarray | None = None

    @classmethod
    def empty(cls) -> AllTimeDelta:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.int64))
