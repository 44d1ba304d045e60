"""What the influence-maximisation reference (:mod:`compute.algorithms.influence_max`) and its GPU twin
(:mod:`compute.gpu.influence_max`) share: the Independent Cascade model, the per-edge probability estimator,
the counter-based random numbers that make RR sets and Monte-Carlo runs identical on every engine and split,
IMM's bounds, and the result types. The twin must not import the CPU module (which imports the twin), so this
sits beside :mod:`compute.results` and :mod:`compute.graphs`, NumPy only.

Direction: the graph is the follower graph (:func:`compute.graphs.follower_graph`), an edge ``f -> u`` meaning
"f follows u"; influence flows ``u -> f``. Edge ``e`` (a position in ``graph.indices``) carries ``probs[e]``.

Random numbers (mirrored bit for bit in the CUDA sources of the twin): a run's base key is
``mix64(mix64(seed * GOLDEN + stream + 1) + STREAM_SALT * (stream + 1))``; RR set (or Monte-Carlo run) ``i`` has
the key ``mix64(base + (i + 1) * GOLDEN)``; its root is drawn from ``mix64(key)``; edge ``e`` is live in it iff
``mix64(key ^ ((e + 1) * EDGE_SALT)) >> 32 < threshold[e]`` with ``threshold = round(p * 2**32)``. A coin
depends on (set, edge) only, never on the order edges are looked at, so a sequential BFS on the CPU and a
frontier-parallel one on the GPU reach the same nodes.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .arrays import unique
from .graphs import Graph, check_graph
from .memory import OverMemory

__all__ = [
    "BASELINE_RR_SETS",
    "EDGE_SALT",
    "GOLDEN",
    "METHODS",
    "PROBABILITY_KINDS",
    "STREAM_EVALUATE",
    "STREAM_SAMPLING",
    "STREAM_SELECTION",
    "STREAM_SNAPSHOTS",
    "EdgeEstimate",
    "ICModel",
    "IMResult",
    "ImmSize",
    "RRSetLimitExceeded",
    "RRSets",
    "Selection",
    "SpreadComparison",
    "SpreadEstimate",
    "base_key",
    "check_k",
    "check_range",
    "check_seeds",
    "edge_positions",
    "estimate_edge_probabilities",
    "ic_model",
    "imm_sampling",
    "imm_theta",
    "check_max_sets",
    "merge_rr_sets",
    "mix64",
    "normal_ci",
    "paired_comparison",
    "split_range",
    "thresholds",
]

PROBABILITY_KINDS = ("uniform", "wc", "given", "estimated")
METHODS = ("imm", "imgpu", "degree", "influence", "random")

#: RR sets (stream 0) behind the marginal gains reported for the degree, influence and random baselines
BASELINE_RR_SETS = 100_000
#: IMM's sampling phase generates its sets in chunks of at most this many, asking ``stop`` between two
SAMPLING_CHUNK = 1 << 20

#: random streams: node selection's RR sets, IMM's sampling phase (independent of selection: Chen 2018's fix
#: of IMM's martingale argument), the Monte-Carlo evaluator, IMGPU's live-edge snapshots
STREAM_SELECTION = 0
STREAM_SAMPLING = 1
STREAM_EVALUATE = 2
STREAM_SNAPSHOTS = 3

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
EDGE_SALT = 0xD6E8FEB86659FD93
STREAM_SALT = 0xD1B54A32D192ED03


def mix64(z: int) -> int:
    """splitmix64's finaliser on a Python int (the kernels have their own copy of these three lines)."""
    z &= MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def base_key(seed: int, stream: int) -> int:
    """The key every set or run of (seed, stream) derives its own from (uint64 as a Python int)."""
    return mix64(mix64(seed * GOLDEN + stream + 1) + STREAM_SALT * (stream + 1))


def thresholds(probs: np.ndarray) -> np.ndarray:
    """uint64 coin thresholds: an edge is live iff a 32-bit draw is below ``round(p * 2**32)`` (p = 1: always)."""
    return np.rint(np.asarray(probs, dtype=np.float64) * 4294967296.0).astype(np.uint64)


