"""The stream engine on the GPU (issue 17), in one device call: check GPU = CPU on a small stream first, then
time sustained edge reconstruction with the ``twitter`` preset's bigger4-sized follower graph resident.

    PYTHONUNBUFFERED=1 python3 benchmarks/stream_gpu_bench.py [--scale 1.0] [--batches 10000,100000,1000000]

Per micro-batch size the whole generated collection (3.68M retweets, 99.6K originals at scale 1) is replayed
in time order (lateness 0) and shuffled within an hour (late retweets rebuild their cascades); the rate is
retweets / the wall time of all ``push`` calls, each of which ends with its edges copied to the host (what a
consumer gets). After the replay the engine's state is checked against the batch forward phase. The engine is
warmed up once (kernels compiled, pools filled) before timing; the follower graph is uploaded once.
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

import cupy as cp

from compute.algorithms.forward import forward
from compute.algorithms.stream import stream
from compute.build import build_cascades
from compute.generators import twitter_collection
from compute.gpu.forward import device_graph
from compute.streaming import StreamBatch, cut, replay_order


def same_edges(a, b) -> bool:
    """Equal edge sets per cascade (same cascades, node order and edges after sorting by (src, dst))."""
    if not (np.array_equal(a.cascades.tweet_ids, b.cascades.tweet_ids)
            and np.array_equal(a.cascades.user_ids, b.cascades.user_ids)
            and np.array_equal(a.edge_offsets, b.edge_offsets)):  # fmt: skip
        return False
    ka = np.sort(a.edge_src.astype(np.int64) << 32 | a.edge_dst.astype(np.int64))
    kb = np.sort(b.edge_src.astype(np.int64) << 32 | b.edge_dst.astype(np.int64))
    return bool(np.array_equal(ka, kb))


def batches(tweets, lateness, size, seed=0):
    order = replay_order(tweets.created_at, lateness, seed)
    b = cut(len(order), size)
    return [StreamBatch.from_tweets(tweets, order[b[i] : b[i + 1]]) for i in range(len(b) - 1)]


def check_small(scale: float) -> dict:
    tweets, graph = twitter_collection(scale=scale, seed=7)
    out = {"case": f"check twitter@{scale}", "n_rows": len(tweets)}
    ok = True
    for lateness, size in ((0.0, 1000), (300.0, 777), (7200.0, 5000)):
        eng = {b: stream(graph, backend=b, hold_seconds=np.inf) for b in ("cpu", "gpu")}
        for bt in batches(tweets, lateness, size, seed=1):
            ups = {b: e.push(bt) for b, e in eng.items()}
            e = [set(zip(u.edge_tweet.tolist(), u.edge_src.tolist(), u.edge_dst.tolist())) for u in ups.values()]
            ok &= e[0] == e[1]
            ok &= sorted(ups["cpu"].recomputed.tolist()) == sorted(ups["gpu"].recomputed.tolist())
        ok &= same_edges(eng["cpu"].graphs(), eng["gpu"].graphs())
    c, _ = build_cascades(tweets)
    ok &= same_edges(eng["gpu"].graphs(), forward(c, graph, backend="cpu"))
    out["gpu_equals_cpu_and_batch"] = bool(ok)
    print(json.dumps(out), flush=True)
    return out


def time_replay(tweets, graph, size: int, lateness: float, reference, collect: bool = True) -> dict:
    bts = batches(tweets, lateness, size)
    n_rt = sum(b.n_retweets for b in bts)
    eng = stream(graph, backend="gpu", hold_seconds=np.inf)
    per = []
    phases: dict[str, float] = {}
    edges = recomputed = 0
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for b in bts:
        s = time.perf_counter()
        up = eng.push(b, collect=collect)
        per.append(time.perf_counter() - s)
        edges += up.n_edges
        recomputed += len(up.recomputed)
        for k, v in up.timings.items():
            phases[k] = phases.get(k, 0.0) + v
    cp.cuda.Device().synchronize()
    wall = time.perf_counter() - t0
    g = eng.graphs()
    row = {"batch": size, "lateness_s": lateness, "collect": collect, "micro_batches": len(bts), "retweets": n_rt,
           "wall_s": wall, "retweets_per_s": n_rt / wall, "median_batch_ms": 1e3 * statistics.median(per),
           "p99_batch_ms": 1e3 * float(np.percentile(per, 99)), "max_batch_ms": 1e3 * max(per),
           "phase_ms_per_batch": {k: 1e3 * v / len(bts) for k, v in phases.items()},
           "edges_emitted": edges, "cascades_rebuilt": recomputed, "final_edges": g.n_edges,
           "equals_batch_forward": same_edges(g, reference) if reference is not None else None}  # fmt: skip
    print(json.dumps(row), flush=True)
    del eng
    cp.get_default_memory_pool().free_all_blocks()
    return row


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--batches", default="10000,100000,1000000")
    p.add_argument("--check-scale", type=float, default=0.002)
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    args = p.parse_args()
    dev = cp.cuda.runtime.getDeviceProperties(0)
    print(f"device: {dev['name'].decode()}", flush=True)
    rows = [check_small(args.check_scale)]
    t0 = time.perf_counter()
    tweets, graph = twitter_collection(scale=args.scale, seed=0)
    cascades, _ = build_cascades(tweets)
    print(f"generated twitter@{args.scale}: {graph.n_users:,} users, {graph.n_edges:,} follows, "
          f"{cascades.n_cascades:,} cascades, {cascades.n_nodes - cascades.n_cascades:,} retweets "
          f"in {time.perf_counter() - t0:.1f} s", flush=True)  # fmt: skip
    t0 = time.perf_counter()
    dg = device_graph(graph)
    cp.cuda.Device().synchronize()
    print(f"graph upload {time.perf_counter() - t0:.3f} s ({dg.nbytes / 1e9:.2f} GB)", flush=True)
    # the floor's inputs: friend probes per retweet (the GPU probes the friend side only)
    ui = graph.index_of(cascades.user_ids)
    is_pub = np.zeros(cascades.n_nodes, bool)
    is_pub[cascades.publisher] = True
    deg = np.where(ui >= 0, graph.friends_indptr[np.maximum(ui, 0) + 1] - graph.friends_indptr[np.maximum(ui, 0)], 0)
    probes = int(deg[~is_pub].sum())
    n_rt = int((~is_pub).sum())
    t0 = time.perf_counter()
    reference = forward(cascades, graph, backend="gpu")
    print(f"batch forward (GPU, end to end) {time.perf_counter() - t0:.3f} s, {reference.n_edges:,} edges", flush=True)
    floor = {"case": "floor inputs", "retweets": n_rt, "friend_probes": probes, "probes_per_retweet": probes / n_rt,
             "spreading_edges": reference.n_edges}  # fmt: skip
    print(json.dumps(floor), flush=True)
    rows.append(floor)
    time_replay(tweets, graph, 100_000, 0.0, None)  # warm-up: kernels compiled, pools filled
    for size in [int(x) for x in args.batches.split(",")]:
        rows.append(time_replay(tweets, graph, size, 0.0, reference))
        rows.append(time_replay(tweets, graph, size, 3600.0, reference))
    rows.append(time_replay(tweets, graph, 100_000, 0.0, None, collect=False))
    Path(args.out, "stream_gpu.json").write_text(json.dumps(rows, indent=1))
    print()
    head = ("batch", "late s", "retweets/s", "median ms", "p99 ms", "rebuilt", "= batch", "ms/batch: orig place build")
    print(" ".join(f"{h:>10}" for h in head))
    for r in rows:
        if "batch" in r:
            ph = r["phase_ms_per_batch"]
            print(
                f"{r['batch']:>10,} {r['lateness_s']:>10.0f} {r['retweets_per_s']:>10,.0f} "
                f"{r['median_batch_ms']:>10.2f} {r['p99_batch_ms']:>10.2f} {r['cascades_rebuilt']:>10,} "
                f"{r['equals_batch_forward']!s:>10} {ph['originals']:>6.2f} {ph['place']:>5.2f} {ph['build']:>5.2f}"
            )


if __name__ == "__main__":
    main()
