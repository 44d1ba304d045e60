"""What a CPU reference, its GPU twin and their dispatcher share: result types and the policies applied to them.

An algorithm lives on three floors (DESIGN §6): ``compute/algorithms/<name>.py`` holds the CPU reference and
the one public dispatcher, ``compute/gpu/<name>.py`` the CuPy twin. The twin must not import the CPU module
(that module imports the twin to dispatch: an import loop), so what both need sits here, beside the data
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

__all__ = ["BackwardResult", "apply_cycle_policy", "complete_backward", "complete_forward"]


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
    """Apply DESIGN §1's cycle policy to cascades ``cyclic`` and write their values into ``result``.

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
