"""Issue 44 on the GPU: who amplifies whom with the local methods (``push``, ``fora``) of the GPU twin against the
exact method, on the follower graph of the ``twitter`` preset (scale 2.0: 6.35M accounts, 683M follows).

    python3 benchmarks/wtf_local_gpu_bench.py --scale 2.0 --random 1000 --top-degree 100 \
        --runs fora:1e-6:4e6 --out $OUT/wtf_local_gpu.json

``--input PATH`` (repeat) measures the follower graph of those files instead (a follows CSV, an edge list, a
Twitter15/16 trees folder: what ``python -m compute wtf`` reads).

``--runs``: ``push:EPSILON`` or ``fora:EPSILON:WALKS`` (walks per unit of residual), comma-separated.

Seeds, per direction: ``--random`` uniform accounts with an edge in that direction (``default_rng(--seed)``) and
the ``--top-degree`` accounts of highest out-degree in it (the hard case: their PPR spreads widest). The exact
method (``tol`` 1e-10) runs in blocks of 64; while a block's exact PPR is on the device, each local method runs
on each of its seeds alone (what an account page asks), and is scored against it:

* circle: the share of the local circle (less the seed) whose exact PPR is at least the exact (circle-1)-th
  largest non-seed value (an account tied with the last one in is right); where the seed reaches fewer accounts
  than that (a small component), the share of the accounts it reaches with an exact PPR above 1e-10 (the exact
  method's tolerance) that the local circle holds;
* relevance and similarity: the share of the exact top-``--top`` list the local list holds (as sets).

Time, per account: the wall clock of ``wtf(g, [seed], method=..., backend="gpu")`` (estimate, circle, Money and
the lists: what an account page needs) after a warm-up; the estimate alone (synchronized); and per account in a
batch of 64 random seeds (``--batches`` batches); and, on 16 random seeds, one account's steps apart (the push alone,
the estimate and its own steps, the circle, Money, and circle + Money + lists from the estimate). Prints JSON lines,
then the table.
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


def _share(exact_ids: list[str], got_ids: list[str]) -> float:
    return 1.0 if not exact_ids else len(set(exact_ids) & set(got_ids)) / len(exact_ids)


def _phases(cp, twin, g, dg, direction: str, seeds, run: tuple, circle: int, top: int) -> dict:
    """Median milliseconds of one account's steps (synchronized wall clock): the estimate, the circle of trust
    (candidates and ranking), Money, and the lists (:func:`compute.results.recommendations`)."""
    from compute.gpu.wtf_push import local_block
    from compute.results import circle_of_trust

    method, eps, walks = run
    local = walks if method in ("fora", "walks") else 0.0
    out: dict[str, list[float]] = {"push_ms": [], "estimate_ms": [], "circle_ms": [], "money_ms": [], "whole_ms": []}
    csr = dg.out_csr(direction)
    for seed in seeds:
        block = np.array([seed], dtype=np.int64)
        inside: dict = {}  # the estimate's own steps, synchronized between them
        local_block(csr.indptr, csr.indices, block, 1, damping=0.85, epsilon=eps, walks=local, steps=inside)
        for key, value in inside.items():
            out.setdefault(f"step_{key}", []).append(value)
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        twin._estimate(dg, direction, block, 0.85, 1e-10, 100, 0.0, eps)
        cp.cuda.Device().synchronize()
        out["push_ms"].append(1e3 * (time.perf_counter() - t0))
        t0 = time.perf_counter()
        est = twin._estimate(dg, direction, block, 0.85, 1e-10, 100, local, eps)
        cp.cuda.Device().synchronize()
        t1 = time.perf_counter()
        x, ranks, order = est[:3]
        seed_ppr = x[ranks, cp.arange(1)].get()
        circles = [
            circle_of_trust(nodes, ppr, int(block[j]), float(seed_ppr[j]), circle)
            for j, (nodes, ppr) in enumerate(twin._circle_candidates(x, ranks, order, circle))
        ]
        t2 = time.perf_counter()
        twin._money_block(dg, direction, block, [np.sort(c[0]) for c in circles], 0.15, 1e-10, 100)
        cp.cuda.Device().synchronize()
        t3 = time.perf_counter()
        after: dict = {}  # circle + Money + lists, each step synchronized (the whole is timed without syncs)
        twin._recommend_block(g, dg, direction, block, est, circle, top, 0.15, 1e-10, 100)
        cp.cuda.Device().synchronize()
        t4 = time.perf_counter()
        twin._recommend_block(g, dg, direction, block, est, circle, top, 0.15, 1e-10, 100, steps=after)
        for key, value in after.items():
            out.setdefault(f"after_{key}", []).append(value)
        out["estimate_ms"].append(1e3 * (t1 - t0))
        out["circle_ms"].append(1e3 * (t2 - t1))
        out["money_ms"].append(1e3 * (t3 - t2))
        out["whole_ms"].append(1e3 * (t4 - t3))
    return {k: float(np.median(v)) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    from _setup import add_input_argument

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=2.0)
    add_input_argument(p)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--random", type=int, default=1000)
    p.add_argument("--top-degree", type=int, default=100)
    p.add_argument("--runs", default="fora:1e-6:4e6")
    p.add_argument("--direction", choices=("follows", "followers", "both"), default="both")
    p.add_argument("--batches", type=int, default=2, metavar="N", help="batches of 64 random seeds timed per run")
    p.add_argument(
        "--phase-hubs",
        type=int,
        default=0,
        metavar="N",
        help="also time one account's steps on the N seeds of highest degree",
    )
    p.add_argument("--circle", type=int, default=1000)
    p.add_argument("--top", type=int, default=20)
    p.add_argument("--out", metavar="JSON", help="also write the rows here")
    args = p.parse_args(argv)
    from _setup import EXACT_FLOOR, bench_graph, json_lines, wtf_run_name, wtf_runs

    runs = wtf_runs(args.runs)

    import cupy as cp

    from compute.algorithms.wtf import wtf
    from compute.gpu import wtf as twin
    from compute.results import RANK_SLACK

    rows, emit = json_lines()

    def sync() -> None:
        cp.cuda.Device().synchronize()

    name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
    emit({"case": "device", "name": name.decode() if isinstance(name, bytes) else name})
    g = bench_graph(args.input, args.scale, args.seed, emit)
    t = time.perf_counter()
    dg = twin.device_graph(g)
    sync()
    emit({"case": "upload", "s": time.perf_counter() - t})

    rng = np.random.default_rng(args.seed)
    directions = ("follows", "followers") if args.direction == "both" else (args.direction,)
    summary: list[dict] = []
    want = args.circle - 1
    for direction in directions:
        deg = dg.out_csr(direction).degree.get()
        with_edges = np.flatnonzero(deg > 0)
        picked = {
            "random": rng.choice(with_edges, size=min(args.random, len(with_edges)), replace=False),
            "top-degree": np.argsort(-deg, kind="stable")[: args.top_degree],
        }
        walk = dg.walk(direction)
        for method, eps, walks in runs:  # compile and allocate once
            wtf(g, picked["random"][:1], direction=direction, method=method, epsilon=eps, walks=walks, backend="gpu")
        wtf(g, picked["random"][:1], direction=direction, backend="gpu")
        for r in runs:
            steps = _phases(cp, twin, g, dg, direction, picked["random"][:16], r, args.circle, args.top)
            emit({"case": "phases", "direction": direction, "run": list(r), "seeds": 16, **steps})
            if args.phase_hubs:
                steps = _phases(cp, twin, g, dg, direction, picked["top-degree"][: args.phase_hubs], r, args.circle,
                                args.top)  # fmt: skip
                emit({"case": "phases", "direction": direction, "run": list(r), "hubs": args.phase_hubs, **steps})
        from compute.gpu._device import CAPTURE_FAILURES

        emit({"case": "graph_captures", "failures": CAPTURE_FAILURES[:3], "n_failures": len(CAPTURE_FAILURES)})
        for kind, seeds in picked.items():
            acc = {r: {"circle": [], "relevance": [], "similarity": [], "wtf_s": [], "ppr_s": []} for r in runs}
            exact_s = 0.0
            for lo in range(0, len(seeds), 64):
                block = np.asarray(seeds[lo : lo + 64], dtype=np.int64)
                sync()
                t = time.perf_counter()
                est = twin._estimate(dg, direction, block, 0.85, 1e-10, 100, None, 1e-7)
                exact = twin._recommend_block(g, dg, direction, block, est, args.circle, args.top, 0.15, 1e-10, 100)
                sync()
                exact_s += time.perf_counter() - t
                x, ranks = est[0], est[1]
                kth, reached = [], []
                for j in range(len(block)):
                    col = x[:, j].copy()
                    col[ranks[j]] = -1.0
                    kth.append(float(cp.partition(col, len(col) - want)[len(col) - want].get()))
                    reached.append(int(cp.count_nonzero(col > EXACT_FLOOR).get()))
                    del col
                exact_json = [r.to_json(g.ids) for r in exact]
                for r in runs:
                    method, eps, walks = r
                    kw = {"method": method, "epsilon": eps, "walks": walks}
                    for j, seed in enumerate(block.tolist()):
                        sync()
                        t = time.perf_counter()
                        twin._estimate(dg, direction, block[j : j + 1], 0.85, 1e-10, 100,
                                       walks if method in ("fora", "walks") else 0.0, eps)  # fmt: skip
                        sync()
                        acc[r]["ppr_s"].append(time.perf_counter() - t)
                        t = time.perf_counter()
                        (rec,) = wtf(g, [seed], direction=direction, circle=args.circle, top=args.top, backend="gpu",
                                     **kw)  # fmt: skip
                        acc[r]["wtf_s"].append(time.perf_counter() - t)
                        members = np.asarray(rec.circle, dtype=np.int64)
                        members = members[members != seed]
                        vals = x[walk.rank[cp.asarray(members)], j].get() if len(members) else np.zeros(0)
                        if reached[j] <= want:  # a small component: the share of what the seed reaches
                            acc[r]["circle"].append(
                                float(np.count_nonzero(vals > EXACT_FLOOR)) / reached[j] if reached[j] else 1.0
                            )
                        elif len(members):
                            acc[r]["circle"].append(float(np.mean(vals >= kth[j] * (1.0 - RANK_SLACK))))
                        else:
                            acc[r]["circle"].append(1.0)
                        got = rec.to_json(g.ids)
                        for key in ("relevance", "similarity"):
                            acc[r][key].append(_share([e["user_id"] for e in exact_json[j][key]],
                                                      [e["user_id"] for e in got[key]]))  # fmt: skip
                del x, est
            for r in runs:
                method, eps, walks = r
                row = {"case": method, "direction": direction, "seeds": kind, "n": len(seeds), "epsilon": eps,
                       "walks": walks, **acc[r], "exact_wtf_s_per_account": exact_s / len(seeds)}  # fmt: skip
                if kind == "random" and args.batches:
                    times = []
                    for _ in range(args.batches):
                        batch = rng.choice(with_edges, size=64, replace=False)
                        t = time.perf_counter()
                        wtf(g, batch, direction=direction, method=method, epsilon=eps, walks=walks, backend="gpu")
                        times.append((time.perf_counter() - t) / 64)
                    row["batch_s_per_account"] = times
                emit(row)
                summary.append(row)
    print()
    print("| direction | seeds | method | circle min / p1 / median | relevance min / p5 / median | similarity min / p5 "
          "/ median | wtf per account median / p95 | estimate alone median | batch of 64 per account | exact per "
          "account (blocks of 64) |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in summary:
        c, rl, sm = np.array(r["circle"]), np.array(r["relevance"]), np.array(r["similarity"])
        w, pu = np.array(r["wtf_s"]) * 1e3, np.array(r["ppr_s"]) * 1e3
        how = wtf_run_name(r)
        batch = f"{np.median(r['batch_s_per_account']) * 1e3:.2f} ms" if r.get("batch_s_per_account") else "—"
        print(f"| {r['direction']} | {r['n']} {r['seeds']} | {how} | {c.min():.3f} / {np.percentile(c, 1):.3f} / "
              f"{np.median(c):.4f} | {rl.min():.2f} / {np.percentile(rl, 5):.2f} / {np.median(rl):.2f} | "
              f"{sm.min():.2f} / {np.percentile(sm, 5):.2f} / {np.median(sm):.2f} | {np.median(w):.2f} / "
              f"{np.percentile(w, 95):.2f} ms | {np.median(pu):.2f} ms | {batch} | "
              f"{r['exact_wtf_s_per_account'] * 1e3:.0f} ms |")  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
