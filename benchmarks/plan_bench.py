"""A compute run's plan over every tweet of a benchmark's workspace (a first import's run), its retweets counted by
one scan of the workspace's partition or by one probe of the pair index per tweet, alternated in one process
(``monitor.algorithms.influence.batch._planned_cascades``).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_10 PYTHONPATH=. \\
        .venv/bin/python benchmarks/plan_bench.py [--rounds 3] [--workspace 1]

The database is one ``benchmarks/web_bench.py`` left. Prints one line per round and form: seconds for the plan's
reads (staging the keys, the query, the rows into the planner's dicts), and the participants counted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import time

import django


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workspace", type=int, default=1)
    args = ap.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    django.setup()
    from monitor.models import Tweet

    batch = importlib.import_module("monitor.algorithms.influence.batch")
    pks = list(Tweet.objects.filter(workspace_id=args.workspace).values_list("pk", flat=True))
    scan_min = batch._PLAN_SCAN_MIN
    for rnd in range(args.rounds):
        for name, at_least in (("scan", scan_min), ("probe", len(pks) + 1)):
            batch._PLAN_SCAN_MIN = at_least
            t = time.perf_counter()
            sizes, _ = batch._planned_cascades(pks, args.workspace)
            print(rnd, name, f"{time.perf_counter() - t:.3f} s", f"{len(pks):,} tweets", f"{sum(sizes.values()):,}")
    batch._PLAN_SCAN_MIN = scan_min


if __name__ == "__main__":
    main()
