"""The stream engine's CPU reference on this machine (issue 17): sustained edge reconstruction on the
``twitter`` preset at a small scale, per micro-batch size, in time order and shuffled within an hour.

    PYTHONPATH=. python benchmarks/stream_cpu_bench.py [--scale 0.01] [--batches 1000,10000] [--out DIR]

The rate is retweets / the wall time of all ``push`` calls (the edges of each batch gathered as user ids, what a
consumer gets); a first replay warms the kernels (numba compiles once, cached on disk). After each replay the
engine's state is checked against the batch forward phase.
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

from compute.algorithms.forward import forward
from compute.algorithms.stream import stream
from compute.build import build_cascades
from compute.generators import twitter_collection
from compute.streaming import StreamBatch, cut, replay_order


def same_edges(a, b) -> bool:
    if not (
        np.array_equal(a.cascades.tweet_ids, b.cascades.tweet_ids)
        and np.array_equal(a.cascades.user_ids, b.cascades.user_ids)
        and np.array_equal(a.edge_offsets, b.edge_offsets)
    ):
        return False
    ka = np.sort(a.edge_src.astype(np.int64) << 32 | a.edge_dst.astype(np.int64))
    kb = np.sort(b.edge_src.astype(np.int64) << 32 | b.edge_dst.astype(np.int64))
    return bool(np.array_equal(ka, kb))


def replay(tweets, graph, size, lateness, reference):
    order = replay_order(tweets.created_at, lateness, 0)
    b = cut(len(order), size)
    bts = [StreamBatch.from_tweets(tweets, order[b[i] : b[i + 1]]) for i in range(len(b) - 1)]
    eng = stream(graph, backend="cpu", hold_seconds=np.inf)
    per, phases, rebuilt = [], {}, 0
    t0 = time.perf_counter()
    for bt in bts:
        up = eng.push(bt)
        per.append(up.seconds)
        rebuilt += len(up.recomputed)
        for k, v in up.timings.items():
            phases[k] = phases.get(k, 0.0) + v
    wall = time.perf_counter() - t0
    n = sum(bt.n_retweets for bt in bts)
    row = {"batch": size, "lateness_s": lateness, "micro_batches": len(bts), "retweets": n, "wall_s": wall,
           "retweets_per_s": n / wall, "median_batch_ms": 1e3 * statistics.median(per),
           "p99_batch_ms": 1e3 * float(np.percentile(per, 99)),
           "phase_ms_per_batch": {k: 1e3 * v / len(bts) for k, v in phases.items()}, "cascades_rebuilt": rebuilt,
           "equals_batch_forward": same_edges(eng.graphs(), reference) if reference is not None else None}  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scale", type=float, default=0.01)
    p.add_argument("--batches", default="1000,10000")
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    args = p.parse_args()
    print(f"cpus: {os.cpu_count()}, load average at start: {os.getloadavg()}", flush=True)
    tweets, graph = twitter_collection(scale=args.scale, seed=0)
    cascades, _ = build_cascades(tweets)
    print(f"twitter@{args.scale}: {graph.n_users:,} users, {graph.n_edges:,} follows, {cascades.n_cascades:,} "
          f"cascades, {cascades.n_nodes - cascades.n_cascades:,} retweets", flush=True)  # fmt: skip
    reference = forward(cascades, graph, backend="cpu")
    t0 = time.perf_counter()
    reference = forward(cascades, graph, backend="cpu")
    print(f"batch forward (CPU, warm) {time.perf_counter() - t0:.3f} s, {reference.n_edges:,} edges", flush=True)
    replay(tweets, graph, 1000, 0.0, None)  # warm-up
    rows = []
    for size in [int(x) for x in args.batches.split(",")]:
        for lateness in (0.0, 3600.0):
            rows.append(replay(tweets, graph, size, lateness, reference))
    print(f"load average at end: {os.getloadavg()}", flush=True)
    Path(args.out, "stream_cpu.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
