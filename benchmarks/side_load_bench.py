"""A workspace's first follows loaded on the side (``monitor.services.ingest.side_load``) with its COPYs spread over
1..k connections and its unique index built with 0..w parallel workers: the wall time of the COPYs and of the
index, on the machine it runs on. The rows are the import's: (workspace, follower, followee) in parts of 3M,
sorted by follower within the upload, drawn at random over ``--accounts`` keys.

    DATABASE_URL=postgres://... python benchmarks/side_load_bench.py --rows 30000000 --copies 1,3 --workers 0,3 \
        --json F

Each setting loads its rows into a fresh workspace's load table, then drops it (nothing is attached).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=30_000_000)
    ap.add_argument("--part-rows", type=int, default=3_000_000)
    ap.add_argument("--accounts", type=int, default=5_000_000)
    ap.add_argument("--copies", default="1,3", help="connections for the COPYs, comma-separated settings")
    ap.add_argument("--workers", default="0,3", help="parallel index workers, comma-separated settings")
    ap.add_argument("--json")
    args = ap.parse_args()

    from _setup import django_on_postgres

    if not django_on_postgres("side_load_bench", os.environ.get("DATABASE_URL", "")):
        return 2
    import numpy as np
    from django.conf import settings
    from django.db import connection

    from monitor import services
    from monitor.services.ingest.side_load import SideLoad

    rng = np.random.default_rng(7)
    follower = np.sort(rng.integers(1, args.accounts, args.rows, dtype=np.int64))
    followee = rng.integers(1, args.accounts, args.rows, dtype=np.int64)
    keep = follower != followee  # no self-follows
    pairs = np.unique(follower[keep] << np.int64(23) | followee[keep])  # sorted, distinct (keys < 2**23)
    follower, followee = pairs >> np.int64(23), pairs & np.int64((1 << 23) - 1)
    n = len(pairs)
    out = {"rows": n, "cpu_count": os.cpu_count(), "runs": []}
    for copies in map(int, args.copies.split(",")):
        for workers in map(int, args.workers.split(",")):
            settings.SPREADWATCH_SIDE_LOAD_COPIES, settings.SPREADWATCH_SIDE_INDEX_WORKERS = copies, workers
            ws = services.workspace_create(name=f"side {copies} {workers}", slug=f"side-{copies}-{workers}")
            side = SideLoad(ws.pk)
            table = "monitor_follow"
            with connection.cursor() as cur:
                assert side.begin(cur, table)
            cols = [("workspace_id", "bigint"), ("follower_id", "bigint"), ("followee_id", "bigint")]
            t = time.perf_counter()
            for a in range(0, n, args.part_rows):
                b = min(n, a + args.part_rows)
                side.copy(table, cols, [np.broadcast_to(np.int64(ws.pk), (b - a,)), follower[a:b], followee[a:b]])
            side._wait(table)
            t_copy = time.perf_counter() - t
            t = time.perf_counter()
            side.last_rows(table)
            side._wait(table)
            t_index = time.perf_counter() - t
            side.close(failed=True)  # drops the load table
            services.workspace_purge(workspace=ws)
            run = {"copies": copies, "workers": workers, "copy_s": round(t_copy, 2), "index_s": round(t_index, 2)}
            run["rows_per_s"] = round(n / t_copy)
            print(json.dumps(run), flush=True)
            out["runs"].append(run)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
