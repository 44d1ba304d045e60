"""The peak memory of an IMM run's finishing step against ``theta x (8 B + 4 B x mean set size)``: what the
counter-campaign planner's ``RR_COPIES`` must cover (monitor/algorithms/influence_max.py). On a random follower
graph, IMM's sample size is found, the node-selection RR sets are sampled in ``--parts`` parts and serialised as the
batches store them; then, from a collected and trimmed heap, the parts are read back (``RRSets.from_bytes``), merged
and covered greedily (``select_seeds``), as ``_finish_imm`` does. Peak = ``VmHWM`` (reset at the start) over the
resident size at the start; the parts' bytes as read from the database come on top (one more copy).

    .venv/bin/python benchmarks/imm_finish_memory.py --nodes 5000 --edges 100000 --p 0.2 --eps 0.05

Linux only (``/proc/self/clear_refs``, ``VmHWM``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import compute.algorithms.influence_max as im
from compute.graphs import graph_from_edges
from compute.memory import peak_rss_bytes, release, reset_peak, rss_bytes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=20_000)
    ap.add_argument("--edges", type=int, default=200_000)
    ap.add_argument("--p", type=float, default=0.05, help="uniform edge probability")
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--parts", type=int, default=4, help="batches the run's RR sets are split over")
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    f = rng.integers(0, a.nodes, a.edges)
    u = np.minimum((rng.pareto(1.2, a.edges) * 6).astype(np.int64), a.nodes - 1)
    keep = f != u
    model = im.ic_model(graph_from_edges(f[keep], u[keep]), p=a.p)
    size = im.imm_sample_size(model, k=a.k, eps=a.eps, seed=1, backend="cpu")
    t = size.theta
    blobs = [
        im.rr_sets(model, seed=1, start=t * j // a.parts, stop=t * (j + 1) // a.parts, backend="cpu").to_bytes()
        for j in range(a.parts)
    ]
    im.select_seeds(model, im.rr_sets(model, seed=1, start=0, stop=10, backend="cpu"), k=2)  # kernels compiled
    release()
    base = rss_bytes()
    if not reset_peak():
        print("cannot reset the peak resident size (/proc/self/clear_refs): Linux only", file=sys.stderr)
        return 1
    pieces = [im.RRSets.from_bytes(bytes(b)) for b in blobs]
    rr = im.merge_rr_sets(pieces)
    del pieces
    im.select_seeds(model, rr, k=a.k)
    peak = (peak_rss_bytes() or 0) - base
    one = t * (8 + 4 * size.mean_set_size)
    print(
        f"nodes={a.nodes} edges={a.edges} p={a.p} eps={a.eps} theta={t:,} mean_set_size={size.mean_set_size:.2f} "
        f"one_copy={one / 2**20:.1f}MB peak={peak / 2**20:.1f}MB copies={peak / one:.2f} "
        f"(the parts as read: {sum(map(len, blobs)) / 2**20:.1f}MB more)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