# --------------------------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ICModel:
    """Independent Cascade on a follower graph: ``probs[e]`` is the chance that the followee of edge ``e``
    activates its follower; the spread counts ``weights`` of the activated nodes."""

    graph: Graph
    probs: np.ndarray  # float64[m], aligned with graph.indices
    weights: np.ndarray  # float64[n] >= 0
    kind: str
    p: float | None = None
    #: prior and strength of an estimated model, for describe()
    estimate: dict | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_nodes(self) -> int:
        return self.graph.n_nodes

    @property
    def n_edges(self) -> int:
        return self.graph.n_edges

    @property
    def total_weight(self) -> float:
        return float(self.weights.sum())

    @property
    def unit_weights(self) -> bool:
        if "unit" not in self._cache:
            self._cache["unit"] = bool(np.all(self.weights == 1.0))
        return self._cache["unit"]

    @property
    def uniform(self) -> bool:
        """All edges share one probability (the kernels then read one threshold, not one per edge)."""
        return self.kind == "uniform"

    def threshold_array(self) -> np.ndarray:
        """uint64 thresholds: one per edge, or a single one for a uniform model (cached)."""
        if "thr" not in self._cache:
            self._cache["thr"] = thresholds(np.array([self.p]) if self.uniform else self.probs)
        return self._cache["thr"]

    def cumulative_weights(self) -> np.ndarray:
        """float64[n]: running sum of the weights, the table weighted roots are drawn from (cached)."""
        if "cumw" not in self._cache:
            self._cache["cumw"] = np.cumsum(self.weights)
        return self._cache["cumw"]

    def describe(self) -> str:
        if self.kind == "uniform":
            return f"uniform p={self.p:g}"
        if self.kind == "wc":
            return "weighted cascade (1 / accounts the follower follows)"
        if self.kind == "estimated" and self.estimate:
            return (
                f"estimated from the collection (prior {self.estimate['prior']:.4g}, "
                f"strength {self.estimate['strength']:g})"
            )
        return f"{self.kind} per-edge probabilities"


def ic_model(
    g: Graph, *, p: float | str | np.ndarray | EdgeEstimate = 0.01, weights: np.ndarray | None = None,
    kind: str | None = None,
) -> ICModel:  # fmt: skip
    """The IC model on follower graph ``g``: ``p`` a float in (0, 1] (uniform), ``"wc"`` (weighted cascade:
    1 / the number of accounts the follower follows), float64[m] per edge (``kind`` "given", or "estimated"), or
    an :class:`EdgeEstimate` (kind "estimated", its prior and strength recorded). ``weights`` float64[n] >= 0
    (None: ones)."""
    check_graph(g)
    m, n = g.n_edges, g.n_nodes
    uniform_p = None
    estimate = None
    if isinstance(p, EdgeEstimate):
        estimate = {"prior": p.prior, "strength": p.strength, "observed": p.observed}
        p, kind = p.probs, "estimated" if kind is None else kind
    if isinstance(p, str):
        if p != "wc":
            raise ValueError(f"p must be a probability, 'wc' or an array of per-edge probabilities, not {p!r}")
        out = np.repeat(1.0 / np.maximum(g.out_degree, 1), g.out_degree).astype(np.float64)
        got = "wc"
    elif np.ndim(p) == 0:
        uniform_p = float(p)
        if not 0.0 < uniform_p <= 1.0:
            raise ValueError(f"p must be in (0, 1], not {p!r}")
        out = np.full(m, uniform_p)
        got = "uniform"
    else:
        out = np.ascontiguousarray(np.asarray(p, dtype=np.float64))
        if out.shape != (m,):
            raise ValueError(f"p must have one probability per edge ({m}), not shape {out.shape}")
        if not (np.all(np.isfinite(out)) and np.all(out >= 0) and np.all(out <= 1)):
            raise ValueError("p must hold probabilities in [0, 1]")
        got = "given"
    if kind is not None:
        if kind not in PROBABILITY_KINDS:
            raise ValueError(f"kind must be one of {', '.join(PROBABILITY_KINDS)}, not {kind!r}")
        if (kind in ("given", "estimated") and got != "given") or (kind in ("uniform", "wc") and kind != got):
            raise ValueError(f"kind {kind!r} does not match p ({got})")
        got = kind
    if weights is None:
        w = np.ones(n)
    else:
        w = np.ascontiguousarray(np.asarray(weights, dtype=np.float64))
        if w.shape != (n,):
            raise ValueError(f"weights must have one weight per node ({n}), not shape {w.shape}")
        if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
            raise ValueError("weights must be finite and >= 0")
    return ICModel(g, out, w, got, uniform_p, estimate)


