"""What a CPU reference, its GPU twin and their dispatcher share: result types and the policies applied to them.

An algorithm lives on three floors (docs/adding-an-algorithm.md): ``compute/algorithms/<name>.py`` holds the CPU
reference and the one public dispatcher, ``compute/gpu/<name>.py`` the CuPy twin. The twin must not import the CPU
module (that module imports the twin to dispatch: an import loop), so what both need sits here, beside the data
structures: the result types, and the policies that are the same whichever engine ran.

A twin computes what fits on its device and names what it left undone in the result's ``deferred``; the
dispatcher, the only code that chooses where work runs, completes it on the CPU reference (and records that
it did, in ``cpu_fallback``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .structures import Cascades, SpreadingGraphs

__all__ = ["BackwardResult", "InfluenceResult", "apply_cycle_policy", "complete_backward", "complete_forward"]


def _no_cascades() -> np.ndarray:
    return np.zeros(0, np.int64)


@dataclass(eq=False)
class BackwardResult:
    """``influence[i]`` is I_t(v) of global node ``i`` (NaN in rejected cascades)."""

    influence: np.ndarray
    cyclic: np.ndarray = field(default_factory=_no_cascades)  # cascade indices
    rejected: np.ndarray = field(default_factory=_no_cascades)  # subset of cyclic
    dropped_edges: int = 0
    cyclic_tweet_ids: list[int] = field(default_factory=list)
    rejected_tweet_ids: list[int] = field(default_factory=list)
    #: cascades the GPU could not hold, run on the CPU reference instead (GPU backend only)
    cpu_fallback: np.ndarray = field(default_factory=_no_cascades)
    cpu_fallback_tweet_ids: list[int] = field(default_factory=list)
    #: cascades a GPU twin left undone (too large for the device): their ``influence`` is not written. The
    #: dispatcher runs them on the CPU and empties this; a result it returns never has any.
    deferred: np.ndarray = field(default_factory=_no_cascades)

    def lines(self, max_ids: int = 10) -> list[str]:
        out = []

        def ids(xs):
            more = f" and {len(xs) - max_ids} more" if len(xs) > max_ids else ""
            return ", ".join(str(x) for x in xs[:max_ids]) + more

        if len(self.cyclic):
            out.append(
                f"{len(self.cyclic)} spreading graph(s) contain cycles (tweets {ids(self.cyclic_tweet_ids)}); "
                f"{self.dropped_edges} edge(s) that do not go backward in time were dropped"
            )
        if len(self.rejected):
            out.append(
                f"{len(self.rejected)} cyclic spreading graph(s) carry no times and were rejected "
                f"(tweets {ids(self.rejected_tweet_ids)})"
            )
        if len(self.cpu_fallback):
            out.append(
                f"{len(self.cpu_fallback)} cascade(s) too large for the GPU ran on the CPU "
                f"(tweets {ids(self.cpu_fallback_tweet_ids)})"
            )
        return out


Solve = Callable[[SpreadingGraphs], BackwardResult]


def apply_cycle_policy(graphs: SpreadingGraphs, cyclic: np.ndarray, result: BackwardResult, solve: Solve) -> None:
    """Apply the cycle policy (docs/measure.md) to cascades ``cyclic`` and write their values into ``result``.

    ``solve`` runs the backward phase on the repaired (acyclic) subset: each engine passes itself, so the
    policy is the same whichever engine found the cycles."""
    c = graphs.cascades
    result.cyclic = cyclic
    result.cyclic_tweet_ids = c.tweet_ids[cyclic].tolist()
    if c.times is None:
        result.rejected = cyclic
        result.rejected_tweet_ids = result.cyclic_tweet_ids
        for t in cyclic:
            result.influence[c.node_offsets[t] : c.node_offsets[t + 1]] = np.nan
        return
    # Rebuild the cyclic cascades as a small batch keeping only edges that go backward in time.
    sub = graphs.subset(cyclic)
    s, d = sub.edge_src, sub.edge_dst
    keep = sub.cascades.times[s] > sub.cascades.times[d]
    result.dropped_edges = int(len(keep) - keep.sum())
    e_casc = np.repeat(np.arange(sub.n_cascades), np.diff(sub.edge_offsets))
    counts = np.bincount(e_casc[keep], minlength=sub.n_cascades)
    off = np.zeros(sub.n_cascades + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    fixed = solve(sub.with_edges(off, s[keep], d[keep]))
    assert not len(fixed.cyclic), "edges strictly backward in time cannot form a cycle"
    for k, t in enumerate(cyclic):
        lo, hi = c.node_offsets[t], c.node_offsets[t + 1]
        slo = sub.cascades.node_offsets[k]
        result.influence[lo:hi] = fixed.influence[slo : slo + (hi - lo)]
    if len(fixed.deferred):  # a repaired cascade still too large for the device: the dispatcher finishes it
        result.deferred = np.union1d(result.deferred, cyclic[fixed.deferred])


@dataclass(eq=False)
class InfluenceResult:
    """Both phases of the influence measure for one set of cascades (:func:`compute.algorithms.influence`).

    ``backward`` is ``None`` only in a GPU twin's result whose forward phase left cascades undone
    (``graphs.deferred``): the dispatcher then completes the forward phase on the CPU and runs the backward phase
    itself. A result the dispatcher returns always has both."""

    graphs: SpreadingGraphs
    backward: BackwardResult | None

    @property
    def influence(self) -> np.ndarray:
        if self.backward is None:
            raise ValueError("the backward phase has not run on these graphs")
        return self.backward.influence


def complete_backward(graphs: SpreadingGraphs, result: BackwardResult, solve: Solve) -> BackwardResult:
    """Run the cascades a twin deferred with ``solve`` (the CPU reference), write them into ``result`` and
    record them in ``cpu_fallback``; cycles found there are merged into the result's report."""
    which = np.sort(np.asarray(result.deferred, dtype=np.int64))
    if not len(which):
        return result
    c = graphs.cascades
    res = solve(graphs.subset(which))
    pos = 0
    for t in which:
        lo, hi = c.node_offsets[t], c.node_offsets[t + 1]
        result.influence[lo:hi] = res.influence[pos : pos + (hi - lo)]
        pos += hi - lo
    result.deferred = _no_cascades()
    result.cpu_fallback = np.union1d(result.cpu_fallback, which)
    result.cpu_fallback_tweet_ids = c.tweet_ids[result.cpu_fallback].tolist()
    if len(res.cyclic):
        result.cyclic = np.union1d(result.cyclic, which[res.cyclic])
        result.rejected = np.union1d(result.rejected, which[res.rejected])
        result.dropped_edges += res.dropped_edges
        result.cyclic_tweet_ids = c.tweet_ids[result.cyclic].tolist()
        result.rejected_tweet_ids = c.tweet_ids[result.rejected].tolist()
    return result


