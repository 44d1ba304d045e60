"""Issue 44 on the CPU: who amplifies whom with the local forward push (``method="push"``) against the exact
power iteration, on the follower graph of the ``twitter`` preset: accuracy and time per account, per epsilon.

    python benchmarks/wtf_push_bench.py --scale 0.1 --random 64 --top-degree 32 \
        --runs push:1e-6,push:1e-7,fora:1e-6:1e6 --out benchmarks/results/wtf_push_tw0.1.json

``--input PATH`` (repeat) measures the follower graph of those files instead (a follows CSV, an edge list, a
Twitter15/16 trees folder: what ``python -m compute wtf`` reads).

``--runs``: ``push:EPSILON`` or ``fora:EPSILON:WALKS`` (walks per unit of residual), comma-separated.

Seeds, per direction: ``--random`` uniform accounts with an edge in that direction (``default_rng(--seed)``)
and the ``--top-degree`` accounts of highest out-degree in it (the hard case: their PPR spreads widest).
Accuracy, per seed, against the exact method (``tol`` 1e-10, ``max_iter`` 100):

* circle: the share of the push circle (less the seed) whose exact PPR is at least the exact (circle-1)-th
  largest non-seed value (so an account tied with the last one in is right); where the seed reaches fewer
  accounts than that (a small component), the share of the accounts it reaches with an exact PPR above 1e-10 (the
  exact method's tolerance) that the push circle holds;
* relevance and similarity: the share of the exact top-``--top`` list that the push list holds (as sets).

Time: wall clock of the exact ``wtf`` over the seeds (blocks of 64), per account; of ``wtf(..., method=...)`` for
one account (circle of trust and Money, what an account page
needs), after one warm-up call (numba compiled, the push's arrays allocated), and of the PPR alone. Prints JSON
lines, then a table of the distributions (min, 1st percentile, median) and of the times (median, p95).
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


def _circle_share(exact_x: np.ndarray, seed: int, members: np.ndarray, circle: int) -> float:
    """How much of the exact circle the local one gets right. Where the seed reaches more than ``circle`` - 1
    accounts: the share of the local circle (less the seed) whose exact PPR is at least the exact (circle-1)-th
    largest non-seed value, less the ranking's slack. Where it reaches fewer (a small component: every account
    it reaches is in the exact circle): the share of those accounts the local circle holds, counting only those
    whose exact PPR is above ``EXACT_FLOOR`` (below it the exact method's own values are within its tolerance)."""
    from _setup import EXACT_FLOOR

    from compute.results import RANK_SLACK

    others = np.delete(exact_x, seed)
    want = circle - 1
    got = members[members != seed]
    reached = int(np.count_nonzero(others > EXACT_FLOOR))
    if reached <= want:
        return 1.0 if not reached else float(np.count_nonzero(exact_x[got] > EXACT_FLOOR)) / reached
    kth = np.partition(others, len(others) - want)[len(others) - want]
    if not len(got):
        return 1.0
    return float(np.mean(exact_x[got] >= kth * (1.0 - RANK_SLACK)))


def _list_share(exact_ids: list[str], push_ids: list[str]) -> float:
    return 1.0 if not exact_ids else len(set(exact_ids) & set(push_ids)) / len(exact_ids)


def main(argv: list[str] | None = None) -> int:
    from _setup import add_input_argument

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.1)
    add_input_argument(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--random", type=int, default=64)
    p.add_argument("--top-degree", type=int, default=32)
    p.add_argument("--runs", default="push:1e-6,push:1e-7,fora:1e-6:1e6")
    p.add_argument("--circle", type=int, default=1000)
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--out", metavar="JSON", help="also write the rows here")
    args = p.parse_args(argv)
    from _setup import bench_graph, json_lines, wtf_run_name, wtf_runs

    runs = wtf_runs(args.runs)

    from compute.algorithms import wtf_push
    from compute.algorithms.wtf import personalized_pagerank, wtf
    from compute.results import walk_adjacency

    rows, emit = json_lines()

    g = bench_graph(args.input, args.scale, args.seed, emit)
    rng = np.random.default_rng(args.seed)
    summary = []
    for direction in ("follows", "followers"):
        (out_ptr, _), _ = walk_adjacency(g, direction)
        deg = np.diff(out_ptr)
        with_edges = np.flatnonzero(deg > 0)
        picked = {
            "random": np.sort(rng.choice(with_edges, size=min(args.random, len(with_edges)), replace=False)),
            "top-degree": np.sort(np.argsort(-deg, kind="stable")[: args.top_degree]),
        }
        for kind, seeds in picked.items():
            x = personalized_pagerank(g, seeds, direction=direction, backend="cpu").values
            t = time.perf_counter()
            ex = wtf(g, seeds, direction=direction, circle=args.circle, top=args.top, backend="cpu")
            exact_s = (time.perf_counter() - t) / len(seeds)  # the exact pipeline alone, in blocks of 64
            exact_json = [r.to_json(g.ids) for r in ex]
            for method, eps, walks in runs:
                kw = {"method": method, "epsilon": eps, "backend": "cpu", **({"walks": walks} if walks else {})}
                wtf(g, seeds[:1], direction=direction, **kw)  # warm-up
                circle, rel, sim, times, push_times, pushes, residual = [], [], [], [], [], [], []
                st = wtf_push.state(g, direction)
                for j, s in enumerate(seeds.tolist()):
                    t = time.perf_counter()
                    (rec,) = wtf(g, [s], direction=direction, circle=args.circle, top=args.top, **kw)
                    times.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    touched, n_push, left = st.run(s, 0.85, eps, walks)
                    push_times.append(time.perf_counter() - t)
                    st.clear(touched)
                    pushes.append(n_push)
                    residual.append(left)
                    circle.append(_circle_share(x[j], s, rec.circle, args.circle))
                    pj = rec.to_json(g.ids)
                    rel.append(_list_share([r["user_id"] for r in exact_json[j]["relevance"]],
                                           [r["user_id"] for r in pj["relevance"]]))  # fmt: skip
                    sim.append(_list_share([r["user_id"] for r in exact_json[j]["similarity"]],
                                           [r["user_id"] for r in pj["similarity"]]))  # fmt: skip
                row = {
                    "case": method, "direction": direction, "seeds": kind, "n": len(seeds), "epsilon": eps,
                    "walks": walks,
                    "circle": circle, "relevance": rel, "similarity": sim, "wtf_s": times, "push_s": push_times,
                    "pushes": pushes, "residual": residual, "exact_wtf_s_per_account": exact_s,
                }  # fmt: skip
                emit(row)
                summary.append(row)
    print()
    print("| direction | seeds | method | circle min / p1 / median | relevance min / median | similarity min / median "
          "| wtf per account median / p95 | PPR alone median | exact per account |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in summary:
        c, rl, sm = np.array(r["circle"]), np.array(r["relevance"]), np.array(r["similarity"])
        w, pu = np.array(r["wtf_s"]) * 1e3, np.array(r["push_s"]) * 1e3
        how = wtf_run_name(r)
        print(f"| {r['direction']} | {r['n']} {r['seeds']} | {how} | {c.min():.3f} / "
              f"{np.percentile(c, 1):.3f} / {np.median(c):.4f} | {rl.min():.2f} / {np.median(rl):.2f} | "
              f"{sm.min():.2f} / {np.median(sm):.2f} | {np.median(w):.1f} / {np.percentile(w, 95):.1f} ms | "
              f"{np.median(pu):.1f} ms | {r['exact_wtf_s_per_account'] * 1e3:.0f} ms |")  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
