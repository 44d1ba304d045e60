"""One batch of the influence algorithm: planning by cascade size, loading its cascades and the follower graph,
and computing them in groups (CPU or GPU), split in halves where a GPU runs out of memory."""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from django.db import connection

from compute.algorithms.backward import backward
from compute.algorithms.influence import influence as both_phases
from compute.arrays import unique
from compute.backends import free_device_memory, is_device_oom
from compute.build import build_cascades
from compute.structures import Cascades, FollowerGraph, SpreadingGraphs
from compute.tables import NO_TWEET, TweetTable

from ...db import (
    Dialect,
    dialect,
)
from ...models import ComputeBatch, ComputeRun, Tweet, Workspace
from ..base import BatchOutcome, RunCancelled, Stop
from .rows import (
    ORPHAN,
    STATUS_COMPUTED,
    STATUS_REJECTED,
    UNIT_FOLLOWERS,
    UNIT_RETWEETERS,
    CascadeGraphRow,
    FollowRows,
    GivenEdgeRows,
    InfluenceRows,
    RetweetRows,
    TweetOutcomes,
    TweetRows,
    _empty,
    _select,
    _stage_ids,
)

log = logging.getLogger(__name__)

# --- planning ------------------------------------------------------------------------------------------------


def _planned_cascades(tweet_pks: list[int], ws: int) -> tuple[dict[int, int], dict[int, tuple[int, int]]]:
    """Participants per tweet pk, and each tweet's (publisher, UTC day as an ordinal): the daily aggregates' pair
    that a batch holding the tweet rewrites, in the order of their unique index, so that the planner gives each
    batch whole pairs and one contiguous range of that index (``compute.batching``)."""
    d = dialect()
    with connection.cursor() as cur:
        tmp = _stage_ids(cur, "plan", tweet_pks)
        if _counts_all_retweets(cur, d, tweet_pks, ws):
            # most of the workspace's tweets (a first import's run): the retweets counted by one scan and a hash
            # of the workspace's partition, then joined. Probing the pair index once per tweet took the 10M
            # benchmark's plan 3.1-3.2 s for its 270K tweets, the scan 1.7-2.2 s (benchmarks/data_layer.md)
            retweets = f"""LEFT JOIN (SELECT tweet_id, COUNT(*) AS n FROM monitor_retweet
                               WHERE workspace_id = {int(ws)} GROUP BY tweet_id) r ON r.tweet_id = p.id"""
            count, group = "1 + COALESCE(r.n, 0)", ""
        else:
            retweets = f"LEFT JOIN monitor_retweet r ON r.workspace_id = {int(ws)} AND r.tweet_id = p.id"
            count, group = "1 + COUNT(r.id)", "GROUP BY p.id, t.author_id, t.created_at"
        cur.execute(
            f"""SELECT p.id, t.author_id, {d.ts_to_day("t.created_at")}, {count}
                FROM {tmp} p JOIN monitor_tweet t ON t.id = p.id {retweets} {group}"""
        )
        sizes: dict[int, int] = {}
        pairs: dict[int, tuple[int, int]] = {}
        for pk, author, day, n in cur.fetchall():
            sizes[int(pk)] = int(n)
            # SQLite gives the day as text: both read as one ordinal, comparable with the others
            pairs[int(pk)] = (
                int(author),
                (day if isinstance(day, dt.date) else dt.date.fromisoformat(day)).toordinal(),
            )
        cur.execute(f"DROP TABLE IF EXISTS {tmp}")
    return sizes, pairs


#: from this many tweets on, a plan asks whether they are most of the workspace's (:func:`_counts_all_retweets`)
_PLAN_SCAN_MIN = 10_000


def _counts_all_retweets(cur, d, tweet_pks: list[int], ws: int) -> bool:
    """Whether the plan counts the retweets of all the workspace's by one scan (PostgreSQL, and the plan holds at
    least a quarter of the workspace's tweets) instead of one index probe per tweet."""
    if not d.postgres or len(tweet_pks) < _PLAN_SCAN_MIN:
        return False
    cur.execute("SELECT COUNT(*) FROM monitor_tweet WHERE workspace_id = %s", [ws])
    return 4 * len(tweet_pks) >= int(cur.fetchone()[0])


