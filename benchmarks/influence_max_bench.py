"""Influence maximisation (issue 16): quality and speed of every method on generated graphs of the paper's sizes
(compute/generators/im_graphs.py), K = 50, p = 0.01, every seed set scored by the same independent Monte-Carlo
evaluator (20,000 runs, 95 % interval) and, since every set is scored on the same 20,000 worlds, compared in
pairs (``compare_spreads``: the per-world difference and its 95 % interval).

    python benchmarks/influence_max_bench.py [--graphs nethept,netphy,amazon] [--k 50] [--p 0.01]
        [--runs 20000] [--snapshots 200] [--greedy nethept] [--greedy-runs 2000] [--eps 0.1[,0.05...]]
        [--diagnose] [--backend cpu|gpu]

Methods: imm (one row per --eps: "imm" at the first, "imm@EPS" at the others), imgpu (R snapshots), degree,
influence, random, and on the graphs named by --greedy the
Monte-Carlo greedy (Kempe et al. with CELF's lazy evaluation, --greedy-runs runs per estimate, common random
numbers). The generated graphs carry no cascades, so "influence" ranks by each account's own expected spread
(an RR-set estimate over 2,000,000 sets: top-K by individual influence), the stand-in for the influence measure.
--diagnose adds, for IMM (first eps) against degree: the seed sets' overlap and the followers of the accounts
only one of them picked, and both sets' RR-set coverage estimates on IMM's own selection sets (which chose IMM's
set, so biased in its favour) and on as many fresh sets of another stream (unbiased). --backend gpu runs IMM,
the RR sets and the evaluator on the GPU twin (the same sets, seeds and runs as the CPU).
Prints one JSON line per (graph, method), then per graph the unpaired table and the paired differences.
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

import compute.algorithms._influence_max_kernels as kern
import compute.algorithms.influence_max as im
from compute.generators.im_graphs import paper_graph
from compute.influence_model import STREAM_SELECTION


def individual_spread(model: im.ICModel, backend: str = "cpu") -> np.ndarray:
    # 2M sets: with 100,000 a low-follower account's count is a handful of sets and noise decides the top K
    rr = im.rr_sets(model, seed=99, start=0, stop=2_000_000, backend=backend)
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


def rr_coverage(model: im.ICModel, rr: im.RRSets, nodes: np.ndarray) -> float:
    """W * (fraction of ``rr`` touched by ``nodes``): the RR-set estimate of their spread."""
    return float(kern.cover_in_order(rr.indptr, rr.nodes, model.n_nodes, nodes).sum() * model.total_weight / rr.count)


def diagnose(model: im.ICModel, imm: im.IMResult, degree: np.ndarray, backend: str) -> dict:
    a, b = set(imm.nodes.tolist()), set(degree.tolist())
    followers = model.graph.in_degree
    own = im.rr_sets(model, seed=0, start=0, stop=imm.rr_sets, stream=STREAM_SELECTION, backend=backend)
    own_cov = (rr_coverage(model, own, imm.nodes), rr_coverage(model, own, degree))
    del own
    fresh = im.rr_sets(model, seed=424242, start=0, stop=imm.rr_sets, stream=7, backend=backend)
    fresh_cov = (rr_coverage(model, fresh, imm.nodes), rr_coverage(model, fresh, degree))
    return {
        "overlap": len(a & b),
        "imm_only_followers": sorted(int(followers[v]) for v in a - b),
        "degree_only_followers": sorted(int(followers[v]) for v in b - a),
        "rr_own_imm_degree": [round(x, 3) for x in own_cov],
        "rr_fresh_imm_degree": [round(x, 3) for x in fresh_cov],
        "rr_sets": imm.rr_sets,
    }


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
    ap.add_argument("--eps", default="0.1", help="IMM's eps, a comma list: one IMM row each")
    ap.add_argument("--diagnose", action="store_true")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "gpu"))
    args = ap.parse_args()
    epses = [float(x) for x in args.eps.split(",")]
    rows = []
    for name in args.graphs.split(","):
        g = paper_graph(name, seed=0)
        model = im.ic_model(g, p=args.p if args.p == "wc" else float(args.p))
        results = {}
        for method in args.methods.split(","):
            for j, eps in enumerate(epses if method == "imm" else epses[:1]):
                t = time.perf_counter()
                scores = individual_spread(model, args.backend) if method == "influence" else None
                res = im.influence_max(model, k=args.k, method=method, eps=eps, seed=0, scores=scores,
                                       snapshots=args.snapshots, backend=args.backend)  # fmt: skip
                label = method if j == 0 else f"{method}@{eps:g}"
                results[label] = (res.nodes, time.perf_counter() - t, res)
        if name in args.greedy.split(","):
            t = time.perf_counter()
            nodes, evals = celf_greedy(model, args.k, args.greedy_runs)
            results["greedy"] = (nodes, time.perf_counter() - t, None)
        labels = list(results)
        t = time.perf_counter()
        cmp = im.compare_spreads(model, [results[m][0] for m in labels], runs=args.runs, seed=1,
                                 backend=args.backend)  # fmt: skip
        eval_seconds = time.perf_counter() - t
        sub = []
        for i, method in enumerate(labels):
            nodes, secs, res = results[method]
            ev = cmp.estimates[i]
            row = {
                "graph": name,
                "p": args.p,
                "n": g.n_nodes,
                "m": g.n_edges,
                "method": method,
                "backend": args.backend,
                "seconds": round(secs, 3),
                "spread": round(ev.mean, 3),
                "ci": [round(ev.ci_low, 3), round(ev.ci_high, 3)],
                "paired_vs": {
                    other: [round(x, 4) for x in cmp.difference(i, j)] for j, other in enumerate(labels) if j != i
                },
                "estimate": round(res.estimate, 3) if res is not None else None,
                "rr_sets": res.rr_sets if res is not None else None,
                "notes": res.notes if res is not None else [f"{evals} spread estimates of {args.greedy_runs} runs"],
            }
            sub.append(row)
            print(json.dumps(row), flush=True)
        print(json.dumps({"graph": name, "evaluator_seconds": round(eval_seconds, 3), "sets": len(labels),
                          "runs": args.runs}), flush=True)  # fmt: skip
        if args.diagnose and "imm" in results and "degree" in results:
            diag = diagnose(model, results["imm"][2], results["degree"][0], args.backend)
            print(json.dumps({"graph": name, "diagnose": diag}), flush=True)
        rows.append((name, labels, cmp, sub))
    print()
    for name, labels, cmp, sub in rows:
        best = max(r["spread"] for r in sub)
        print(f"{name}: spread (95% CI, unpaired)            vs best   | paired difference vs degree, 95% CI")
        d = labels.index("degree") if "degree" in labels else None
        for i, r in enumerate(sub):
            ci = f"{r['spread']:.2f} ({r['ci'][0]:.2f}..{r['ci'][1]:.2f})"
            line = f"  {r['method']:<10} {r['seconds']:>8.2f}s {ci:<28} {100 * (r['spread'] / best - 1):+.2f}%"
            if d is not None and i != d:
                m, lo, hi = cmp.difference(i, d)
                line += f"   | {m:+.3f} ({lo:+.3f}..{hi:+.3f})"
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
