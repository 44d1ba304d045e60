"""The influence measure as a compute-run algorithm: planning batches by cascade size, loading and computing a
batch, storing its per-cascade influence and refreshing the daily aggregates.

A run covers a set of tweets; the planner groups them into batches of about ``SPREADWATCH_BATCH_NODES``
participants, largest cascades first, so one task holds a bounded amount of data and a GPU sees cascades of
similar size together. A batch loads its cascades and the follow edges among their participants, runs the
forward and backward phases (``compute``; CPU or GPU), and in one transaction replaces the per-cascade
influence of its tweets and recomputes the daily aggregates of the (publisher, day) pairs they belong to.
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
"""

from __future__ import annotations

import dataclasses
import logging
import math
import struct
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

import numpy as np
from django.conf import settings
from django.db import connection

from compute.algorithms.backward import backward
from compute.algorithms.influence import influence as both_phases
from compute.arrays import unique
from compute.backends import free_device_memory, is_device_oom
from compute.batching import plan_batches
from compute.build import build_cascades
from compute.structures import Cascades, FollowerGraph, SpreadingGraphs
from compute.tables import NO_TWEET, TweetTable

from ..db import (
    COPY_HEADER,
    COPY_TRAILER,
    Dialect,
    analyze_after_bulk_write,
    copy_in,
    copy_out,
    create_temp,
    dialect,
    int_array,
    temp_table_name,
)
from ..models import ComputeBatch, ComputeRun, Label, Tweet, Workspace
from .base import Algorithm, BatchOutcome, PlannedBatch, RunCancelled, Stop, register, report_phase

log = logging.getLogger(__name__)

__all__ = ["INFLUENCE", "ROLE_CODES", "BatchResult", "Influence", "plan_batches"]

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


def _select(cur, rows_type: type[Rows], sql: str, params: list | None = None, *, gather: bool = True) -> Rows:
    """``sql``'s rows as ``rows_type``; ``gather=False`` for follower-graph reads, which may exceed what one
    gathered value holds (``monitor.db.copy_out``)."""
    return rows_type._make(copy_out(cur, sql, params or [], _columns(rows_type), gather=gather))


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


# --- planning ------------------------------------------------------------------------------------------------


def _cascade_sizes(tweet_pks: list[int]) -> dict[int, int]:
    """Participants (the publisher and the retweeters) per tweet pk."""
    with connection.cursor() as cur:
        tmp = _stage_ids(cur, "plan", tweet_pks)
        cur.execute(
            f"""SELECT p.id, 1 + COUNT(r.id) FROM {tmp} p LEFT JOIN monitor_retweet r ON r.tweet_id = p.id
                GROUP BY p.id"""
        )
        sizes = {int(pk): int(n) for pk, n in cur.fetchall()}
        cur.execute(f"DROP TABLE IF EXISTS {tmp}")
    return sizes


# --- one batch: the result ---------------------------------------------------------------------------------------


@dataclass
class BatchResult(BatchOutcome):
    """A batch's rows, in parts (one per group of cascades computed together), until they are stored."""

    influence: list[InfluenceRows] = field(default_factory=list)
    outcomes: list[TweetOutcomes] = field(default_factory=list)
    graphs: list[CascadeGraphRow] = field(default_factory=list)

    def merge(self, other: BatchResult) -> None:
        """Add the results of another part of the same batch."""
        self.influence.extend(other.influence)
        self.outcomes.extend(other.outcomes)
        self.graphs.extend(other.graphs)
        self.notes.extend(other.notes)
        self.cpu_fallback.extend(other.cpu_fallback)
        for k, v in other.timings.items():
            self.timings[k] = self.timings.get(k, 0.0) + v
        self.n_edges += other.n_edges


# --- one batch: loading and computing ----------------------------------------------------------------------------


def _compute_batch(batch: ComputeBatch, run: ComputeRun, backend: str, stop: Stop) -> BatchResult:
    """The batch's results. On the GPU, cascades that do not fit in device memory together (the engine plans
    chunks from an estimate, which another process's allocations can beat) are computed in halves, recursively;
    a cascade that alone does not fit runs on the CPU reference. The numbers are the same either way; the notes
    say what happened."""
    try:
        return _compute(batch.tweet_pks, run, backend, stop)
    except Exception as exc:
        if backend != "gpu" or not is_device_oom(exc):
            raise
        log.warning("compute batch %s of run %s: GPU out of memory; splitting it", batch.pk, run.pk)
    free_device_memory()
    sizes = _cascade_sizes(batch.tweet_pks)
    res = BatchResult()
    parts = 0
    todo = list(_halves(batch.tweet_pks, sizes))
    while todo:
        pks = todo.pop()
        try:
            res.merge(_compute(pks, run, backend, stop))
            parts += 1
            continue
        except Exception as exc:
            if not is_device_oom(exc):
                raise
        free_device_memory()
        if len(pks) > 1:
            todo += _halves(pks, sizes)
        else:
            res.merge(_compute(pks, run, "cpu", stop))
            res.cpu_fallback += pks
    res.notes += _split_notes(sizes, parts, res.cpu_fallback)
    return res


