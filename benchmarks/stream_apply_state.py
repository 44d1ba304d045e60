"""The stream's apply step on a workspace that already holds a stream, compared between two checkouts on the
same database state (issue 17).

A micro-batch's cost depends on what the workspace holds (how big the cascades it touches have grown, how
big the tables and their indexes are), so two versions of the apply are compared on byte-identical copies of
one state: ``build`` makes the state once in its own database, ``run`` applies the same micro-batches to a
fresh copy (PostgreSQL's ``CREATE DATABASE ... TEMPLATE``) made for each run.

    # once: follows + the first 300,000 statuses, applied in micro-batches of 50,000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_ab_state scripts/with_services.py -- \\
        .venv/bin/python benchmarks/stream_apply_state.py build --data var/fresh500k --events 300000
    psql -h 127.0.0.1 -U postgres -d sw_ab_state -c 'VACUUM ANALYZE'
    # per run, from the checkout under test (alternate the checkouts):
    psql -h 127.0.0.1 -U postgres -c 'DROP DATABASE IF EXISTS sw_ab_t' -c 'CREATE DATABASE sw_ab_t TEMPLATE sw_ab_state'
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_ab_t scripts/with_services.py -- \\
        .venv/bin/python benchmarks/stream_apply_state.py run --data var/fresh500k --at 300000 --batches 3

``run`` first applies 300 statuses (not timed: the consumer's first apply loads the follower graph and numba's
kernels), then ``--batches`` micro-batches of ``--size`` statuses, each accepted through ``stream_accept`` and
applied by one ``apply_events`` call; it prints one JSON line per micro-batch: events, wall seconds, CPU
seconds of this process (PostgreSQL's work is the difference), cascades, participants and the apply's own
seconds per step. The data is the generated ``twitter`` preset as v1.1 statuses (``stream_freshness.py``
writes it: ``--retweets 500000 --data var/fresh500k``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _feed_and_apply(ws, lines: list[str], first: int, end: int, size: int) -> list[dict]:
    from monitor.models import StreamEvent
    from monitor.services.stream import stream_accept
    from monitor.services.stream.apply import apply_events

    out = []
    for a in range(first, end, size):
        b = min(end, a + size)
        for k in range(a, b, 1000):
            stream_accept(workspace=ws, lines=list(enumerate(lines[k : min(k + 1000, b)], 1)), source="bench")
        ids = list(StreamEvent.objects.filter(workspace=ws, status="queued").values_list("pk", flat=True))
        t, c = time.perf_counter(), _cpu()
        res = apply_events(workspace_id=ws.pk, event_ids=ids)
        out.append({
            "events": len(ids), "wall_s": round(time.perf_counter() - t, 3), "cpu_s": round(_cpu() - c, 3),
            "cascades": res["cascades"], "participants": res["participants"], "seconds": res["seconds"],
        })  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("build", "run"))
    ap.add_argument("--data", default=str(ROOT / "var" / "fresh500k"), help="the generated collection's folder")
    ap.add_argument("--events", type=int, default=300_000, help="build: statuses applied into the state")
    ap.add_argument("--at", type=int, default=300_000, help="run: the first status (after the state's)")
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--size", type=int, default=10_000)
    args = ap.parse_args()
    import django

    django.setup()
    from django.conf import settings

    from monitor.models import Workspace

    settings.SPREADWATCH_STREAM_MAX_BACKLOG = 10_000_000
    data = Path(args.data)
    lines = (data / "tweets.jsonl").read_text().splitlines()
    if args.mode == "build":
        from django.contrib.auth import get_user_model
        from django.core.management import call_command

        from monitor import services

        call_command("migrate", verbosity=0)
        user = get_user_model().objects.create_user("bench-state", password="x")
        ws = services.workspace_create(name="Stream state", slug="stream-state", owner=user)
        services.collection_create(workspace=ws, files=[data / "follows.csv"])
        for row in _feed_and_apply(ws, lines, 0, args.events, 50_000):
            print(json.dumps(row), flush=True)
        return 0
    ws = Workspace.objects.get(slug="stream-state")
    _feed_and_apply(ws, lines, args.at, args.at + 300, 300)  # warm-up, not timed
    first = args.at + 300
    for row in _feed_and_apply(ws, lines, first, first + args.batches * args.size, args.size):
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
