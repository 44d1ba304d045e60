"""What the upload-wide duplicate check costs where its references live: in memory (``SeenTweets``) or in a
temporary table keyed by tweet id (``StagedSeenTweets``, what an import uses).

    DATABASE_URL=<own database> scripts/with_services.py -- .venv/bin/python benchmarks/seen_bench.py \\
        --data var/bench1m --store memory|database

Reads the benchmark collection's ``tweets.jsonl`` into the import's staging area (as an import's read phase,
no merge; rolled back) and prints the read time and the references kept. Run each store in its own process
under ``/usr/bin/time -v`` for its peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT / "var" / "bench1m"))
    ap.add_argument("--store", choices=("memory", "database"), default="database")
    args = ap.parse_args()

    from _setup import django_on_postgres

    if not django_on_postgres("seen_bench", os.environ.get("DATABASE_URL", "")):
        return 2
    from django.db import connection, transaction

    from compute.formats import ReadReport, SeenTweets
    from monitor.services.ingest.reading import read_into
    from monitor.services.ingest.seen import StagedSeenTweets
    from monitor.services.ingest.stager import Stager

    path = Path(args.data) / "tweets.jsonl"
    with transaction.atomic(), connection.cursor() as cur:
        st = Stager(cur, mode="strict", report=ReadReport())
        seen = SeenTweets() if args.store == "memory" else StagedSeenTweets(cur, st.temps)
        st.names.append(path.name)
        t = time.perf_counter()
        read_into(st, path, path.name, "v1", "strict", st.report, lambda b, tot: None, seen=seen)
        read_s = time.perf_counter() - t
        res = {
            "store": args.store,
            "statuses": st.rows,
            "distinct_ids": len(seen),
            "read_s": round(read_s, 2),
            "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        }
        transaction.set_rollback(True)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