def _split_notes(sizes: dict[int, int], parts: int, cpu_fallback: list[int]) -> list[str]:
    """What the run's notes say of a batch split after a GPU out-of-memory error."""
    notes = [
        f"GPU out of memory on {len(sizes):,} cascades ({sum(sizes.values()):,} participants) at once: computed in "
        f"{parts + len(cpu_fallback)} parts" + (f", {len(cpu_fallback)} of them on the CPU" if cpu_fallback else "")
    ]
    if cpu_fallback:
        ids = sorted(Tweet.objects.filter(pk__in=cpu_fallback[:10]).values_list("tweet_id", flat=True))
        more = f" and {len(cpu_fallback) - 10} more" if len(cpu_fallback) > 10 else ""
        notes.append(
            f"{len(cpu_fallback)} cascade(s) too large for the GPU alone ran on the CPU "
            f"(tweets {', '.join(map(str, ids))}{more})"
        )
    return notes


def _halves(pks: list[int], sizes: dict[int, int]) -> list[list[int]]:
    """``pks`` in two parts of about equal participants (largest first, each to the lighter part)."""
    parts: tuple[list[int], list[int]] = ([], [])
    used = [0, 0]
    for pk in sorted(pks, key=lambda k: (-sizes.get(k, 1), k)):
        i = 0 if used[0] <= used[1] else 1
        parts[i].append(pk)
        used[i] += sizes.get(pk, 1)
    return [p for p in parts if p]


@dataclass(frozen=True)
class BatchInput:
    """Everything a batch reads from the database, read once before it computes."""

    tweets: TweetRows
    retweets: RetweetRows
    follows: FollowRows
    given_edges: GivenEdgeRows


class GroupKey(NamedTuple):
    """How a group of cascades' input is read (each 1 or 0)."""

    given: int
    times_known: int
    has_counts: int


def _compute(tweet_pks: list[int], run: ComputeRun, backend: str, stop: Stop) -> BatchResult:
    """Load the cascades ``tweet_pks`` and compute them, group by group (see :class:`GroupKey`)."""
    if stop():
        raise RunCancelled()
    res = BatchResult()
    # A compute run reads the workspace's whole follower graph once per process and keeps it while the follows
    # are unchanged (the GPU keeps its device copy with it): its batches, and the runs after it, read no follows.
    # A live-stream micro-batch (a run without a row) says which it wants (``run.keep_graph``): the kept graph
    # when its own events wrote no follows (the stream consumer then reads the graph once, not the follows among
    # the touched cascades' participants every micro-batch: 0.43 s of a 1.9 s micro-batch of 5,000 events,
    # benchmarks/stream_web.md), else only the follows among its participants, since reading a big workspace's
    # graph again after every micro-batch that brings follows would cost more than the batch.
    keep_graph = getattr(run, "keep_graph", None)
    if keep_graph is None:
        keep_graph = run.pk is not None
    data = _load(tweet_pks, res, follows=not keep_graph)
    t = time.perf_counter()
    if keep_graph and _rebuilt(data.tweets).any():
        graph = workspace_graph(run.workspace_id, res)  # ticks its own load_follows_s and graph_s
        t = time.perf_counter()
    else:
        graph = FollowerGraph.from_edges(data.follows.follower, data.follows.followee)
        t = res.tick("graph_s", t)
    # the workspace's unit, fixed by its first data (monitor/services/units.py): every cascade counts it, whatever
    # counts its own rows carry, so no cascade switches unit (and its participants' values) when a count arrives
    unit = Workspace.objects.filter(pk=run.workspace_id).values_list("unit", flat=True).first() or ""
    for key, idx in _input_groups(data.tweets, data.retweets, unit):
        if stop():  # a safe point: nothing of the batch is stored yet
            raise RunCancelled()
        t = _compute_group(res, data, graph, key, idx, orphans=run.orphans, backend=backend, t=t, unit=unit)
    return res


def _load(tweet_pks: list[int], res: BatchResult, follows: bool = True) -> BatchInput:
    """Read the tweets ``tweet_pks``, their retweets, the follows among the participants of the cascades that
    are rebuilt from follows (unless ``follows`` is false), and the edges of the given ones."""
    d = dialect()
    t = time.perf_counter()
    with connection.cursor() as cur:
        batch_table = _stage_ids(cur, "batch", tweet_pks)
        tweets = _select(
            cur,
            TweetRows,
            f"""SELECT t.id, t.author_id, {d.ts_to_epoch("t.created_at")}, COALESCE(t.author_followers, -1.0),
                    CASE WHEN t.times_known THEN 1 ELSE 0 END,
                    CASE WHEN t.graph_source = 'given' THEN 1 ELSE 0 END
                FROM {batch_table} b {d.join} monitor_tweet t ON t.id = b.id""",
        )
        retweets = _select(
            cur,
            RetweetRows,
            f"""SELECT r.tweet_id, r.retweeter_id, {d.ts_to_epoch("r.created_at")}, COALESCE(r.followers_count, -1.0)
                FROM {batch_table} b {d.join} monitor_retweet r ON r.tweet_id = b.id""",
        )
        t = res.tick("load_tweets_s", t)
        among = _load_follows_among(cur, d, _follow_participants(tweets, retweets)) if follows else None
        given_edges = _empty(GivenEdgeRows)
        if (tweets.given == 1).any():
            given_edges = _select(
                cur,
                GivenEdgeRows,
                f"""SELECT e.tweet_id, e.src_id, e.dst_id FROM {batch_table} b {d.join} monitor_givenedge e
                    ON e.tweet_id = b.id""",
            )
        cur.execute(f"DROP TABLE IF EXISTS {batch_table}")
        res.tick("load_follows_s", t)
    return BatchInput(tweets, retweets, among if among is not None else _empty(FollowRows), given_edges)


def _rebuilt(tweets: TweetRows) -> np.ndarray:
    """Which tweets' spreading graphs are rebuilt from follows (the others' were uploaded)."""
    return tweets.given == 0


