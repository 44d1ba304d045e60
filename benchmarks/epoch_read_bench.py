"""Issue 42: a compute batch's read of its retweets with their times as ``extract(epoch ...)`` against the timestamp
itself turned into epoch seconds by ``monitor.db.copy_out`` (an ``epoch`` column), on a database a web benchmark
run filled (``benchmarks/data_layer.md``, 2026-12-04 (sixth)).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a database web_bench.py filled> .venv/bin/python \\
        benchmarks/epoch_read_bench.py [--batch 5] [--rounds 3]

The tweets are those of the run's ``--batch``-th compute batch (the same ones the batch read), staged as the
batch stages them; the two forms alternate, and the script checks that they give the same doubles.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")

FORMS = {  # name: (the time's SQL, its copy_out kind)
    "extract": ("extract(epoch from r.created_at)::double precision", "float"),
    "epoch": ("r.created_at", "epoch"),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import django

    django.setup()
    from django.db import connection

    from monitor.db import copy_out

    with connection.cursor() as cur:
        cur.execute(
            """CREATE TEMPORARY TABLE bench_batch AS SELECT jsonb_array_elements_text(tweet_pks)::bigint AS id
               FROM (SELECT tweet_pks FROM monitor_computebatch ORDER BY id OFFSET %s LIMIT 1) b""",
            [args.batch - 1],
        )
        cur.execute("SELECT t.workspace_id, count(*) FROM bench_batch b JOIN monitor_tweet t ON t.id = b.id GROUP BY 1")
        ws, tweets = cur.fetchone()
        seconds: dict[str, list[float]] = {name: [] for name in FORMS}
        times = {}
        for _ in range(args.rounds):
            for name, (sql, kind) in FORMS.items():
                t = time.perf_counter()
                cols = copy_out(
                    cur,
                    f"""SELECT r.tweet_id, r.retweeter_id, {sql}, COALESCE(r.followers_count, -1.0)
                        FROM bench_batch b JOIN monitor_retweet r ON r.workspace_id = %s AND r.tweet_id = b.id""",
                    [ws],
                    [("tweet", "bigint"), ("user", "bigint"), ("time", kind), ("followers", "float")],
                )
                seconds[name].append(round(time.perf_counter() - t, 3))
                times[name] = cols[2]
    same = times["extract"].tobytes() == times["epoch"].tobytes()
    print(json.dumps({"tweets": tweets, "retweets": len(times["epoch"]), "seconds": seconds, "same_doubles": same}))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
