"""The issue-3 GPU benchmarks in one device call: generate the data on the device, check the GPU against the
CPU reference on it, time both, and print a short table last.

    PYTHONUNBUFFERED=1 python3 benchmarks/gpu_suite.py [--only rsg,seibert,twitter] [--out DIR]

Timing follows the device's METHOD.md: device events around the kernels, a warm-up, the median of >= 20
repeats; copies, preparation and the end-to-end public call are timed beside the kernel. The CPU column is
the CPU backend on the device machine's own cores (so the ratio is same-machine); our 2-core CI machine's
numbers are in benchmarks/README.md.
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
from compute.bench import membership_tests
from compute.build import build_cascades
from compute.generators import random_spreading_graphs, twitter_collection
from compute.gpu import bench as gb

SEIBERT_BASE = 3_140  # cascades in the seibert preset at scale 1


def _cpu_time(fn, repeat=3):
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def _rel(a, b):
    ok = ~(np.isnan(a) & np.isnan(b))
    return float(np.max(np.abs(a[ok] - b[ok]) / np.maximum(np.abs(b[ok]), 1e-300))) if ok.any() else 0.0


def run_backward(name, graphs, repeat):
    print(f"[{name}] {graphs.n_cascades:,} cascades, {graphs.n_nodes:,} nodes, {graphs.n_edges:,} edges", flush=True)
    times, extra = gb.bench_backward(graphs, repeat)
    gpu = backward(graphs, backend="gpu").influence
    cpu_s, cpu = _cpu_time(lambda: backward(graphs, backend="cpu"))
    rel = _rel(gpu, cpu.influence)
    row = {"case": name, "phase": "backward", "n_cascades": graphs.n_cascades, "n_nodes": graphs.n_nodes,
           "n_edges": graphs.n_edges, "kernel_times_s": times, **extra, "cpu_median_s": cpu_s,
           "max_rel_err_vs_cpu": rel,
           "nodes_edges_per_s": (graphs.n_nodes + graphs.n_edges) / extra["kernel_median_s"]}  # fmt: skip
    print(json.dumps({k: v for k, v in row.items() if k != "kernel_times_s"}), flush=True)
    return row


def run_forward(name, cascades, graph, repeat, orphans="strict"):
    n_rt = int(cascades.n_nodes - cascades.n_cascades)
    print(
        f"[{name}] {cascades.n_cascades:,} cascades, {n_rt:,} retweets, graph {graph.n_users:,} users "
        f"{graph.n_edges:,} edges",
        flush=True,
    )
    times, extra = gb.bench_forward(cascades, graph, orphans, repeat)
    gpu = forward(cascades, graph, orphans=orphans, backend="gpu")
    cpu_s, cpu = _cpu_time(lambda: forward(cascades, graph, orphans=orphans, backend="cpu"), repeat=2)
    same = bool(np.array_equal(gpu.edge_offsets, cpu.edge_offsets))
    if same:  # equal as sets per cascade: sort both by (src, dst) (cascades own disjoint node ranges)
        kg = np.sort(gpu.edge_src.astype(np.int64) << 32 | gpu.edge_dst.astype(np.int64))
        kc = np.sort(cpu.edge_src.astype(np.int64) << 32 | cpu.edge_dst.astype(np.int64))
        same = bool(np.array_equal(kg, kc))
    floor = membership_tests(cascades, graph)
    row = {"case": name, "phase": "forward", "orphans": orphans, "n_cascades": cascades.n_cascades,
           "n_retweets": n_rt, "graph_edges": graph.n_edges, "kernel_times_s": times, **extra,
           "cpu_median_s": cpu_s, "edges_equal_cpu": same, "spreading_edges": cpu.n_edges, **floor,
           "retweets_per_s": n_rt / extra["kernel_median_s"]}  # fmt: skip
    print(json.dumps({k: v for k, v in row.items() if k != "kernel_times_s"}), flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="rsg,seibert,twitter")
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--seibert-cascades", type=int, default=1_000_000)
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    args = p.parse_args()
    only = set(args.only.split(","))
    rows = []
    if "rsg" in only:
        t0 = time.perf_counter()
        g = random_spreading_graphs("rsg", seed=0)
        print(f"generated rsg in {time.perf_counter() - t0:.1f} s", flush=True)
        rows.append(run_backward("rsg (full, seed 0)", g, args.repeat))
        del g
    if "seibert" in only:
        t0 = time.perf_counter()
        g = random_spreading_graphs("seibert", scale=args.seibert_cascades / SEIBERT_BASE, seed=0)
        print(f"generated seibert in {time.perf_counter() - t0:.1f} s", flush=True)
        rows.append(run_backward(f"seibert x{args.seibert_cascades / SEIBERT_BASE:.0f}", g, args.repeat))
        del g
    if "twitter" in only:
        t0 = time.perf_counter()
        tweets, graph = twitter_collection(seed=0)
        cascades, _ = build_cascades(tweets)
        print(f"generated twitter in {time.perf_counter() - t0:.1f} s", flush=True)
        rows.append(run_forward("twitter (bigger4-sized, seed 0)", cascades, graph, args.repeat))
    Path(args.out, "gpu_suite.json").write_text(json.dumps(rows, indent=1))
    print()
    print(f"{'case':<34} {'phase':<9} {'kernel ms':>10} {'e2e ms':>9} {'prep ms':>8} {'CPU ms':>9} {'check':>12}")
    for r in rows:
        prep = r.get("prepare_s", r.get("setup_median_s", 0)) * 1e3
        check = f"{r['max_rel_err_vs_cpu']:.1e}" if r["phase"] == "backward" else f"edges={r['edges_equal_cpu']}"
        kms = r["kernel_median_s"] * 1e3
        print(
            f"{r['case']:<34} {r['phase']:<9} {kms:10.3f} "
            f"{r['end_to_end_median_s'] * 1e3:9.1f} {prep:8.2f} {r['cpu_median_s'] * 1e3:9.1f} {check:>12}"
        )
    for r in rows:
        if r["phase"] == "backward":
            rate, up = r["nodes_edges_per_s"], r["upload_s"] * 1e3
            print(
                f"  {r['case']}: {rate:.3e} nodes+edges/s; upload {up:.1f} ms; "
                f"device pool {r['device_pool_bytes'] / 2**30:.2f} GiB; repeatable={r['bitwise_repeatable']}"
            )
        else:
            rate, up = r["retweets_per_s"], r["graph_upload_s"]
            print(
                f"  {r['case']}: {rate:,.0f} retweets/s; graph upload {up:.3f} s; "
                f"{r['membership_tests']:,} membership tests; device pool {r['device_pool_bytes'] / 2**30:.2f} GiB"
            )


if __name__ == "__main__":
    main()