@dataclass(eq=False)
class EdgeEstimate:
    """Smoothed per-edge probabilities from exposure and retweet counts, and how they were smoothed."""

    probs: np.ndarray
    prior: float
    strength: float
    observed: int
    exposures: int
    retweets: int


def estimate_edge_probabilities(
    exposures: np.ndarray, retweets: np.ndarray, *, prior: float | None = None, strength: float = 20.0
) -> EdgeEstimate:
    """``(retweets + strength * prior) / (exposures + strength)`` per edge: the posterior mean of the edge's rate
    under a Beta(strength * prior, strength * (1 - prior)) prior. An edge never seen gets the prior; one seen
    far more often than ``strength`` times gets about its observed rate. ``prior`` None: the pooled rate
    ``sum(retweets) / sum(exposures)`` clipped to [1e-4, 0.5] (0.01 where nothing was exposed)."""
    e = np.asarray(exposures)
    r = np.asarray(retweets)
    if e.shape != r.shape or e.ndim != 1:
        raise ValueError(f"exposures and retweets must be 1-D of one length, not {e.shape} and {r.shape}")
    e = e.astype(np.float64)
    r = r.astype(np.float64)
    if np.any(e < 0) or np.any(r < 0) or not (np.all(np.isfinite(e)) and np.all(np.isfinite(r))):
        raise ValueError("exposures and retweets must be finite counts >= 0")
    if np.any(r > e):
        raise ValueError("retweets must not exceed exposures on any edge")
    if not (isinstance(strength, (int, float)) and math.isfinite(strength) and strength > 0):
        raise ValueError(f"strength must be a positive number, not {strength!r}")
    te, tr = float(e.sum()), float(r.sum())
    if prior is None:
        prior = min(max(tr / te, 1e-4), 0.5) if te > 0 else 0.01
    elif not (isinstance(prior, (int, float)) and 0.0 < prior < 1.0):
        raise ValueError(f"prior must be in (0, 1), not {prior!r}")
    probs = (r + strength * prior) / (e + strength)
    return EdgeEstimate(probs, float(prior), float(strength), int(np.count_nonzero(e)), int(te), int(tr))


def edge_positions(g: Graph, follower_ids: np.ndarray, followee_ids: np.ndarray) -> np.ndarray:
    """Position in ``g.indices`` of each follow edge given by external ids (-1 where it is not in ``g``)."""
    a = g.index_of(np.asarray(follower_ids, dtype=np.int64).ravel())
    b = g.index_of(np.asarray(followee_ids, dtype=np.int64).ravel())
    if a.shape != b.shape:
        raise ValueError(f"follower_ids and followee_ids differ in length ({len(a)} and {len(b)})")
    out = np.full(len(a), -1, dtype=np.int64)
    ok = (a >= 0) & (b >= 0)
    if not ok.any():
        return out
    n = np.int64(max(g.n_nodes, 1))
    src = np.repeat(np.arange(g.n_nodes, dtype=np.int64), g.out_degree)
    keys = src * n + g.indices.astype(np.int64)  # ascending: rows in order, sorted within each row
    want = a[ok] * n + b[ok]
    pos = np.minimum(np.searchsorted(keys, want), max(len(keys) - 1, 0))
    hit = (keys[pos] == want) if len(keys) else np.zeros(len(want), bool)
    out[np.flatnonzero(ok)[hit]] = pos[hit]
    return out


# --------------------------------------------------------------------------------------------------------------
# RR sets, selections, estimates
# --------------------------------------------------------------------------------------------------------------


