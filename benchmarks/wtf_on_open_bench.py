"""Issue 44 in the product: what an account page pays to compute its two who-amplifies-whom panels when it opens
(``monitor.algorithms.wtf.compute_on_open``: the exact method on the CPU with a run's defaults, circle 1,000,
K 20, iteration cap 100, one seed, both directions), on the ``twitter`` preset's follower graph at several sizes.
It sets ``SPREADWATCH_WTF_ON_OPEN_EDGES``, the largest graph a page computes on.

    python benchmarks/wtf_on_open_bench.py --scales 0.003,0.01,0.03 --seeds 16 \
        --out benchmarks/results/wtf_on_open_<date>.json

Seeds: ``--seeds`` uniform accounts with a follow edge and the ``--seeds`` accounts of highest out-degree. Time:
wall clock of both directions for one account, after one warm-up call (numba compiled), on every core numba
has (``NUMBA_NUM_THREADS``). Prints JSON lines, then a table (median and p95 per seed kind and graph).
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", default="0.003,0.01,0.03", help="comma-separated scales of the twitter preset")
    ap.add_argument("--seeds", type=int, default=16, help="random seeds, and as many of the highest out-degree")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the rows here too (JSON)")
    args = ap.parse_args()

    import numba
    from _setup import twitter_graph

    from compute.algorithms.wtf import wtf

    rows: list[dict] = []

    def emit(row: dict) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)

    for scale in (float(s) for s in args.scales.split(",")):
        g = twitter_graph(scale, args.seed, lambda r, scale=scale: emit(r | {"scale": scale}))
        out_deg = np.diff(np.asarray(g.indptr))
        with_edge = np.flatnonzero(out_deg > 0)
        rng = np.random.default_rng(args.seed)
        kinds = {
            "random": rng.choice(with_edge, min(args.seeds, len(with_edge)), replace=False),
            "top-degree": np.argsort(-out_deg, kind="stable")[: args.seeds],
        }

        def page(i: int, g=g) -> float:
            t = time.perf_counter()
            for direction in ("follows", "followers"):
                wtf(g, np.asarray([i]), direction=direction, circle=1000, top=20, max_iter=100, backend="cpu")
            return time.perf_counter() - t

        page(int(with_edge[0]))  # numba compiled, outside the timings
        for kind, seeds in kinds.items():
            times = [page(int(i)) for i in seeds]
            emit(
                {
                    "case": "page",
                    "scale": scale,
                    "follows": g.n_edges,
                    "users": g.n_nodes,
                    "seeds": kind,
                    "n": len(times),
                    "median_ms": 1000 * float(np.median(times)),
                    "p95_ms": 1000 * float(np.percentile(times, 95)),
                    "threads": numba.config.NUMBA_NUM_THREADS,
                }
            )
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    print("\n| follows | accounts | seeds | both panels, median / p95 |\n| --- | --- | --- | --- |")
    for r in rows:
        if r["case"] == "page":
            print(f"| {r['follows']:,} | {r['users']:,} | {r['seeds']} | {r['median_ms']:.0f} / {r['p95_ms']:.0f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
