"""Influence maximisation (issue 16; IMGPU, seed ``001``): the K accounts whose joint Independent Cascade spread
on the follower graph is the largest — the CPU reference and one public dispatcher per step
(``backend="auto"|"cpu"|"gpu"``).

* :func:`influence_max` — one call: IMM (Tang, Shi, Xiao 2015; the default), IMGPU's bottom-up traversal over
  live-edge snapshots, or a baseline (degree, a given score such as the influence measure, random).
* The steps of IMM, for a run split across workers: :func:`imm_sample_size` (the sampling phase: how many RR sets),
  :func:`rr_sets` (any range of RR sets; set ``i`` depends only on the model, the seed and ``i``),
  :func:`merge_rr_sets`, :func:`select_seeds` (greedy maximum coverage).
* :func:`evaluate_spread` — the independent Monte-Carlo evaluator (20,000 forward runs, 95 % interval);
  :func:`compare_spreads` — several seed sets on the same 20,000 worlds, with paired differences.
* The model: :func:`ic_model` (uniform p, weighted cascade, per-edge), :func:`estimate_edge_probabilities` (from
  exposure and retweet counts), :func:`exposure_counts` (those counts from computed cascades).

Model, random numbers, bounds and result types are shared with the GPU twin in :mod:`compute.influence_model`.
docs/influence_max.md explains the model, the methods, their guarantees and what the paper leaves open.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._jit import HAVE_NUMBA
from ..arrays import unique
from ..backends import resolve_backend
from ..graphs import Graph, transpose
from ..influence_model import (
    BASELINE_RR_SETS,
    METHODS,
    PROBABILITY_KINDS,
    SAMPLING_CHUNK,
    STREAM_EVALUATE,
    STREAM_SAMPLING,
    STREAM_SELECTION,
    STREAM_SNAPSHOTS,
    EdgeEstimate,
    ICModel,
    ImmSize,
    IMResult,
    RRSetLimitExceeded,
    RRSets,
    Selection,
    SpreadComparison,
    SpreadEstimate,
    base_key,
    check_k,
    check_max_sets,
    check_range,
    check_seeds,
    edge_positions,
    estimate_edge_probabilities,
    ic_model,
    imm_sampling,
    merge_rr_sets,
    mix64,
    normal_ci,
    paired_comparison,
    selection_from_counts,
    split_range,
)
from . import _influence_max_kernels as kern

__all__ = [
    "BASELINE_RR_SETS",
    "METHODS",
    "PROBABILITY_KINDS",
    "EdgeEstimate",
    "ICModel",
    "IMResult",
    "ImmSize",
    "RRSetLimitExceeded",
    "RRSets",
    "Selection",
    "SpreadComparison",
    "SpreadEstimate",
    "compare_spreads",
    "edge_positions",
    "estimate_edge_probabilities",
    "evaluate_spread",
    "exposure_counts",
    "ic_model",
    "imm_sample_size",
    "influence_max",
    "merge_rr_sets",
    "rr_sets",
    "select_seeds",
    "split_range",
]

#: sets (or runs) per kernel call: large enough to amortise the call, small enough to spread over threads
BLOCK = 8192
#: IMGPU: reach lists of one snapshot may hold this many entries before the snapshot switches to sketches
EXACT_ENTRIES = int(os.environ.get("SPREADWATCH_IMGPU_EXACT_ENTRIES", 1 << 25))
#: IMGPU: entries of a bottom-k reachability sketch
SKETCH_K = 64


def _threads() -> int:
    return max(1, os.cpu_count() or 1) if HAVE_NUMBA else 1


def _check_model(model) -> None:
    if not isinstance(model, ICModel):
        raise ValueError(f"model must be an ICModel (compute.algorithms.influence_max.ic_model), not {type(model)}")


def _check_seed(seed) -> None:
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, not {seed!r}")


def _check_eps_ell(eps, ell) -> None:
    if not (isinstance(eps, (int, float)) and 0 < eps < 1):
        raise ValueError(f"eps must be in (0, 1), not {eps!r}")
    if not (isinstance(ell, (int, float)) and ell > 0):
        raise ValueError(f"ell must be > 0, not {ell!r}")


# --------------------------------------------------------------------------------------------------------------
# Dispatchers
# --------------------------------------------------------------------------------------------------------------


def rr_sets(
    model: ICModel, *, seed: int = 0, start: int = 0, stop: int = 0, stream: int = 0, backend: str = "auto"
) -> RRSets:
    """RR sets ``[start, stop)`` of (``seed``, ``stream``): the same sets on any backend and any split."""
    _check_model(model)
    _check_seed(seed)
    check_range(start, stop)
    if resolve_backend(backend) != "gpu":
        return rr_sets_cpu(model, seed=seed, start=start, stop=stop, stream=stream)
    from ..gpu.influence_max import rr_sets as twin

    return twin(model, seed=seed, start=start, stop=stop, stream=stream, backend="gpu")


def select_seeds(model: ICModel, rr: RRSets, *, k: int = 50, backend: str = "auto") -> Selection:
    """Greedy maximum coverage of ``rr``: min(k, n) picks, ties broken by the smallest node index."""
    _check_model(model)
    check_k(k)
    if resolve_backend(backend) != "gpu":
        return select_seeds_cpu(model, rr, k=k)
    from ..gpu.influence_max import select_seeds as twin

    return twin(model, rr, k=k, backend="gpu")


def imm_sample_size(
    model: ICModel,
    *,
    k: int = 50,
    eps: float = 0.1,
    ell: float = 1.0,
    seed: int = 0,
    backend: str = "auto",
    max_sets: int | None = None,
    stop: Callable[[], object] | None = None,
) -> ImmSize:
    """IMM's sampling phase: the number of RR sets node selection needs (deterministic in the arguments).
    ``max_sets``: raise :class:`RRSetLimitExceeded` (naming k and eps) instead of sampling, or returning a theta,
    beyond that many sets; ``stop`` is called between chunks of sampling (it may raise to end the phase)."""
    _check_model(model)
    check_k(k)
    _check_eps_ell(eps, ell)
    _check_seed(seed)
    check_max_sets(max_sets)
    if resolve_backend(backend) != "gpu":
        return imm_sample_size_cpu(model, k=k, eps=eps, ell=ell, seed=seed, max_sets=max_sets, stop=stop)
    from ..gpu.influence_max import imm_sample_size as twin

    return twin(model, k=k, eps=eps, ell=ell, seed=seed, backend="gpu", max_sets=max_sets, stop=stop)


def evaluate_spread(model: ICModel, seeds: np.ndarray, *, runs: int = 20000, seed: int = 1, backend: str = "auto"):
    """Expected spread of node indices ``seeds`` by ``runs`` independent forward IC simulations, with its 95 %
    interval (:class:`SpreadEstimate`)."""
    _check_model(model)
    s = check_seeds(model, seeds)
    if not isinstance(runs, (int, np.integer)) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, not {runs!r}")
    _check_seed(seed)
    if resolve_backend(backend) != "gpu":
        return evaluate_spread_cpu(model, s, runs=runs, seed=seed)
    from ..gpu.influence_max import evaluate_spread as twin

    return twin(model, s, runs=runs, seed=seed, backend="gpu")


def compare_spreads(
    model: ICModel, seed_sets, *, runs: int = 20000, seed: int = 1, backend: str = "auto"
) -> SpreadComparison:
    """Every seed set of ``seed_sets`` (node indices each) scored on the same ``runs`` Monte-Carlo worlds, with
    each spread's 95 % interval and, for each pair, the paired difference with its 95 % interval
    (:class:`SpreadComparison`). Set ``i``'s estimate equals ``evaluate_spread(model, seed_sets[i], runs=runs,
    seed=seed)``."""
    _check_model(model)
    sets = [check_seeds(model, s) for s in seed_sets]
    if not sets:
        raise ValueError("seed_sets must hold at least one seed set")
    if not isinstance(runs, (int, np.integer)) or runs < 1:
        raise ValueError(f"runs must be an integer >= 1, not {runs!r}")
    _check_seed(seed)
    if resolve_backend(backend) != "gpu":
        return compare_spreads_cpu(model, sets, runs=runs, seed=seed)
    from ..gpu.influence_max import compare_spreads as twin

    return twin(model, sets, runs=runs, seed=seed, backend="gpu")


def influence_max(
    model: ICModel,
    *,
    k: int = 50,
    method: str = "imm",
    eps: float = 0.1,
    ell: float = 1.0,
    seed: int = 0,
    scores: np.ndarray | None = None,
    snapshots: int = 200,
    backend: str = "auto",
    max_sets: int | None = None,
    stop: Callable[[], object] | None = None,
) -> IMResult:
    """The K seeds of ``method`` (:data:`METHODS`) with each one's marginal gain (docs/influence_max.md).
    ``max_sets`` and ``stop`` bound IMM's RR sets as in :func:`imm_sample_size` (``stop`` is also called between
    chunks of node selection's sets, and between IMGPU's snapshots)."""
    _check_model(model)
    check_k(k)
    _check_eps_ell(eps, ell)
    _check_seed(seed)
    check_max_sets(max_sets)
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, not {method!r}")
    if method == "influence":
        scores = _check_scores(model, scores)
    if not isinstance(snapshots, (int, np.integer)) or snapshots < 1:
        raise ValueError(f"snapshots must be an integer >= 1, not {snapshots!r}")
    if resolve_backend(backend) != "gpu":
        return influence_max_cpu(
            model, k=k, method=method, eps=eps, ell=ell, seed=seed, scores=scores, snapshots=snapshots,
            max_sets=max_sets, stop=stop,
        )  # fmt: skip
    from ..gpu.influence_max import influence_max as twin

    return twin(
        model, k=k, method=method, eps=eps, ell=ell, seed=seed, scores=scores, snapshots=snapshots, backend="gpu",
        max_sets=max_sets, stop=stop,
    )  # fmt: skip


def _check_scores(model: ICModel, scores) -> np.ndarray:
    if scores is None:
        raise ValueError("scores: method 'influence' needs one score per node")
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != (model.n_nodes,) or not np.all(np.isfinite(s)):
        raise ValueError(f"scores must be finite, one per node ({model.n_nodes}), not shape {s.shape}")
    return s


# --------------------------------------------------------------------------------------------------------------
# CPU reference
# --------------------------------------------------------------------------------------------------------------


def rr_sets_cpu(model: ICModel, *, seed: int = 0, start: int = 0, stop: int = 0, stream: int = 0) -> RRSets:
    g = model.graph
    n = g.n_nodes
    if n == 0 or stop == start:
        return RRSets(np.zeros(stop - start + 1, np.int64), np.zeros(0, np.int32), seed, stream, start, 0)
    if model.total_weight <= 0:
        raise ValueError("weights: every node weighs 0, so there is no root to draw an RR set from")
    base = np.uint64(base_key(seed, stream))
    thr = model.threshold_array()
    cumw = model.cumulative_weights()
    blocks = [(a, min(a + BLOCK, stop)) for a in range(start, stop, BLOCK)]
    threads = min(_threads(), len(blocks))
    scratch = [(np.full(n, -1, np.int64), np.empty(n, np.int32)) for _ in range(threads)]
    free = list(range(threads))

    def block(ab):
        slot = free.pop()
        try:
            mark, queue = scratch[slot]
            with np.errstate(over="ignore"):  # uint64 arithmetic wraps by design (the pure-Python fallback warns)
                return kern.rr_block(
                    g.indptr, g.indices, thr, model.uniform, cumw, model.unit_weights, base, ab[0], ab[1], mark, queue
                )
        finally:
            free.append(slot)

    if threads == 1:
        parts = [block(ab) for ab in blocks]
    else:
        with ThreadPoolExecutor(threads) as pool:
            parts = list(pool.map(block, blocks))
    sizes = np.concatenate([np.diff(p[0]) for p in parts])
    indptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    nodes = np.concatenate([p[1] for p in parts])
    return RRSets(indptr, nodes, seed, stream, start, int(sum(p[2] for p in parts)))


def select_seeds_cpu(model: ICModel, rr: RRSets, *, k: int = 50) -> Selection:
    chosen, newly = kern.greedy_cover(rr.indptr, rr.nodes, model.n_nodes, k)
    return selection_from_counts(chosen, newly, rr.count, model.total_weight)


def imm_sample_size_cpu(
    model: ICModel,
    *,
    k: int = 50,
    eps: float = 0.1,
    ell: float = 1.0,
    seed: int = 0,
    max_sets: int | None = None,
    stop: Callable[[], object] | None = None,
) -> ImmSize:
    pool: list[RRSets] = []

    def generate(a: int, b: int) -> int:
        pool.append(rr_sets_cpu(model, seed=seed, start=a, stop=b, stream=STREAM_SAMPLING))
        return len(pool[-1].nodes)

    def covered(kk: int) -> int:
        rr = merge_rr_sets(pool)
        pool[:] = [rr]
        return int(kern.greedy_cover(rr.indptr, rr.nodes, model.n_nodes, kk)[1].sum())

    return imm_sampling(model, k, eps, ell, generate, covered, max_sets=max_sets, stop=stop)


def rr_sets_chunked_cpu(
    model: ICModel, *, seed: int, start: int, stop: int, stream: int, guard: Callable[[], object] | None = None
) -> RRSets:
    """:func:`rr_sets_cpu` over ``[start, stop)`` in chunks of :data:`SAMPLING_CHUNK` sets, ``guard()`` called
    between two (it may raise): the same sets as one call."""
    parts = []
    for a in range(start, max(stop, start + 1), SAMPLING_CHUNK):
        if guard is not None and parts:
            guard()
        parts.append(rr_sets_cpu(model, seed=seed, start=a, stop=min(stop, a + SAMPLING_CHUNK), stream=stream))
    return merge_rr_sets(parts) if len(parts) > 1 else parts[0]


def evaluate_spread_cpu(model: ICModel, seeds: np.ndarray, *, runs: int = 20000, seed: int = 1) -> SpreadEstimate:
    return normal_ci(_spread_runs_cpu(model, [seeds], runs, seed)[0], seed)


def compare_spreads_cpu(model: ICModel, seed_sets: list, *, runs: int = 20000, seed: int = 1) -> SpreadComparison:
    return paired_comparison(_spread_runs_cpu(model, seed_sets, runs, seed), seed)


def _spread_runs_cpu(model: ICModel, seed_sets: list, runs: int, seed: int) -> np.ndarray:
    """float64[len(seed_sets), runs]: each set's spread in worlds ``0..runs-1`` of (``seed``, stream 2). A world's
    coins depend on (run, edge) only, so every set meets the same live edges in run r."""
    g = model.graph
    n = g.n_nodes
    out = np.zeros((len(seed_sets), runs))
    if n == 0:
        return out
    t_indptr, t_indices, perm = transpose(g)
    base = np.uint64(base_key(seed, STREAM_EVALUATE))
    thr = model.threshold_array()
    blocks = [(a, min(a + 256, runs)) for a in range(0, runs, 256)]
    threads = min(_threads(), len(blocks))
    scratch = [(np.full(n, -1, np.int64), np.empty(n, np.int64)) for _ in range(threads)]
    free = list(range(threads))
    for row, seeds in enumerate(seed_sets):
        if len(seeds) == 0:
            continue
        seeds64 = np.asarray(seeds, dtype=np.int64)
        for mark, _ in scratch:
            mark.fill(-1)  # run indices repeat across sets

        def block(ab, seeds64=seeds64):
            slot = free.pop()
            try:
                mark, queue = scratch[slot]
                with np.errstate(over="ignore"):
                    return kern.mc_block(
                        t_indptr, t_indices, perm, thr, model.uniform, model.weights, model.unit_weights, seeds64,
                        base, ab[0], ab[1], mark, queue,
                    )  # fmt: skip
            finally:
                free.append(slot)

        if threads == 1:
            parts = [block(ab) for ab in blocks]
        else:
            with ThreadPoolExecutor(threads) as pool:
                parts = list(pool.map(block, blocks))
        out[row] = np.concatenate(parts)
    return out


def influence_max_cpu(
    model: ICModel,
    *,
    k: int = 50,
    method: str = "imm",
    eps: float = 0.1,
    ell: float = 1.0,
    seed: int = 0,
    scores: np.ndarray | None = None,
    snapshots: int = 200,
    max_sets: int | None = None,
    stop: Callable[[], object] | None = None,
) -> IMResult:
    t0 = time.perf_counter()
    params = _params(model, k, method, eps, ell, seed, snapshots)
    if method == "imm":
        size = imm_sample_size_cpu(model, k=k, eps=eps, ell=ell, seed=seed, max_sets=max_sets, stop=stop)
        rr = rr_sets_chunked_cpu(model, seed=seed, start=0, stop=size.theta, stream=STREAM_SELECTION, guard=stop)
        sel = select_seeds_cpu(model, rr, k=k)
        return _result(model, method, k, sel.nodes, sel.gains, t0, "cpu", params, rr_sets=size.theta, size=size)
    if method == "imgpu":
        nodes, gains, notes = imgpu_cpu(model, k=k, snapshots=snapshots, seed=seed, stop=stop)
        res = _result(model, method, k, nodes, gains, t0, "cpu", params, snapshots=snapshots)
        res.notes.extend(notes)
        return res
    nodes = baseline_seeds(model, k=k, method=method, seed=seed, scores=scores)
    rr = rr_sets_cpu(model, seed=seed, start=0, stop=BASELINE_RR_SETS, stream=STREAM_SELECTION)
    newly = kern.cover_in_order(rr.indptr, rr.nodes, model.n_nodes, nodes)
    gains = newly * (model.total_weight / rr.count)
    return _result(model, method, k, nodes, gains, t0, "cpu", params, rr_sets=rr.count)


def _params(model: ICModel, k, method, eps, ell, seed, snapshots) -> dict:
    out = {"method": method, "k": int(k), "seed": int(seed), "model": "ic", "probabilities": model.kind}
    if model.p is not None:
        out["p"] = model.p
    if method == "imm":
        out.update(eps=float(eps), ell=float(ell))
    if method == "imgpu":
        out["snapshots"] = int(snapshots)
    return out


def _result(model, method, k, nodes, gains, t0, backend, params, *, rr_sets=0, size=None, snapshots=0) -> IMResult:
    nodes = np.asarray(nodes, dtype=np.int64)
    gains = np.asarray(gains, dtype=np.float64)
    curve = np.cumsum(gains)
    return IMResult(
        method=method,
        k=int(k),
        nodes=nodes,
        user_ids=model.graph.ids[nodes],
        gains=gains,
        curve=curve,
        estimate=float(curve[-1]) if len(curve) else 0.0,
        rr_sets=int(rr_sets),
        sampling_rr_sets=size.sampling_rr_sets if size else 0,
        lower_bound=size.lower_bound if size else float("nan"),
        snapshots=int(snapshots),
        seconds=time.perf_counter() - t0,
        backend=backend,
        params=params,
    )


def baseline_seeds(model: ICModel, *, k: int, method: str, seed: int, scores: np.ndarray | None) -> np.ndarray:
    """Top min(k, n) by followers (``degree``) or by ``scores`` (``influence``), ties by node index; or
    min(k, n) distinct nodes drawn with ``seed`` (``random``). Shared by both engines (it is not the work)."""
    n = model.n_nodes
    kk = min(k, n)
    idx = np.arange(n)
    if method == "degree":
        return np.lexsort((idx, -model.graph.in_degree))[:kk].astype(np.int64)
    if method == "influence":
        return np.lexsort((idx, -np.asarray(scores, dtype=np.float64)))[:kk].astype(np.int64)
    if method == "random":
        return np.random.default_rng(seed).choice(n, size=kk, replace=False).astype(np.int64)
    raise ValueError(f"method {method!r} is not a baseline")


# --------------------------------------------------------------------------------------------------------------
# IMGPU's bottom-up traversal (CPU)
# --------------------------------------------------------------------------------------------------------------


def imgpu_cpu(
    model: ICModel, *, k: int, snapshots: int, seed: int, stop: Callable[[], object] | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """IMGPU (Liu et al., Alg. 2): R live-edge snapshots, each condensed to a DAG of its strongly connected
    components (a component weighs the sum of its nodes' weights); then K rounds, each sweeping every snapshot
    bottom-up by level to get every node's marginal reach at once (eq. 1), picking the node with the largest
    mean over snapshots (ties: smallest index) and covering its reach. overlap() is exact (merged reach lists)
    while a snapshot's lists fit :data:`EXACT_ENTRIES`, else the snapshot uses bottom-k sketches. ``stop`` is
    called between snapshots and between rounds (it may raise: the snapshots are held in memory together)."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import connected_components

    g = model.graph
    n, m = g.n_nodes, g.n_edges
    thr = model.threshold_array()
    base = base_key(seed, STREAM_SNAPSHOTS)
    src = np.repeat(np.arange(n, dtype=np.int64), g.out_degree)  # the follower of each edge
    snaps = []
    for r in range(snapshots):
        if stop is not None and r:
            stop()
        key = np.uint64(mix64(base + (r + 1) * 0x9E3779B97F4A7C15))
        with np.errstate(over="ignore"):
            live = kern.live_mask(m, thr, model.uniform, key)
        # influence direction: followee -> follower
        a, b = g.indices[live].astype(np.int64), src[live]
        adj = csr_array((np.ones(len(a), np.int8), (a, b)), shape=(n, n))
        nc, labels = connected_components(adj, directed=True, connection="strong")
        labels = canonical_labels(labels.astype(np.int64), nc)
        cw = np.bincount(labels, weights=model.weights, minlength=nc)
        ca, cb = labels[a], labels[b]
        keep = ca != cb
        keys = unique(ca[keep] * nc + cb[keep])
        dag_ptr = np.zeros(nc + 1, dtype=np.int64)
        np.cumsum(np.bincount(keys // nc, minlength=nc), out=dag_ptr[1:])
        dag_idx = (keys % nc).astype(np.int64)
        order, _level = kern.bottom_up_order(dag_ptr, dag_idx, nc)
        ranks = None
        snaps.append([labels, cw, dag_ptr, dag_idx, order, np.zeros(nc, np.bool_), ranks, r])
    chosen = []
    gains = []
    sketched = set()
    for _ in range(min(k, n)):
        if stop is not None:
            stop()
        total = np.zeros(n)
        for s in snaps:
            labels, cw, dag_ptr, dag_idx, order, covered, ranks, r = s
            reach, ok = (
                (None, False)
                if r in sketched
                else kern.reach_exact(dag_ptr, dag_idx, order, cw, covered, EXACT_ENTRIES)
            )
            if not ok:
                sketched.add(r)
                if ranks is None:
                    rng = np.random.default_rng([seed, r])
                    with np.errstate(divide="ignore"):
                        ranks = rng.exponential(size=len(cw)) / cw  # rate = weight: min over merged nodes stays Exp
                    s[6] = ranks
                reach = kern.reach_sketch(dag_ptr, dag_idx, order, cw, covered, ranks, SKETCH_K)
            gain = reach[labels]
            gain[covered[labels]] = 0.0
            total += gain
        if chosen:
            total[np.asarray(chosen)] = -1.0
        best = int(np.argmax(total))
        chosen.append(best)
        gains.append(max(total[best], 0.0) / snapshots)
        for s in snaps:
            kern.cover_from(s[2], s[3], s[5], s[0][best])
    notes = [
        f"imgpu: {snapshots} live-edge snapshots; overlap() exact in {snapshots - len(sketched)}, "
        f"bottom-{SKETCH_K} sketches in {len(sketched)}"
    ]
    return np.asarray(chosen, dtype=np.int64), np.asarray(gains), notes


def canonical_labels(labels: np.ndarray, nc: int) -> np.ndarray:
    """Components renumbered by their smallest node (component 0 holds node 0): the numbering no longer depends
    on the SCC algorithm, so the GPU twin's labels (and the sketches' ranks, drawn per component) are these."""
    mins = np.full(nc, len(labels), dtype=np.int64)
    np.minimum.at(mins, labels, np.arange(len(labels), dtype=np.int64))
    relabel = np.empty(nc, dtype=np.int64)
    relabel[np.argsort(mins)] = np.arange(nc, dtype=np.int64)
    return relabel[labels]


# --------------------------------------------------------------------------------------------------------------
# Counts for the estimated probabilities
# --------------------------------------------------------------------------------------------------------------


def exposure_counts(g: Graph, graphs) -> tuple[np.ndarray, np.ndarray]:
    """(exposures, retweets), int64[m] along ``g``'s follow edges, from computed cascades (a
    :class:`compute.structures.SpreadingGraphs`): each participation of an account in a cascade exposes each of
    its followers once; a spreading edge "f got the tweet from u" is a retweet along f -> u."""
    c = graphs.cascades
    idx = g.index_of(c.user_ids)
    part = np.bincount(idx[idx >= 0], minlength=g.n_nodes)
    exposures = part[g.indices].astype(np.int64)
    pos = edge_positions(g, c.user_ids[graphs.edge_src], c.user_ids[graphs.edge_dst])
    retweets = np.bincount(pos[pos >= 0], minlength=g.n_edges).astype(np.int64)
    # a retweet without a recorded exposure (a participation counted under another id) cannot exceed exposures
    return exposures, np.minimum(retweets, exposures)
