"""Coordinated accounts (issue 43; docs/coordination.md) as a compute-run algorithm: which accounts of a workspace
(or a collection) retweet the same original tweets together, by co-retweet or by similarity, and the clusters
their pairs form, with what each cluster's members share.

**The input.** Every retweet of the scope's tweets: the tweet, the retweeting account's Twitter id and the
retweet's time. ``monitor_retweet`` keeps one retweet per account and tweet, the earliest, which is the first
retweet the methods count. The engine compares accounts by their Twitter ids (as strings), so a run's edges, their
weights, order and clusters are those of ``python -m compute coordination`` on the same retweets (tested). A
process keeps the retweets it read per (workspace, data version, collection), so the budget's estimate and the
batch read them once.

**The plan.** One batch (the engine is one sort or one sparse product). It carries the fingerprint of the
retweets its plan saw; a batch that reads others (an import changed them meanwhile) fails saying so.

**What is stored** (``monitor.models.coordination``): the summary, every edge in the engine's order, each cluster
(size, edges, mean weight) with what its members share — the original tweets at least two of them retweeted, when
and how far apart their retweets of those fell, the publishers of those tweets, and the retweets per UTC hour — and
each member's degree and retweets of the shared tweets. The run's ``finish`` bumps the data version, so the pages'
cached reads (the account badge among them) see the new run.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import logging
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from django.core.exceptions import ValidationError
from django.db import connection

from compute.algorithms import coordination as engine
from compute.results import (
    COORDINATION_METHODS,
    DEFAULT_MIN_COUNT,
    DEFAULT_MIN_RETWEETS,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW,
    check_coordination,
)

from ..db import analyze_after_bulk_write, copy_in, copy_out, create_temp, dialect, temp_table_name
from ..models import (
    Collection,
    ComputeBatch,
    ComputeRun,
    CoordinationCluster,
    CoordinationEdge,
    CoordinationMember,
    CoordinationSummary,
    Workspace,
)
from .base import Algorithm, BatchOutcome, PlannedBatch, RunCancelled, Stop, register

log = logging.getLogger(__name__)

__all__ = [
    "COORDINATION",
    "METHODS",
    "Coordination",
    "Retweets",
    "RetweetsChanged",
    "load_retweets",
    "read_retweets",
]

METHODS = COORDINATION_METHODS
PARAMS = ("method", "collection", "window", "min_count", "min_retweets", "threshold")
WINDOW_MAX = 30 * 86400.0  # a month: beyond it "together" means nothing
TOP_TWEETS = 10  # a cluster's most shared tweets kept
TOP_PUBLISHERS = 10  # and the publishers of its shared tweets


class RetweetsChanged(RuntimeError):
    """A batch read other retweets than the ones its run was planned on (an import changed them meanwhile)."""


# --- the input, read once per data version ---------------------------------------------------------------------


@dataclass(eq=False)
class Retweets:
    """The scope's retweets as columns: the tweet's pk, its author's pk, the retweeter's Twitter id and pk, the
    time in epoch seconds; ``fingerprint`` names their content."""

    tweet: np.ndarray
    author: np.ndarray
    twitter_id: np.ndarray
    account: np.ndarray
    time: np.ndarray
    fingerprint: str = ""

    def __len__(self) -> int:
        return len(self.tweet)

    @functools.cached_property
    def _by_twitter_id(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.twitter_id, kind="stable")  # once: a run maps both ends of its edges
        return self.twitter_id[order], self.account[order]

    def pks_of(self, twitter_ids: np.ndarray) -> np.ndarray:
        """The account pks of these Twitter ids (each one of the retweeters)."""
        ids, pks = self._by_twitter_id
        return pks[np.searchsorted(ids, twitter_ids)]


_KEEP = 2
_RETWEETS: OrderedDict[tuple, Retweets] = OrderedDict()


def load_retweets(ws: Workspace, collection: int | None) -> Retweets:
    """The retweets of ``ws`` (or of one of its collections) as the data is now, read once per data version by
    each process (the newest ``_KEEP`` stay in memory)."""
    from ..cache import current_version

    key = (ws.pk, current_version(ws), collection)
    hit = _RETWEETS.get(key)
    if hit is not None:
        _RETWEETS.move_to_end(key)
        return hit
    got = _read(ws.pk, collection)
    _RETWEETS[key] = got
    while len(_RETWEETS) > _KEEP:
        _RETWEETS.popitem(last=False)
    return got


# the time read as the timestamp itself and turned into epoch seconds by copy_out (the same values bit for bit)
COLUMNS = [("tweet", "bigint"), ("author", "bigint"), ("twitter_id", "bigint"), ("account", "bigint"), ("t", "epoch")]


def _read(ws: int, collection: int | None) -> Retweets:
    return read_retweets(ws, collection=collection)


def read_retweets(
    ws: int, *, collection: int | None = None, author: int | None = None, since: int | None = None,
    until: int | None = None,
) -> Retweets:  # fmt: skip
    """The retweets of the workspace's tweets (of one collection, of one author, and posted from epoch second
    ``since`` up to, not including, ``until``, when given), read now (no process cache: the alert rules read a
    publisher's window this way)."""
    d = dialect()
    scope = "" if collection is None else f" AND t.collection_id = {int(collection)}"
    if author is not None:
        scope += f" AND t.author_id = {int(author)}"
    if since is not None:
        scope += f" AND {d.ts_to_epoch('t.created_at')} >= {int(since)}"
    if until is not None:
        scope += f" AND {d.ts_to_epoch('t.created_at')} < {int(until)}"
    with connection.cursor() as cur:
        tweet, author, twitter_id, account, when = copy_out(
            cur,
            f"""SELECT r.tweet_id, t.author_id, a.twitter_id, r.retweeter_id, {d.epoch_column("r.created_at")}
                FROM monitor_retweet r JOIN monitor_tweet t ON t.id = r.tweet_id AND t.workspace_id = r.workspace_id
                JOIN monitor_account a ON a.id = r.retweeter_id
                WHERE t.workspace_id = %s{scope} ORDER BY r.tweet_id, r.retweeter_id""",
            [ws],
            COLUMNS,
            gather=False,
        )
    h = hashlib.sha1()
    for a in (tweet, twitter_id, when):
        h.update(np.ascontiguousarray(a, dtype="<f8" if a is when else "<i8").tobytes())
    return Retweets(tweet, author, twitter_id, account, when, h.hexdigest())


# --- the result of the batch -------------------------------------------------------------------------------------


@dataclass
class CoordinationResult(BatchOutcome):
    """The batch's rows until they are stored: the engine's result as account pks, and per cluster and member
    what the store writes."""

    summary: dict = field(default_factory=dict)
    edges: tuple = ()  # (a pks, b pks, weight, cluster), in the engine's order
    clusters: list[dict] = field(default_factory=list)
    members: tuple = ()  # (account pks, cluster, degree, shared retweets)


def _check(stop: Stop) -> None:
    if stop():
        raise RunCancelled()


def _hour(seconds: float) -> str:
    """The UTC hour of epoch seconds as ``YYYY-MM-DDTHH``."""
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC).strftime("%Y-%m-%dT%H")