#: follower graphs kept per process: (database, workspace, follows token) -> graph, the most recent last. A worker
#: serves one workspace at a time, mostly; the graph of a big one is most of its memory
_GRAPHS_KEEP = 2
_GRAPHS: OrderedDict[tuple, FollowerGraph] = OrderedDict()


def workspace_graph(ws: int, res: BatchResult | None = None) -> FollowerGraph:
    """The follower graph of workspace ``ws`` as this transaction sees it, read once per ``follows_token`` by
    each process (every write to the follows gives the workspace a new token in its transaction, never used
    before: ``monitor.db.renew_follows_token``). A read: keeping it is this process's memory, not a write."""
    db = connection.settings_dict["NAME"]
    with connection.cursor() as cur:
        token = _follows_token(cur, ws)
        hit = _GRAPHS.get((db, ws, token))
        if hit is not None:
            _GRAPHS.move_to_end((db, ws, token))
            if res is not None:
                res.timings["graph_kept"] = res.timings.get("graph_kept", 0.0) + 1
            return hit
        t = time.perf_counter()
        follows = _select(
            cur,
            FollowRows,
            "SELECT follower_id, followee_id FROM monitor_follow WHERE workspace_id = %s",
            [ws],
            gather=False,
        )
        # a write that committed between the two reads of the token may be in the rows: use them, keep nothing
        unchanged = _follows_token(cur, ws) == token
    if res is not None:
        t = res.tick("load_follows_s", t)
    graph = FollowerGraph.from_edges(follows.follower, follows.followee)
    if res is not None:
        res.tick("graph_s", t)
    if unchanged:
        _GRAPHS[(db, ws, token)] = graph
        while len(_GRAPHS) > _GRAPHS_KEEP:
            _GRAPHS.popitem(last=False)
    return graph


def _follows_token(cur, ws: int) -> str:
    cur.execute("SELECT follows_token FROM monitor_workspace WHERE id = %s", [ws])
    row = cur.fetchone()
    if row is None:
        raise ValueError(f"workspace {ws} does not exist")
    return row[0]


def _follow_participants(tweets: TweetRows, retweets: RetweetRows) -> np.ndarray:
    """The accounts (publishers and retweeters) of the cascades rebuilt from follows, sorted and unique."""
    rebuilt = _rebuilt(tweets)
    follow_tweets = set(tweets.pk[rebuilt].tolist())
    return unique(np.concatenate([tweets.author[rebuilt], retweets.user[np.isin(retweets.tweet, list(follow_tweets))]]))


def _load_follows_among(cur, d: Dialect, accounts: np.ndarray) -> FollowRows:
    if not len(accounts):
        return _empty(FollowRows)
    part = _stage_ids(cur, "part", accounts)
    if d.postgres:
        cur.execute(f"ANALYZE {part}")
    follows = _select(
        cur,
        FollowRows,
        f"""SELECT f.follower_id, f.followee_id FROM {part} p1
            {d.join} monitor_follow f ON f.follower_id = p1.id
            {d.join} {part} p2 ON p2.id = f.followee_id""",
        gather=False,
    )
    cur.execute(f"DROP TABLE IF EXISTS {part}")
    return follows


def _input_groups(tweets: TweetRows, retweets: RetweetRows, unit: str = "") -> list[tuple[GroupKey, np.ndarray]]:
    """The batch's tweets (as indices into ``tweets``) grouped by how their input is read, in key order. In a
    workspace counting retweeters (``unit``) no tweet's counts are read: every n_v is 1."""
    # which tweets carry any follower count: those without use n_v = 1 (unit "retweeters"), or 0 where the
    # workspace counts followers (_compute_group)
    has_counts = tweets.followers >= 0
    has_counts |= np.isin(tweets.pk, unique(retweets.tweet[retweets.followers >= 0]))
    if unit == "retweeters":
        has_counts[:] = False
    has_counts = has_counts.astype(int)
    keys = {GroupKey(*k) for k in zip(tweets.given.tolist(), tweets.times_known.tolist(), has_counts.tolist())}
    groups = [
        (
            key,
            np.flatnonzero(
                (tweets.given == key.given) & (tweets.times_known == key.times_known) & (has_counts == key.has_counts)
            ),
        )
        for key in keys
    ]
    return sorted(groups, key=lambda group: group[0])


def _compute_group(
    res: BatchResult,
    data: BatchInput,
    graph: FollowerGraph,
    key: GroupKey,
    idx: np.ndarray,
    *,
    orphans: str,
    backend: str,
    t: float,
    unit: str = "",
) -> float:
    """Build, forward, backward and collect one group of cascades into ``res``; returns the time it ended."""
    cascades, build = build_cascades(_tweet_table(data.tweets, data.retweets, idx, counts=bool(key.has_counts)))
    if unit == "followers" and cascades.unit == "retweeters":
        # cascades whose rows carry no count, in a workspace counting followers: every participant's count is
        # unknown and counts 0, as in a file where some counts are missing (never n_v = 1: that other unit would
        # give way to followers, every participant falling from 1 to 0, when the cascade's first count arrives)
        cascades = dataclasses.replace(cascades, followers=np.zeros(cascades.n_nodes), unit="followers")
        build.unit, build.followers_unknown_as_zero = "followers", build.followers_unknown_as_zero + cascades.n_nodes
    if not key.times_known:
        cascades = _without_times(cascades)
    res.notes += build.lines()
    t = res.tick("build_s", t)
    if key.given:
        graphs = _given_graphs(cascades, data.given_edges)
        t = res.tick("forward_s", t)
        bw = backward(graphs, backend=backend)
        t = res.tick("backward_s", t)
    else:  # both phases in one call: on the GPU the spreading graph stays on the device between them
        both = both_phases(cascades, graph, orphans=orphans, backend=backend)
        graphs, bw = both.graphs, both.backward
        t = res.tick("forward_backward_s", t)
    res.notes += bw.lines()
    _collect(res, graphs, bw.influence)
    return res.tick("collect_s", t)


