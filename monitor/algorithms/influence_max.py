"""The counter-campaign planner (influence maximisation, issue 16; docs/influence_max.md) as a compute-run
algorithm: which K accounts of a publisher's audience, reached by a correction, would carry it the furthest.

**The graph.** The publisher's *audience*: every account that can see what the publisher posts through the
workspace's follower graph (its followers, their followers, ...), found by a breadth-first search against the
follow edges; the publisher itself is left out (it does not spread the correction). Nodes are ``Account``
primary keys, edges follower -> followee (``compute.graphs``), influence flowing followee -> follower under the
Independent Cascade model. Edge probabilities: ``uniform`` (``p``), ``wc`` (weighted cascade: 1 / the accounts
the follower follows in the whole workspace, so attention split with accounts outside the audience counts) or
``estimated`` from the workspace's cascades: along each follow edge f -> u, u's cascades exposed f once each and
the computed spreading graphs (``CascadeGraph``) say when f got the tweet from u; the engine's estimator smooths
the rate and shrinks it to a prior. ``unit`` ``followers`` weighs each account by its latest known follower
count (its followers in the workspace's graph when none was seen), so the spread counts followers reached.

**The plan.** IMM (the default) splits its node-selection RR sets across ``batches`` batches: every batch runs
IMM's sampling phase (deterministic in the model, K, eps and seed, so every worker finds the same theta; a
process keeps it per model) and samples its share ``[theta * j / B, theta * (j + 1) / B)`` of the sets, whose
content depends only on (seed, set index): the parts merge into exactly the sets one worker would sample, and so
the same seed gives the same accounts however the batches were spread. The run's last batch (``finish``)
merges them, chooses the accounts greedily, evaluates them with ``evaluate`` independent Monte-Carlo cascades
(95 % interval) beside the publisher's top spreaders by influence, stores the result and deletes the parts. The
other methods (imgpu, degree, influence, random) run in one batch. Every batch carries the fingerprint of the
model its plan saw; a batch that builds another (an import changed the data meanwhile) fails saying so.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order

from compute import costs, memory
from compute.algorithms import influence_max as engine
from compute.arrays import unique
from compute.backends import resolve_backend
from compute.graphs import Graph, subgraph, transpose
from compute.influence_model import RRSetLimitExceeded

from ..models import (
    Account,
    CascadeGraph,
    ComputeBatch,
    ComputeRun,
    InfluenceMaxPartial,
    InfluenceMaxResult,
    InfluenceMaxSeed,
    Workspace,
)
from .base import Algorithm, BatchOutcome, PlannedBatch, RunCancelled, Stop, register
from .network import GraphSpec, load_graph

__all__ = [
    "INFLUENCE_MAX",
    "METHODS",
    "MODELS",
    "UNITS",
    "Audience",
    "InfluenceMax",
    "ModelChanged",
    "load_audience",
]

METHODS = ("imm", "imgpu", "degree", "influence", "random")
MODELS = ("uniform", "wc", "estimated")
UNITS = ("accounts", "followers")
PARAMS = ("publisher", "k", "model", "p", "strength", "unit", "method", "eps", "seed", "evaluate", "batches")
K_MAX = 500  # a counter-campaign reaches tens of accounts; the page lists them all
EVALUATE_MAX = 1_000_000
BATCHES_MAX = 64
RR_CHUNK = 250_000  # RR sets sampled between two safe points (a cancel is noticed within one chunk)
# what one RR set costs in memory, and the copies of them the run's finishing batch holds: the cost estimate's numbers
# (compute/costs.py), so that a run its estimate let through is not refused here for the same sets.
# benchmarks/imm_finish_memory.py measured 3.1 to 4.4 copies at the peak of merge + greedy, plus the parts as read
SET_BYTES, ENTRY_BYTES, RR_COPIES = costs.RR_BYTES_PER_SET, costs.RR_BYTES_PER_MEMBER, costs.RR_COPIES_AT_FINISH
MEMORY_HINT = "lower k or raise eps"


class ModelChanged(RuntimeError):
    """A batch built another model than the one its run was planned on (an import changed the data meanwhile)."""


# --- the model: the publisher's audience, read once per data version ----------------------------------------------


@dataclass(eq=False)
class Audience:
    """The Independent Cascade model of a publisher's audience, with what the page says about it: ``scores`` is
    the publisher's influence measure per node (0 for an account that never spread it), ``facts`` the
    estimator's numbers, ``notes`` what the reader should know (e.g. follower counts that were missing)."""

    publisher: int
    model: engine.ICModel
    fingerprint: str
    description: str
    scores: np.ndarray
    facts: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


