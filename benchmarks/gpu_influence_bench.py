"""Issue 18 part 3: both phases in one GPU pass (``compute.algorithms.influence``) against the two public calls
(``forward`` then ``backward``, the spreading graph downloaded and uploaded again between them), on the `twitter`
preset (bigger4-sized, seed 0) with the follower graph resident, and the CPU backend on the same machine.

    PYTHONUNBUFFERED=1 python3 benchmarks/gpu_influence_bench.py [--scale 1.0] [--repeat 10] [--out DIR]

Wall clock around whole public calls (the results back on the host), the device synchronized, after one warm-up;
the two ways interleaved ``--repeat`` times: medians of each and of the paired differences. The check: the one
pass gives bitwise the two calls' edges and influence, and the CPU's edge sets and influence to 1e-12.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward
from compute.algorithms.influence import influence
from compute.build import build_cascades
from compute.generators import twitter_collection


def _median(fn, repeat: int, sync) -> tuple[float, object]:
    out = fn()
    sync()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def _edge_keys(g) -> np.ndarray:
    return np.sort(g.edge_src.astype(np.int64) << 32 | g.edge_dst.astype(np.int64))


def main() -> None:
    import cupy as cp

    p = argparse.ArgumentParser()
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    args = p.parse_args()
    sync = cp.cuda.Device().synchronize
    t0 = time.perf_counter()
    tweets, graph = twitter_collection(scale=args.scale, seed=0)
    cascades, _ = build_cascades(tweets)
    print(f"generated twitter x{args.scale} in {time.perf_counter() - t0:.1f} s: {cascades.n_cascades:,} cascades, "
          f"{cascades.n_nodes - cascades.n_cascades:,} retweets, graph {graph.n_users:,} users "
          f"{graph.n_edges:,} follows", flush=True)  # fmt: skip

    def two_calls():
        g = forward(cascades, graph, backend="gpu")
        return g, backward(g, backend="gpu")

    def one_pass():
        return influence(cascades, graph, backend="gpu")

    # interleaved: each repeat times both, so a drift of the machine (clocks, another tenant) hits both alike
    g2, b2 = two_calls()
    one = one_pass()
    sync()
    two_ts, one_ts = [], []
    for _ in range(args.repeat):
        for fn, ts in ((two_calls, two_ts), (one_pass, one_ts)):
            t0 = time.perf_counter()
            fn()
            sync()
            ts.append(time.perf_counter() - t0)
    two_s, one_s = statistics.median(two_ts), statistics.median(one_ts)
    saved_s = statistics.median(a - b for a, b in zip(two_ts, one_ts))
    cpu_s, cpu = _median(lambda: influence(cascades, graph, backend="cpu"), max(1, args.repeat // 5), lambda: None)
    bitwise = bool(
        np.array_equal(one.graphs.edge_src, g2.edge_src)
        and np.array_equal(one.graphs.edge_dst, g2.edge_dst)
        and np.array_equal(one.influence.view(np.int64), b2.influence.view(np.int64))
    )
    edges_cpu = bool(np.array_equal(_edge_keys(one.graphs), _edge_keys(cpu.graphs)))
    ok = ~np.isnan(cpu.influence)
    rel = float(np.max(np.abs(one.influence[ok] - cpu.influence[ok]) / np.maximum(np.abs(cpu.influence[ok]), 1e-300)))
    row = {
        "scale": args.scale, "n_cascades": cascades.n_cascades, "n_nodes": cascades.n_nodes,
        "graph_follows": graph.n_edges, "spreading_edges": one.graphs.n_edges, "repeat": args.repeat,
        "two_calls_median_s": two_s, "one_pass_median_s": one_s, "paired_saving_median_s": saved_s,
        "two_calls_s": two_ts, "one_pass_s": one_ts, "cpu_median_s": cpu_s, "cpu_threads": os.cpu_count(),
        "bitwise_equal_two_calls": bitwise, "edges_equal_cpu": edges_cpu, "max_rel_err_vs_cpu": rel,
    }  # fmt: skip
    print(json.dumps({k: v for k, v in row.items() if not k.endswith("pass_s") and k != "two_calls_s"}), flush=True)
    Path(args.out, "gpu_influence.json").write_text(json.dumps(row, indent=1))
    print(f"two calls {two_s * 1e3:.1f} ms | one pass {one_s * 1e3:.1f} ms | saved per pair (median) "
          f"{saved_s * 1e3:.1f} ms | CPU ({os.cpu_count()} threads) "
          f"{cpu_s * 1e3:.1f} ms | bitwise={bitwise} edges=CPU {edges_cpu} rel {rel:.1e}")  # fmt: skip


if __name__ == "__main__":
    main()