def _cascade_sizes(tweet_pks: list[int], ws: int) -> dict[int, int]:
    """Participants (the publisher and the retweeters) per tweet pk (of workspace ``ws``)."""
    return _planned_cascades(tweet_pks, ws)[0]


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
    sizes = _cascade_sizes(batch.tweet_pks, run.workspace_id)
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
    data = _load(tweet_pks, res, follows=not keep_graph, workspace=run.workspace_id)
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


def _load(tweet_pks: list[int], res: BatchResult, follows: bool = True, *, workspace: int) -> BatchInput:
    """Read the tweets ``tweet_pks`` (of workspace ``workspace``), their retweets, the follows among the
    participants of the cascades that are rebuilt from follows (unless ``follows`` is false), and the edges of the
    given ones."""
    d = dialect()
    t = time.perf_counter()
    with connection.cursor() as cur:
        batch_table = _stage_ids(cur, "batch", tweet_pks)
        tweets = _select(
            cur,
            TweetRows,
            f"""SELECT t.id, t.author_id, {d.epoch_column("t.created_at")}, COALESCE(t.author_followers, -1.0),
                    CASE WHEN t.times_known THEN 1 ELSE 0 END,
                    CASE WHEN t.graph_source = 'given' THEN 1 ELSE 0 END
                FROM {batch_table} b {d.join} monitor_tweet t ON t.id = b.id""",
            epoch="time",
        )
        retweets = _select(
            cur,
            RetweetRows,
            f"""SELECT r.tweet_id, r.retweeter_id, {d.epoch_column("r.created_at")}, COALESCE(r.followers_count, -1.0)
                FROM {batch_table} b {d.join} monitor_retweet r
                    ON r.workspace_id = {int(workspace)} AND r.tweet_id = b.id""",
            epoch="time",
        )
        t = res.tick("load_tweets_s", t)
        among = _load_follows_among(cur, d, _follow_participants(tweets, retweets), workspace) if follows else None
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
    """The follower graph of workspace ``ws`` as this transaction sees it: mapped from this machine's files of
    its ``follows_token`` (``monitor.graph_files``: one copy per machine, built from the rows by the first reader
    of a version), and kept per process by token. A read: keeping it is this process's memory, not a write."""
    from ...graph_files import follower_csr, follows_token

    db = connection.settings_dict["NAME"]
    with connection.cursor() as cur:
        token = follows_token(cur, ws)
    hit = _GRAPHS.get((db, ws, token))
    if hit is not None:
        _GRAPHS.move_to_end((db, ws, token))
        if res is not None:
            res.timings["graph_kept"] = res.timings.get("graph_kept", 0.0) + 1
        return hit
    t = time.perf_counter()
    csr, token = follower_csr(ws, res.timings if res is not None else None)
    graph = FollowerGraph(csr.ids, csr.indptr, csr.indices)
    if res is not None:
        res.tick("graph_s", t)
    if token:
        _GRAPHS[(db, ws, token)] = graph
        while len(_GRAPHS) > _GRAPHS_KEEP:
            _GRAPHS.popitem(last=False)
    return graph


def _follow_participants(tweets: TweetRows, retweets: RetweetRows) -> np.ndarray:
    """The accounts (publishers and retweeters) of the cascades rebuilt from follows, sorted and unique."""
    rebuilt = _rebuilt(tweets)
    follow_tweets = set(tweets.pk[rebuilt].tolist())
    return unique(np.concatenate([tweets.author[rebuilt], retweets.user[np.isin(retweets.tweet, list(follow_tweets))]]))


def _load_follows_among(cur, d: Dialect, accounts: np.ndarray, ws: int) -> FollowRows:
    if not len(accounts):
        return _empty(FollowRows)
    part = _stage_ids(cur, "part", accounts)
    if d.postgres:
        cur.execute(f"ANALYZE {part}")
    follows = _select(
        cur,
        FollowRows,
        f"""SELECT f.follower_id, f.followee_id FROM {part} p1
            {d.join} monitor_follow f ON f.workspace_id = {int(ws)} AND f.follower_id = p1.id
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