def _tweet_table(tweets: TweetRows, retweets: RetweetRows, idx: np.ndarray, counts: bool = True) -> TweetTable:
    """The tweets ``idx`` and their retweets as the engine's input table (unknown follower counts as NaN; every
    count unknown unless ``counts``)."""
    of_group = np.isin(retweets.tweet, tweets.pk[idx])
    followers = np.concatenate([tweets.followers[idx], retweets.followers[of_group]])
    if not counts:
        followers = np.full(len(followers), -1.0)
    return TweetTable(
        tweet_id=np.concatenate([tweets.pk[idx], np.zeros(int(of_group.sum()), np.int64)]),
        retweeted_tweet_id=np.concatenate([np.full(len(idx), NO_TWEET), retweets.tweet[of_group]]),
        user_id=np.concatenate([tweets.author[idx], retweets.user[of_group]]),
        created_at=np.concatenate([tweets.time[idx], retweets.time[of_group]]),
        followers_count=np.where(followers < 0, np.nan, followers),
    )


def _without_times(c: Cascades) -> Cascades:
    return Cascades(
        node_offsets=c.node_offsets,
        user_ids=c.user_ids,
        followers=c.followers,
        publisher=c.publisher,
        tweet_ids=c.tweet_ids,
        times=None,
        unit=c.unit,
        labels=c.labels,
    )


