"""Issue 4's web benchmark: import + compute 1M retweets (v1.1 JSONL, generated) on PostgreSQL with the CPU
backend, until the ranking page shows them; then the ranking page's latency with that data loaded.

    make bench-web          # = scripts/with_services.py -- .venv/bin/python benchmarks/web_bench.py

It needs DATABASE_URL to point at PostgreSQL (with_services provides it) and writes into that database's
``bench-1m`` workspace (dropped and recreated first). Ingest and compute run in this one process, as an eager
Celery task would: the time is the wall time of ``collection_create`` returning with the run done, plus the
first ranking request. The page latency is measured with Django's test client (view + template + SQL, no
network), over the overall ranking and the ten biggest publishers' rankings, every aggregate.
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
os.environ.setdefault("SPREADWATCH_BACKEND", "cpu")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, default=1_000_000)
    ap.add_argument("--data", default=str(ROOT / "var" / "bench1m"), help="folder for the generated files")
    ap.add_argument("--requests", type=int, default=200, help="ranking page requests for the latency")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()

    from _setup import django_on_postgres, generated_collection

    if not django_on_postgres("web_bench", os.environ.get("DATABASE_URL", "")):
        return 2
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    files = generated_collection(Path(args.data), args.retweets)
    size = sum(f.stat().st_size for f in files)

    from monitor import selectors, services
    from monitor.models import Workspace

    for old in Workspace.objects.filter(slug="bench-1m"):
        services.workspace_purge(workspace=old)
    ws = services.workspace_create(name="Benchmark 1M", slug="bench-1m")
    User = get_user_model()
    user, _ = User.objects.get_or_create(username="bench")
    services.membership_add(workspace=ws, user=user)
    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE")

    t0 = time.perf_counter()
    c = services.collection_create(workspace=ws, files=files, user=user, name="bench 1M")
    c.refresh_from_db()
    t_import = time.perf_counter() - t0
    run = c.compute_runs.get()
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    # no collectstatic here: serve asset URLs unhashed, as in DEBUG
    from django.test import override_settings

    override_settings(
        STORAGES={
            **settings.STORAGES,
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        }
    ).enable()
    client = Client()
    client.force_login(user)
    r = client.get(f"/w/{ws.slug}/ranking/")
    t_total = time.perf_counter() - t0
    assert r.status_code == 200, r.status_code
    # the warm-up's second part (account pages, explorers, variants) runs in a thread after the run's commit
    # (monitor/services/warmup.py): when it is done too, and the latencies below are measured after it
    from monitor.services.warmup import wait_for_rest

    wait_for_rest()
    t_warm = time.perf_counter() - t0
    page = selectors.ranking(ws, limit=1)
    assert page.total_rows > 0

    pubs = [p["twitter_id"] for p in selectors.publishers_summary(ws, limit=10)]
    urls = [f"/w/{ws.slug}/ranking/?aggregate={a}" for a in ("total", "mean", "participation")]
    urls += [f"/w/{ws.slug}/publishers/{p}/?aggregate={a}" for p in pubs for a in ("total", "participation")]
    lat: dict[str, list[float]] = {"all publishers": [], "one publisher": []}
    for i in range(args.requests):
        u = urls[i % len(urls)]
        t = time.perf_counter()
        resp = client.get(u)
        lat["one publisher" if "/publishers/" in u else "all publishers"].append(time.perf_counter() - t)
        assert resp.status_code == 200, (u, resp.status_code)

    def pct(xs: list[float], q: float) -> float:
        xs = sorted(xs)
        return round(1000 * xs[int(q * (len(xs) - 1))], 1)

    every = [x for xs in lat.values() for x in xs]
    rows = (
        c.counts.get("retweets_in_upload", 0)
        + c.counts.get("follows_in_upload", 0)
        + c.counts.get("tweets_in_upload", 0)
    )
    res = {
        "retweets": c.counts.get("retweets_in_upload"),
        "tweets": c.counts.get("tweets_in_upload"),
        "follows": c.counts.get("follows_in_upload"),
        "input_bytes": size,
        "status": c.status,
        "import_read_s": c.timings.get("read_s"),
        "import_merge_s": c.timings.get("merge_s"),
        "import_merge_steps_s": c.timings.get("merge_steps_s"),
        "compute_s": run.timings,
        "batches": run.n_batches,
        "import_and_compute_s": round(t_import, 2),
        "until_ranking_shows_s": round(t_total, 2),
        "until_warm_up_done_s": round(t_warm, 2),
        "ingest_rows_per_s": round(rows / (c.timings.get("read_s", 0) + c.timings.get("merge_s", 0))),
        "ranking_requests": len(every),
        "ranking_p50_ms": pct(every, 0.5),
        "ranking_p95_ms": pct(every, 0.95),
        "ranking_max_ms": pct(every, 1.0),
        "ranking_by_kind_ms": {k: {"n": len(v), "p50": pct(v, 0.5), "p95": pct(v, 0.95)} for k, v in lat.items()},
        "cpu_count": os.cpu_count(),
    }
    print(json.dumps(res, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