@dataclass(eq=False)
class RRSets:
    """Reverse-reachable sets ``start .. start+count-1`` of (seed, stream): set j lists its nodes ascending,
    ``nodes[indptr[j]:indptr[j+1]]``."""

    indptr: np.ndarray  # int64[count+1]
    nodes: np.ndarray  # int32
    seed: int
    stream: int
    start: int
    edges_touched: int = 0

    @property
    def count(self) -> int:
        return len(self.indptr) - 1

    @property
    def stop(self) -> int:
        return self.start + self.count

    @property
    def nbytes(self) -> int:
        return self.indptr.nbytes + self.nodes.nbytes

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        meta = np.array([self.seed, self.stream, self.start, self.edges_touched], dtype=np.int64)
        np.savez(buf, indptr=self.indptr, nodes=self.nodes, meta=meta)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> RRSets:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            seed, stream, start, touched = (int(x) for x in z["meta"])
            return cls(z["indptr"].astype(np.int64), z["nodes"].astype(np.int32), seed, stream, start, touched)


def merge_rr_sets(parts: list[RRSets]) -> RRSets:
    """Parts of one (seed, stream) covering contiguous index ranges, in any order: the same as one call over the
    union."""
    if not parts:
        raise ValueError("parts must hold at least one RRSets")
    if len({(p.seed, p.stream) for p in parts}) != 1:
        raise ValueError("parts mix seeds or streams")
    parts = sorted(parts, key=lambda p: p.start)
    for a, b in itertools.pairwise(parts):
        if a.stop != b.start:
            raise ValueError(f"parts leave a gap or overlap between set {a.stop} and set {b.start}")
    sizes = np.concatenate([np.diff(p.indptr) for p in parts])
    indptr = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    nodes = np.concatenate([p.nodes for p in parts]).astype(np.int32, copy=False)
    touched = sum(p.edges_touched for p in parts)
    return RRSets(indptr, nodes, parts[0].seed, parts[0].stream, parts[0].start, touched)


