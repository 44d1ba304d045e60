"""CPU figures of WTF (issue 15) on the follower graph of the ``twitter`` preset: the product candidates (SciPy's
CSR times a dense block against the numba kernel of compute/algorithms/wtf.py, at 1 and 64 columns), then
:func:`compute.algorithms.wtf.wtf` for one account and for a batch of 64, in both directions.

    python benchmarks/wtf_cpu_bench.py --scale 0.1 --out benchmarks/results/wtf_cpu_tw0.1.json

Seeds are uniform random accounts (``numpy.random.default_rng(seed)``). The first call on a graph builds the
walk (reverse CSR, 1 / out-degree) and is timed apart ("walk_s"); the timings after it are warm, as in a
worker that keeps the graph. Prints JSON lines, then a table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--out", metavar="JSON", help="also write the rows here")
    p.add_argument("--products-only", action="store_true", help="only the products, not the wtf() calls")
    args = p.parse_args(argv)

    from _setup import twitter_graph
    from scipy.sparse import csr_array

    from compute.algorithms import wtf as mod

    rows: list[dict] = []

    def emit(row: dict) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)

    g = twitter_graph(args.scale, args.seed, emit)

    t = time.perf_counter()
    walk = mod._walk(g, "follows")
    emit({"case": "walk", "direction": "follows", "walk_s": time.perf_counter() - t})
    pattern = csr_array((np.ones(len(walk.in_idx)), walk.in_idx, walk.in_ptr), shape=(g.n_nodes, g.n_nodes))
    rng = np.random.default_rng(args.seed)
    for k in (1, 64):
        y = rng.random((g.n_nodes, k))
        out = np.empty_like(y)
        mod._pull_parallel(walk.in_ptr, walk.in_idx, y, out)  # compile / load
        same = bool(np.array_equal(out, pattern @ y))
        cases = [
            ("scipy csr @ dense", lambda y=y: pattern @ y),
            ("numba kernel", lambda y=y, out=out: mod._pull_parallel(walk.in_ptr, walk.in_idx, y, out)),
            ("numba kernel, serial", lambda y=y, out=out: mod._pull_serial(walk.in_ptr, walk.in_idx, y, out)),
        ]
        if k == 1:  # the one-column loop a single seed takes (_Walk.pull), on all cores and on one
            y1, out1 = y[:, 0], out[:, 0]
            for kernel in (mod._pull_one_parallel, mod._pull_one_serial):
                kernel(walk.in_ptr, walk.in_idx, y1, out1)
                same = same and bool(np.array_equal(out1, pattern @ y1))
            cases += [
                (
                    "one-column kernel",
                    lambda y1=y1, out1=out1: mod._pull_one_parallel(walk.in_ptr, walk.in_idx, y1, out1),
                ),
                (
                    "one-column kernel, serial",
                    lambda y1=y1, out1=out1: mod._pull_one_serial(walk.in_ptr, walk.in_idx, y1, out1),
                ),
            ]
        for name, fn in cases:
            s = _best(fn, args.repeat)
            emit({"case": "product", "library": name, "columns": k, "s": s, "per_column_ms": 1e3 * s / k,
                  "same_bits": same})  # fmt: skip

    seeds = rng.integers(0, g.n_nodes, 64)
    for direction in () if args.products_only else ("follows", "followers"):
        t = time.perf_counter()
        mod._walk(g, direction)
        walk_s = time.perf_counter() - t
        t = time.perf_counter()
        one = mod.wtf(g, seeds[:1], direction=direction, backend="cpu")[0]
        s1 = time.perf_counter() - t
        emit({"case": "wtf", "direction": direction, "seeds": 1, "s": s1, "per_account_s": s1,
              "ppr_iterations": [one.iterations], "money_iterations": [one.money_iterations],
              "walk_s": walk_s})  # fmt: skip
        t = time.perf_counter()
        batch = mod.wtf(g, seeds, direction=direction, backend="cpu")
        s64 = time.perf_counter() - t
        emit({"case": "wtf", "direction": direction, "seeds": 64, "s": s64, "per_account_s": s64 / 64,
              "ppr_iterations": [r.iterations for r in batch], "money_iterations": [r.money_iterations for r in batch],
              "same_as_alone": bool(np.array_equal(batch[0].relevance_score, one.relevance_score))})  # fmt: skip

    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    print(f"\n{'case':<10} {'what':<28} {'time':>10} {'per account/column':>20}")
    for r in rows:
        if r["case"] == "product":
            what = f"{r['library']} k={r['columns']}"
            print(f"{'product':<10} {what:<28} {r['s']:>9.3f}s {r['per_column_ms']:>17.1f}ms")
        elif r["case"] == "wtf":
            what = f"{r['direction']} x{r['seeds']} (PPR it {min(r['ppr_iterations'])}-{max(r['ppr_iterations'])})"
            print(f"{'wtf':<10} {what:<28} {r['s']:>9.2f}s {r['per_account_s']:>19.3f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