def _given_graphs(c: Cascades, edges: GivenEdgeRows) -> SpreadingGraphs:
    """The stored given edges of these cascades as node indices (cascade tweet ids are Tweet pks)."""
    keep = np.isin(edges.tweet, c.tweet_ids)
    tweet, src_user, dst_user = edges.tweet[keep], edges.src[keep], edges.dst[keep]
    casc_of_edge = np.searchsorted(c.tweet_ids, tweet)  # tweet_ids are sorted by build_cascades
    casc_of_node = c.cascade_of_node()
    # node lookup by (cascade, user) in one search: a user appears once per cascade, so the pair, as one key
    # (cascade x number of distinct users + the user's rank), is unique and sorts the nodes once
    users = unique(c.user_ids)
    width = max(len(users), 1)
    node_key = casc_of_node.astype(np.int64) * width + np.searchsorted(users, c.user_ids)
    order = np.argsort(node_key, kind="stable")
    sorted_key = node_key[order]

    def find(cs: np.ndarray, us: np.ndarray) -> np.ndarray:
        rank = np.minimum(np.searchsorted(users, us), width - 1)
        want = cs.astype(np.int64) * width + rank
        at = np.minimum(np.searchsorted(sorted_key, want), max(len(sorted_key) - 1, 0))
        if len(want) and ((users[rank] != us) | (sorted_key[at] != want)).any():
            raise ValueError("given edges: an edge names an account that is not a participant of its cascade")
        return order[at]

    src, dst = find(casc_of_edge, src_user), find(casc_of_edge, dst_user)
    by_cascade = np.argsort(casc_of_edge, kind="stable")
    counts = np.bincount(casc_of_edge, minlength=c.n_cascades)
    offsets = np.zeros(c.n_cascades + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    return SpreadingGraphs(c, offsets, src[by_cascade], dst[by_cascade], orphans="given")


def _roles(g: SpreadingGraphs) -> np.ndarray:
    """Each node's ROLE_CODES key: publisher; spreader (seen from someone, passed on); leaf; orphan."""
    n = g.cascades.n_nodes
    outdeg = np.bincount(g.edge_src, minlength=n)
    indeg = np.bincount(g.edge_dst, minlength=n)
    role = np.where(outdeg == 0, ORPHAN, np.where(indeg > 0, 1, 2)).astype(np.int64)
    role[g.cascades.publisher] = 0
    return role


def _collect(res: BatchResult, g: SpreadingGraphs, influence: np.ndarray) -> None:
    """Add one group's rows to ``res``: influence rows of the accepted cascades, every cascade's outcome, the
    accepted cascades' spreading edges. A cascade is rejected (a cycle) where its publisher's influence is NaN."""
    c = g.cascades
    casc = c.cascade_of_node()
    role = _roles(g)
    rejected = np.zeros(c.n_cascades, bool)
    if c.n_nodes:
        rejected = np.isnan(influence[c.publisher])
    ok_node = ~rejected[casc]
    pub_user = c.user_ids[c.publisher]
    res.influence.append(
        InfluenceRows(
            tweet=c.tweet_ids[casc][ok_node],
            account=c.user_ids[ok_node],
            publisher=pub_user[casc][ok_node],
            influence=influence[ok_node],
            followers=c.followers[ok_node],
            role=role[ok_node],
        )
    )
    orphan = (role == ORPHAN).astype(np.int64)
    res.outcomes.append(
        TweetOutcomes(
            tweet=c.tweet_ids,
            status=np.where(rejected, STATUS_REJECTED, STATUS_COMPUTED),
            nodes=c.sizes,
            edges=np.diff(g.edge_offsets),
            orphans=np.bincount(casc, weights=orphan, minlength=c.n_cascades).astype(np.int64),
            reach=np.where(rejected, np.nan, influence[c.publisher] if c.n_nodes else np.zeros(0)),
            unit=np.full(c.n_cascades, UNIT_FOLLOWERS if c.unit == "followers" else UNIT_RETWEETERS),
        )
    )
    res.n_edges += g.n_edges
    res.graphs += _packed_graphs(g, accepted=np.flatnonzero(~rejected))


def _packed_graphs(g: SpreadingGraphs, accepted: np.ndarray) -> list[CascadeGraphRow]:
    """The spreading edges of each accepted cascade, as account pks, packed for CascadeGraph."""
    c = g.cascades
    pairs = np.empty((g.n_edges, 2), dtype="<i8")
    pairs[:, 0] = c.user_ids[g.edge_src]
    pairs[:, 1] = c.user_ids[g.edge_dst]
    offsets = g.edge_offsets.tolist()
    tweet_ids = c.tweet_ids.tolist()
    rows = []
    for k in accepted.tolist():
        first, end = offsets[k], offsets[k + 1]
        rows.append(CascadeGraphRow(tweet_ids[k], end - first, pairs[first:end].tobytes()))
    return rows


# --- one batch: storing ------------------------------------------------------------------------------------------


def _store(run: ComputeRun, batch: ComputeBatch, res: BatchResult) -> None:
    """Replace the batch's cascades' rows with ``res`` and refresh the aggregates of the (publisher, day) pairs
    its tweets belong to; inside the runner's transaction."""
    d = dialect()
    ws = run.workspace_id
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
        influence_table = daily = None
        if not changes:
            cur.execute(f"DELETE FROM monitor_cascadeinfluence WHERE tweet_id IN (SELECT id FROM {batch_table})")
        cur.execute(f"DELETE FROM monitor_cascadegraph WHERE tweet_id IN (SELECT id FROM {batch_table})")
        t = res.tick("store_delete_s", t)
        _insert_cascade_graphs(cur, d, res.graphs)
        t = res.tick("store_graphs_s", t)
        if changes:
            daily = _replace_changed_influence(
                cur, [int(p) for p in batch.tweet_pks], _concat(InfluenceRows, res.influence)
            )
        else:
            influence_table = _insert_cascade_influence(cur, d, _concat(InfluenceRows, res.influence))
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
        from ..cache import bump_data_version, record_all_time_delta

        # in this transaction: committed with the rows (monitor/cache.py). Before the refresh: from here to the
        # commit no other write can commit a version, so the daily rows read below are those of the version before
        version = bump_data_version(ws)
        delta = _refresh_aggregates(cur, d, ws, touched, changes=daily)
        if delta is not None:  # a micro-batch knows how it changed the all-time sums: the ranking applies it
            record_all_time_delta(ws, version, delta)
        t = res.tick("store_aggregates_s", t)
        # the rows added: a compute batch's cascades' rows (stored for the first time, or again after a delete);
        # a stream micro-batch's cascades are stored already, and it adds only its new participants' rows
        added = daily.grown if daily is not None else int(batch.n_nodes or 0) + len(batch.tweet_pks)
        tables = ["monitor_cascadeinfluence", "monitor_cascadegraph", "monitor_dailyinfluence", "monitor_publisherday"]
        later = getattr(run, "analyze_later", None)  # not a field: a stream consumer refreshes them beside its work
        if later is not None:
            later(tables, added)
        else:
            analyze_after_bulk_write(cur, tables, added)
        t = res.tick("store_analyze_s", t)
        for tmp in (batch_table, touched, influence_table, outcomes_table):
            if tmp:
                cur.execute(f"DROP TABLE IF EXISTS {tmp}")


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


def _insert_cascade_influence(cur, d: Dialect, rows: InfluenceRows) -> str | None:
    """Insert the per-cascade influence rows, with the tweet's day and label; returns the staging table, if
    one was used (PostgreSQL: one binary COPY straight into the table, no staging)."""
    if d.postgres:
        _copy_cascade_influence(cur, rows)
        return None
    staged = _stage(cur, "inf", InfluenceRows, rows)
    role_sql = "CASE i.role " + " ".join(f"WHEN {k} THEN '{v}'" for k, v in ROLE_CODES.items()) + " END"
    cur.execute(
        f"""INSERT INTO monitor_cascadeinfluence (tweet_id, account_id, publisher_id, day, label, influence,
                followers, role)
            SELECT i.tweet, i.account, i.publisher, {d.ts_to_day("t.created_at")}, t.label, i.influence,
                i.followers, {role_sql}
            FROM {staged} i {d.join} monitor_tweet t ON t.id = i.tweet WHERE true"""
    )
    return staged


_LABELS = [c.value for c in Label]


def _copy_cascade_influence(cur, rows: InfluenceRows, day_label: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """The rows by binary COPY into ``monitor_cascadeinfluence``, in its unique key's order; ``day_label``: each
    row's day and label code (:func:`_days_and_labels`), when the caller has them already.

    A binary row is fixed-width but for its two text columns (label, role); rows that share both are
    fixed-width records, so each (label, role) group is one NumPy structured array written as it is."""
    if not len(rows.tweet):
        return
    order = np.lexsort((rows.account, rows.tweet))
    rows = InfluenceRows(*(col[order] for col in rows))
    row_day, row_label = _days_and_labels(cur, rows) if day_label is None else (c[order] for c in day_label)
    names = "tweet_id, account_id, publisher_id, day, label, influence, followers, role"
    raw = cur.cursor if hasattr(cur, "cursor") else cur
    with raw.copy(f"COPY monitor_cascadeinfluence ({names}) FROM STDIN (FORMAT BINARY)") as cp:
        cp.write(COPY_HEADER)
        for lab in unique(row_label).tolist():
            lab_b = _LABELS[lab].encode()
            for role in unique(rows.role[row_label == lab]).tolist():
                role_b = ROLE_CODES[role].encode()
                sel = np.flatnonzero((row_label == lab) & (rows.role == role))
                rec = np.empty(
                    len(sel),
                    dtype=[
                        ("n", ">i2"),
                        ("l0", ">i4"), ("tweet", ">i8"),
                        ("l1", ">i4"), ("account", ">i8"),
                        ("l2", ">i4"), ("publisher", ">i8"),
                        ("l3", ">i4"), ("day", ">i4"),
                        ("l4", ">i4"), ("label", f"S{len(lab_b)}"),
                        ("l5", ">i4"), ("influence", ">f8"),
                        ("l6", ">i4"), ("followers", ">f8"),
                        ("l7", ">i4"), ("role", f"S{len(role_b)}"),
                    ],
                )  # fmt: skip
                rec["n"] = 8
                for f, width in (("l0", 8), ("l1", 8), ("l2", 8), ("l3", 4), ("l5", 8), ("l6", 8)):
                    rec[f] = width
                rec["l4"], rec["l7"] = len(lab_b), len(role_b)
                rec["tweet"], rec["account"], rec["publisher"] = rows.tweet[sel], rows.account[sel], rows.publisher[sel]
                rec["day"] = row_day[sel]
                rec["label"], rec["role"] = lab_b, role_b
                rec["influence"], rec["followers"] = rows.influence[sel], rows.followers[sel]
                cp.write(rec.tobytes())
        cp.write(COPY_TRAILER)


_LABEL_CASE = "CASE {col} " + " ".join(f"WHEN '{v}' THEN {i}" for i, v in enumerate(_LABELS)) + " ELSE -1 END"
_ROLE_CASE = "CASE {col} " + " ".join(f"WHEN '{v}' THEN {k}" for k, v in ROLE_CODES.items()) + " ELSE -1 END"
_DAY_NUMBER = "(({col}) - DATE '2000-01-01')::bigint"  # the binary COPY's date: days since 2000-01-01


def _days_and_labels(cur, rows: InfluenceRows) -> tuple[np.ndarray, np.ndarray]:
    """Each row's day (days since 2000-01-01, UTC) and label code (index into ``_LABELS``), from its tweet."""
    pk, day, label = copy_out(
        cur,
        f"""SELECT t.id, {_DAY_NUMBER.format(col="(t.created_at AT TIME ZONE 'UTC')::date")},
                ({_LABEL_CASE.format(col="t.label")})::bigint
            FROM monitor_tweet t WHERE t.id = ANY({int_array(unique(rows.tweet))}) ORDER BY t.id""",
        [],
        [("id", "bigint"), ("day", "bigint"), ("label", "bigint")],
    )
    at = np.searchsorted(pk, rows.tweet)
    if (label < 0).any() or len(pk) != len(unique(rows.tweet)):
        raise ValueError("cascade influence: a tweet of the batch is missing or has a label outside Label")
    return day[at], label[at]


def _replace_changed_influence(cur, tweet_pks: list[int], rows: InfluenceRows) -> _DailyChanges:
    """Make the stored per-cascade rows of the cascades ``tweet_pks`` equal ``rows`` by deleting and writing
    only the rows that differ (PostgreSQL). Returns the daily aggregates' keys those rows belong to, with what
    the batch's rows say of each (:class:`_DailyChanges`).

    Every statement here reads or writes one table by an index (``= ANY`` of an array), never a join from a
    temporary table: the planner has no statistics for those, and a live stream's tables grow faster than
    their own statistics (where autovacuum is off, they never catch up), so a join could be planned as a scan
    of the big table per key (seen: 67 s for 10,000 keys)."""
    day, label = _days_and_labels(cur, rows) if len(rows.tweet) else (np.zeros(0, np.int64),) * 2
    old_cols = copy_out(
        cur,
        f"""SELECT ci.tweet_id, ci.account_id, ci.publisher_id, {_DAY_NUMBER.format(col="ci.day")},
                ({_LABEL_CASE.format(col="ci.label")})::bigint, ci.influence, ci.followers,
                ({_ROLE_CASE.format(col="ci.role")})::bigint, ci.id
            FROM monitor_cascadeinfluence ci WHERE ci.tweet_id = ANY({int_array(tweet_pks)})""",
        [],
        [("t", "bigint"), ("a", "bigint"), ("p", "bigint"), ("d", "bigint"), ("l", "bigint"), ("i", "float"),
         ("f", "float"), ("r", "bigint"), ("id", "bigint")],
    )  # fmt: skip
    old_ids = old_cols.pop()
    new_cols = [rows.tweet, rows.account, rows.publisher, day, label, rows.influence, rows.followers, rows.role]
    write, gone = changed_rows(old_cols, new_cols)
    if gone.any():
        cur.execute(f"DELETE FROM monitor_cascadeinfluence WHERE id = ANY({int_array(old_ids[gone])})")
    if write.any():
        _copy_cascade_influence(cur, InfluenceRows(*(c[write] for c in rows)), (day[write], label[write]))
    # the daily keys (publisher, account, day, label) of every row deleted or written
    old_keys = np.stack([old_cols[k] for k in (2, 1, 3, 4)], axis=1)
    new_keys = np.stack([new_cols[k] for k in (2, 1, 3, 4)], axis=1).astype(np.int64)
    keys = np.unique(np.concatenate([old_keys[gone], new_keys[write]]), axis=0)
    old_rows, _ = _per_key(keys, old_keys, old_cols[5])
    grown = max(len(rows.tweet) - len(old_ids), 0)
    return _DailyChanges(keys, old_rows, *_per_key(keys, new_keys, rows.influence), grown=grown)


class _DailyChanges(NamedTuple):
    """The daily aggregates' keys a micro-batch's changed rows belong to, one per row of ``keys``
    (publisher, account, day number, label code; sorted), and, per key, the batch's cascades' rows of that key:
    how many were stored before (``old_rows``) and what they are now (``new_rows``, ``new_sum`` of influence)."""

    keys: np.ndarray
    old_rows: np.ndarray
    new_rows: np.ndarray
    new_sum: np.ndarray
    grown: int = 0  # per-cascade rows added (the new ones less the gone ones)


def _per_key(keys: np.ndarray, rows: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``keys`` (unique, sorted): how many rows of ``rows`` equal it, and the sum of their
    ``weights``, added in row order."""
    count, total = np.zeros(len(keys), np.int64), np.zeros(len(keys), np.float64)
    pos, hit = _key_positions(keys, rows)
    np.add.at(count, pos[hit], 1)
    np.add.at(total, pos[hit], weights[hit])  # unbuffered: added in row order
    return count, total


def _key_positions(keys: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``rows``: its position among ``keys`` (2-D int arrays; ``keys`` unique and sorted) and,
    as indices into ``rows``, the rows found there."""
    if not len(keys) or not len(rows):
        return np.zeros(len(rows), np.int64), np.zeros(0, np.int64)
    kv, rv = _row_codes(keys, rows)
    pos = np.minimum(np.searchsorted(kv, rv), len(kv) - 1)
    return pos, np.flatnonzero(kv[pos] == rv)


def _row_codes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of two 2-D int arrays as values that compare as the rows do (lexicographically), for
    ``searchsorted``: one int64 each, a mixed-radix number of the columns' offsets from their smallest value,
    when the columns' ranges multiply to less than 2**62 (ids, days and labels of one micro-batch do); else
    one structured value each. Searching structured values compares them field by field in generic code: four
    searches of a micro-batch's daily keys took 0.10 s of its ~0.5 s of Python, as int64 a few ms."""
    both = np.concatenate([a, b]).astype(np.int64, copy=False)
    lo, hi = both.min(axis=0), both.max(axis=0)
    spans = [int(h) - int(lo_) + 1 for lo_, h in zip(lo.tolist(), hi.tolist())]
    if math.prod(spans) >= 2**62:
        return _rows_view(a), _rows_view(b)
    code = np.zeros(len(both), np.int64)
    for j, span in enumerate(spans):
        code = code * span + (both[:, j] - lo[j])
    return code[: len(a)], code[len(a) :]


def _rows_view(a: np.ndarray) -> np.ndarray:
    """The rows of a 2-D int64 array as one structured value each (compared and sorted field by field)."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    return a.view([("", np.int64)] * a.shape[1]).ravel()


class _DailyRows(NamedTuple):
    publisher: np.ndarray
    account: np.ndarray
    day: np.ndarray
    label: np.ndarray
    influence: np.ndarray
    cascades: np.ndarray
    SQL = ("bigint", "bigint", "bigint", "bigint", "float", "bigint")


def changed_rows(old: list[np.ndarray], new: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Which rows differ between two row sets keyed by their first two columns (tweet, account), each key at
    most once per set: ``(write, gone)``, the masks of the ``new`` rows to write (no old row with that key, or
    one with another value in some column) and of the ``old`` rows to delete (no new row with that key, or a
    different one). NaN equals NaN (a rejected cascade's influence)."""
    n_old = len(old[0])
    if not n_old:
        return np.ones(len(new[0]), bool), np.zeros(0, bool)
    t = np.concatenate([old[0], new[0]])
    a = np.concatenate([old[1], new[1]])
    side = np.concatenate([np.zeros(n_old, np.int8), np.ones(len(new[0]), np.int8)])
    order = np.lexsort((side, a, t))
    # a pair: an old row followed, in key order, by a new row with the same key
    pair = (t[order][1:] == t[order][:-1]) & (a[order][1:] == a[order][:-1])
    i_old, i_new = order[:-1][pair], order[1:][pair] - n_old
    same = np.ones(len(i_old), bool)
    for o, n in zip(old[2:], new[2:]):
        x, y = o[i_old], n[i_new]
        same &= (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else (x == y)
    write = np.ones(len(new[0]), bool)
    gone = np.ones(n_old, bool)
    write[i_new[same]] = False
    gone[i_old[same]] = False
    return write, gone


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


def _refresh_daily_keys(cur, ws: int, ch: _DailyChanges) -> AllTimeDelta:
    """Replace the daily rows of the keys ``ch.keys`` (PostgreSQL), reading and writing each table by an index
    (see :func:`_replace_changed_influence`).

    The stored rows of the keys' (publisher, day) pairs are read with their ``cascades`` counts. A key whose
    stored count equals the number of its rows among the batch's cascades before the change has no row outside
    them, so its new sum and count are the batch's own (``ch.new_sum``, ``ch.new_rows``); the other keys (an
    account in two cascades of one publisher and day, only one of them in the batch) are summed again from the
    account's per-cascade rows.

    Returns what the change adds to each (account, label)'s all-time sums: the rows written less the rows
    deleted (:class:`AllTimeDelta`)."""
    if not len(ch.keys):
        return AllTimeDelta.empty()
    pub, acc, day, lab = ch.keys.T
    sid, spub, sacc, sday, slab, scount, sinf = copy_out(
        cur,
        f"""SELECT x.id, x.publisher_id, x.account_id, {_DAY_NUMBER.format(col="x.day")},
                ({_LABEL_CASE.format(col="x.label")})::bigint, x.cascades::bigint, x.influence
            FROM monitor_dailyinfluence x WHERE x.workspace_id = %s AND x.publisher_id = ANY({int_array(unique(pub))})
                AND x.day = ANY(ARRAY(SELECT DATE '2000-01-01' + d::integer FROM unnest({int_array(unique(day))}) d))
                AND x.account_id = ANY({int_array(unique(acc))})""",
        [ws],
        [("id", "bigint"), ("p", "bigint"), ("a", "bigint"), ("d", "bigint"), ("l", "bigint"), ("n", "bigint"),
         ("i", "float")],
    )  # fmt: skip
    # the stored rows of the changed keys (the read is a superset)
    pos, hit = _key_positions(ch.keys, np.stack([spub, sacc, sday, slab], axis=1))
    stored = np.zeros(len(ch.keys), np.int64)
    stored[pos[hit]] = scount[hit]
    if len(hit):
        cur.execute(f"DELETE FROM monitor_dailyinfluence WHERE id = ANY({int_array(sid[hit])})")
    own = stored == ch.old_rows  # every row of the key is in the batch's cascades
    influence, cascades = ch.new_sum.copy(), ch.new_rows.copy()
    rest = np.flatnonzero(~own)
    if len(rest):
        # the accounts' per-cascade rows, through the cascades they retweeted or published (the table has no
        # index leading with the account: ``CascadeInfluence.objects.of_accounts``). The (tweet, account) pairs are
        # read first and named in the second statement, which probes the unique key once per pair: joined in one
        # statement, the planner misjudged how many pairs there were where the retweets' statistics were stale
        # and scanned the whole per-cascade table (19 ms a micro-batch at 400,000 rows, benchmarks/stream_web.md)
        accounts = int_array(unique(acc[rest]))
        pt, pa = copy_out(
            cur,
            f"""SELECT r.tweet_id, r.retweeter_id FROM monitor_retweet r WHERE r.retweeter_id = ANY({accounts})
                UNION SELECT t.id, t.author_id FROM monitor_tweet t WHERE t.author_id = ANY({accounts})""",
            [],
            [("t", "bigint"), ("a", "bigint")],
        )
        ta, tp, td, tl, ti = copy_out(
            cur,
            f"""SELECT ci.account_id, ci.publisher_id, {_DAY_NUMBER.format(col="ci.day")},
                    ({_LABEL_CASE.format(col="ci.label")})::bigint, ci.influence
                FROM unnest({int_array(pt)}, {int_array(pa)}) AS p(tweet, account)
                JOIN monitor_cascadeinfluence ci ON ci.tweet_id = p.tweet AND ci.account_id = p.account""",
            [],
            [("a", "bigint"), ("p", "bigint"), ("d", "bigint"), ("l", "bigint"), ("i", "float")],
        )
        count, total = _per_key(ch.keys, np.stack([tp, ta, td, tl], axis=1), ti)
        influence[rest], cascades[rest] = total[rest], count[rest]
    put = np.flatnonzero(cascades > 0)
    delta = AllTimeDelta(
        np.concatenate([acc[put], sacc[hit]]),
        np.concatenate([lab[put], slab[hit]]),
        np.concatenate([influence[put], -sinf[hit]]),
        np.concatenate([cascades[put], -scount[hit]]),
        np.concatenate([acc[put] == pub[put], sacc[hit] == spub[hit]]),
    )
    if not len(put):
        return delta
    order = put[np.lexsort((acc[put], lab[put], day[put], pub[put]))]  # the unique key's order
    vals = _stage(cur, "dkput", _DailyRows, _DailyRows(*ch.keys[order].T, influence[order], cascades[order]))
    labels = "ARRAY[" + ", ".join(f"'{v}'" for v in _LABELS) + "]::varchar(16)[]"
    cur.execute(
        f"""INSERT INTO monitor_dailyinfluence (workspace_id, publisher_id, account_id, day, label, influence,
                cascades)
            SELECT %s, v.publisher, v.account, DATE '2000-01-01' + v.day::integer, ({labels})[v.label + 1],
                v.influence, v.cascades
            FROM {vals} v""",
        [ws],
    )
    cur.execute(f"DROP TABLE IF EXISTS {vals}")
    return delta


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


# --- the algorithm -------------------------------------------------------------------------------------------


class Influence(Algorithm):
    """The influence measure (docs/measure.md): per cascade, the audience each participant helped it reach."""

    name = "influence"
    label = "Influence measure"

    def plan(self, *, run: ComputeRun, tweet_pks: list[int]) -> list[PlannedBatch]:
        sizes = _cascade_sizes(tweet_pks) if tweet_pks else {}
        return [
            PlannedBatch(tweet_pks=pks, n_cascades=len(pks), n_nodes=sum(sizes[p] for p in pks))
            for pks in plan_batches(
                sizes,
                settings.SPREADWATCH_BATCH_NODES,
                workers=settings.SPREADWATCH_RUN_WORKERS,
                min_nodes=settings.SPREADWATCH_BATCH_MIN_NODES,
            )
        ]

    def compute(self, *, run: ComputeRun, batch: ComputeBatch, backend: str, stop: Stop) -> BatchResult:
        return _compute_batch(batch, run, backend, stop)

    def store(self, *, run: ComputeRun, batch: ComputeBatch, result: BatchOutcome) -> None:
        _store(run, batch, result)


INFLUENCE = register(Influence())
