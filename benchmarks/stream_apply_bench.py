"""Issue 17's apply-step benchmark: how many retweets per second ``apply_events`` takes from the stream queue into
the workspace (parse, store, recompute the touched cascades, refresh their aggregates) on this machine's
PostgreSQL with the CPU backend, for micro-batches of 1K, 10K and 50K records.

    scripts/with_services.py -- .venv/bin/python benchmarks/stream_apply_bench.py [--retweets 100000]

The data is the generated ``twitter`` preset written as an analyst's upload (``fmt="v1"``: v1.1 statuses in
time order, each retweet embedding its original, and the follows among co-participants). The follows are
uploaded first through the normal upload path (the follower graph is known before the stream starts); every
status line then becomes one ``StreamEvent`` (inserted with COPY, as the intake would have; not timed), and
consecutive runs of events, in arrival order, are applied as micro-batches: a few of 1K, then 10K, then one of
50K. Each row of the results is one ``apply_events`` call: its own seconds per step, the wall time including
the commit and its hooks (the alert evaluation runs eagerly here), the cascades it recomputed and how many
participants they had (the recompute cost follows the touched cascades' size, not the micro-batch's), and the
load average of the machine (other work shares its 2 cores).

Under load the wall time says more about the other work than about the apply, so each row also has the CPU
seconds of this process and of its PostgreSQL backend (read from /proc: the server runs on this machine), and
retweets per CPU second: about what an otherwise idle core pair would give (WAL writes by other processes and
the disk are not counted).

Floors, measured first on the same rows: ``orjson.loads`` of the bodies (the least any parse costs) and a binary
COPY of the retweet rows into a temporary table (the least any store costs).

It writes into the database named by ``DATABASE_URL`` (a new ``bench-stream-<time>`` workspace; earlier ones
are dropped first); point it at a database of its own (``.../spreadwatch_stream_bench``: created when missing).
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

PLAN = ((1_000, 5), (10_000, 3), (50_000, 1))  # (micro-batch size, how many), in this order


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _backend_cpu(pid: int) -> float:
    """CPU seconds (user + system) the PostgreSQL backend ``pid`` has used: /proc, so the server must run on
    this machine (it does here); NaN when it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _floors(bodies: list[str]) -> dict:
    """The least a parse (JSON decoding alone) and a store (COPY of the retweet rows) of ``bodies`` can cost."""
    import numpy as np
    import orjson
    from django.db import connection, transaction

    from monitor.db import copy_in, create_temp

    t = time.perf_counter()
    objs = [orjson.loads(b) for b in bodies]
    decode_s = time.perf_counter() - t
    n = len(objs)
    cols = [("tweet", "bigint"), ("account", "bigint"), ("rid", "bigint"), ("created_at", "float"), ("f", "float")]
    arrays = [np.arange(n, dtype=np.int64)] * 3 + [np.arange(n, dtype=np.float64)] * 2
    with transaction.atomic(), connection.cursor() as cur:
        create_temp(cur, "sw_bench_floor", cols)
        t = time.perf_counter()
        copy_in(cur, "sw_bench_floor", cols, arrays)
        copy_s = time.perf_counter() - t
        cur.execute("DROP TABLE sw_bench_floor")
    return {
        "records": n,
        "json_decode_s": round(decode_s, 4),
        "json_decode_per_s": round(n / decode_s),
        "copy_s": round(copy_s, 4),
        "copy_rows_per_s": round(n / copy_s),
        "load": _load(),
    }


def _insert_events(ws, bodies: list[str]) -> list[int]:
    """The events as the intake stores them (not timed): one row per body, in arrival order."""
    from django.db import connection, transaction
    from django.utils import timezone

    from monitor.models import StreamEvent

    now = timezone.now()
    with (
        transaction.atomic(),
        connection.cursor() as cur,
        cur.cursor.copy(
            "COPY monitor_streamevent (workspace_id, partition, kind, body, source, received_at, status, attempts, "
            "error) FROM STDIN"
        ) as cp,
    ):
        for b in bodies:
            kind = "retweet" if '"retweeted_status"' in b else "tweet"
            cp.write_row((ws.pk, 0, kind, b, "bench", now, "queued", 0, ""))
    return list(StreamEvent.objects.filter(workspace=ws).order_by("pk").values_list("pk", flat=True))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, default=100_000, help="size of the generated collection")
    ap.add_argument("--data", default=str(ROOT / "var" / "stream_bench"), help="folder for the generated files")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()

    from _setup import django_on_postgres, generated_collection

    if not django_on_postgres("stream_apply_bench", os.environ.get("DATABASE_URL", "")):
        return 2
    from django.db import connection

    data = Path(args.data)
    generated_collection(data, args.retweets)

    from monitor import services
    from monitor.models import Workspace
    from monitor.services.stream.apply import apply_events

    for old in Workspace.objects.filter(slug__startswith="bench-stream"):
        with connection.cursor() as cur:  # the queue first, set-based (the purge leaves it to the ORM's cascade)
            cur.execute("DELETE FROM monitor_streamevent WHERE workspace_id = %s", [old.pk])
        services.workspace_purge(workspace=old)
    ws = services.workspace_create(name="Stream bench", slug=f"bench-stream-{int(time.time())}")
    t = time.perf_counter()
    c = services.collection_create(workspace=ws, files=[data / "follows.csv"])
    c.refresh_from_db()
    follows_s = time.perf_counter() - t
    print(f"follows uploaded: {c.counts.get('follows_new', 0):,} in {follows_s:.1f} s ({c.status})")

    bodies = (data / "tweets.jsonl").read_text().splitlines()
    need = sum(size * k for size, k in PLAN)
    if len(bodies) < need:
        print(f"stream_apply_bench: {len(bodies):,} statuses, the plan needs {need:,}", file=sys.stderr)
        return 2
    floors = _floors(bodies[:50_000])
    print(f"floors on 50K bodies: {json.dumps(floors)}")
    ids = _insert_events(ws, bodies[:need])

    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        backend_pid = cur.fetchone()[0]
    rows = []
    at = 0
    for size, times in PLAN:
        for _ in range(times):
            batch = ids[at : at + size]
            n_rt = sum('"retweeted_status"' in b for b in bodies[at : at + size])
            load_before = _load()
            cpu0, db0 = time.process_time(), _backend_cpu(backend_pid)
            t = time.perf_counter()
            out = apply_events(workspace_id=ws.pk, event_ids=batch)
            wall = time.perf_counter() - t
            cpu = time.process_time() - cpu0 + _backend_cpu(backend_pid) - db0
            row = {
                "batch": size,
                "first_event": at,
                "retweets": n_rt,
                "applied": out["applied"],
                "dead": out["dead"],
                "waiting": out["waiting"],
                "cascades": out["cascades"],
                "participants": out["participants"],
                "edges": out["edges"],
                "seconds": out["seconds"],
                "wall_s": round(wall, 3),
                "retweets_per_s": round(n_rt / wall),
                # CPU seconds of this process and its PostgreSQL backend: what the apply costs without the
                # other work sharing the 2 cores (an idle machine would give about retweets / cpu_s)
                "cpu_s": round(cpu, 3),
                "retweets_per_cpu_s": round(n_rt / cpu),
                "load_before": load_before,
                "load_after": _load(),
            }
            rows.append(row)
            print(json.dumps(row))
            at += size
    result = {
        "retweets_generated": args.retweets,
        "statuses": len(bodies),
        "follows_upload_s": round(follows_s, 2),
        "floors": floors,
        "rows": rows,
        "cpu_count": os.cpu_count(),
    }
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
