"""The statements between an import's merge and its run's first batch, each in two forms alternated in one process,
on the workspace ``benchmarks/web_bench.py`` left:

* ``analyze``: the import's planner statistics (``analyze_after_bulk_write`` over the tables the import analyses,
  every one counted stale), a table with a raised statistics target analysed as two samples
  (``monitor.db._split_wide_samples``) or whole;
* ``plan``: the run's plan over every tweet of the workspace (a first import's run), the retweets counted by one
  scan of the workspace's partition or by one probe of the pair index per tweet
  (``monitor.algorithms.influence.batch._planned_cascades``).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_10 PYTHONPATH=. \\
        .venv/bin/python benchmarks/run_start_bench.py analyze|plan [--rounds 3]

Prints one line per round and form: the seconds (and for the plan the participants counted).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from _setup import web_bench_workspace


def _analyze(ws, rounds: int) -> None:
    from django.db import connection

    from monitor import db, partitions

    split = db._split_wide_samples
    tables = ["monitor_account", "monitor_tweet", "monitor_tweetdocument"]
    tables.append(partitions.name("monitor_followercount", ws.pk))
    try:
        for rnd in range(rounds):
            for name, fn in (("split", split), ("whole", lambda cur, t: t)):
                db._split_wide_samples = fn
                with connection.cursor() as cur:
                    t = time.perf_counter()
                    db.analyze_after_bulk_write(cur, tables, 10**9)
                    print(rnd, name, f"{time.perf_counter() - t:.3f} s", flush=True)
    finally:
        db._split_wide_samples = split


def _plan(ws, rounds: int) -> None:
    from monitor.models import Tweet

    batch = importlib.import_module("monitor.algorithms.influence.batch")
    pks = list(Tweet.objects.filter(workspace=ws).values_list("pk", flat=True))
    scan_min = batch._PLAN_SCAN_MIN
    try:
        for rnd in range(rounds):
            for name, at_least in (("scan", scan_min), ("probe", len(pks) + 1)):
                batch._PLAN_SCAN_MIN = at_least
                t = time.perf_counter()
                sizes, _ = batch._planned_cascades(pks, ws.pk)
                took = time.perf_counter() - t
                print(rnd, name, f"{took:.3f} s", f"{len(pks):,} tweets", f"{sum(sizes.values()):,}", flush=True)
    finally:
        batch._PLAN_SCAN_MIN = scan_min


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("analyze", "plan"))
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    ws = web_bench_workspace("run_start_bench")
    if ws is None:
        return 2
    (_analyze if args.what == "analyze" else _plan)(ws, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
