"""Compile the CPU kernels a compute run uses into numba's disk cache, before the first run needs them.

A fresh checkout has no compiled kernels, and on a 2-core machine the first compute of a process spends about
25 s compiling: 20 s for cascades rebuilt from follows, 5 s more for uploaded spreading graphs, whose edges
arrive as 64-bit indices (a second signature). ``make demo`` runs ``python -m compute.precompile`` on the second
core while it migrates the database, so the demo's first compute starts at once. Every kernel is compiled for the
argument types the web application's runs pass (``monitor.algorithms.influence``): cascades built by
``build_cascades``, the forward phase's 32-bit edges, and given graphs with 64-bit edges, with and without
times. Each example is small enough to check by hand; :func:`main` returns the influence it computed.

Where CuPy sees a GPU, the same examples run on it too (``backend="gpu"``): CuPy compiles a kernel at its first
launch in a machine and keeps it in its disk cache (``CUPY_CACHE_DIR``). The hand-checked examples are too small
for CuPy's own large-array paths (its multi-pass scans and CUB reductions, which it compiles at their first use
too), so a generated collection of about 110,000 statuses runs on the GPU as well (:func:`warm_gpu`). On the lent
H200 a fresh machine's first upload spent 19.4 s in the phases, 7.8 s with only the small examples compiled, and
0.4 s with both (benchmarks/gpu.md).
"""

from __future__ import annotations

import time

import numpy as np

from .algorithms.backward import backward
from .algorithms.influence import influence
from .build import build_cascades
from .structures import Cascades, FollowerGraph, SpreadingGraphs
from .tables import TweetTable

__all__ = ["main"]


def _chain() -> tuple[Cascades, FollowerGraph]:
    """Publisher 10 (4 followers) at t=0; 11 (2) follows 10 and retweets at t=1; 12 (1) follows 11, retweets at
    t=2. Influence: 12 -> 1, 11 -> 2 + 1 = 3, 10 -> 4 + 3 = 7."""
    rows = [(1, None, 10, 0.0, 4.0), (2, 1, 11, 1.0, 2.0), (3, 1, 12, 2.0, 1.0)]
    cascades, _ = build_cascades(TweetTable.from_rows(rows))
    return cascades, FollowerGraph.from_edges([11, 12], [10, 11])


def _given(c: Cascades, src: list[int], dst: list[int], times: bool) -> SpreadingGraphs:
    """``c``'s nodes with the given edges as 64-bit indices, as an upload of spreading graphs brings them."""
    if not times:
        c = Cascades(c.node_offsets, c.user_ids, c.followers, c.publisher, c.tweet_ids)
    offsets = np.array([0, len(src)], dtype=np.int64)
    return SpreadingGraphs(c, offsets, np.asarray(src, np.int64), np.asarray(dst, np.int64), orphans="given")


def main(backend: str = "cpu") -> dict[str, list[float]]:
    """Run each kernel once on ``backend``; returns the influence each example gave, by name (nodes in the
    cascade's order)."""
    cascades, graph = _chain()
    out: dict[str, list[float]] = {}
    for orphans in ("strict", "attach"):
        out[f"follows, {orphans}"] = influence(cascades, graph, orphans=orphans, backend=backend).influence.tolist()
    for times in (True, False):
        given = _given(cascades, [1, 2], [0, 1], times)
        out[f"given, times={times}"] = backward(given, backend=backend).influence.tolist()
    return out


def warm_gpu(scale: float = 0.03) -> float:
    """Both phases on the GPU over the ``twitter`` preset at ``scale`` (113,487 statuses at 0.03), so that CuPy
    compiles the large-array kernels a real batch takes; returns the largest relative difference from the CPU."""
    from .generators import twitter_collection

    tweets, graph = twitter_collection(scale=scale, seed=0)
    cascades, _ = build_cascades(tweets)
    gpu = influence(cascades, graph, backend="gpu").influence
    cpu = influence(cascades, graph, backend="cpu").influence
    known = ~np.isnan(cpu)
    if not np.array_equal(known, ~np.isnan(gpu)):
        raise AssertionError("the GPU and the CPU disagree on which statuses have an influence")
    return float(np.max(np.abs(gpu[known] - cpu[known]) / np.maximum(np.abs(cpu[known]), 1e-300), initial=0.0))


if __name__ == "__main__":
    t = time.perf_counter()
    values = main()
    from .backends import gpu_available

    if gpu_available():
        t_gpu = time.perf_counter()
        gpu_values = main("gpu")
        assert gpu_values == values, f"the GPU gave {gpu_values}, the CPU {values}"
        rel = warm_gpu()
        assert rel < 1e-9, f"the generated collection's influence differs from the CPU's by {rel:.1e}"
        print(
            f"compute.precompile: the same {len(gpu_values)} runs and a generated collection on the GPU in "
            f"{time.perf_counter() - t_gpu:.1f} s (largest relative difference from the CPU {rel:.1e})"
        )
    # and the Network pages' layout (compute.drawing), which the first drawing would otherwise compile: 0.9 s
    from .drawing import force_layout

    force_layout(3, np.array([0, 1]), np.array([1, 2]))
    # and the import's key lookups (compute.arrays.sorted_positions: its hash table takes many values only)
    from .arrays import _HASH_MIN, sorted_positions

    keys = np.arange(0, 2 * _HASH_MIN, 2, dtype=np.int64)
    assert sorted_positions(keys, keys[::-1].copy())[1].all()
    # and the radix sorts of the import's and the store's sorts (compute.arrays.sort_ints, argsort_ints)
    from .arrays import _RADIX_MIN, argsort_ints, sort_ints

    falling = np.arange(_RADIX_MIN, 0, -1, dtype=np.int64)
    assert (sort_ints(falling) == falling[::-1]).all() and (argsort_ints(falling) == falling - 1).all()
    took = time.perf_counter() - t
    print(f"compute.precompile: {len(values)} kernel runs, a layout, a lookup and the sorts in {took:.1f} s")