def split_range(total: int, parts: int) -> list[tuple[int, int]]:
    """``[0, total)`` in ``parts`` contiguous ranges of near-equal size (empty ones dropped)."""
    if total < 0 or parts < 1:
        raise ValueError(f"need total >= 0 and parts >= 1, not {total} and {parts}")
    cuts = [total * i // parts for i in range(parts + 1)]
    return [(a, b) for a, b in itertools.pairwise(cuts) if b > a]


@dataclass(eq=False)
class Selection:
    """Greedy maximum coverage over RR sets: the picks, in order, with their marginal gains in spread units."""

    nodes: np.ndarray  # int64[k']
    gains: np.ndarray  # float64[k']
    curve: np.ndarray  # float64[k']
    covered: np.ndarray  # int64[k'] cumulative
    n_sets: int


def selection_from_counts(nodes: np.ndarray, newly: np.ndarray, n_sets: int, total_weight: float) -> Selection:
    """A :class:`Selection` from the picks and the sets each newly covered (both engines build it this way)."""
    newly = np.asarray(newly, dtype=np.int64)
    scale = total_weight / n_sets if n_sets else 0.0
    gains = newly.astype(np.float64) * scale
    covered = np.cumsum(newly)
    return Selection(np.asarray(nodes, dtype=np.int64), gains, covered.astype(np.float64) * scale, covered, n_sets)


@dataclass(eq=False)
class ImmSize:
    """The outcome of IMM's sampling phase: how many RR sets node selection needs."""

    theta: int
    lower_bound: float
    sampling_rr_sets: int
    rounds: int
    eps: float
    ell: float
    #: nodes listed by the sampling phase's sets, all together (0 where the engine did not count them)
    sampling_entries: int = 0

    @property
    def mean_set_size(self) -> float:
        """Nodes per RR set in the sampling phase (at least 1: a set holds its root), what a set of node selection
        is expected to hold too."""
        return max(1.0, self.sampling_entries / self.sampling_rr_sets) if self.sampling_rr_sets else 1.0


@dataclass(eq=False)
class SpreadEstimate:
    """Monte-Carlo expected spread with the 95 % normal confidence interval of the mean."""

    mean: float
    std: float
    ci_low: float
    ci_high: float
    runs: int
    seed: int


def normal_ci(values: np.ndarray, seed: int) -> SpreadEstimate:
    """Mean, sample standard deviation and 95 % interval (mean -/+ 1.96 std / sqrt(runs)) of per-run spreads."""
    runs = len(values)
    mean = float(values.mean()) if runs else 0.0
    std = float(values.std(ddof=1)) if runs > 1 else 0.0
    half = 1.959963984540054 * std / math.sqrt(runs) if runs else 0.0
    return SpreadEstimate(mean, std, mean - half, mean + half, runs, seed)


@dataclass(eq=False)
class SpreadComparison:
    """Several seed sets scored on the **same** Monte-Carlo worlds (common random numbers): run ``r`` of every
    set uses the same coins, i.e. the same live-edge world, so the spreads of two sets differ only by what the
    sets themselves reach in that world. ``estimates[i]`` is set ``i``'s spread exactly as
    :func:`normal_ci` gives it (the unpaired interval); ``diff[i, j]`` is the mean over worlds of spread_i -
    spread_j (equal to ``estimates[i].mean - estimates[j].mean`` up to rounding) and ``diff_low``/``diff_high``
    its 95 % interval from the per-world differences, ``mean -/+ 1.96 std(d) / sqrt(runs)``: far narrower than
    the unpaired intervals when the sets overlap, so a small real advantage shows."""

    estimates: list[SpreadEstimate]
    diff: np.ndarray
    diff_std: np.ndarray
    diff_low: np.ndarray
    diff_high: np.ndarray
    runs: int
    seed: int

    def difference(self, i: int, j: int) -> tuple[float, float, float]:
        """(mean, low, high) of spread_i - spread_j over the shared worlds."""
        return float(self.diff[i, j]), float(self.diff_low[i, j]), float(self.diff_high[i, j])


def paired_comparison(samples: np.ndarray, seed: int) -> SpreadComparison:
    """:class:`SpreadComparison` from per-world spreads, ``samples[i, r]`` = set ``i`` in world ``r``."""
    x = np.asarray(samples, dtype=np.float64)
    n_sets, runs = x.shape
    estimates = [normal_ci(x[i], seed) for i in range(n_sets)]
    diff = np.zeros((n_sets, n_sets))
    std = np.zeros((n_sets, n_sets))
    for i in range(n_sets):
        for j in range(n_sets):
            if i != j and runs:
                d = x[i] - x[j]
                diff[i, j] = d.mean()
                std[i, j] = d.std(ddof=1) if runs > 1 else 0.0
    half = 1.959963984540054 * std / math.sqrt(runs) if runs else std
    return SpreadComparison(estimates, diff, std, diff - half, diff + half, runs, seed)


@dataclass(eq=False)
class IMResult:
    """K seeds chosen by one method, with the method's own estimate of each one's marginal gain."""

    method: str
    k: int
    nodes: np.ndarray
    user_ids: np.ndarray
    gains: np.ndarray
    curve: np.ndarray
    estimate: float
    rr_sets: int = 0
    sampling_rr_sets: int = 0
    lower_bound: float = float("nan")
    snapshots: int = 0
    seconds: float = 0.0
    backend: str = "cpu"
    params: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------------------------
# Checks and IMM's bounds
# --------------------------------------------------------------------------------------------------------------


def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def check_k(k) -> None:
    if not _is_int(k) or k < 1:
        raise ValueError(f"k must be an integer >= 1, not {k!r}")


def check_range(start, stop) -> None:
    if not (_is_int(start) and _is_int(stop)) or start < 0 or stop < start:
        raise ValueError(f"start and stop must be integers with 0 <= start <= stop, not {start!r} and {stop!r}")


def check_seeds(model: ICModel, seeds) -> np.ndarray:
    s = np.asarray(seeds)
    if s.ndim != 1 or (len(s) and not np.issubdtype(s.dtype, np.integer)):
        raise ValueError("seeds must be a 1-D array of node indices")
    s = unique(s.astype(np.int64))
    if len(s) and (s[0] < 0 or s[-1] >= model.n_nodes):
        raise ValueError(f"seeds must be node indices 0..{model.n_nodes - 1}")
    return s


def _log_binomial(n: int, k: int) -> float:
    k = min(k, n)  # k > n: every node is a seed, one seed set
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def imm_theta(n: int, k: int, eps: float, ell: float, total_weight: float, lower_bound: float) -> int:
    """Node selection's RR sets: lambda* / LB with lambda* = 2 W ((1-1/e) alpha + beta)^2 / eps^2 (Tang et al.
    2015, eq. 6 and Thm. 1, with the spread's scale W, the total weight, in place of n)."""
    e1 = 1.0 - 1.0 / math.e
    lnn = math.log(max(n, 2))
    alpha = math.sqrt(ell * lnn + math.log(2))
    beta = math.sqrt(e1 * (_log_binomial(n, k) + ell * lnn + math.log(2)))
    lam_star = 2.0 * total_weight * (e1 * alpha + beta) ** 2 / eps**2
    return max(1, math.ceil(lam_star / lower_bound))


class RRSetLimitExceeded(OverMemory):
    """IMM would need more RR sets than ``max_sets`` allows: raised before they are generated."""

    def __init__(self, needed: int, max_sets: int, k: int, eps: float, phase: str):
        self.needed, self.max_sets, self.k, self.eps, self.phase = int(needed), int(max_sets), int(k), eps, phase
        super().__init__(
            f"IMM with k={k} and eps={eps:g} needs {_count(needed)} RR sets {phase}, more than the "
            f"{_count(max_sets)} allowed (max_sets)"
        )


def _count(n: int) -> str:
    return f"{n:,}" if n < 10**12 else f"{float(n):.3g}"


def check_max_sets(max_sets) -> None:
    if max_sets is not None and (not _is_int(max_sets) or max_sets < 1):
        raise ValueError(f"max_sets must be an integer >= 1 or None, not {max_sets!r}")


def imm_sampling(
    model: ICModel,
    k: int,
    eps: float,
    ell: float,
    generate: Callable[[int, int], int | None],
    covered: Callable[[int], int],
    *,
    max_sets: int | None = None,
    stop: Callable[[], object] | None = None,
    chunk: int = SAMPLING_CHUNK,
) -> ImmSize:
    """IMM's sampling phase (Tang et al. 2015, Alg. 2) driving an engine: ``generate(a, b)`` adds sampling-stream
    sets ``[a, b)`` to the engine's pool (and may return how many nodes they list), ``covered(k)`` runs greedy on
    the pool and returns the sets its k picks cover. ``ell`` is raised to ell (1 + ln 2 / ln n) first so the whole
    run succeeds with probability 1 - 1/n^ell. LB falls back to the k largest weights (a lower bound of OPT: seeds
    count themselves).

    Bounded: the sets are generated ``chunk`` at a time with ``stop()`` called between two chunks (it may raise,
    e.g. a memory ceiling's check or a cancel); with ``max_sets``, a round that would need more sets, or a theta
    for node selection above it, raises :class:`RRSetLimitExceeded` (naming k and eps) before anything of it is
    allocated. Small eps makes both grow as 1/eps^2."""
    check_max_sets(max_sets)
    n = model.n_nodes
    w_total = model.total_weight
    if n == 0 or w_total <= 0:
        return ImmSize(0, 0.0, 0, 0, eps, ell)
    ell_in = ell
    lnn = math.log(max(n, 2))
    ell = ell * (1.0 + math.log(2) / lnn)
    eps_p = math.sqrt(2.0) * eps
    lam_p = (
        (2.0 + 2.0 / 3.0 * eps_p)
        * (_log_binomial(n, k) + ell * lnn + math.log(max(math.log2(max(n, 2)), 1.0)))
        * w_total
        / eps_p**2
    )
    have = 0
    entries = 0
    lb = float(np.sort(model.weights)[::-1][:k].sum())
    rounds = 0
    for i in range(1, max(2, math.ceil(math.log2(max(n, 2))))):
        x = w_total / 2.0**i
        theta_i = math.ceil(lam_p / x)
        if max_sets is not None and theta_i > max_sets:
            raise RRSetLimitExceeded(theta_i, max_sets, k, eps, f"in round {i} of its sampling phase")
        while have < theta_i:
            if stop is not None and have:
                stop()
            b = min(theta_i, have + chunk)
            got = generate(have, b)
            entries += int(got or 0)
            have = b
        rounds = i
        est = w_total * covered(k) / have
        if est >= (1.0 + eps_p) * x:
            lb = max(lb, est / (1.0 + eps_p))
            break
    theta = imm_theta(n, k, eps, ell, w_total, lb)
    if max_sets is not None and theta > max_sets:
        raise RRSetLimitExceeded(theta, max_sets, k, eps, "for node selection")
    return ImmSize(theta, lb, have, rounds, eps, ell_in, entries)
