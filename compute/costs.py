"""What an analysis will cost before it runs: worker seconds and the peak memory of its largest batch, from the
graph's size and the run's parameters.

Each model counts the work its algorithm does in the unit that drives it — sources x (nodes + arcs) for
betweenness, RR sets (theta, and the sampling phase's) x their mean size for IMM, iterations x edges x seed
columns for WTF, cascade participants for the influence measure — and multiplies by a per-unit constant measured
on the 2-core development machine (``benchmarks/costs_calibrate.py``; the table of measured against predicted
is in ``benchmarks/costs.md``). The estimate is of **one CPU worker** doing the whole run: a GPU, or several
workers sharing its batches, finish sooner, and the budget is a bound on what a run may ask, not a forecast of
its wall clock.

Nothing here touches a database: the callers (``monitor.services.budgets``) pass what the run's plan loaded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "Estimate",
    "betweenness_cost",
    "coordination_run_cost",
    "imm_pilot",
    "influence_max_cost",
    "influence_measure_cost",
    "wtf_cost",
]

# --- the constants, measured by benchmarks/costs_calibrate.py (benchmarks/costs.md) -------------------------------

#: betweenness: seconds per source x (nodes + arcs of the undirected view), one Brandes pass from one source
BTW_SECONDS_PER_UNIT = 3.0e-8
#: the structural batch (degrees, components, cores, clustering, conversations): seconds per arc + edge
STRUCT_SECONDS_PER_ARC = 2.0e-7
#: communities (networkit's PLM on one thread, its graph build included): seconds per arc of the undirected view
#: (each edge twice), the slowest whole call benchmarks/communities.md measured on an idle machine, rounded up:
#: 49.2 s for 34.2M edges at the `twitter` preset's scale 0.1 on 2026-11-30's host, idle (PLM alone 37 s), where
#: the day before's host took 24.9-28.4 s for the same call. The budget must hold on the slower one; PLM's 16 move
#: iterations (2026-12-02) made the call 1.5x faster on another host, not re-measured on that slow one: kept.
COMMUNITY_SECONDS_PER_ARC = 8.0e-7
#: and the bytes it holds beyond the undirected view, modelled, not measured: the upper CSR handed to networkit
#: (an int64 column and a float64 one per edge: 8 B per arc), networkit's own adjacency of ids and weights both
#: ways (16 B per arc) and a margin of 4 B per arc for the labels and the library's work arrays
COMMUNITY_BYTES_PER_ARC = 28.0
#: coordinated accounts (benchmarks/coordination.md, the 1M-retweet collection on this 2-core machine): seconds per
#: pair the method counts (co-retweet: 71.2M pairs within 60 s in 4.9-10.8 s; similarity: 26.6M pairs sharing a
#: tweet in 1.6-1.7 s: the slower per pair taken) and per retweet read (sorting the first retweets)
COORD_SECONDS_PER_PAIR = 1.5e-7
COORD_SECONDS_PER_RETWEET = 1.0e-6
#: and their memory, modelled from the arrays, not measured: a pair's int64 key and its sort's copy and the
#: edge's two ids and weight (24 B); a retweet's three columns read, their sorted copies and the run's maps (64 B)
COORD_BYTES_PER_PAIR = 24.0
COORD_BYTES_PER_RETWEET = 64.0
#: peak bytes of a network batch beyond the graph and its undirected view — modelled from the arrays the batch
#: holds, not measured (the benchmark's process reused memory it held, so its high-water mark did not move):
#: per arc, the reverse CSR's int32 target and int64 position and clustering's oriented int64 copy (24 B); per
#: node, about ten int64/float64 result arrays and the Brandes arrays of two threads (200 B)
NET_BYTES_PER_ARC = 24.0
NET_BYTES_PER_NODE = 200.0
#: IMM: seconds per RR set and per edge an RR set's reverse search looks at; greedy selection per set member
RR_SECONDS_PER_SET = 2.0e-7
RR_SECONDS_PER_EDGE = 5.0e-8
SELECT_SECONDS_PER_MEMBER = 2.0e-8
#: the Monte-Carlo evaluation: seconds per edge a forward cascade looks at
EVAL_SECONDS_PER_EDGE = 3.0e-8
#: IMGPU's live-edge snapshots: seconds per snapshot x (nodes + edges) to build them, and per pick and snapshot x
#: (nodes + edges) for the K rounds of sweeps
SNAPSHOT_SECONDS_PER_UNIT = 1.0e-8
SNAPSHOT_SECONDS_PER_PICK = 5.0e-9
#: WTF: one PageRank iteration costs (A + B x columns) per edge of the follower graph; Money per circle member
PPR_SECONDS_PER_EDGE = 8.0e-9
PPR_SECONDS_PER_EDGE_COLUMN = 6.0e-9
MONEY_SECONDS_PER_MEMBER_ITER = 1.0e-7
#: WTF's local methods on one CPU thread (benchmarks/wtf_push.md, `twitter` preset at scale 0.1): seconds per
#: unit of the push's work bound 1 / ((1 - d) epsilon) (the slowest median there: 190 ms at epsilon 1e-7), and
#: per step of a FORA walk (walks <= walks per unit x a residual of at most 1, 1 / (1 - d) steps each)
PUSH_SECONDS_PER_BOUND = 3.0e-9
WALK_SECONDS_PER_STEP = 2.0e-7
#: bytes per account of the push's arrays (estimate, residual, two flags, queue, touched)
PUSH_BYTES_PER_NODE = 34
#: the influence measure, end to end on a worker (load, forward + backward, the per-cascade rows, the aggregates):
#: seconds per cascade participant, and peak bytes per participant of a batch (the follower graph the worker keeps
#: included) — from ``benchmarks/web.md``'s 10M-retweet run (compute 511 s for about 10.3M participants, peak RSS
#: 3.06 GB with batches of 1M participants), not from costs_calibrate.py: it needs the database
INFLUENCE_SECONDS_PER_NODE = 5.0e-5
INFLUENCE_BYTES_PER_NODE = 3000.0

#: bytes of one RR set held in memory: its int32 members and its int64 offset
RR_BYTES_PER_MEMBER, RR_BYTES_PER_SET = 4, 8
#: copies of the RR sets the finishing batch of IMM holds at once: the stored parts as read (one copy) and, at its
#: peak, 3.1 to 4.4 copies more for the parts as arrays, their merge and greedy's inverted index (measured with
#: benchmarks/imm_finish_memory.py on this machine); six covers both with a margin
RR_COPIES_AT_FINISH = 6
#: PageRank's L1 change shrinks at least 0.85 times per iteration from at most 2, so it is below 1e-10 after at
#: most 147 iterations whatever the graph (docs/wtf.md): iterations past that are never run
PPR_ITERATIONS_MAX = 147
#: the columns of one WTF block (``compute.algorithms.wtf.BATCH``)
WTF_BLOCK = 64


@dataclass(frozen=True)
class Estimate:
    """A run's estimated cost on one CPU worker: ``seconds`` of work, ``peak_bytes`` of its largest batch, the
    numbers that drive them (``drivers``: sources, nodes, edges, theta, iterations...), the parameter that drives
    the time (``time_param``) and the memory (``memory_param``), and what each would have to be for the run to fit
    a budget (``fit_time(seconds)``, ``fit_memory(bytes)``: None where no value of that parameter fits)."""

    algorithm: str
    seconds: float
    peak_bytes: int
    drivers: dict = field(default_factory=dict)
    time_param: str = ""
    memory_param: str = ""
    #: (parameter value that fits) per budget, computed by the model; kept as callables so the JSON stays plain
    _fit_time: object = field(default=None, repr=False, compare=False)
    _fit_memory: object = field(default=None, repr=False, compare=False)

    def fit_time(self, seconds: float):
        return self._fit_time(seconds) if self._fit_time is not None else None

    def fit_memory(self, nbytes: float):
        return self._fit_memory(nbytes) if self._fit_memory is not None else None

    def as_dict(self) -> dict:
        return {
            "algorithm": self.algorithm,
            "seconds": float(f"{float(self.seconds):.4g}"),
            "peak_bytes": int(self.peak_bytes),
            "drivers": {k: _plain(v) for k, v in self.drivers.items()},
            "time_param": self.time_param,
            "memory_param": self.memory_param,
        }


def _plain(v):
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        return round(float(v), 6)
    return v


# --- betweenness and the structural analyses ---------------------------------------------------------------------


def betweenness_cost(*, nodes: int, edges: int, arcs: int, samples: int, communities: bool = False) -> Estimate:
    """A network run: the structural batch (with ``communities``, their search too) plus betweenness from
    ``sources`` = ``samples`` (0 or at least the nodes: exact, every node a source) on the undirected view of
    ``arcs`` entries (each undirected edge twice); a sampled run's structural batch also runs two more samples for
    the stability indicator."""
    n, m, a = int(nodes), int(edges), int(arcs)
    exact = samples == 0 or samples >= n
    sources = n if exact else int(samples)
    stability = 0 if exact else 2 * int(samples)
    per_source = BTW_SECONDS_PER_UNIT * (n + a)
    community_seconds = COMMUNITY_SECONDS_PER_ARC * a if communities else 0.0
    structure = STRUCT_SECONDS_PER_ARC * (a + m) + community_seconds
    seconds = structure + per_source * (sources + stability)
    graph_bytes = 8 * (n + 1) * 2 + 4 * (m + a) + 8 * n
    peak = graph_bytes + max(NET_BYTES_PER_ARC, COMMUNITY_BYTES_PER_ARC if communities else 0.0) * a
    peak += NET_BYTES_PER_NODE * n

    def fit_time(limit: float):
        # sampled: sources s cost 3 s passes (the run's and the stability indicator's two); the largest that fits
        s = math.floor((limit - structure) / (3 * per_source)) if per_source > 0 else n
        return max(s, 0) if s < n else None  # None: exact fits, no need to lower samples

    return Estimate(
        "network",
        seconds,
        int(peak),
        {
            "sources": sources,
            "nodes": n,
            "edges": m,
            "arcs": a,
            "exact": exact,
            "communities": bool(communities),
            "structure_seconds": structure,
            "communities_seconds": community_seconds,
        },
        time_param="samples",
        memory_param="graph",
        _fit_time=fit_time,
    )


# --- coordinated accounts ----------------------------------------------------------------------------------------


def coordination_run_cost(*, retweets: int, pairs: int, method: str) -> Estimate:
    """A coordination run of ``method`` over ``retweets`` first retweets whose method counts ``pairs`` pairs
    (``compute.algorithms.coordination.coordination_cost``: within the window, or sharing a tweet). The pairs
    drive both: a tweet retweeted by thousands of accounts within a minute makes millions of them."""
    r, p = int(retweets), int(pairs)
    seconds = COORD_SECONDS_PER_RETWEET * r + COORD_SECONDS_PER_PAIR * p
    peak = COORD_BYTES_PER_RETWEET * r + COORD_BYTES_PER_PAIR * p
    return Estimate(
        "coordination",
        seconds,
        int(peak),
        {"retweets": r, "pairs": p, "method": method},
        time_param="window" if method == "co-retweet" else "min_retweets",
        memory_param="window" if method == "co-retweet" else "min_retweets",
    )


# --- influence maximisation -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pilot:
    """What a small sample of RR sets says of a model: the mean members and edges looked at per set, an unbiased
    estimate of the spread of a good seed set (scored on sets that did not choose it), and the edges a forward
    cascade from that set looks at (its members' followers, plus the average account's for the rest it reaches)."""

    sets: int
    mean_size: float
    mean_edges: float
    spread: float
    cascade_edges: float


#: the most work (edges looked at, or members) the pilot may do: on a model where one RR set reaches most of a big
#: audience (p close to 1) it takes fewer sets, so that estimating a run never costs what the run would
PILOT_WORK = 20_000_000


def imm_pilot(model, *, k: int, seed: int, sets: int = 4000) -> Pilot:
    """Measure up to ``sets`` RR sets of ``model`` on the CPU (milliseconds; fewer sets where one set alone is
    big, :data:`PILOT_WORK`): their mean size and work, and the spread of two candidate seed sets — greedy's k
    picks on the first half, and the k accounts with the most followers — scored on the second half (a set is not
    scored on the sets that chose it, so neither score is inflated by the choice); the better of the two stands
    for the spread IMM will find."""
    from .algorithms import influence_max as engine
    from .influence_model import RRSets, merge_rr_sets

    pieces, done, work, step = [], 0, 0, 16
    while done < sets and (work < PILOT_WORK or done < 2):  # chunks doubling until the sets or the work are done
        piece = engine.rr_sets(model, seed=seed, start=done, stop=min(int(sets), done + step), backend="cpu")
        pieces.append(piece)
        work += max(int(piece.edges_touched), len(piece.nodes))
        done, step = piece.stop, step * 2
    rr = merge_rr_sets(pieces) if len(pieces) > 1 else pieces[0]
    half = rr.count // 2
    cut = int(rr.indptr[half])
    a = RRSets(rr.indptr[: half + 1], rr.nodes[:cut], rr.seed, rr.stream, 0)
    b = RRSets(rr.indptr[half:] - cut, rr.nodes[cut:], rr.seed, rr.stream, half)
    sizes = np.diff(rr.indptr)
    followers = np.asarray(model.graph.in_degree, np.int64)
    greedy = np.asarray(engine.select_seeds(model, a, k=k, backend="cpu").nodes, np.int64)
    popular = np.argsort(-followers, kind="stable")[:k]
    set_of = np.repeat(np.arange(b.count), np.diff(b.indptr))
    best = (0.0, greedy)
    for picks in (greedy, popular):
        member = np.zeros(model.n_nodes, dtype=bool)
        member[picks] = True
        covered = len(np.unique(set_of[member[np.asarray(b.nodes, np.int64)]]))
        spread = float(model.total_weight) * covered / b.count
        if spread >= best[0]:
            best = (spread, picks)
    spread, picks = best
    n = max(model.n_nodes, 1)
    reached = spread / float(model.total_weight) * n if model.total_weight > 0 else 0.0
    mean_followers = model.n_edges / n
    cascade = float(followers[picks].sum()) + max(0.0, reached - len(picks)) * mean_followers
    return Pilot(rr.count, float(sizes.mean()), float(rr.edges_touched) / rr.count, spread, cascade)


def _imm_numbers(n: int, k: int, eps: float, ell: float, total_weight: float, lb_fallback: float, spread: float):
    """IMM's theta (upper bound and likely value) and its sampling phase's sets, as ``compute.influence_model``'s
    sampling phase computes them, with the pilot's spread in place of the phase's own greedy estimate."""
    from .influence_model import _log_binomial, imm_theta

    lnn = math.log(max(n, 2))
    ell = ell * (1.0 + math.log(2) / lnn)
    eps_p = math.sqrt(2.0) * eps
    upper = imm_theta(n, k, eps, ell, total_weight, lb_fallback)
    lam_p = (
        (2.0 + 2.0 / 3.0 * eps_p)
        * (_log_binomial(n, k) + ell * lnn + math.log(max(math.log2(max(n, 2)), 1.0)))
        * total_weight
        / eps_p**2
    )
    sampling, lb = 0, lb_fallback
    for i in range(1, max(2, math.ceil(math.log2(max(n, 2))))):
        x = total_weight / 2.0**i
        sampling = math.ceil(lam_p / x)
        if spread >= (1.0 + eps_p) * x:
            lb = max(lb, spread / (1.0 + eps_p))
            break
    likely = min(upper, imm_theta(n, k, eps, ell, total_weight, lb))
    return upper, likely, sampling


def influence_max_cost(
    *,
    nodes: int,
    edges: int,
    total_weight: float,
    top_weights: float,
    k: int,
    eps: float,
    method: str,
    evaluate: int,
    batches: int = 1,
    pilot: Pilot,
    ell: float = 1.0,
    snapshots: int = 200,
    baseline_rr_sets: int = 100_000,
) -> Estimate:
    """A counter-campaign run. IMM: theta RR sets for node selection — at most ``imm_theta`` with IMM's lower
    bound at its fallback, the ``top_weights`` (k largest weights), which sampling only raises; the estimate
    takes the likely theta from the pilot's spread, capped by that bound — plus the sampling phase's sets (every
    batch runs it), greedy selection, and ``evaluate`` Monte-Carlo cascades of the picks and of as many
    baseline accounts. Peak memory: the finishing batch holds every set, :data:`RR_COPIES_AT_FINISH` times."""
    n, m = int(nodes), int(edges)
    set_bytes = RR_BYTES_PER_SET + RR_BYTES_PER_MEMBER * pilot.mean_size
    per_set = RR_SECONDS_PER_SET + RR_SECONDS_PER_EDGE * pilot.mean_edges
    # both evaluations (the picks and as many baseline accounts) run ``evaluate`` forward cascades
    evaluation = 2 * int(evaluate) * EVAL_SECONDS_PER_EDGE * max(pilot.cascade_edges, 1.0)
    model_bytes = 8 * (n + 1) + 4 * m + 16 * m + 8 * n
    drivers: dict = {"nodes": n, "edges": m, "k": k, "mean_rr_set": pilot.mean_size}
    if method == "imm":

        def at(eps_x: float) -> tuple[float, float, tuple[int, int, int]]:
            upper, theta, sampling = _imm_numbers(n, k, eps_x, ell, total_weight, top_weights, pilot.spread)
            seconds = (
                per_set * (theta + batches * sampling)
                + SELECT_SECONDS_PER_MEMBER * (theta + sampling) * pilot.mean_size
                + evaluation
            )
            peak = model_bytes + max(
                RR_COPIES_AT_FINISH * theta * set_bytes,
                sampling * set_bytes + RR_COPIES_AT_FINISH * theta / batches * set_bytes,
            )
            return seconds, peak, (upper, theta, sampling)

        seconds, peak, (upper, theta, sampling) = at(eps)
        drivers.update(theta=theta, theta_bound=upper, sampling_rr_sets=sampling, eps=eps)

        def fit(over) -> float | None:
            # theta falls as 1 / eps^2: the smallest eps (two significant digits, rounded up) whose run fits
            if over(1.0):
                return None
            lo, hi = eps, 1.0
            for _ in range(60):
                mid = math.sqrt(lo * hi)
                lo, hi = (mid, hi) if over(mid) else (lo, mid)
            up = _round_up(hi)
            return up if not over(up) else hi

        return Estimate(
            "influence_max",
            seconds,
            int(peak),
            drivers,
            "eps",
            "eps",
            _fit_time=lambda limit: fit(lambda e: at(e)[0] > limit),
            _fit_memory=lambda limit: fit(lambda e: at(e)[1] > limit),
        )
    if method == "imgpu":
        seconds = snapshots * (n + m) * (SNAPSHOT_SECONDS_PER_UNIT + SNAPSHOT_SECONDS_PER_PICK * k) + evaluation
        # every snapshot's condensation is kept (about three int64 arrays per node; benchmarks/costs.md)
        peak = model_bytes + snapshots * 24 * n
        drivers.update(snapshots=snapshots)
        return Estimate("influence_max", seconds, int(peak), drivers, "k", "k")
    # degree, influence, random: the baseline's RR sets for the gains, then the evaluation
    seconds = per_set * baseline_rr_sets + evaluation
    peak = model_bytes + RR_COPIES_AT_FINISH * baseline_rr_sets * set_bytes
    drivers.update(rr_sets=baseline_rr_sets)
    return Estimate("influence_max", seconds, int(peak), drivers, "evaluate", "evaluate")


def _round_up(x: float) -> float:
    """``x`` rounded up to two significant digits (a suggested eps that surely fits)."""
    if x <= 0:
        return x
    d = 10 ** (math.floor(math.log10(x)) - 1)
    return math.ceil(x / d - 1e-9) * d


# --- who amplifies whom ---------------------------------------------------------------------------------------------


def wtf_cost(
    *,
    nodes: int,
    edges: int,
    seeds: int,
    directions: int,
    circle: int,
    max_iter: int,
    top: int = 20,
    method: str = "exact",
    epsilon: float | None = None,
    walks: float | None = None,
) -> Estimate:
    """A WTF run: per direction, blocks of up to :data:`WTF_BLOCK` seeds; each block's personalized PageRank
    multiplies the follower graph by its columns ``min(max_iter, 147)`` times at most, then Money runs on each
    seed's circle for up to ``max_iter`` iterations. Peak: the graph, its walk and one block's dense columns.
    ``method`` ``push`` or ``fora``: each seed's PPR is the push, bounded by ``1 / ((1 - d) epsilon)`` edge visits
    whatever the graph, plus for ``fora`` at most ``walks`` walks of ``1 / (1 - d)`` steps on average; ``walks``:
    ``walks`` such walks and no push; the peak holds the push's arrays instead of the block."""
    n, m = int(nodes), int(edges)
    iters = min(int(max_iter), PPR_ITERATIONS_MAX)
    blocks = math.ceil(seeds / WTF_BLOCK) if seeds else 0
    members = min(int(circle), n)
    avg_deg = m / n if n else 0.0
    money = int(seeds) * int(max_iter) * MONEY_SECONDS_PER_MEMBER_ITER * members * max(avg_deg, 1.0)
    graph_bytes = 8 * (n + 1) * 2 + 12 * m * 2
    if method == "exact":
        full, rest = divmod(int(seeds), WTF_BLOCK)
        cols = [WTF_BLOCK] * full + ([rest] if rest else [])
        ppr = sum(iters * m * (PPR_SECONDS_PER_EDGE + PPR_SECONDS_PER_EDGE_COLUMN * c) for c in cols)
        ppr_per_seed = iters * m * (PPR_SECONDS_PER_EDGE / WTF_BLOCK + PPR_SECONDS_PER_EDGE_COLUMN)
        width = min(int(seeds), WTF_BLOCK) if seeds else 0
        peak = graph_bytes + 4 * 8 * n * width
    else:
        damping = 0.85
        ppr_per_seed = 0.0 if method == "walks" else PUSH_SECONDS_PER_BOUND / ((1 - damping) * float(epsilon))
        if method in ("fora", "walks"):  # fora: at most walks per unit of a residual below 1; walks: exactly so many
            ppr_per_seed += WALK_SECONDS_PER_STEP * float(walks) / (1 - damping)
        ppr = int(seeds) * ppr_per_seed
        peak = graph_bytes + PUSH_BYTES_PER_NODE * n
    seconds = directions * (ppr + money)
    per_seed = directions * (ppr_per_seed + money / max(seeds, 1))

    def fit_time(limit: float):
        s = math.floor(limit / per_seed) if per_seed > 0 else seeds
        return max(s, 0) if s < seeds else None

    if method != "exact" and seeds <= 1:
        time_param = "epsilon" if method == "push" else "walks"
    else:
        time_param = "max_iter" if max_iter > iters or seeds <= 1 else "seeds"
    drivers = {"seeds": int(seeds), "blocks": blocks, "iterations": iters, "nodes": n, "edges": m}
    return Estimate(
        "wtf",
        seconds,
        int(peak),
        drivers | {"directions": directions, "method": method},
        time_param=time_param,
        memory_param="seeds",
        _fit_time=fit_time,
    )


# --- the influence measure ------------------------------------------------------------------------------------------


def influence_measure_cost(*, cascades: int, nodes: int, largest_batch_nodes: int) -> Estimate:
    """An influence measure run: linear in the cascades' participants; the largest batch's participants bound
    its peak memory."""
    seconds = INFLUENCE_SECONDS_PER_NODE * int(nodes)
    peak = INFLUENCE_BYTES_PER_NODE * int(largest_batch_nodes)
    return Estimate(
        "influence",
        seconds,
        int(peak),
        {"cascades": int(cascades), "nodes": int(nodes), "largest_batch_nodes": int(largest_batch_nodes)},
        time_param="tweets",
        memory_param="tweets",
    )
