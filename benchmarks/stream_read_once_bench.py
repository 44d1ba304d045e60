"""The stream's records read once (2026-11-28): what the intake and the consumer's parse step cost per 10,000
v1.1 statuses, in this process's Python CPU (``time.process_time``), best of ``--repeat``.

* ``consumer_parse_ms``: the consumer's parse of 10,000 events from the rows the intake stored
  (``parse_events``) and, as before, from their bodies (``parse_bodies``); the two tables are checked equal;
* ``intake_cpu_s_per_10k``: ``stream_accept`` (the service behind ``POST /api/v1/stream/``: read and check every
  line, keep the rows, one COPY) over 1,000-line requests into a fresh workspace, 30,000 statuses;
* ``copy_escape_ms``: escaping 10,000 bodies for text COPY with ``str.translate`` (the code before) and with
  ``monitor.db.copy_text``, on the bodies as generated and with JSON escapes in every text (``\\"``, ``\\u00e9``).

Data: the generated collection's statuses 300,000 onwards (``--data``, written by ``_setup.generated_collection``).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_read_once .venv/bin/python benchmarks/stream_read_once_bench.py \
        --data var/fresh500k --json benchmarks/results/stream_read_once.json

The database is migrated and gets one workspace (``read-once-<pid>``); use a scratch database. ``--intake-only``
measures the intake alone, so the script also runs in a checkout of the code before (copied there), for the
intake's A/B.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")

_OLD_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": ""})


def _best(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def _parse_and_escape(lines: list[str], repeat: int) -> dict:
    import numpy as np

    from monitor.db import copy_text
    from monitor.services.stream._apply_parse import parse_bodies, parse_events
    from monitor.services.stream.records import read_lines

    out: dict = {}
    # the consumer's parse, 10,000 events, collector off as in the consumer
    records = read_lines(list(enumerate(lines[:10_000], 1))).records
    bodies, rows, ids = [r.body for r in records], [r.rows for r in records], list(range(len(records)))
    gc.disable()
    a, b = parse_events(bodies, rows, ids), parse_bodies(bodies)
    for col in ("tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count", "lines"):
        assert np.array_equal(getattr(a.tweets, col), getattr(b.tweets, col), equal_nan=True), col
    out["consumer_parse_ms"] = {
        "from_rows": round(1000 * _best(lambda: parse_events(bodies, rows, ids), repeat), 1),
        "from_bodies": round(1000 * _best(lambda: parse_bodies(bodies), repeat), 1),
    }
    gc.enable()

    # escaping for text COPY
    escaped = [s.replace("synthetic", 'syn\\"the\\u00e9tic') for s in lines[:10_000]]
    out["copy_escape_ms"] = {
        name: {
            "translate": round(1000 * _best(lambda d=data: [s.translate(_OLD_ESCAPES) for s in d], repeat), 1),
            "copy_text": round(1000 * _best(lambda d=data: [copy_text(s) for s in d], repeat), 1),
        }
        for name, data in (("as_generated", lines[:10_000]), ("with_json_escapes", escaped))
    }

    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="var/fresh500k")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--intake-only", action="store_true")
    args = ap.parse_args()
    import django

    django.setup()
    from django.core.management import call_command

    from monitor import services
    from monitor.services.stream import stream_accept

    with open(Path(args.data) / "tweets.jsonl") as f:
        lines = f.read().splitlines()[300_000:340_000]
    out: dict = {}
    if not args.intake_only:
        out.update(_parse_and_escape(lines, args.repeat))

    # the intake through the service, into the database
    call_command("migrate", verbosity=0)
    ws = services.workspace_create(name="Read once", slug=f"read-once-{os.getpid()}")
    chunks = [list(enumerate(lines[k : k + 1000], 1)) for k in range(10_000, 40_000, 1000)]
    stream_accept(workspace=ws, lines=list(enumerate(lines[:1000], 1)))  # warm: first queries, imports
    t, w = time.process_time(), time.perf_counter()
    for c in chunks:
        stream_accept(workspace=ws, lines=c)
    n = sum(map(len, chunks))
    out["intake_cpu_s_per_10k"] = round((time.process_time() - t) / n * 10_000, 3)
    out["intake_wall_s_per_10k"] = round((time.perf_counter() - w) / n * 10_000, 3)
    print(json.dumps(out))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
