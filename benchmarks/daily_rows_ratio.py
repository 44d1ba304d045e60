"""Issue 42: how much the daily aggregates condense the per-cascade rows they are summed from, per workspace of a
database (``benchmarks/data_layer.md``, 2026-12-05 (fourth)).

A compute batch writes each cascade's participants into ``monitor_cascadeinfluence`` and their sums per
(publisher, UTC day, truth label, account) into ``monitor_dailyinfluence``. Where an account takes part in many of
one publisher's cascades on one day, the daily table is much smaller than the per-cascade one and the rankings
read less by reading it; where it takes part in one, the two tables hold as many rows and a run writes (and keeps
indexed) the same rows twice. This prints, per workspace: the per-cascade rows, the daily rows, their ratio, and
the mean number of cascades a daily row sums (``cascades``).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<database> .venv/bin/python benchmarks/daily_rows_ratio.py \\
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os

import psycopg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        ap.error("DATABASE_URL must name a PostgreSQL database that a compute run has filled")
    out = []
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute("SELECT id, name FROM monitor_workspace ORDER BY id")
        for ws, name in cur.fetchall():
            cur.execute(
                """SELECT COUNT(*) FROM monitor_cascadeinfluence c
                   WHERE c.tweet_id IN (SELECT id FROM monitor_tweet WHERE workspace_id = %s)""",
                [ws],
            )
            (per_cascade,) = cur.fetchone()
            cur.execute(
                "SELECT COUNT(*), COALESCE(SUM(cascades), 0) FROM monitor_dailyinfluence WHERE workspace_id = %s", [ws]
            )
            daily, summed = cur.fetchone()
            if not per_cascade:
                continue
            row = {
                "workspace": name,
                "per_cascade_rows": int(per_cascade),
                "daily_rows": int(daily),
                "daily_per_cascade": round(daily / per_cascade, 4),
                "cascades_per_daily_row": round(int(summed) / daily, 3) if daily else None,
            }
            out.append(row)
            print(
                f"{name[:40]:40s}  per-cascade {row['per_cascade_rows']:>11,}  daily {row['daily_rows']:>11,}  "
                f"ratio {row['daily_per_cascade']:.3f}  cascades a daily row {row['cascades_per_daily_row']}"
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
