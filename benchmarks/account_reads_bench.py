"""An account page's reads, uncached, on the ``bench-1m`` workspace that ``web_bench.py`` leaves (migration 0023:
the per-cascade rows lost their account index, and an account's rows are read through the cascades it took part
in). Times ``selectors.account_summary`` and ``selectors.account_amplification`` for the five busiest retweeters
and the five busiest publishers, best of five each, and prints one JSON object keyed by account.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_web .venv/bin/python benchmarks/account_reads_bench.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")


def main() -> int:
    import django

    django.setup()
    from django.db.models import Count

    from monitor import selectors
    from monitor.models import Account, Retweet, Tweet, Workspace

    ws = Workspace.objects.get(slug="bench-1m")
    retweeters = Retweet.objects.filter(tweet__workspace=ws).values("retweeter").annotate(n=Count("pk"))
    publishers = Tweet.objects.filter(workspace=ws).values("author").annotate(n=Count("pk"))
    busiest = [("retweeter", r["retweeter"]) for r in retweeters.order_by("-n", "retweeter")[:5]]
    busiest += [("publisher", r["author"]) for r in publishers.order_by("-n", "author")[:5]]
    out = {}
    for kind, pk in busiest:
        account = Account.objects.get(pk=pk)
        row = {}
        for name, read in (("summary", selectors.account_summary), ("amplification", selectors.account_amplification)):
            best = float("inf")
            for _ in range(5):
                t = time.perf_counter()
                read.__wrapped__(ws, account)  # the read itself, not the read cache
                best = min(best, time.perf_counter() - t)
            row[f"{name}_ms"] = round(best * 1000, 1)
        summary = selectors.account_summary.__wrapped__(ws, account)
        row.update(n_cascades=summary["n_cascades"], total=round(summary["total"], 3))
        out[f"{kind} {account.twitter_id}"] = row
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
