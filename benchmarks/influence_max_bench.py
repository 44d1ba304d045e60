"""Influence maximisation on the CPU (issue 16): quality and speed of every method on generated graphs of the
paper's sizes (compute/generators/im_graphs.py), K = 50, p = 0.01, every seed set scored by the same
independent Monte-Carlo evaluator (20,000 runs, 95 % interval).

    python benchmarks/influence_max_bench.py [--graphs nethept,netphy,amazon] [--k 50] [--p 0.01]
        [--runs 20000] [--snapshots 200] [--greedy nethept] [--greedy-runs 2000]

Methods: imm (eps 0.1), imgpu (R snapshots), degree, influence, random, and on the graphs named by --greedy the
Monte-Carlo greedy (Kempe et al. with CELF's lazy evaluation, --greedy-runs runs per estimate, common random
numbers). The generated graphs carry no cascades, so "influence" ranks by each account's own expected spread
(an RR-set estimate over 2,000,000 sets: top-K by individual influence), the stand-in for the influence measure.
Prints one JSON line per (graph, method), then a table.
"""

from __future__ import annotations

import argparse
import heapq
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import compute.algorithms.influence_max as im
from compute.generators.im_graphs import paper_graph


def individual_spread(model: im.ICModel) -> np.ndarray:
    # 2M sets: with 100,000 a low-follower account's count is a handful of sets and noise decides the top K
    rr = im.rr_sets(model, seed=99, start=0, stop=2_000_000, backend="cpu")
    return np.bincount(rr.nodes, minlength=model.n_nodes) * (model.total_weight / rr.count)


def celf_greedy(model: im.ICModel, k: int, runs: int) -> tuple[np.ndarray, int]:
    """Kempe et al.'s greedy with CELF: marginal gains only shrink, so a stale gain on top of the heap that stays
    on top after recomputing is the best. Every estimate uses the same seed (common random numbers)."""

    def spread(nodes: list[int]) -> float:
        return im.evaluate_spread(model, np.asarray(nodes, np.int64), runs=runs, seed=7, backend="cpu").mean

    heap = [(-spread([v]), v, 0) for v in range(model.n_nodes)]
    heapq.heapify(heap)
    chosen: list[int] = []
    base = 0.0
    evaluations = model.n_nodes
    while len(chosen) < k and heap:
        neg, v, when = heapq.heappop(heap)
        if when == len(chosen):
            chosen.append(v)
            base -= neg
            continue
        gain = spread([*chosen, v]) - base
        evaluations += 1
        heapq.heappush(heap, (-gain, v, len(chosen)))
    return np.asarray(chosen, np.int64), evaluations


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default="nethept,netphy,amazon")
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--p", default="0.01", help="a probability or wc (weighted cascade)")
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--snapshots", type=int, default=200)
    ap.add_argument("--greedy", default="nethept", help="graphs to run the Monte-Carlo greedy on ('' for none)")
    ap.add_argument("--greedy-runs", type=int, default=2000)
    ap.add_argument("--methods", default="imm,imgpu,degree,influence,random")
    args = ap.parse_args()
    rows = []
    for name in args.graphs.split(","):
        g = paper_graph(name, seed=0)
        model = im.ic_model(g, p=args.p if args.p == "wc" else float(args.p))
        results = {}
        for method in args.methods.split(","):
            t = time.perf_counter()
            scores = individual_spread(model) if method == "influence" else None
            res = im.influence_max(model, k=args.k, method=method, eps=0.1, seed=0, scores=scores,
                                   snapshots=args.snapshots, backend="cpu")  # fmt: skip
            results[method] = (res.nodes, time.perf_counter() - t, res)
        if name in args.greedy.split(","):
            t = time.perf_counter()
            nodes, evals = celf_greedy(model, args.k, args.greedy_runs)
            results["greedy"] = (nodes, time.perf_counter() - t, None)
        for method, (nodes, secs, res) in results.items():
            ev = im.evaluate_spread(model, nodes, runs=args.runs, seed=1, backend="cpu")
            row = {
                "graph": name,
                "p": args.p,
                "n": g.n_nodes,
                "m": g.n_edges,
                "method": method,
                "seconds": round(secs, 3),
                "spread": round(ev.mean, 3),
                "ci": [round(ev.ci_low, 3), round(ev.ci_high, 3)],
                "estimate": round(res.estimate, 3) if res is not None else None,
                "rr_sets": res.rr_sets if res is not None else None,
                "notes": res.notes if res is not None else [f"{evals} spread estimates of {args.greedy_runs} runs"],
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print("graph    method     seconds   spread (95% CI)                vs best")
    for name in args.graphs.split(","):
        sub = [r for r in rows if r["graph"] == name]
        best = max(r["spread"] for r in sub) if sub else 0
        for r in sub:
            ci = f"{r['spread']:.2f} ({r['ci'][0]:.2f}..{r['ci'][1]:.2f})"
            print(f"{name:<8} {r['method']:<10} {r['seconds']:<9} {ci:<30} {100 * (r['spread'] / best - 1):+.2f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
