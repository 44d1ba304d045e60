"""Every page family of the workspace ``benchmarks/web_bench.py`` left in the database, built with the read cache
off, in this one process: what an analyst who meets a cold page waits for, without the load harness's 50 users.
Each page is opened three times and the last two count; the median and the largest per family are printed, and
with ``--json`` every time and the session's ``jit`` setting are written.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<the run's database> \\
        .venv/bin/python benchmarks/page_build_bench.py --json F

The overview and the ranking read the all-time sums, which a run's warm-up stores in the read cache: with the cache
off they are rebuilt on every request (seconds at 10M retweets), so their rows here are not what an analyst meets.
An account page of a workspace with at most ``SPREADWATCH_WTF_ON_OPEN_EDGES`` follows computes its look-alike panels
on every request too (1.1-1.6 s at 1M retweets), which the read cache keeps otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--slug", default="bench-1m", help="the workspace (web_bench.py's, whatever its size)")
    ap.add_argument("--json", type=Path, help="write every time here")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    os.environ["SPREADWATCH_READ_CACHE_SECONDS"] = "0"
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client, override_settings
    from django.test.utils import setup_test_environment

    from monitor import selectors
    from monitor.models import Tweet, Workspace

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    static = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # no collectstatic here
    override_settings(STORAGES={**settings.STORAGES, "staticfiles": static}).enable()
    s = args.slug
    ws = Workspace.objects.get(slug=s)
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    pubs = [p["twitter_id"] for p in selectors.publishers_summary(ws, limit=5)]
    accounts = [r["twitter_id"] for r in selectors.ranking(ws, limit=8).rows]
    by_size = Tweet.objects.filter(workspace=ws, n_participants__gt=1).order_by("-n_participants")
    ids = by_size.values_list("tweet_id", flat=True)
    n = by_size.count()
    tweets = list(ids[5:8]) + list(ids[n // 100 : n // 100 + 3])  # three of the largest, three mid-sized
    kinds = {
        "overview": [f"/w/{s}/"],
        "ranking": [f"/w/{s}/ranking/{v}" for v in ("", "?aggregate=mean", "?sort=cascades", "?window=30d", "?page=2")],
        "publisher": [f"/w/{s}/publishers/{p}/" for p in pubs],
        "account": [f"/w/{s}/accounts/{a}/" for a in accounts],
        "cascade": [f"/w/{s}/tweets/{t}/explore/" for t in tweets],
        "api-ranking": [f"/api/v1/workspaces/{s}/publishers/{p}/ranking/" for p in pubs]
        + [f"/api/v1/workspaces/{s}/ranking/"],
    }
    with connection.cursor() as cur:
        cur.execute("SHOW jit")
        jit = cur.fetchone()[0]
    times: dict[str, list[float]] = {}
    for round_no in range(3):
        for kind, urls in kinds.items():
            for url in urls:
                t = time.perf_counter()
                r = client.get(url)
                ms = 1000 * (time.perf_counter() - t)
                if r.status_code != 200:
                    print(f"{url}: HTTP {r.status_code}", file=sys.stderr)
                    return 1
                if round_no:
                    times.setdefault(kind, []).append(ms)
    print(f"jit {jit}; per family, median / largest ms:")
    for kind, ms in times.items():
        print(f"  {kind:12s} {statistics.median(ms):7.0f} / {max(ms):7.0f}")
    if args.json:
        args.json.write_text(json.dumps({"jit": jit, "ms": times}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
