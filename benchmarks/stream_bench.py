"""Issue 17's intake benchmark: how fast the stream accepts records, and how soon a consumer picks them up.

    scripts/with_services.py -- .venv/bin/python benchmarks/stream_bench.py [--json out.json]

Writes into the ``bench-stream`` workspace of DATABASE_URL's database (purged and recreated first).

1. **intake**: ``stream_accept`` (check every line, COPY into PostgreSQL, commit, wake-ups) over bodies of
   ``--body`` v1.1 retweet statuses (each embedding its original, ~600 bytes), in this process; and the same
   bodies through ``POST /api/v1/stream/`` with Django's test client (adds auth and the view, no network).
2. **pick-up latency**: a ``stream_consume`` process with a stand-in apply (:func:`mark`: marks the events
   applied; the real apply_events is the other half of issue 17), fed ``--rate`` records/s in bodies every 100 ms for
   ``--seconds``; latency = applied_at - received_at per event (received_at is set just before the COPY, so
   this includes the commit), with Redis wake-ups, then with Redis off (the consumer only polls, every
   ``SPREADWATCH_STREAM_POLL_MS``).
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
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"


def v1_retweet(i: int, cascades: int = 500) -> str:
    c = i % cascades
    orig = 1_300_000_000_000_000_000 + c * 10_000_000
    t = 1_600_000_000 + i
    return json.dumps(
        {
            "id_str": str(orig + 1 + i),
            "created_at": t,
            "text": f"RT @pub{c}: the story number {c}",
            "user": {"id_str": str(1_000_000 + i), "screen_name": f"u{i}", "followers_count": 100 + i % 977},
            "retweeted_status": {
                "id_str": str(orig),
                "created_at": 1_600_000_000 - 3600,
                "text": f"the story number {c}",
                "user": {"id_str": str(10 + c), "screen_name": f"pub{c}", "followers_count": 50_000},
            },
        }
    )


def mark(*, workspace_id: int, event_ids: list[int]) -> dict:
    """The stand-in apply of the latency runs (``stream_consume --apply benchmarks.stream_bench:mark``): marks the
    events applied, nothing else, so what is measured is the streaming machinery."""
    from django.utils import timezone

    from monitor.models import StreamEvent

    StreamEvent.objects.filter(pk__in=event_ids).update(status="applied", applied_at=timezone.now())
    return {"applied": len(event_ids)}


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--body", type=int, default=5_000)
    ap.add_argument("--rate", type=int, default=2_000, help="records/s fed for the latency runs")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()

    from benchmarks._setup import ensure_database

    ensure_database(os.environ.get("DATABASE_URL", ""))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_test_environment
    from rest_framework.test import APIClient

    from monitor import services
    from monitor.models import StreamEvent, Workspace
    from monitor.services.stream import stream_accept, stream_token_create

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    call_command("migrate", verbosity=0)
    old = Workspace.objects.filter(slug="bench-stream").first()
    if old:
        services.workspace_purge(workspace=old)
    ws = services.workspace_create(name="Benchmark stream", slug="bench-stream")
    settings.SPREADWATCH_STREAM_MAX_BACKLOG = 10_000_000
    out: dict = {"records": args.records, "body": args.body, "vendor": connection.vendor}

    lines = [v1_retweet(i) for i in range(args.records)]
    bodies = [lines[i : i + args.body] for i in range(0, len(lines), args.body)]
    mb = sum(len(x) + 1 for x in lines) / 1e6

    # 1. intake in process
    t0 = time.perf_counter()
    for b in bodies:
        stream_accept(workspace=ws, lines=list(enumerate(b, 1)), source="bench")
    dt = time.perf_counter() - t0
    out["intake_records_per_s"] = round(args.records / dt)
    out["intake_mb_per_s"] = round(mb / dt, 1)
    print(f"intake (service): {args.records:,} records, {mb:.0f} MB in {dt:.2f} s = {args.records / dt:,.0f}/s")
    StreamEvent.objects.filter(workspace=ws).delete()

    # 1b. through the endpoint
    key = stream_token_create(workspace=ws, name="bench")[1]
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    payloads = [("\n".join(b) + "\n").encode() for b in bodies]
    t0 = time.perf_counter()
    for p in payloads:
        r = c.generic("POST", "/api/v1/stream/", p, content_type="application/x-ndjson")
        assert r.status_code == 202, r.content[:300]
    dt = time.perf_counter() - t0
    out["http_records_per_s"] = round(args.records / dt)
    print(f"intake (POST /api/v1/stream/): {args.records / dt:,.0f} records/s")
    StreamEvent.objects.filter(workspace=ws).delete()

    # 2. pick-up latency: the consumer is its own process (manage.py stream_consume), as in production
    def latency_run(label: str, redis_url: str) -> dict:
        import subprocess

        StreamEvent.objects.filter(workspace=ws).delete()
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "SPREADWATCH_STREAM_REDIS_URL": redis_url or "redis://127.0.0.1:1/0",  # nothing listens on port 1
            "SPREADWATCH_STREAM_BATCH_WAIT_MS": "0",
        }
        settings.SPREADWATCH_STREAM_REDIS_URL = redis_url
        log_path = ROOT / "var" / f"stream_bench_{label}.log"
        log_path.parent.mkdir(exist_ok=True)
        log = open(log_path, "w")  # noqa: SIM115 (the consumer writes it until it stops)
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "stream_consume", "--workspace", ws.slug, "--name", f"bench-{label}",
             "--apply", "benchmarks.stream_bench:mark"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            t_wait = time.monotonic() + 120
            while "ready" not in log_path.read_text() and time.monotonic() < t_wait:
                assert proc.poll() is None, log_path.read_text()
                time.sleep(0.2)
            time.sleep(3.0)  # joined, first poll done
            per_tick = max(1, args.rate // 10)
            n_ticks = int(args.seconds * 10)
            i = 0
            t_start = time.perf_counter()
            for k in range(n_ticks):
                chunk = [v1_retweet(i + j) for j in range(per_tick)]
                i += per_tick
                stream_accept(workspace=ws, lines=list(enumerate(chunk, 1)), source="bench")
                sleep = t_start + (k + 1) * 0.1 - time.perf_counter()
                if sleep > 0:
                    time.sleep(sleep)
            fed_s = time.perf_counter() - t_start
            deadline = time.monotonic() + 60
            while StreamEvent.objects.filter(workspace=ws, status="queued").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            log.close()
        lat = [
            (a - r).total_seconds()
            for r, a in StreamEvent.objects.filter(workspace=ws).values_list("received_at", "applied_at")
            if a is not None
        ]
        res = {
            "fed_per_s": round(i / fed_s),
            "events": i,
            "applied": len(lat),
            "p50_s": round(percentile(lat, 50), 3),
            "p99_s": round(percentile(lat, 99), 3),
            "max_s": round(max(lat), 3),
        }
        print(f"pick-up ({label}): {res}")
        return res

    url = settings.SPREADWATCH_STREAM_REDIS_URL
    out["latency_wakeups"] = latency_run("wake-ups", url)
    out["latency_poll_only"] = latency_run("poll-only", "")
    out["poll_ms"] = settings.SPREADWATCH_STREAM_POLL_MS
    settings.SPREADWATCH_STREAM_REDIS_URL = url
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2), flush=True)
    StreamEvent.objects.filter(workspace=ws).delete()  # the workspace stays for the next run to purge
    return 0


if __name__ == "__main__":
    sys.exit(main())