def complete_forward(
    cascades: Cascades, graphs: SpreadingGraphs, solve: Callable[[Cascades], SpreadingGraphs]
) -> SpreadingGraphs:
    """Compute the cascades a twin deferred with ``solve`` (the CPU reference) and splice their edges into
    ``graphs``, keeping the edges grouped by cascade and, within a cascade, in the order the engine found them."""
    which = np.sort(np.asarray(graphs.deferred, dtype=np.int64))
    if not len(which):
        return graphs
    part = solve(cascades.subset(which))
    n_t = cascades.n_cascades
    have = np.repeat(np.arange(n_t), np.diff(graphs.edge_offsets))
    got = np.repeat(which, np.diff(part.edge_offsets))
    shift = np.repeat(cascades.node_offsets[which] - part.cascades.node_offsets[:-1], np.diff(part.edge_offsets))
    order = np.argsort(np.concatenate([have, got]), kind="stable")
    idx = np.int32 if cascades.n_nodes < 2**31 else np.int64
    src = np.concatenate([graphs.edge_src.astype(np.int64), part.edge_src.astype(np.int64) + shift])[order]
    dst = np.concatenate([graphs.edge_dst.astype(np.int64), part.edge_dst.astype(np.int64) + shift])[order]
    counts = np.diff(graphs.edge_offsets)
    counts[which] = np.diff(part.edge_offsets)
    off = np.zeros(n_t + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    return SpreadingGraphs(cascades, off, src.astype(idx), dst.astype(idx), orphans=graphs.orphans)


# --------------------------------------------------------------------------------------------------------------
# WTF (issue 15): personalized PageRank, circle of trust and Money. The reference is compute/algorithms/wtf.py,
# the twin compute/gpu/wtf.py; both return these types and rank with these helpers, so their lists agree by
# construction wherever their values do.
# --------------------------------------------------------------------------------------------------------------

__all__ += [  # extended here so the WTF section stays in one place
    "BATCH",
    "DEFAULT_EPSILON",
    "DEFAULT_WALKS",
    "WTF_DIRECTIONS",
    "WTF_METHODS",
    "RANK_SLACK",
    "MoneyScores",
    "PageRank",
    "Recommendations",
    "check_epsilon",
    "check_local",
    "push_epsilon",
    "check_walks",
    "check_wtf",
    "circle_of_trust",
    "rank_key",
    "recommendations",
    "walk_adjacency",
]

#: "follows": from an account to the accounts it follows (the paper's); "followers": to its followers
WTF_DIRECTIONS = ("follows", "followers")

#: seeds per block: one sparse matrix x dense block of BATCH seed vectors per iteration
BATCH = 64


@dataclass(eq=False)
class PageRank:
    """Personalized PageRank of each seed: ``values[j]`` is the vector of ``seeds[j]`` over the graph's nodes."""

    seeds: np.ndarray  # int64[k] node indices
    values: np.ndarray  # float64[k, n]
    iterations: np.ndarray  # int64[k]: updates done
    converged: np.ndarray  # bool[k]: L1 change < tol before max_iter
    delta: np.ndarray  # float64[k]: the last L1 change


@dataclass(eq=False)
class MoneyScores:
    """Money on the bipartite graph of a circle (hubs) and the accounts it points to (authorities)."""

    hubs: np.ndarray  # int64 node indices, ascending
    similarity: np.ndarray  # float64, one per hub
    authorities: np.ndarray  # int64 node indices, ascending
    relevance: np.ndarray  # float64, one per authority
    iterations: int
    converged: bool


@dataclass(eq=False)
class Recommendations:
    """Who-to-follow for one seed: its circle of trust and the top relevant (authorities) and similar (hubs)
    accounts, each list by score descending then user id, excluding the seed and the accounts it already links
    to in ``direction``. Accounts are node indices of the graph (``g.ids[...]`` gives their ids)."""

    seed: int
    account: int
    direction: str
    iterations: int
    converged: bool
    delta: float
    money_iterations: int
    money_converged: bool
    circle: np.ndarray
    circle_ppr: np.ndarray
    relevance: np.ndarray
    relevance_score: np.ndarray
    relevance_ppr: np.ndarray
    similarity: np.ndarray
    similarity_score: np.ndarray
    similarity_ppr: np.ndarray

    def to_json(self, ids: np.ndarray) -> dict:
        """The CLI's JSON object; ``ids`` is the graph's ``ids`` (user ids as strings, as the issue asks)."""

        def rows(nodes, key, scores, ppr=None):
            out = []
            for i, node in enumerate(nodes.tolist()):
                row = {"user_id": str(int(ids[node])), key: float(scores[i])}
                if ppr is not None:
                    row["ppr"] = float(ppr[i])
                out.append(row)
            return out

        return {
            "account": str(self.account),
            "direction": self.direction,
            "iterations": self.iterations,
            "converged": self.converged,
            "money_iterations": self.money_iterations,
            "money_converged": self.money_converged,
            "circle": rows(self.circle, "ppr", self.circle_ppr),
            "relevance": rows(self.relevance, "score", self.relevance_score, self.relevance_ppr),
            "similarity": rows(self.similarity, "score", self.similarity_score, self.similarity_ppr),
        }


def _int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _unit(name: str, x) -> None:
    if not isinstance(x, (int, float, np.floating, np.integer)) or isinstance(x, bool) or not 0 < x < 1:
        raise ValueError(f"{name} must be a number strictly between 0 and 1, not {x!r}")


#: how WTF computes the circle of trust's PPR: the power iteration over the graph, the local forward push, or the
#: push followed by random walks from its residual (FORA; ``compute.algorithms.wtf_push``)
WTF_METHODS = ("exact", "push", "fora", "walks")
#: the local methods' defaults: the push threshold per out-edge, and FORA's walks per unit of the residual the
#: push left; measured on the generated `twitter` graph (benchmarks/wtf_push.md)
DEFAULT_EPSILON = 1e-7
DEFAULT_WALKS = 1e6


def check_epsilon(epsilon) -> float:
    """``epsilon`` as a float in (0, 1); ValueError naming it otherwise."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating)) or not 0 < epsilon < 1:
        raise ValueError(f"epsilon must be a number between 0 and 1 (exclusive), not {epsilon!r}")
    return float(epsilon)


def check_walks(walks) -> float:
    """``walks`` (per unit of residual) as a float from 1 to 1e9; ValueError naming it otherwise."""
    if isinstance(walks, bool) or not isinstance(walks, (int, float, np.floating)) or not 1 <= walks <= 1e9:
        raise ValueError(f"walks must be a number from 1 to 1e9 (walks per unit of residual), not {walks!r}")
    return float(walks)


def check_local(method, epsilon, walks) -> float | None:
    """None for the exact method; for a local one (``method``, ``epsilon`` and ``walks`` validated, each named
    when wrong) the walks per unit of residual it takes: 0 for the plain push; for ``walks`` (no push: the whole
    unit of residual at the seed) the walks from the seed."""
    if method not in WTF_METHODS:
        raise ValueError(f"method must be one of {', '.join(WTF_METHODS)}, not {method!r}")
    if method == "exact":
        return None
    if method == "walks":
        return check_walks(walks)
    check_epsilon(epsilon)
    return check_walks(walks) if method == "fora" else 0.0


def push_epsilon(method: str, epsilon: float | None) -> float | None:
    """The push threshold a local method runs with: None for ``walks``, which does not push."""
    return None if method == "walks" else epsilon


def check_wtf(
    g,
    seeds,
    *,
    direction: str,
    damping: float,
    tol: float,
    max_iter: int,
    circle: int = 1,
    top: int = 0,
    alpha: float = 0.5,
) -> np.ndarray:
    """Validate the arguments shared by both engines (ValueError naming the parameter); ``seeds`` as int64[k]."""
    from .graphs import Graph

    if not isinstance(g, Graph):
        raise ValueError(f"g must be a compute.graphs.Graph, not {type(g).__name__}")
    if not g.directed:
        raise ValueError("g must be directed (the follower graph), not the undirected view")
    if direction not in WTF_DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(WTF_DIRECTIONS)}, not {direction!r}")
    s = np.atleast_1d(np.asarray(seeds))
    if s.ndim != 1 or (len(s) and not np.issubdtype(s.dtype, np.integer)):
        raise ValueError("seeds must be a node index or a 1-D sequence of node indices")
    s = s.astype(np.int64)
    if len(s) and (s.min() < 0 or s.max() >= g.n_nodes):
        bad = s[(s < 0) | (s >= g.n_nodes)][0]
        raise ValueError(f"seeds must be node indices 0..{g.n_nodes - 1}, not {bad}")
    _unit("damping", damping)
    _unit("alpha", alpha)
    if not isinstance(tol, (int, float, np.floating)) or isinstance(tol, bool) or not tol > 0:
        raise ValueError(f"tol must be a positive number, not {tol!r}")
    if not _int(max_iter) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, not {max_iter!r}")
    if not _int(circle) or circle < 1:
        raise ValueError(f"circle must be an integer >= 1, not {circle!r}")
    if not _int(top) or top < 0:
        raise ValueError(f"top must be an integer >= 0, not {top!r}")
    return s


def walk_adjacency(g, direction: str) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """``((out_indptr, out_indices), (in_indptr, in_indices))`` of the walk in ``direction``: row u of the first
    lists where u's walk goes (whom u follows, or u's followers), row v of the second the accounts whose walk
    reaches v (what a pull-style iteration sums over). The reverse CSR is :func:`compute.graphs.transpose`,
    cached on ``g``."""
    from .graphs import transpose

    t_indptr, t_indices, _ = transpose(g)
    forward, backward = (g.indptr, g.indices), (t_indptr, t_indices)
    return (forward, backward) if direction == "follows" else (backward, forward)


#: the ranks compare values rounded to 40 significant bits (``rank_key``): the engines add in different orders,
#: so values that are equal in exact arithmetic (accounts in the same position, which social graphs have in
#: thousands) can differ in their last bits, and ranking the raw values would break such ties differently
#: per engine. A candidate filter must let through values down to ``1 - RANK_SLACK`` times its threshold.
RANK_SLACK = 2.0**-39


def rank_key(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to 40 significant bits: what the rankings compare (ties then go by user id)."""
    mantissa, exponent = np.frexp(np.asarray(values, dtype=np.float64))
    return np.ldexp(np.round(mantissa * 2.0**40) / 2.0**40, exponent)


