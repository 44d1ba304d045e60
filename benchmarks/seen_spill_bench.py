"""The upload-wide duplicate check of an import in parts, alone (``monitor/services/ingest/seen.py``): a synthetic
v1.1-like upload checked chunk by chunk as the reader checks it, each part's references spilled as the import
spills them.

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/seen_spill_bench.py --retweets 10000000

Each line is a retweet (its own id, new) and the original it embeds (about 2.7 % as many originals as retweets,
each retweeted for a while around its place in the file, so a chunk meets originals that earlier parts saw):
100,000 lines a chunk, a spill after every 1.5M lines (3M rows: ``SPREADWATCH_IMPORT_PART_ROWS``). Prints the
whole check's seconds, the spills' and lookups' (what the import's timing "duplicate check, spilled" counts)
and how many ids the runs were asked for. Run in a ``git worktree`` of a commit before the runs were files, it
measures the temporary table those commits used (``DatabaseSeenTweets``), inside a transaction rolled back.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, default=10_000_000)
    ap.add_argument("--chunk", type=int, default=100_000, help="lines per chunk")
    ap.add_argument("--part", type=int, default=1_500_000, help="lines per part (two rows each)")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()

    from _setup import django_on_postgres

    if not django_on_postgres("seen_spill_bench", os.environ.get("DATABASE_URL", "")):
        return 2
    import numpy as np
    from django.db import connection, transaction

    from compute.tables import NO_TWEET
    from monitor.services.ingest import seen as seen_module

    n = args.retweets
    n_orig = max(1, int(n * 0.027))
    rng = np.random.default_rng(1)
    rt_ids = np.arange(n, dtype=np.int64) + 10**15
    orig_of = np.clip((np.arange(n) / n * n_orig + rng.normal(0, 2000, n)).astype(np.int64), 0, n_orig - 1)
    orig_ids = np.arange(n_orig, dtype=np.int64) + 10**12
    orig_uid = rng.integers(1, 10**9, n_orig)
    orig_t = np.sort(rng.uniform(1.5e9, 1.6e9, n_orig))
    spills = []
    with transaction.atomic(), connection.cursor() as cur, tempfile.TemporaryDirectory() as tmp:
        if hasattr(seen_module, "SpilledSeenTweets"):
            kind, s = "files", seen_module.SpilledSeenTweets(Path(tmp) / "seen")
        else:  # the commits before: a temporary table of the import's connection
            kind, s = "temporary table", seen_module.DatabaseSeenTweets(cur)
        src = s.file("x.jsonl")
        t0, since = time.perf_counter(), 0
        for a in range(0, n, args.chunk):
            b = min(n, a + args.chunk)
            o, m = orig_of[a:b], b - a
            tid, rt, uid, tm = (np.empty(2 * m, dt) for dt in (np.int64, np.int64, np.int64, np.float64))
            tid[0::2], tid[1::2] = rt_ids[a:b], orig_ids[o]
            rt[0::2], rt[1::2] = orig_ids[o], NO_TWEET
            uid[0::2], uid[1::2] = rng.integers(1, 10**9, m), orig_uid[o]
            tm[0::2], tm[1::2] = orig_t[o] + 100, orig_t[o]
            bad = s.check(src, tid, rt, uid, tm, np.repeat(np.arange(a, b) + 1, 2))
            if bad:
                raise SystemExit(f"unexpected conflicts: {bad[:3]}")
            since += m
            if since >= args.part:
                t = time.perf_counter()
                s.spill()
                spills.append(round(time.perf_counter() - t, 3))
                since = 0
        out = {
            "runs_in": kind,
            "retweets": n,
            "check_s": round(time.perf_counter() - t0, 2),
            "spilled_and_lookups_s": round(s.seconds, 2),
            "spills_s": spills,
            "spilled_ids": s.spilled,
            "ids_looked_for": s.asked,
        }
        transaction.set_rollback(True)
    print(json.dumps(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