_KEEP = 2  # models a process keeps: a worker serves one run at a time, a finishing batch reuses its own
_AUDIENCES: OrderedDict[tuple, Audience] = OrderedDict()
_SIZES: OrderedDict[tuple, engine.ImmSize] = OrderedDict()


def _model_key(params: dict) -> tuple:
    return (params["publisher"], params["model"], params.get("p"), params.get("strength"), params["unit"])


def load_audience(ws: Workspace, params: dict) -> Audience:
    """The model ``params`` (cleaned) asks for, as the data is now; each process reads it once per data version
    (the newest ``_KEEP`` stay in memory)."""
    from ..cache import current_version

    key = (ws.pk, current_version(ws), _model_key(params))
    hit = _AUDIENCES.get(key)
    if hit is not None:
        _AUDIENCES.move_to_end(key)
        return hit
    aud = _read_audience(ws, params)
    _AUDIENCES[key] = aud
    while len(_AUDIENCES) > _KEEP:
        _AUDIENCES.popitem(last=False)
    return aud


def audience_nodes(g: Graph, publisher: int) -> np.ndarray:
    """Node indices of every account that follows ``publisher`` directly or through others (the publisher left
    out), ascending; empty when the publisher is not in the graph."""
    node = int(g.index_of(np.array([publisher], np.int64))[0])
    if node < 0:
        return np.zeros(0, np.int64)
    indptr_t, indices_t, _perm = transpose(g)  # row u: the followers of u
    reverse = csr_matrix((np.ones(len(indices_t), np.int8), indices_t, indptr_t), shape=(g.n_nodes, g.n_nodes))
    reached = breadth_first_order(reverse, node, directed=True, return_predecessors=False)
    return np.sort(reached[reached != node]).astype(np.int64)


def _read_audience(ws: Workspace, params: dict) -> Audience:
    full = load_graph(ws, GraphSpec("follows")).graph
    nodes = audience_nodes(full, params["publisher"])
    sub = subgraph(full, nodes)
    notes: list[str] = []
    facts: dict = {}
    kind = params["model"]
    if kind == "uniform":
        model = engine.ic_model(sub, p=float(params["p"]), weights=_weights(ws, full, sub, params, notes))
        description = f"uniform p = {params['p']:g}"
    elif kind == "wc":
        # attention is split among everything the follower follows, inside the audience or not
        src, _dst = sub.edges()
        probs = 1.0 / full.out_degree[nodes[src]].astype(np.float64)
        model = engine.ic_model(sub, p=probs, weights=_weights(ws, full, sub, params, notes))
        description = "weighted cascade (1 / accounts the follower follows)"
    else:
        exposures, retweets = edge_counts(ws, sub)
        est = engine.estimate_edge_probabilities(exposures, retweets, strength=float(params["strength"]))
        model = engine.ic_model(sub, p=est.probs, kind="estimated", weights=_weights(ws, full, sub, params, notes))
        facts = {
            "prior": float(est.prior),
            "strength": float(est.strength),
            "observed_edges": int(est.observed),
            "exposures": int(est.exposures),
            "retweets": int(est.retweets),
        }
        description = f"estimated from the collection (prior {est.prior:.4g}, strength {est.strength:g})"
        if not est.exposures:
            notes.append("no cascade exposed any follow edge of this audience: every edge has the prior")
    scores = _publisher_influence(ws, params["publisher"], sub)
    return Audience(params["publisher"], model, _fingerprint(model), description, scores, facts, notes)