def _ranked(nodes: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Order of ``nodes`` by :func:`rank_key` descending, then node index (= user id: ids are ascending)."""
    return np.lexsort((nodes, -rank_key(values)))


def circle_of_trust(
    nodes: np.ndarray, ppr: np.ndarray, seed: int, seed_ppr: float, circle: int
) -> tuple[np.ndarray, np.ndarray]:
    """The circle of trust from candidates: the seed plus the ``circle - 1`` other accounts of highest PPR > 0,
    sorted by PPR (:func:`rank_key`) descending then user id. ``nodes``/``ppr`` must hold every account whose PPR
    is at least ``1 - RANK_SLACK`` times the ``(circle - 1)``-th largest among the non-seed accounts (a superset
    is fine: the engines pass what a threshold lets through, the seed included or not)."""
    nodes = np.asarray(nodes, dtype=np.int64)
    ppr = np.asarray(ppr, dtype=np.float64)
    keep = (nodes != seed) & (ppr > 0)
    nodes, ppr = nodes[keep], ppr[keep]
    take = _ranked(nodes, ppr)[: circle - 1]
    members = np.concatenate([[seed], nodes[take]]).astype(np.int64)
    values = np.concatenate([[seed_ppr], ppr[take]]).astype(np.float64)
    order = _ranked(members, values)
    return members[order], values[order]


class _Excluded:
    """Membership in a seed's excluded accounts (the seed and its row): a sorted search for a short row, a table
    of flags for a long one (a hub's row can hold millions of followers, which ``np.isin`` sorted for each call)."""

    TABLE_FROM = 4096

    def __init__(self, excluded: np.ndarray) -> None:
        self.nodes = np.asarray(excluded, dtype=np.int64)
        if len(self.nodes) >= self.TABLE_FROM:
            self.table = np.zeros(int(self.nodes.max()) + 1, dtype=bool)
            self.table[self.nodes] = True
        else:
            self.table = None
            self.nodes = np.unique(self.nodes)

    def __call__(self, nodes: np.ndarray) -> np.ndarray:
        """Whether each of ``nodes`` is excluded."""
        if self.table is not None:
            inside = nodes < len(self.table)
            hit = np.zeros(len(nodes), dtype=bool)
            hit[inside] = self.table[nodes[inside]]
            return hit
        if not len(self.nodes):
            return np.zeros(len(nodes), dtype=bool)
        at = np.minimum(np.searchsorted(self.nodes, nodes), len(self.nodes) - 1)
        return self.nodes[at] == nodes


def _top(nodes, scores, excluded, top, ppr_of) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``top`` nodes of highest score > 0 not in ``excluded`` (an array, or a function telling which of given
    nodes are excluded, as :class:`_Excluded`), ranked (:func:`_ranked`), with their scores and PPR. Only what can
    reach the top is ranked: the scores at least ``1 - RANK_SLACK`` times the ``reach``-th largest, when ``top``
    accounts not excluded score at least that ``reach``-th largest (none below the cut can then outrank them).
    ``reach`` is first a little above ``top``; where the excluded are too many among the best (a hub's millions of
    followers), every excluded account is left out first and the cut is made among the rest."""
    if not callable(excluded):
        excluded = _Excluded(excluded)
    nodes, scores = nodes[scores > 0], scores[scores > 0]
    reach = 2 * top + 256
    if len(scores) > 2 * reach:
        kth = np.partition(scores, len(scores) - reach)[len(scores) - reach]
        near = scores >= kth * (1.0 - RANK_SLACK)
        near_nodes, near_scores = nodes[near], scores[near]
        keep = ~excluded(near_nodes)
        if np.count_nonzero(keep & (near_scores >= kth)) >= top:
            return _ranked_top(near_nodes[keep], near_scores[keep], top, ppr_of)
    keep = ~excluded(nodes)
    nodes, scores = nodes[keep], scores[keep]
    if len(scores) > 2 * reach:  # nothing is excluded now: the top-th largest score makes the cut
        kth = np.partition(scores, len(scores) - top)[len(scores) - top]
        near = scores >= kth * (1.0 - RANK_SLACK)
        nodes, scores = nodes[near], scores[near]
    return _ranked_top(nodes, scores, top, ppr_of)


def _ranked_top(nodes, scores, top, ppr_of) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    take = _ranked(nodes, scores)[:top]
    nodes = nodes[take]
    return nodes, scores[take], ppr_of(nodes)


def recommendations(
    g,
    *,
    seed: int,
    direction: str,
    ppr_stats: tuple[int, bool, float],
    circle: tuple[np.ndarray, np.ndarray],
    money: MoneyScores,
    linked: np.ndarray | Callable[[np.ndarray], np.ndarray],
    top: int,
    ppr_of: Callable[[np.ndarray], np.ndarray],
) -> Recommendations:
    """Assemble one seed's :class:`Recommendations`: both top-``top`` lists exclude the seed and ``linked``, the
    accounts it links to in ``direction`` (its row of :func:`walk_adjacency`), given as that row or as a function
    telling which of given nodes are the seed or in it (the GPU twin asks its device); ``ppr_of(nodes)`` gives
    their PPR."""
    if callable(linked):
        excluded = linked
    else:
        excluded = _Excluded(np.concatenate([[seed], np.asarray(linked, dtype=np.int64)]))
    rel = _top(money.authorities, money.relevance, excluded, top, ppr_of)
    sim = _top(money.hubs, money.similarity, excluded, top, ppr_of)
    iterations, converged, delta = ppr_stats
    return Recommendations(
        seed=int(seed),
        account=int(g.ids[seed]),
        direction=direction,
        iterations=int(iterations),
        converged=bool(converged),
        delta=float(delta),
        money_iterations=int(money.iterations),
        money_converged=bool(money.converged),
        circle=circle[0],
        circle_ppr=circle[1],
        relevance=rel[0],
        relevance_score=rel[1],
        relevance_ppr=rel[2],
        similarity=sim[0],
        similarity_score=sim[1],
        similarity_ppr=sim[2],
    )


# --- coordinated accounts (compute.algorithms.coordination; docs/coordination.md) --------------------------------

__all__ += [
    "COORDINATION_METHODS",
    "Coordination",
    "check_coordination",
    "check_retweets",
    "coordination_edges",
    "first_retweets",
    "number_clusters",
]

COORDINATION_METHODS = ("co-retweet", "similarity")
DEFAULT_WINDOW = 60.0
DEFAULT_MIN_COUNT = 2
DEFAULT_MIN_RETWEETS = 10
DEFAULT_THRESHOLD = 0.9
#: a cosine this close below the threshold still makes an edge (floating-point rounding of equal vectors)
COSINE_SLACK = 1e-12


@dataclass
class Coordination:
    """Edges between coordinated accounts, one row per pair, ``a < b`` as strings, sorted by weight descending,
    then ``a``, then ``b`` (as strings); ``cluster``: each edge's cluster (1 = the largest)."""

    method: str
    a: np.ndarray
    b: np.ndarray
    weight: np.ndarray
    cluster: np.ndarray
    params: dict = field(default_factory=dict)
    accounts: int = 0  # accounts the method considered (co-retweet: every retweeter; similarity: those kept)
    tweets: int = 0  # original tweets retweeted
    pairs: int = 0  # pairs counted before the cut (co-retweet: within the window; similarity: sharing a tweet)
    backend: str = "cpu"

    def __len__(self) -> int:
        return len(self.a)

    def rows(self) -> list[dict]:
        """The JSON rows: ``{"a": "<id>", "b": "<id>", "weight": w, "cluster": k}``."""
        w = self.weight.tolist() if self.method == "similarity" else self.weight.astype(np.int64).tolist()
        return [
            {"a": str(a), "b": str(b), "weight": x, "cluster": int(k)}
            for a, b, x, k in zip(self.a.tolist(), self.b.tolist(), w, self.cluster.tolist(), strict=True)
        ]

    def clusters(self) -> list[dict]:
        """Per cluster, in number order: ``{"cluster", "size", "edges", "members"}`` (members as strings, sorted)."""
        out: dict[int, dict] = {}
        for a, b, k in zip(self.a.tolist(), self.b.tolist(), self.cluster.tolist(), strict=True):
            c = out.setdefault(int(k), {"cluster": int(k), "edges": 0, "members": set()})
            c["edges"] += 1
            c["members"].update((str(a), str(b)))
        return [
            {"cluster": k, "size": len(c["members"]), "edges": c["edges"], "members": sorted(c["members"])}
            for k, c in sorted(out.items())
        ]


def check_coordination(method: str, window: float, min_count: int, min_retweets: int, threshold: float) -> None:
    """Refuse parameters outside their meaning, naming the parameter."""
    if method not in COORDINATION_METHODS:
        raise ValueError(f"method: one of {', '.join(COORDINATION_METHODS)}, got {method!r}")
    if not np.isfinite(window) or window < 0:
        raise ValueError(f"window: seconds, at least 0, got {window}")
    if int(min_count) != min_count or min_count < 1:
        raise ValueError(f"min_count: a whole number of tweets, at least 1, got {min_count}")
    if int(min_retweets) != min_retweets or min_retweets < 1:
        raise ValueError(f"min_retweets: a whole number of tweets, at least 1, got {min_retweets}")
    if not np.isfinite(threshold) or not 0 < threshold <= 1:
        raise ValueError(f"threshold: a cosine in (0, 1], got {threshold}")


def check_retweets(tweet, account, time) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The retweets as int64 tweet and account ids and float64 seconds; refused when their lengths differ or a
    time is not finite."""
    tweet = np.asarray(tweet, dtype=np.int64)
    account = np.asarray(account, dtype=np.int64)
    time = np.asarray(time, dtype=np.float64)
    if not (len(tweet) == len(account) == len(time)):
        raise ValueError(f"tweet, account and time differ in length: {len(tweet)}, {len(account)}, {len(time)}")
    if len(time) and not np.isfinite(time).all():
        raise ValueError(f"time: {int((~np.isfinite(time)).sum())} retweet(s) without a finite time")
    return tweet, account, time


def first_retweets(tweet, account, time) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each account's first retweet of each tweet, sorted by (tweet, time, account): tweet ids, account indices
    into the returned ``users`` (their ids, sorted) and times."""
    tweet, account, time = check_retweets(tweet, account, time)
    users, acc = np.unique(account, return_inverse=True)
    acc = acc.astype(np.int64)
    order = np.lexsort((time, acc, tweet))  # stable: equal times keep the rows' order
    tweet, acc, time = tweet[order], acc[order], time[order]
    first = np.ones(len(tweet), bool)
    first[1:] = (tweet[1:] != tweet[:-1]) | (acc[1:] != acc[:-1])
    tweet, acc, time = tweet[first], acc[first], time[first]
    order = np.lexsort((acc, time, tweet))
    return tweet[order], acc[order], time[order], users


def coordination_edges(
    users: np.ndarray, lo: np.ndarray, hi: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Edges between ``users[lo]`` and ``users[hi]`` (``users``: the sorted account ids) as :class:`Coordination`
    keeps them: weights rounded to 12 decimals, ``a < b`` as strings, sorted by weight descending then ids (as
    strings), and each edge's cluster number. Only the accounts are turned into strings, once, to rank them; the
    edges are ordered and clustered by those ranks (integers)."""
    # rounded to 12 decimals: cosines equal in exact arithmetic differ in their last bits between two summation
    # orders (the CPU's and the GPU's products), and the order of the rows must not depend on the engine
    users = np.asarray(users, np.int64)
    w = np.round(np.asarray(w, np.float64), 12)
    by_name = np.argsort(users.astype(str), kind="stable")
    rank = np.empty(len(users), np.int64)
    rank[by_name] = np.arange(len(users))
    ra, rb = rank[np.asarray(lo, np.int64)], rank[np.asarray(hi, np.int64)]
    ra, rb = np.minimum(ra, rb), np.maximum(ra, rb)
    order = np.lexsort((rb, ra, -w))
    ra, rb, w = ra[order], rb[order], w[order]
    return users[by_name[ra]], users[by_name[rb]], w, _clusters_of_ranks(ra, rb, len(users))


def number_clusters(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each edge's connected component, numbered 1, 2, ... by size (accounts) descending, then by the smallest
    member as a string."""
    a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
    users, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
    by_name = np.argsort(users.astype(str), kind="stable")
    rank = np.empty(len(users), np.int64)
    rank[by_name] = np.arange(len(users))
    return _clusters_of_ranks(rank[inv[: len(a)]], rank[inv[len(a) :]], len(users))


def _clusters_of_ranks(ra: np.ndarray, rb: np.ndarray, n: int) -> np.ndarray:
    """Cluster numbers of edges between accounts given by their rank in string order (0 to ``n - 1``)."""
    if not len(ra):
        return np.zeros(0, np.int64)
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    m = coo_matrix((np.ones(len(ra), np.int8), (ra, rb)), shape=(n, n))
    _, comp = connected_components(m, directed=False)
    members = np.unique(np.concatenate([ra, rb]))  # the accounts with an edge, by rank
    size = np.bincount(comp[members], minlength=comp.max() + 1)
    smallest = np.full(len(size), n, np.int64)
    np.minimum.at(smallest, comp[members], members)  # the smallest rank: the smallest member as a string
    live = np.flatnonzero(size)
    ranked = live[np.lexsort((smallest[live], -size[live]))]
    number = np.zeros(len(size), np.int64)
    number[ranked] = np.arange(1, len(ranked) + 1)
    return number[comp[ra]]
