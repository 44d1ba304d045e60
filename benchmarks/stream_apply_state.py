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
seconds per step; ``sql_s`` (all statements' wall time as the client sees it; ``copy_out``'s reads counted
since the sixth session of 2026-11-28, so earlier figures are lower by them). ``--consumer`` times the
consumer's whole micro-batch (``apply_partition_batch``: its queue queries and row locks, then ``apply_events``)
instead of ``apply_events`` alone; ``--top N`` lists each micro-batch's N slowest statements (COPYs and
``copy_out``'s reads included, the latter marked ``(copy_out)``). The data is the generated ``twitter`` preset
as v1.1 statuses (``stream_freshness.py`` writes it: ``--retweets 500000 --data var/fresh500k``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import json
import os
import pstats
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


class _GcTimer:
    """Seconds the garbage collector ran, by generation (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self._t = 0.0
        gc.callbacks.append(self)

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        else:
            self.seconds[info["generation"]] += time.perf_counter() - self._t


class _Statements:
    """Each SQL statement's wall time as the client sees it (to name where a micro-batch goes)."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, str]] = []

    def __call__(self, execute, sql, params, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.rows.append((time.perf_counter() - t, " ".join(str(sql).split())[:110]))

    @contextlib.contextmanager
    def copying(self):
        """COPY statements and ``copy_out``'s gathered reads too (psycopg's ``Cursor.copy``, and the statement
        ``monitor.db._gathered`` runs on the raw cursor: Django's wrapper sees neither)."""
        import psycopg

        from monitor import db

        real = psycopg.Cursor.copy
        real_gathered = db._gathered
        rows = self.rows

        def gathered(raw, text, columns):
            t = time.perf_counter()
            try:
                return real_gathered(raw, text, columns)
            finally:
                rows.append((time.perf_counter() - t, "(copy_out) " + " ".join(str(text).split())[:99]))

        @contextlib.contextmanager
        def timed(cur, statement, *args, **kw):
            t = time.perf_counter()
            with real(cur, statement, *args, **kw) as cp:
                yield cp
            rows.append((time.perf_counter() - t, " ".join(str(statement).split())[:110]))

        psycopg.Cursor.copy = timed
        db._gathered = gathered
        try:
            yield
        finally:
            psycopg.Cursor.copy = real
            db._gathered = real_gathered

    def top(self, n: int) -> list[list]:
        return [[round(s * 1000, 1), q] for s, q in sorted(self.rows, reverse=True)[:n]]


def _feed_and_apply(
    ws, lines: list[str], first: int, end: int, size: int, *, consumer=False, top=0, profile=None
) -> list[dict]:
    from django.conf import settings
    from django.db import connection

    from monitor.models import StreamEvent
    from monitor.services.stream import stream_accept
    from monitor.services.stream.apply import apply_events
    from monitor.services.stream.consumer import apply_partition_batch

    out = []
    for a in range(first, end, size):
        b = min(end, a + size)
        for k in range(a, b, 1000):
            stream_accept(workspace=ws, lines=list(enumerate(lines[k : min(k + 1000, b)], 1)), source="bench")
        seen: dict = {}

        def apply(seen=seen, **kw):
            seen.update(apply_events(**kw))
            return seen

        stmts = _Statements()
        gct = _GcTimer()
        prof = cProfile.Profile() if profile else None
        t, c = time.perf_counter(), _cpu()
        with connection.execute_wrapper(stmts), stmts.copying(), prof or contextlib.nullcontext():
            if consumer:  # the consumer's whole micro-batch: its queue queries and locks, then apply_events
                n, _ = apply_partition_batch(ws.pk, range(settings.SPREADWATCH_STREAM_PARTITIONS), apply, batch=b - a)
            else:
                ids = list(StreamEvent.objects.filter(workspace=ws, status="queued").values_list("pk", flat=True))
                apply(workspace_id=ws.pk, event_ids=ids)
                n = len(ids)
        row = {
            "events": n, "wall_s": round(time.perf_counter() - t, 3), "cpu_s": round(_cpu() - c, 3),
            "sql_s": round(sum(s for s, _ in stmts.rows), 3), "statements": len(stmts.rows),
            "cascades": seen.get("cascades"), "participants": seen.get("participants"), "seconds": seen.get("seconds"),
        }  # fmt: skip
        gc.callbacks.remove(gct)
        row["gc_s"] = [round(x, 3) for x in gct.seconds]
        if top:
            row["slowest_ms"] = stmts.top(top)
        if prof:
            with open(f"{profile}.{len(out)}", "w") as f:
                pstats.Stats(prof, stream=f).sort_stats(os.environ.get("PROF_SORT", "tottime")).print_stats(
                    int(os.environ.get("PROF_N", "40"))
                )
        out.append(row)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("build", "run"))
    ap.add_argument("--data", default=str(ROOT / "var" / "fresh500k"), help="the generated collection's folder")
    ap.add_argument("--events", type=int, default=300_000, help="build: statuses applied into the state")
    ap.add_argument("--at", type=int, default=300_000, help="run: the first status (after the state's)")
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--consumer", action="store_true", help="run: time the consumer's whole micro-batch")
    ap.add_argument("--top", type=int, default=0, help="run: list the N slowest SQL statements of each")
    ap.add_argument("--profile", help="run: write each micro-batch's cProfile (by own time) to PROFILE.<k>")
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
    for row in _feed_and_apply(
        ws,
        lines,
        first,
        first + args.batches * args.size,
        args.size,
        consumer=args.consumer,
        top=args.top,
        profile=args.profile,
    ):
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
