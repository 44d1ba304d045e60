"""A web process's first ranking pages after a run, at the workspace ``benchmarks/web_bench.py`` left in the
database: the all-time snapshot is read whole once (as by a process that held none), ordered as the pages ask,
advanced by a synthetic change of ``--changed`` random pairs (what a run records), and then the pages' first reads
of the new version are timed: the spreaders' and every account's first page by total (the overview and the
ranking page), the first page by cascades (a variant one click away). Three changes each.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_10m .venv/bin/python benchmarks/snapshot_page_bench.py
"""

from __future__ import annotations

import argparse
import json
import time

from _setup import web_bench_workspace


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--changed", type=int, default=20_000)
    args = ap.parse_args()
    ws = web_bench_workspace("snapshot_page_bench")
    if ws is None:
        return 2
    import numpy as np

    from monitor.algorithms.influence import AllTimeDelta
    from monitor.selectors import rankings

    snap = rankings._AllTime.read(ws).advanced([], 1)  # pairs in code order, as after a process's first advance
    reads = [(None, "total", True), (None, "total", False), (None, "cascades", True)]
    for labels, sort, spreaders_only in reads:
        snap.page(labels, sort, 50, 0, spreaders_only=spreaders_only)
    rng = np.random.default_rng(0)
    for version in (2, 3, 4):
        idx = rng.choice(len(snap.account), args.changed, replace=False)
        change = AllTimeDelta(snap.account[idx], snap.label[idx], rng.random(args.changed) * 10,
                              np.ones(args.changed, np.int64), snap.own[idx])  # fmt: skip
        t = time.perf_counter()
        snap = snap.advanced([change], version)
        took = {"advance": time.perf_counter() - t}
        for labels, sort, spreaders_only in reads:
            t = time.perf_counter()
            snap.page(labels, sort, 50, 0, spreaders_only=spreaders_only)
            took[f"{sort}{' spreaders' if spreaders_only else ''}"] = time.perf_counter() - t
        row = {"pairs": len(snap.account), "changed": args.changed, **{k: round(v, 3) for k, v in took.items()}}
        print(json.dumps({**row, "sum": round(sum(took.values()), 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