def _aware(seconds: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(seconds, tz=dt.UTC)


def describe_clusters(rt: Retweets, a: np.ndarray, b: np.ndarray, cluster: np.ndarray) -> tuple[list[dict], tuple]:
    """Per cluster of the edges ``a -- b`` (account pks, each edge's cluster), what its members share, and per
    member its cluster, degree and retweets of its cluster's shared tweets (module docstring)."""
    if not len(a):
        return [], (np.zeros(0, np.int64),) * 4
    ends = np.concatenate([a, b])
    members, degree = np.unique(ends, return_counts=True)
    of_member = np.zeros(len(members), np.int64)
    of_member[np.searchsorted(members, a)] = cluster
    of_member[np.searchsorted(members, b)] = cluster
    k = int(cluster.max())
    sizes = np.bincount(of_member, minlength=k + 1)
    n_edges = np.bincount(cluster, minlength=k + 1)
    # the members' retweets: (cluster, tweet) groups, shared where two or more members retweeted the tweet
    mine = np.isin(rt.account, members)
    acc, tw, author, t = rt.account[mine], rt.tweet[mine], rt.author[mine], rt.time[mine]
    cl = of_member[np.searchsorted(members, acc)]
    order = np.lexsort((t, tw, cl))
    acc, tw, author, t, cl = acc[order], tw[order], author[order], t[order], cl[order]
    start = np.flatnonzero(np.r_[True, (cl[1:] != cl[:-1]) | (tw[1:] != tw[:-1])])
    count = np.diff(np.r_[start, len(cl)])
    shared = count >= 2
    g_start, g_count = start[shared], count[shared]
    g_cluster, g_tweet, g_author = cl[g_start], tw[g_start], author[g_start]
    g_first, g_last = t[g_start], t[g_start + g_count - 1]
    in_shared = np.repeat(shared, count)  # rows of shared tweets
    shared_retweets = np.zeros(len(members), np.int64)
    np.add.at(shared_retweets, np.searchsorted(members, acc[in_shared]), 1)
    hour = np.floor(t[in_shared] / 3600.0).astype(np.int64)
    hour_cluster = cl[in_shared]
    # both the groups and the rows of shared tweets are in cluster order: each cluster is one slice of them (a
    # mask per cluster would read every row once per cluster: 22,120 clusters at 10M retweets)
    g_at = np.searchsorted(g_cluster, np.arange(1, k + 2))
    h_at = np.searchsorted(hour_cluster, np.arange(1, k + 2))
    out = []
    for c in range(1, k + 1):
        mine_g = slice(g_at[c - 1], g_at[c])
        spread = g_last[mine_g] - g_first[mine_g]
        top = np.lexsort((g_tweet[mine_g], -g_count[mine_g]))[:TOP_TWEETS]
        pubs, pub_counts = np.unique(g_author[mine_g], return_counts=True)
        pub_order = np.lexsort((pubs, -pub_counts))[:TOP_PUBLISHERS]
        hours, per_hour = np.unique(hour[h_at[c - 1] : h_at[c]], return_counts=True)
        out.append(
            {
                "cluster": c,
                "size": int(sizes[c]),
                "edges": int(n_edges[c]),
                "shared_tweets": len(spread),
                "first_at": _aware(float(g_first[mine_g].min())) if len(spread) else None,
                "last_at": _aware(float(g_last[mine_g].max())) if len(spread) else None,
                "spread_median_s": float(np.median(spread)) if len(spread) else None,
                "top_tweets": [[int(g_tweet[mine_g][i]), int(g_count[mine_g][i])] for i in top],
                "publishers": [[int(pubs[i]), int(pub_counts[i])] for i in pub_order],
                "timeline": [[_hour(float(h) * 3600.0), int(n)] for h, n in zip(hours, per_hour, strict=True)],
            }
        )
    return out, (members, of_member, degree, shared_retweets)


# --- the algorithm ---------------------------------------------------------------------------------------------


def _number(params: dict, name: str, default, lo: float, hi: float, *, whole: bool):
    v = params.get(name, default)
    if isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            raise ValueError(f"{name}: a number, not {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{name}: a number, not {v!r}")
    if whole and v != int(v):
        raise ValueError(f"{name}: a whole number, not {v:g}")
    if not lo <= v <= hi:
        raise ValueError(f"{name}: from {lo:g} to {hi:g}, not {v:g}")
    return int(v) if whole else float(v)


class Coordination(Algorithm):
    """Coordinated accounts by co-retweet or similarity (docs/coordination.md)."""

    name = "coordination"
    label = "Coordinated accounts"

    def clean_params(self, params: dict) -> dict:
        """The method and its own parameters (co-retweet: ``window``, ``min_count``; similarity:
        ``min_retweets``, ``threshold``), defaults filled in; the other method's are not stored (a form sends
        both sets)."""
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise ValueError(f"coordination takes {', '.join(PARAMS)} (unknown: {', '.join(unknown)})")
        method = params.get("method", "co-retweet")
        if method not in METHODS:
            raise ValueError(f"method: {' or '.join(METHODS)}, not {method!r}")
        collection = params.get("collection")
        if collection is not None:
            collection = _number(params, "collection", None, 1, 2**63 - 1, whole=True)
        out = {"method": method, "collection": collection}
        if method == "co-retweet":
            out["window"] = _number(params, "window", DEFAULT_WINDOW, 0, WINDOW_MAX, whole=False)
            out["min_count"] = _number(params, "min_count", DEFAULT_MIN_COUNT, 1, 10**6, whole=True)
        else:
            out["min_retweets"] = _number(params, "min_retweets", DEFAULT_MIN_RETWEETS, 1, 10**6, whole=True)
            threshold = _number(params, "threshold", DEFAULT_THRESHOLD, 0, 1, whole=False)
            if threshold <= 0:
                raise ValueError("threshold: a cosine above 0 and at most 1, not 0")
            out["threshold"] = threshold
        check_coordination(
            method,
            out.get("window", DEFAULT_WINDOW),
            out.get("min_count", DEFAULT_MIN_COUNT),
            out.get("min_retweets", DEFAULT_MIN_RETWEETS),
            out.get("threshold", DEFAULT_THRESHOLD),
        )
        return out

    def plan(self, *, run: ComputeRun, tweet_pks: list[int]) -> list[PlannedBatch]:
        collection = run.params.get("collection")
        if collection is not None and not Collection.objects.filter(workspace=run.workspace, pk=collection).exists():
            raise ValidationError({"params": f"collection: no collection {collection} in this workspace"})
        rt = load_retweets(run.workspace, collection)
        return [
            PlannedBatch(
                tweet_pks=[],
                n_cascades=len(np.unique(rt.tweet)),
                n_nodes=len(np.unique(rt.account)),
                params={"fingerprint": rt.fingerprint, "retweets": len(rt)},
            )
        ]

    def compute(self, *, run: ComputeRun, batch: ComputeBatch, backend: str, stop: Stop) -> CoordinationResult:
        _check(stop)
        res = CoordinationResult()
        p = run.params
        t = time.perf_counter()
        rt = load_retweets(run.workspace, p.get("collection"))
        t = res.tick("load_s", t)
        if rt.fingerprint != batch.params.get("fingerprint"):
            raise RetweetsChanged(
                "the retweets changed since the run was planned (an import wrote to them meanwhile): start a new run"
            )
        _check(stop)
        found = engine.coordination(
            rt.tweet,
            rt.twitter_id,
            rt.time,
            method=p["method"],
            window=p.get("window", DEFAULT_WINDOW),
            min_count=p.get("min_count", DEFAULT_MIN_COUNT),
            min_retweets=p.get("min_retweets", DEFAULT_MIN_RETWEETS),
            threshold=p.get("threshold", DEFAULT_THRESHOLD),
            backend=backend,
        )
        t = res.tick("coordination_s", t)
        _check(stop)
        a, b = rt.pks_of(found.a), rt.pks_of(found.b)
        cluster = np.asarray(found.cluster, np.int64)
        res.edges = (a, b, np.asarray(found.weight, np.float64), cluster)
        res.clusters, res.members = describe_clusters(rt, a, b, cluster)
        res.tick("clusters_s", t)
        res.summary = {
            "method": found.method,
            "accounts": int(found.accounts),
            "tweets": int(found.tweets),
            "pairs": int(found.pairs),
            "n_edges": len(found),
            "n_clusters": len(res.clusters),
            "backend": found.backend,
        }
        res.n_edges = len(found)
        return res

    def store(self, *, run: ComputeRun, batch: ComputeBatch, result: BatchOutcome) -> None:
        _store(run, result)

    def finish(self, *, run: ComputeRun) -> None:
        from ..cache import bump_data_version

        bump_data_version(run.workspace_id)  # in this transaction: the badge and the pages read the new run


def _store(run: ComputeRun, res: CoordinationResult) -> None:
    """Replace the run's rows (inside the runner's transaction: a batch delivered twice stores once)."""
    for model in (CoordinationEdge, CoordinationMember, CoordinationCluster):
        model.objects.filter(run=run).delete()
    a, b, w, cluster = res.edges
    members, of_member, degree, shared = res.members
    with connection.cursor() as cur:
        for table, columns, arrays, insert in (
            (
                "monitor_coordinationedge",
                [("position", "bigint"), ("a", "bigint"), ("b", "bigint"), ("weight", "float"), ("cluster", "int")],
                [np.arange(len(a), dtype=np.int64), a, b, w, cluster],
                "run_id, position, a_id, b_id, weight, cluster",
            ),
            (
                "monitor_coordinationmember",
                [("account", "bigint"), ("cluster", "int"), ("degree", "int"), ("shared", "int")],
                [members, of_member, degree, shared],
                "run_id, account_id, cluster, degree, shared_retweets",
            ),
        ):
            if not len(arrays[0]):
                continue
            staged = temp_table_name("coord")
            create_temp(cur, staged, columns)
            copy_in(cur, staged, columns, arrays)
            cur.execute(
                f"INSERT INTO {table} ({insert}) SELECT %s, {', '.join(f's.{c}' for c, _ in columns)} FROM {staged} s",
                [run.pk],
            )
            cur.execute(f"DROP TABLE IF EXISTS {staged}")
        analyze_after_bulk_write(cur, ["monitor_coordinationedge", "monitor_coordinationmember"], len(a))
    weight_sums = np.bincount(cluster, weights=w) if len(w) else np.zeros(1)
    CoordinationCluster.objects.bulk_create(
        CoordinationCluster(run=run, mean_weight=float(weight_sums[c["cluster"]] / c["edges"]), **c)
        for c in res.clusters
    )
    CoordinationSummary.objects.update_or_create(run=run, defaults={**res.summary, "notes": list(res.notes)})


COORDINATION = register(Coordination())
