"""The import's planner statistics with and without a raised-target table analysed as two samples
(``monitor.db._split_wide_samples``), alternated in one process on a benchmark's database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_10 PYTHONPATH=. \\
        .venv/bin/python benchmarks/analyze_split_bench.py [--rounds 3] [--workspace 1]

The database is one ``benchmarks/web_bench.py`` left (its workspace's snapshots partition is analysed too, as an
import does). Prints one line per round and variant: seconds for ``analyze_after_bulk_write`` over the tables the
import analyses (every one counted stale).
"""

from __future__ import annotations

import argparse
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
    from django.db import connection

    from monitor import db, partitions

    split = db._split_wide_samples
    tables = ["monitor_account", "monitor_tweet", "monitor_tweetdocument"]
    tables.append(partitions.name("monitor_followercount", args.workspace))
    for rnd in range(args.rounds):
        for name, fn in (("split", split), ("whole", lambda cur, t: t)):
            db._split_wide_samples = fn
            with connection.cursor() as cur:
                t = time.perf_counter()
                db.analyze_after_bulk_write(cur, tables, 10**9)
                print(rnd, name, round(time.perf_counter() - t, 3), flush=True)
    db._split_wide_samples = split


if __name__ == "__main__":
    main()
