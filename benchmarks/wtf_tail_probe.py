"""Issue 44, a probe of the walks' cost (not a product method): FORA whose walks stop after ``L`` visits, the
stopped walks' remaining mass spread as the graph's global PageRank, against FORA's full walks, at equal accuracy.

    NUMBA_NUM_THREADS=1 python benchmarks/wtf_tail_probe.py --scale 0.03 --random 24 --top-degree 12 \
        --runs 1.6e6,3.2e6,1.6e6:4,1.6e6:8

Why: FORA's walks (``compute.algorithms.wtf_push``) are most of the local method's time on the GPU
(``benchmarks/wtf_local_gpu.md``), ~6.7 visits a walk at damping 0.85. A walk that has left the seed's
neighbourhood adds little to the accounts near the top; past ``L`` visits its expected remaining contribution is
``share x PPR(from where it is)``, and the probe replaces that vector by the global PageRank (uniform restart,
one power iteration per graph and direction): fewer steps, a bias that this measures.

``--runs``: comma-separated ``W`` (FORA, full walks; ``W`` walks per unit of residual) or ``W:L`` (walks cut after
``L`` visits, the cut mass spread as the global PageRank). Push at ``--epsilon`` (1e-6) first, as FORA does.
Seeds per direction: ``--random`` accounts with an edge in it (``default_rng(1)``) and the ``--top-degree`` of
highest out-degree. Accuracy: the share of the estimate's top ``--circle`` - 1 (less the seed) whose exact PPR is
at least the exact 999th non-seed value (``wtf_push_bench.py``'s circle share). ``steps``: walk visits per seed,
what the GPU's walk kernel pays for. One JSON line per (direction, run).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _walks_cut(out_ptr, out_idx, seed, damping, per_unit, rng_seed, p, r, starts, cut_after):  # pragma: no cover
    """FORA's walks from the accounts ``starts`` with residual (``wtf_push._walks``' estimator), each stopping
    after at most ``cut_after`` visits; returns (the mass of the walks cut, visits)."""
    np.random.seed(rng_seed)
    cut = 0.0
    visits = 0
    for i in range(len(starts)):
        u = starts[i]
        ru = r[u]
        if ru <= 0.0:
            continue
        k = int(np.ceil(ru * per_unit))
        share = (1.0 - damping) * ru / k
        for _ in range(k):
            v = u
            n = 0
            while True:
                p[v] += share
                visits += 1
                n += 1
                if np.random.random() >= damping:
                    break
                lo = out_ptr[v]
                deg = out_ptr[v + 1] - lo
                v = seed if deg == 0 else out_idx[lo + np.random.randint(0, deg)]
                if n >= cut_after:
                    cut += ru / k  # the walk's expected remaining visits sum to its 1 / k of r[u]
                    break
    return cut, visits


def global_pagerank(out_ptr: np.ndarray, out_idx: np.ndarray, damping: float, iterations: int = 100) -> np.ndarray:
    """PageRank with a uniform restart over the walk's CSR (accounts with no edge restart uniformly)."""
    n = len(out_ptr) - 1
    deg = np.diff(out_ptr)
    src = np.repeat(np.arange(n), deg)
    x = np.full(n, 1.0 / n)
    for _ in range(iterations):
        w = np.where(deg > 0, x / np.maximum(deg, 1), 0.0)
        x = damping * np.bincount(out_idx, weights=w[src], minlength=n)
        x += (1.0 - damping) / n + damping * x[deg == 0].sum() / n
    return x


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.03)
    p.add_argument("--random", type=int, default=24)
    p.add_argument("--top-degree", type=int, default=12)
    p.add_argument("--runs", default="1.6e6,3.2e6,1.6e6:4,1.6e6:8")
    p.add_argument("--epsilon", type=float, default=1e-6)
    p.add_argument("--circle", type=int, default=1000)
    p.add_argument("--out", metavar="JSON", help="also write the rows here")
    args = p.parse_args(argv)
    from _setup import json_lines, twitter_graph
    from wtf_push_bench import _circle_share

    from compute._jit import njit
    from compute.algorithms import wtf_push
    from compute.algorithms.wtf import personalized_pagerank
    from compute.results import walk_adjacency

    walks_cut = njit(cache=False)(_walks_cut)
    runs = [(float(w), int(c[0]) if c else None) for w, *c in (r.split(":") for r in args.runs.split(","))]
    rows, emit = json_lines()
    g = twitter_graph(args.scale, 0, emit)
    rng = np.random.default_rng(1)
    d = 0.85
    for direction in ("follows", "followers"):
        (out_ptr, out_idx), _ = walk_adjacency(g, direction)
        deg = np.diff(out_ptr)
        pagerank = global_pagerank(out_ptr, out_idx, d)
        seeds = np.concatenate(
            [rng.choice(np.flatnonzero(deg > 0), args.random, replace=False), np.argsort(-deg)[: args.top_degree]]
        )
        exact = personalized_pagerank(g, seeds, direction=direction, backend="cpu").values
        st = wtf_push.state(g, direction)
        for walks, cut_after in runs:
            shares, visits = [], []
            for j, s in enumerate(seeds.tolist()):
                k, _ = wtf_push._push(
                    st.out_ptr, st.out_idx, s, d, args.epsilon, st.p, st.r, st.queued, st.seen, st.queue, st.touched
                )
                touched = st.touched[:k].copy()
                est = np.zeros(g.n_nodes)
                est[touched] = st.p[touched]
                cut, n = walks_cut(st.out_ptr, st.out_idx, s, d, walks, 12345 + s, est, st.r, touched,
                                   cut_after or 2**62)  # fmt: skip
                st.clear(touched)
                if cut_after:
                    est += cut * pagerank
                est[s] = -np.inf  # the estimate's circle less the seed, scored as wtf_push_bench scores a circle
                shares.append(_circle_share(exact[j], s, np.argpartition(-est, args.circle - 1)[: args.circle - 1],
                                            args.circle))  # fmt: skip
                visits.append(n)
            sh = np.array(shares)
            r_, t_ = sh[: args.random], sh[args.random :]
            emit({
                "case": "tail_probe", "scale": args.scale, "direction": direction, "epsilon": args.epsilon,
                "walks": walks, "cut_after": cut_after, "visits_median": float(np.median(visits)),
                "random_min_p10_median": [round(float(x), 4) for x in (r_.min(), np.percentile(r_, 10), np.median(r_))],
                "top_degree_min_median": [round(float(x), 4) for x in (t_.min(), np.median(t_))],
            })  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
