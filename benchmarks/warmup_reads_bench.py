"""A small compute run on the workspace ``benchmarks/web_bench.py`` left in the database (the busiest publisher's
newest tweets, as the load harness's "after-compute" case runs it), in this process, with every read of the run's
warm-up timed (``monitor/services/warmup.py``): the run's seconds until it shows done, its warm-up's, and the
warm-up's seconds by kind of page. The read cache stays on (Redis at ``REDIS_URL``); run it twice and take the
second, whose all-time sums advance by the first run's recorded change as after any run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_10m REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python benchmarks/warmup_reads_bench.py --tweets 200
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tweets", type=int, default=200, help="the busiest publisher's newest tweets to recompute")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
    import django

    django.setup()
    from monitor import selectors, services
    from monitor.boot import freeze_long_lived
    from monitor.models import Tweet, Workspace
    from monitor.services import warmup

    freeze_long_lived()  # as a worker does when it is ready
    times: list[tuple[float, str]] = []
    warm_reads = warmup._warm_reads

    def timed(reads, res, seconds):
        def each():
            for name, read in reads:

                def run(read=read, name=name):
                    t = time.perf_counter()
                    read()
                    times.append((time.perf_counter() - t, name))

                yield name, run

        return warm_reads(each(), res, seconds)

    warmup._warm_reads = timed
    ws = Workspace.objects.get(slug="bench-1m")
    pub = selectors.publishers_summary(ws, limit=1)[0]["twitter_id"]
    pks = list(
        Tweet.objects.filter(workspace=ws, author__twitter_id=pub)
        .order_by("-created_at")
        .values_list("pk", flat=True)[: args.tweets]
    )
    t = time.perf_counter()
    run = services.compute_run_start(workspace=ws, tweet_pks=pks, backend="cpu")
    run.refresh_from_db()
    by_kind: collections.Counter = collections.Counter()
    for seconds, name in times:
        by_kind["variant" if name.startswith("variant") else name.split(" ")[0]] += seconds
    print(
        json.dumps(
            {
                "status": run.status,
                "tweets": len(pks),
                "run_s": round(time.perf_counter() - t, 2),
                "warm_s": round(run.timings.get("warm_s", 0.0), 2),
                "reads": len(times),
                "by_kind_s": {k: round(v, 2) for k, v in by_kind.most_common()},
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
