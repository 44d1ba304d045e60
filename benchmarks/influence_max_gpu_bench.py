"""Influence maximisation on the GPU (issue 16): check GPU = CPU on a small graph, then time IMM (eps 0.1, K 50,
p 0.01) on the Amazon-sized and Twitter-sized generated graphs against the issue's goals (<= 1 s and <= 10 s),
with the floor: the edges the RR sets touch.

    python benchmarks/influence_max_gpu_bench.py [--sizes amazon,twitter] [--evaluate RUNS] [--repeat N]

Prints one JSON line per measurement, then a table. Times are wall-clock around synchronised device work (the
phases are sequences of many kernels with host decisions between them, so events would add nothing); the graph
upload is timed apart, as a worker keeps the graph on the device between runs (docs/adding-an-algorithm.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compute.algorithms.influence_max as im
from compute.generators.im_graphs import paper_graph

GOALS = {"amazon": 1.0, "twitter": 10.0}
#: bytes one touched edge costs at least: its 4-byte index read as part of a 32-byte sector (rows are short and
#: scattered), the row bounds of its node amortised over the row
EDGE_BYTES = 32
HBM_BYTES_PER_S = 3.0e12  # H100 SXM device-to-device copy measured here (KINDS.md)


def emit(rows: list[dict], **row) -> None:
    rows.append(row)
    print(json.dumps(row), flush=True)


def sync() -> None:
    import cupy as cp

    cp.cuda.Device().synchronize()


def check_small(rows: list[dict]) -> None:
    g = paper_graph("nethept", seed=1)
    for p in (0.01, 0.1, "wc"):
        model = im.ic_model(g, p=p)
        a = im.rr_sets(model, seed=5, start=0, stop=200_000, backend="cpu")
        b = im.rr_sets(model, seed=5, start=0, stop=200_000, backend="gpu")
        same_sets = bool(np.array_equal(a.indptr, b.indptr) and np.array_equal(a.nodes, b.nodes))
        ca = im.influence_max(model, k=50, eps=0.1, seed=5, backend="cpu")
        cb = im.influence_max(model, k=50, eps=0.1, seed=5, backend="gpu")
        emit(
            rows,
            check="nethept",
            p=p,
            same_rr_sets=same_sets,
            same_seeds=ca.nodes.tolist() == cb.nodes.tolist(),
            rr_sets=ca.rr_sets,
            cpu_s=round(ca.seconds, 3),
            gpu_s=round(cb.seconds, 3),
        )
        if not same_sets or ca.nodes.tolist() != cb.nodes.tolist():
            raise SystemExit("GPU != CPU on the small graph")


def time_imm(rows: list[dict], name: str, repeat: int, evaluate: int) -> None:
    import compute.gpu.influence_max as twin

    t = time.perf_counter()
    g = paper_graph(name, seed=0)
    gen_s = time.perf_counter() - t
    model = im.ic_model(g, p=0.01)
    t = time.perf_counter()
    twin.device_model(model)
    sync()
    upload_s = time.perf_counter() - t
    im.influence_max(model, k=50, eps=0.1, seed=0, backend="gpu")  # compile and warm the memory pool
    for r in range(repeat):
        sync()
        t0 = time.perf_counter()
        size = im.imm_sample_size(model, k=50, eps=0.1, seed=r, backend="gpu")
        sync()
        t1 = time.perf_counter()
        indptr, nodes, touched = twin._rr_device(model, r, 0, size.theta, 0)
        sync()
        t2 = time.perf_counter()
        chosen, newly = twin._greedy_device(indptr, nodes, model.n_nodes, 50)
        sync()
        t3 = time.perf_counter()
        total = t3 - t0
        # the sampling phase touches about as many edges per set as selection: scale by its set count
        sampling_touched = touched * size.sampling_rr_sets / max(size.theta, 1)
        floor = (touched + sampling_touched) * EDGE_BYTES / HBM_BYTES_PER_S
        emit(
            rows,
            graph=name,
            n=g.n_nodes,
            m=g.n_edges,
            repeat=r,
            generate_s=round(gen_s, 2),
            upload_s=round(upload_s, 3),
            sampling_s=round(t1 - t0, 4),
            selection_rr_s=round(t2 - t1, 4),
            greedy_s=round(t3 - t2, 4),
            imm_s=round(total, 4),
            goal_s=GOALS.get(name),
            theta=size.theta,
            sampling_rr_sets=size.sampling_rr_sets,
            rr_set_entries=len(nodes),
            edges_touched=int(touched),
            floor_s=round(floor, 5),
            estimate=float(newly.sum() * model.total_weight / max(size.theta, 1)),
        )
    if evaluate:
        t = time.perf_counter()
        ev = im.evaluate_spread(model, chosen, runs=evaluate, seed=1, backend="gpu")
        sync()
        emit(rows, graph=name, evaluate_runs=evaluate, spread=ev.mean, ci=[ev.ci_low, ev.ci_high],
             evaluate_s=round(time.perf_counter() - t, 3))  # fmt: skip


def table(rows: list[dict]) -> str:
    lines = ["graph    n           m           theta      imm_s    goal_s  floor_s   sampling  selection  greedy"]
    for r in rows:
        if "imm_s" in r:
            lines.append(
                f"{r['graph']:<8} {r['n']:<11,} {r['m']:<11,} {r['theta']:<10,} {r['imm_s']:<8} {r['goal_s']!s:<7} "
                f"{r['floor_s']:<9} {r['sampling_s']:<9} {r['selection_rr_s']:<10} {r['greedy_s']}"
            )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="amazon,twitter")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--evaluate", type=int, default=0, metavar="RUNS")
    ap.add_argument("--skip-check", action="store_true")
    args = ap.parse_args()
    rows: list[dict] = []
    if not args.skip_check:
        check_small(rows)
    for name in args.sizes.split(","):
        time_imm(rows, name, args.repeat, args.evaluate)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