def edge_counts(ws: Workspace, g: Graph) -> tuple[np.ndarray, np.ndarray]:
    """``(exposures, retweets)`` per edge of ``g`` (follower -> followee, positions of ``g.indices``) from the
    workspace's cascades, as the engine's estimator counts them: every cascade that followee u took part in
    (posting or retweeting it) exposed each follower f of u once, and f retweeted along f -> u when u's spreading
    graph says f got the tweet from u (``CascadeGraph`` edge ``(f, u)``)."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT p.account_id, COUNT(DISTINCT p.tweet_id) FROM (
                    SELECT t.author_id AS account_id, t.id AS tweet_id FROM monitor_tweet t WHERE t.workspace_id = %s
                    UNION ALL
                    SELECT r.retweeter_id, r.tweet_id FROM monitor_retweet r
                    JOIN monitor_tweet t ON t.id = r.tweet_id AND t.workspace_id = r.workspace_id
                    WHERE t.workspace_id = %s) p
                GROUP BY p.account_id""",
            [ws.pk, ws.pk],
        )
        rows = cur.fetchall()
    cascades = np.zeros(g.n_nodes, np.int64)
    if rows:
        pk = np.array([r[0] for r in rows], np.int64)
        at = g.index_of(pk)
        cascades[at[at >= 0]] = np.array([r[1] for r in rows], np.int64)[at >= 0]
    _src, dst = g.edges()
    exposures = cascades[np.asarray(dst, np.int64)]
    retweets = np.zeros(g.n_edges, np.int64)
    for cg in CascadeGraph.objects.filter(tweet__workspace=ws).only("edges").iterator(chunk_size=500):
        f, u = cg.edge_arrays()
        pos = engine.edge_positions(g, f, u)
        pos = unique(pos[pos >= 0])  # once per cascade and edge
        retweets[pos] += 1
    # a spreading edge always follows an exposure of the same cascade; the bound keeps the estimator's contract
    return exposures, np.minimum(retweets, exposures)


def _weights(ws: Workspace, full: Graph, sub: Graph, params: dict, notes: list[str]) -> np.ndarray | None:
    """Each account's weight: 1 (``accounts``), or its latest known follower count (``followers``); an account
    whose count was never seen weighs its followers in the workspace's graph."""
    if params["unit"] == "accounts" or not sub.n_nodes:
        return None
    with connection.cursor() as cur:
        cur.execute(
            """SELECT DISTINCT ON (c.account_id) c.account_id, c.count FROM monitor_followercount c
                JOIN monitor_account a ON a.id = c.account_id AND a.workspace_id = c.workspace_id
                WHERE a.workspace_id = %s ORDER BY c.account_id, c.observed_at DESC""",
            [ws.pk],
        )
        rows = cur.fetchall()
    weights = np.full(sub.n_nodes, np.nan)
    if rows:
        at = sub.index_of(np.array([r[0] for r in rows], np.int64))
        weights[at[at >= 0]] = np.array([r[1] for r in rows], np.float64)[at >= 0]
    missing = np.isnan(weights)
    if missing.any():
        known_followers = full.in_degree[full.index_of(sub.ids)].astype(np.float64)
        weights[missing] = known_followers[missing]
        notes.append(
            f"{int(missing.sum()):,} of {sub.n_nodes:,} accounts had no follower count on record: they weigh the "
            "followers the workspace's follower graph knows"
        )
    return weights


def _publisher_influence(ws: Workspace, publisher: int, g: Graph) -> np.ndarray:
    """The publisher's influence measure per node of ``g``: what each account added to the reach of the
    publisher's tweets, all time, every label (the publisher's ranking page by total)."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT account_id, SUM(influence) FROM monitor_dailyinfluence
                WHERE workspace_id = %s AND publisher_id = %s GROUP BY account_id""",
            [ws.pk, publisher],
        )
        rows = cur.fetchall()
    scores = np.zeros(g.n_nodes, np.float64)
    if rows:
        at = g.index_of(np.array([r[0] for r in rows], np.int64))
        scores[at[at >= 0]] = np.array([r[1] for r in rows], np.float64)[at >= 0]
    return scores


def _fingerprint(model: engine.ICModel) -> str:
    g = model.graph
    h = hashlib.sha1()
    for a, dtype in ((g.ids, "<i8"), (g.indptr, "<i8"), (g.indices, "<i8"), (model.probs, "<f8")):
        h.update(np.ascontiguousarray(a, dtype=dtype).tobytes())
    h.update(b"w" + np.ascontiguousarray(model.weights, dtype="<f8").tobytes())
    return h.hexdigest()


