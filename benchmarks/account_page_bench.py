"""The account page of the top spreaders of the workspace ``benchmarks/web_bench.py`` left in the database, opened
warm in this one process: what a page costs the web process once its reads are in the read cache (the load
harness's "warm" case without its 50 users). The first round fills the cache (the look-alike panels are computed
there where the graph is within ``SPREADWATCH_WTF_ON_OPEN_EDGES``); the later rounds are the warm page. Prints
each round's median and slowest page, and its queries.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<the run's database> \\
        .venv/bin/python benchmarks/account_page_bench.py [--accounts 20] [--rounds 3] [--json F]
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
    ap.add_argument("--accounts", type=int, default=20, help="the top spreaders whose pages are opened")
    ap.add_argument("--rounds", type=int, default=3, help="rounds over them; the first fills the cache")
    ap.add_argument("--json", type=Path, help="write every time here")
    args = ap.parse_args()

    root = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(root))
    sys.path.insert(0, str(root / "benchmarks"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    from _setup import django_on_postgres

    if not django_on_postgres("account_page_bench", os.environ.get("DATABASE_URL", "")):
        return 2
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection, reset_queries
    from django.test import Client
    from django.test.utils import setup_test_environment

    from monitor import selectors
    from monitor.models import Workspace

    setup_test_environment()
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    ws = Workspace.objects.get(slug=args.slug)
    user = get_user_model().objects.filter(memberships__workspace=ws).order_by("pk").first()
    if user is None:
        print(f"account_page_bench: workspace {args.slug} has no member to open its pages as", file=sys.stderr)
        return 2
    client = Client()
    client.force_login(user)
    accounts = [r["twitter_id"] for r in selectors.ranking(ws, limit=args.accounts).rows]
    rounds: list[dict] = []
    for n in range(args.rounds):
        ms, queries = [], []
        for a in accounts:
            settings.DEBUG = True  # the queries are counted, not timed: their time is in the page's
            reset_queries()
            t = time.perf_counter()
            r = client.get(f"/w/{ws.slug}/accounts/{a}/")
            ms.append(1000 * (time.perf_counter() - t))
            queries.append(len(connection.queries))
            settings.DEBUG = False
            if r.status_code != 200:
                print(f"account_page_bench: account {a}: {r.status_code}", file=sys.stderr)
                return 1
        rounds.append({"ms": ms, "queries": queries, "bytes": len(r.content)})
        print(
            f"round {n}{' (fills the cache)' if n == 0 else ''}: median {statistics.median(ms):.0f} ms, slowest "
            f"{max(ms):.0f} ms, {statistics.median(queries):.0f} queries, {len(r.content):,} bytes a page",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps({"workspace": args.slug, "accounts": accounts, "rounds": rounds}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