def imm_size(aud: Audience, params: dict, backend: str, ceiling: int | None = None, stop=None) -> engine.ImmSize:
    """IMM's sampling phase for this model and run (deterministic: every batch finds the same theta); a process
    keeps the newest few, so a worker that runs several batches of a run samples it once.

    ``ceiling`` (bytes: the workspace's memory ceiling) bounds the RR sets: the sampling phase may hold no more
    sets than fit it at one node each, and the sets of node selection (theta of them, of the sampling phase's
    mean size) must fit it too, in the copies the finishing batch holds; otherwise :class:`memory.OverMemory`
    says so, naming k and eps, before they are sampled. ``stop`` is called between chunks of sampling."""
    key = (aud.fingerprint, params["k"], params["eps"], params["seed"])
    hit = _SIZES.get(key)
    if hit is None:
        max_sets = None if ceiling is None else max(1, ceiling // (RR_COPIES * (SET_BYTES + ENTRY_BYTES)))
        try:
            hit = engine.imm_sample_size(
                aud.model, k=params["k"], eps=params["eps"], seed=params["seed"], backend=backend, max_sets=max_sets,
                stop=stop,
            )  # fmt: skip
        except RRSetLimitExceeded as exc:
            raise memory.OverMemory(_too_many(exc.needed, exc.max_sets, params, ceiling, exc.phase)) from None
        _SIZES[key] = hit
        while len(_SIZES) > 4:
            _SIZES.popitem(last=False)
    if ceiling is not None:
        per_set = RR_COPIES * (SET_BYTES + ENTRY_BYTES * hit.mean_set_size)
        fits = max(1, int(ceiling // per_set))
        if hit.theta > fits:
            raise memory.OverMemory(
                _too_many(hit.theta, fits, params, ceiling, f"for node selection ({hit.mean_set_size:.3g} nodes each)")
            )
    return hit


def _too_many(needed: int, fits: int, params: dict, ceiling: int, phase: str) -> str:
    def count(n: int) -> str:
        return f"{n:,}" if n < 10**12 else f"{float(n):.3g}"

    return (
        f"IMM with k={params['k']} and eps={params['eps']:g} needs {count(needed)} RR sets {phase}, more than the "
        f"{count(fits)} that this workspace's memory ceiling of {ceiling // memory.MB:,} MB holds; {MEMORY_HINT}"
    )


def share(theta: int, part: int, parts: int) -> tuple[int, int]:
    """Batch ``part``'s RR-set indices of ``parts``: contiguous, together exactly ``[0, theta)``."""
    return theta * part // parts, theta * (part + 1) // parts


# --- one batch's result ----------------------------------------------------------------------------------------


@dataclass
class Chosen:
    """The accounts a method chose, in order, and what it says of them (before the evaluation)."""

    nodes: np.ndarray
    gains: np.ndarray
    curve: np.ndarray
    rr_sets: int = 0
    sampling_rr_sets: int = 0
    lower_bound: float | None = None
    snapshots: int = 0
    edges_touched: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class Conclusion:
    """A run's rows before they are stored: the result's fields and the chosen accounts' rows."""

    result: dict
    seeds: list[dict]


@dataclass
class InfluenceMaxResultRows(BatchOutcome):
    """One batch's outcome: an IMM batch's RR sets (``part``), or a one-batch method's whole conclusion."""

    part: int = 0
    start: int = 0
    stop: int = 0
    facts: dict = field(default_factory=dict)
    sets: bytes = b""
    edges_touched: int = 0
    conclusion: Conclusion | None = None


def _check(stop: Stop) -> None:
    if stop():  # a safe point: nothing of the batch is stored yet
        raise RunCancelled()


def _influence_ranks(ws_pk: int, publisher: int, account_pks: list[int]) -> dict[int, int]:
    """The rank of these accounts among the publisher's spreaders by total influence, the publisher itself left
    out (the order of the publisher's ranking page, total descending, ties by account, less the publisher: the
    numbering of the baseline)."""
    if not account_pks:
        return {}
    marks = ", ".join(["%s"] * len(account_pks))
    with connection.cursor() as cur:
        cur.execute(
            f"""SELECT r.account_id, r.rnk FROM (
                    SELECT account_id, ROW_NUMBER() OVER (ORDER BY SUM(influence) DESC, account_id) AS rnk
                    FROM monitor_dailyinfluence WHERE workspace_id = %s AND publisher_id = %s AND account_id <> %s
                    GROUP BY account_id) r
                WHERE r.account_id IN ({marks})""",
            [ws_pk, publisher, publisher, *account_pks],
        )
        return {int(pk): int(rank) for pk, rank in cur.fetchall()}


def conclude(
    ws_pk: int, aud: Audience, params: dict, chosen: Chosen, backend: str, stop: Stop | None = None
) -> Conclusion:
    """Evaluate the chosen accounts and the publisher's top spreaders by influence (as many) with the same
    independent Monte-Carlo cascades (same seed: the two estimates share their random numbers, so their
    difference is measured more sharply than either), and build the rows to store."""
    model, runs, seed = aud.model, params["evaluate"], params["seed"]
    nodes = np.asarray(chosen.nodes, np.int64)
    spread = engine.evaluate_spread(model, nodes, runs=runs, seed=seed, backend=backend)
    if stop is not None:
        _check(stop)
    # the baseline: the accounts of the audience with the most influence for this publisher, ties by account
    order = np.lexsort((aud.model.graph.ids, -aud.scores))
    top = order[aud.scores[order] > 0][: len(nodes)]
    baseline: dict = {"accounts": aud.model.graph.ids[top].tolist(), "scores": aud.scores[top].tolist()}
    if len(top):
        b = engine.evaluate_spread(model, top, runs=runs, seed=seed, backend=backend)
        baseline.update(spread=b.mean, std=b.std, ci_low=b.ci_low, ci_high=b.ci_high)
    chosen_ids = aud.model.graph.ids[nodes]
    in_top = set(baseline["accounts"])
    baseline["overlap"] = len(in_top & set(chosen_ids.tolist()))
    ranks = _influence_ranks(ws_pk, aud.publisher, chosen_ids.tolist())
    seeds = [
        {
            "rank": i + 1,
            "account_id": int(pk),
            "gain": float(chosen.gains[i]),
            "cumulative": float(chosen.curve[i]),
            "influence_rank": ranks.get(int(pk)),
            "in_baseline": int(pk) in in_top,
        }
        for i, pk in enumerate(chosen_ids.tolist())
    ]
    g = model.graph
    result = {
        "publisher_id": aud.publisher,
        "method": params["method"],
        "k": params["k"],
        "model": params["model"],
        "model_description": aud.description,
        "unit": params["unit"],
        "n_nodes": g.n_nodes,
        "n_edges": g.n_edges,
        "total_weight": float(model.total_weight),
        "estimated": aud.facts,
        "spread": float(spread.mean),
        "spread_std": float(spread.std),
        # the interval is mean -/+ 1.96 sd/sqrt(runs): clamp rounding so the stored row keeps its invariant
        "spread_ci_low": min(float(spread.ci_low), float(spread.mean)),
        "spread_ci_high": max(float(spread.ci_high), float(spread.mean)),
        "evaluate_runs": int(spread.runs),
        "estimate": float(chosen.curve[-1]) if len(chosen.curve) else 0.0,
        "curve": [float(x) for x in chosen.curve],
        "rr_sets": int(chosen.rr_sets),
        "sampling_rr_sets": int(chosen.sampling_rr_sets),
        "lower_bound": chosen.lower_bound,
        "snapshots": int(chosen.snapshots),
        "edges_touched": int(chosen.edges_touched),
        "baseline": baseline,
        "notes": [*aud.notes, *chosen.notes],
        "fingerprint": aud.fingerprint,
    }
    return Conclusion(result, seeds)


def _store_conclusion(run: ComputeRun, c: Conclusion) -> None:
    """Replace the run's result and chosen accounts (inside the runner's transaction); the pages may show it once
    this commits (the data version is bumped then)."""
    InfluenceMaxSeed.objects.filter(run=run).delete()
    InfluenceMaxResult.objects.update_or_create(run=run, defaults=c.result)
    InfluenceMaxSeed.objects.bulk_create(InfluenceMaxSeed(run=run, **s) for s in c.seeds)
    from ..cache import bump_data_version

    bump_data_version(run.workspace_id)  # in this transaction: committed with the rows (monitor/cache.py)


# --- the algorithm -------------------------------------------------------------------------------------------------


def _int(params: dict, name: str, default: int, lo: int, hi: int) -> int:
    v = params.get(name, default)
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{name}: an integer, not {v!r}")
    if not lo <= v <= hi:
        raise ValueError(f"{name}: from {lo} to {hi}, not {v}")
    return v


def _float(params: dict, name: str, default: float, lo: float, hi: float, *, open_low: bool = True) -> float:
    v = params.get(name, default)
    if isinstance(v, bool):
        raise ValueError(f"{name}: a number, not {v!r}")
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: a number, not {v!r}") from None
    if not math.isfinite(v) or v > hi or v < lo or (open_low and v == lo):
        raise ValueError(f"{name}: {'above' if open_low else 'from'} {lo:g} up to {hi:g}, not {v:g}")
    return v


def _choice(params: dict, name: str, default: str, allowed: tuple[str, ...]) -> str:
    v = params.get(name, default)
    if v not in allowed:
        raise ValueError(f"{name}: one of {', '.join(allowed)}, not {v!r}")
    return v


class InfluenceMax(Algorithm):
    """The counter-campaign planner: the K accounts of a publisher's audience with the largest joint expected
    reach under Independent Cascade (IMM, IMGPU's traversal, or a baseline; docs/influence_max.md)."""

    name = "influence_max"
    label = "Counter-campaign planner"
    memory_hint = MEMORY_HINT  # what the runner's message for a batch over its memory ceiling suggests

    def clean_params(self, params: dict) -> dict:
        unknown = sorted(set(params) - set(PARAMS))
        if unknown:
            raise ValueError(f"influence_max takes {', '.join(PARAMS)} (unknown: {', '.join(unknown)})")
        if params.get("publisher") is None:
            raise ValueError("publisher: the account whose audience the plan covers is required")
        model = _choice(params, "model", "uniform", MODELS)
        method = _choice(params, "method", "imm", METHODS)
        return {
            "publisher": _int(params, "publisher", 0, 1, 2**63 - 1),
            "k": _int(params, "k", 50, 1, K_MAX),
            "model": model,
            "p": _float(params, "p", 0.01, 0.0, 1.0) if model == "uniform" else None,
            "strength": _float(params, "strength", 20.0, 0.0, 1e6) if model == "estimated" else None,
            "unit": _choice(params, "unit", "accounts", UNITS),
            "method": method,
            "eps": _float(params, "eps", 0.1, 0.0, 1.0),
            "seed": _int(params, "seed", 0, 0, 2**31 - 1),
            "evaluate": _int(params, "evaluate", 20_000, 100, EVALUATE_MAX),
            "batches": _int(params, "batches", 4, 1, BATCHES_MAX) if method == "imm" else 1,
        }

    def plan(self, *, run: ComputeRun, tweet_pks: list[int]) -> list[PlannedBatch]:
        publisher = Account.objects.filter(workspace=run.workspace, pk=run.params["publisher"]).first()
        if publisher is None:
            raise ValidationError({"params": f"publisher: no account {run.params['publisher']} in this workspace"})
        aud = load_audience(run.workspace, run.params)
        if aud.model.n_nodes == 0:
            raise ValidationError(
                {"params": f"publisher: {publisher} has no follower in the workspace's follower graph: no audience"}
            )
        parts = run.params["batches"]
        return [
            PlannedBatch(
                tweet_pks=[],
                n_cascades=0,
                n_nodes=aud.model.n_nodes if j == 0 else 0,
                params={"part": j, "parts": parts, "fingerprint": aud.fingerprint},
            )
            for j in range(parts)
        ]

    def compute(self, *, run: ComputeRun, batch: ComputeBatch, backend: str, stop: Stop) -> InfluenceMaxResultRows:
        _check(stop)
        params = run.params
        res = InfluenceMaxResultRows(part=batch.params["part"])
        t = time.perf_counter()
        aud = load_audience(run.workspace, params)
        t = res.tick("load_s", t)
        if aud.fingerprint != batch.params.get("fingerprint"):
            raise ModelChanged(
                "the publisher's audience or its probabilities changed since the run was planned (an import wrote "
                "meanwhile): start a new run"
            )
        res.n_edges = aud.model.n_edges if res.part == 0 else 0
        _check(stop)
        ceiling = _ceiling(run)
        if params["method"] != "imm":
            scores = aud.scores if params["method"] == "influence" else None
            r = engine.influence_max(
                aud.model, k=params["k"], method=params["method"], eps=params["eps"], seed=params["seed"],
                scores=scores, backend=backend, stop=lambda: _check(stop),
            )  # fmt: skip
            t = res.tick("select_s", t)
            _check(stop)
            chosen = Chosen(
                r.nodes, r.gains, r.curve, r.rr_sets, r.sampling_rr_sets, _finite(r.lower_bound), r.snapshots,
                notes=list(r.notes),
            )  # fmt: skip
            res.conclusion = conclude(run.workspace_id, aud, params, chosen, backend, stop)
            res.tick("evaluate_s", t)
            return res
        size = imm_size(aud, params, backend, ceiling, stop=lambda: _check(stop))
        t = res.tick("sampling_phase_s", t)
        res.facts = {
            "theta": int(size.theta),
            "lower_bound": float(size.lower_bound),
            "sampling_rr_sets": int(size.sampling_rr_sets),
            "rounds": int(size.rounds),
        }
        res.start, res.stop = share(size.theta, res.part, batch.params["parts"])
        pieces = []
        for lo in range(res.start, res.stop, RR_CHUNK):
            _check(stop)
            hi = min(res.stop, lo + RR_CHUNK)
            pieces.append(engine.rr_sets(aud.model, seed=params["seed"], start=lo, stop=hi, backend=backend))
        t = res.tick("rr_sets_s", t)
        if pieces:
            rr = engine.merge_rr_sets(pieces) if len(pieces) > 1 else pieces[0]
            res.sets, res.edges_touched = rr.to_bytes(), int(rr.edges_touched)
        return res

    def store(self, *, run: ComputeRun, batch: ComputeBatch, result: BatchOutcome) -> None:
        if result.conclusion is not None:
            _store_conclusion(run, result.conclusion)
            return
        InfluenceMaxPartial.objects.filter(run=run, part=result.part).delete()
        InfluenceMaxPartial.objects.create(
            run=run,
            part=result.part,
            start=result.start,
            stop=result.stop,
            edges_touched=result.edges_touched,
            facts=result.facts,
            sets=result.sets,
        )

    def finish(self, *, run: ComputeRun) -> None:
        if run.params["method"] == "imm":
            _finish_imm(run)


def _ceiling(run: ComputeRun) -> int:
    """The run's memory ceiling in bytes (its workspace's; services.budgets)."""
    from ..limits import workspace_limits

    return workspace_limits(run.workspace).run_memory_bytes


def _finite(x) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def _finish_imm(run: ComputeRun) -> None:
    """Merge the run's RR sets, choose the accounts, evaluate them beside the baseline, store, delete the parts."""
    params = run.params
    t = time.perf_counter()
    parts = list(InfluenceMaxPartial.objects.filter(run=run).order_by("part"))
    if [p.part for p in parts] != list(range(params["batches"])):
        raise RuntimeError(f"influence_max run {run.pk}: RR-set parts {[p.part for p in parts]} of {params['batches']}")
    facts = parts[0].facts
    if any(p.facts != facts for p in parts):
        raise RuntimeError(f"influence_max run {run.pk}: the batches disagree on IMM's sample size")
    aud = load_audience(run.workspace, params)
    if aud.fingerprint != run.batches.get(index=0).params["fingerprint"]:
        raise ModelChanged("the publisher's audience changed while the run was going: start a new run")
    touched = sum(p.edges_touched for p in parts)
    pieces = []
    for p in parts:  # the batch's memory ceiling is checked between parts (the runner holds the batch to it)
        if p.stop > p.start:
            pieces.append(engine.RRSets.from_bytes(bytes(p.sets)))
            p.sets = b""  # read: its copy need not stay
            memory.check_active()
    rr = engine.merge_rr_sets(pieces)
    del pieces
    memory.check_active()
    if rr.start != 0 or rr.count != facts["theta"]:
        raise RuntimeError(f"influence_max run {run.pk}: {rr.count} RR sets merged, theta is {facts['theta']}")
    # the worker finishing the run decides the backend as the runner does for a batch
    backend = resolve_backend(settings.SPREADWATCH_BACKEND if run.backend == "auto" else run.backend)
    t = _tick(run, "merge_s", t)
    sel = engine.select_seeds(aud.model, rr, k=params["k"], backend=backend)
    del rr
    memory.check_active()
    t = _tick(run, "select_s", t)
    chosen = Chosen(
        sel.nodes,
        sel.gains,
        sel.curve,
        rr_sets=facts["theta"],
        sampling_rr_sets=facts["sampling_rr_sets"],
        lower_bound=facts["lower_bound"],
        edges_touched=touched,
    )
    _store_conclusion(run, conclude(run.workspace_id, aud, params, chosen, backend))
    _tick(run, "evaluate_s", t)
    InfluenceMaxPartial.objects.filter(run=run).delete()


def _tick(run: ComputeRun, key: str, t0: float) -> float:
    """Add the seconds since ``t0`` to the run's timings (the runner saves the run after ``finish``)."""
    t = time.perf_counter()
    run.timings[key] = round(run.timings.get(key, 0.0) + (t - t0), 4)
    return t


INFLUENCE_MAX = register(InfluenceMax())
