"""Issue 17's end-to-end freshness: how long from a retweet accepted by the stream to the ranking page showing it,
at sustained rates, on this machine (PostgreSQL, CPU backend), with the real consumer and apply.

    scripts/with_services.py -- .venv/bin/python benchmarks/stream_freshness.py --rates 500,1000,2000 \
        --seconds 20 --json benchmarks/results/stream_freshness.json

Data: the generated ``twitter`` preset as an analyst's v1.1 collection (``--retweets``, written once under
``--data``). Its follows are uploaded first through the normal upload (the follower graph is known before the
stream starts). Then, per rate R (ascending, each continuing the same time-ordered statuses, in one workspace):

* the **feeder** (this process) accepts R/10 statuses every 100 ms through ``stream_accept`` (the service
  behind ``POST /api/v1/stream/``: every line checked, one COPY, commit, wake-ups) for ``--seconds``;
* ``--consumers`` **consumers** (``manage.py stream_consume``, their own processes, the product's apply:
  parse, merge, recompute the touched cascades, store, refresh their aggregates, mark) apply micro-batches;
* before the timed feed, 200 statuses warm the consumers up (their first apply loads the follower graph and
  numba's compiled kernels) and are applied;
* a **prober** (its own process, Django's test client: view, template and SQL, no network) requests the
  workspace's ranking page ``--probe-hz`` times a second (default 5: a desk of analysts whose pages refresh
  every few seconds), recording when each request started and ended. Until 2026-11-27 it requested the page
  back to back (``--probe-hz 0``): at 25 requests a second the prober and its SQL took about half of the two
  cores (2.0 CPU s per 10,000 events in the prober alone, measured with the CPU split below), which a real
  desk does not. A 5/s prober makes freshness late by up to 0.2 s more (the next request after the apply).

CPU: from the feed's start to the drain's end, the CPU seconds of the feeder, the consumers, the prober, every
PostgreSQL process and the whole machine (``/proc``), per 10,000 events fed (``cpu_s_per_10k``), and the share
of the two cores that was busy (``cores_busy``): where the machine's time went. WAL: the server's WAL bytes per
event fed and the checkpoints in that window (``wal_bytes_per_event``, ``checkpoints``; ``pg_stat_wal``): after
a checkpoint every page's next change writes the whole page to the WAL, so longer runs pay more per event.
Micro-batches: the consumers' micro-batches that ended in that window, from the line each logs (how many, their
median and largest size, their wall seconds and each step's seconds per 10,000 events; ``micro_batches``).

Per event: *applied* = when the apply's transaction marked it (the last statement before the commit) minus its
``received_at`` (set just before the intake's COPY); *freshness* = the end of the first ranking request that
started after that mark, minus ``received_at``: the event is in what that page shows (the apply bumps the data
version the page's cache depends on; only the commit itself, a few ms, separates the mark from it). The mark's
time is recorded by statement-level triggers this benchmark puts on ``monitor_streamevent`` (``AFTER DELETE``,
and ``AFTER UPDATE`` to ``applied`` for code from before applied events were deleted) into an unlogged table,
with ``clock_timestamp()``: one ``INSERT ... SELECT`` per marking statement. Until 2026-11-28 the event's own
``applied_at`` was used, which the apply sets to the time its micro-batch *started*: a probe that started
during the apply and read the state before its commit was counted, so freshness came out early by up to one
micro-batch (about a second at the rates measured); figures from before then do not compare.

Host speed: this machine's hosts differ by up to twice in speed, and one host changed speed within an hour
(``benchmarks/stream_web.md``). Before each rate's feed, with the consumers idle, two fixed probes run and go into
its result as ``host``: ``python_parse_2k_ms``, the CPU ms of the apply's parse (``parse_bodies``) over the
collection's first 2,000 statuses, and ``pg_series_1m_ms``, the wall ms of PostgreSQL counting a
1,000,000-row ``generate_series``; best of three each. They tell runs apart. They do not normalise them: in the
session that added them they varied from one rate to the next within a run and did not follow the results.

A rate is *sustained* when the queue drained within 2 s of the last accepted body; the page's own
latency under the load is reported beside it. The load average (2 cores) is printed with each rate.
"""

from __future__ import annotations

import argparse
import bisect
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
os.environ.setdefault("SPREADWATCH_BACKEND", "cpu")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"
os.environ.setdefault("PGAPPNAME", "bench-feeder")  # this process's PostgreSQL time is told apart by it


def _pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p / 100 * len(xs)))], 3)


_TICK = os.sysconf("SC_CLK_TCK")


def _pid_cpu(pid: int) -> float:
    """CPU seconds (user + system) a live process has used so far, from ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK


def _cpu_snapshot(pids: dict[str, list[int]]) -> dict[str, float]:
    """CPU seconds so far: of each named group of processes, of the PostgreSQL server processes serving each
    group (told apart by ``application_name``, which each process sets through ``PGAPPNAME``; the server's own
    background processes are ``pg_other``), and of the whole machine (busy time of all cores, ``/proc/stat``), to
    split the two cores' time between the parts."""
    from django.db import connection

    out = {name: sum(_pid_cpu(p) for p in group) for name, group in pids.items()}
    with connection.cursor() as cur:
        cur.execute("SELECT pid, application_name FROM pg_stat_activity")
        app = {pid: name.removeprefix("bench-") for pid, name in cur.fetchall()}
    for name in pids:
        out[f"pg_{name}"] = 0.0
    out["pg_other"] = 0.0
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().strip() != "postgres":
                    continue
            except OSError:
                continue
            group = app.get(int(d.name), "")
            key = f"pg_{group}" if group in pids else "pg_other"
            out[key] += _pid_cpu(int(d.name))
    cpu = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    jiffies = [int(x) for x in cpu]
    out["machine_busy"] = (sum(jiffies) - jiffies[3] - jiffies[4]) / _TICK  # all but idle and iowait
    return out


def probe(slug: str, user: str, out: Path, stop: Path, hz: float) -> int:
    """The prober process: the ranking page ``hz`` times a second (0: back to back) until ``stop`` exists; one
    line per request."""
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client, override_settings
    from django.test.utils import setup_test_environment

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # asset URLs unhashed, as in DEBUG
    override_settings(STORAGES={**settings.STORAGES, "staticfiles": plain}).enable()
    client = Client()
    client.force_login(get_user_model().objects.get(username=user))
    with out.open("w") as f:
        due = time.monotonic()
        while not stop.exists():
            t0 = time.time()
            r = client.get(f"/w/{slug}/ranking/")
            f.write(f"{t0:.6f} {time.time():.6f} {r.status_code}\n")
            f.flush()
            if hz > 0:  # the next request at the next tick (none skipped when one ran long: it starts at once)
                due += 1 / hz
                time.sleep(max(0.0, due - time.monotonic()))
    return 0


def _wal_snapshot() -> tuple[int, int]:
    """The server's WAL bytes written and checkpoints so far (a checkpoint makes the next change of every page
    write the whole page to the WAL: the same work costs more for a while after one)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT (SELECT wal_bytes FROM pg_stat_wal)::bigint,"
            " (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter)::bigint"
        )
        wal, ckpt = cur.fetchone()
    return int(wal), int(ckpt)


def _host_speed(lines: list[str]) -> dict:
    """The two fixed probes of this host's speed (see the module): best of three each."""
    from django.db import connection

    from monitor.services.stream._apply_parse import parse_bodies

    bodies = lines[:2000]
    py, pg = [], []
    for _ in range(3):
        t = time.process_time()
        parse_bodies(bodies)
        py.append(time.process_time() - t)
        with connection.cursor() as cur:
            t = time.perf_counter()
            cur.execute("SELECT count(*) FROM generate_series(1, 1000000)")
            cur.fetchone()
            pg.append(time.perf_counter() - t)
    return {"python_parse_2k_ms": round(min(py) * 1000, 1), "pg_series_1m_ms": round(min(pg) * 1000, 1)}


# statement-level triggers that log when each event is marked applied (deleted, or updated to ``applied`` by code
# from before applied events were deleted), with the statement's clock time; transition tables keep it to one
# INSERT ... SELECT per marking statement
_APPLIED_LOG = """
CREATE UNLOGGED TABLE IF NOT EXISTS bench_fresh_applied (
    id bigint, workspace_id bigint, kind text, received_at timestamptz, marked_at timestamptz);
TRUNCATE bench_fresh_applied;
CREATE OR REPLACE FUNCTION bench_fresh_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bench_fresh_applied SELECT o.id, o.workspace_id, o.kind, o.received_at, clock_timestamp()
    FROM old_rows o WHERE o.status IN ('queued', 'waiting');
    RETURN NULL;
END $$;
CREATE OR REPLACE FUNCTION bench_fresh_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO bench_fresh_applied SELECT n.id, n.workspace_id, n.kind, n.received_at, clock_timestamp()
    FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE n.status = 'applied' AND o.status <> 'applied';
    RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS bench_fresh_deleted ON monitor_streamevent;
DROP TRIGGER IF EXISTS bench_fresh_updated ON monitor_streamevent;
CREATE TRIGGER bench_fresh_deleted AFTER DELETE ON monitor_streamevent REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bench_fresh_deleted();
CREATE TRIGGER bench_fresh_updated AFTER UPDATE ON monitor_streamevent
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bench_fresh_updated();
"""


_BATCH_LINE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*micro-batch of workspace .*: (\d+) events in ([\d.]+) s \((.*)\)"
)
_STEPS = ("lock", "parse", "wait_lock", "store", "compute", "aggregates", "results", "mark")


def _micro_batches(paths: list[Path], t0: float, t1: float) -> dict:
    """The consumers' micro-batches that ended between ``t0`` and ``t1`` (epoch seconds), from the line each
    logs: how many, their sizes, their wall seconds and each step's seconds per 10,000 events (what earlier
    sessions summed from the logs by hand)."""
    sizes, walls, steps = [], [], dict.fromkeys(_STEPS, 0.0)
    for path in paths:
        for line in path.read_text(errors="replace").splitlines():
            m = _BATCH_LINE.match(line)
            if not m:
                continue
            at = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
            if not t0 <= at <= t1 + 1.0:
                continue
            sizes.append(int(m.group(2)))
            walls.append(float(m.group(3)))
            for kv in m.group(4).split():
                k, _, v = kv.partition("=")
                if k in steps:
                    steps[k] += float(v)
    n = sum(sizes)
    if not n:  # none in the window, or the consumers' log line changed (monitor/services/stream/consumer.py)
        return {"n": 0, "note": "no micro-batch line of the consumers' logs in the timed window"}
    return {
        "n": len(sizes),
        "events_p50": int(statistics.median(sizes)),
        "events_max": max(sizes),
        "wall_s_per_10k": round(sum(walls) / n * 10_000, 3),
        "wall_max_s": round(max(walls), 3),
        "steps_s_per_10k": {k: round(v / n * 10_000, 3) for k, v in steps.items()},
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, default=200_000, help="size of the generated collection")
    ap.add_argument("--data", default=str(ROOT / "var" / "stream_fresh"), help="folder for the generated files")
    ap.add_argument("--rates", default="500,1000,2000", help="retweets/s fed, comma list, ascending")
    ap.add_argument("--seconds", type=float, default=20.0, help="feeding time per rate")
    ap.add_argument("--consumers", type=int, default=1)
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument(
        "--probe-hz", type=float, default=5.0, help="ranking page requests a second (0: back to back, as before)"
    )
    ap.add_argument("--probe", nargs=5, metavar=("SLUG", "USER", "OUT", "STOP", "HZ"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.probe:
        slug, user, out, stop, hz = args.probe
        return probe(slug, user, Path(out), Path(stop), float(hz))

    from _setup import django_on_postgres, generated_collection

    if not django_on_postgres("stream_freshness", os.environ.get("DATABASE_URL", "")):
        return 2
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.db.models import Count

    from monitor import services
    from monitor.models import StreamEvent, Workspace
    from monitor.services.stream import stream_accept

    data = Path(args.data)
    generated_collection(data, args.retweets)
    for old in Workspace.objects.filter(slug__startswith="bench-fresh"):
        with connection.cursor() as cur:
            cur.execute("DELETE FROM monitor_streamevent WHERE workspace_id = %s", [old.pk])
        services.workspace_purge(workspace=old)
    with connection.cursor() as cur:
        # the purged workspace's rows are dead tuples until vacuumed (this machine's server runs no autovacuum)
        cur.execute("SHOW autovacuum")
        print(f"autovacuum: {cur.fetchone()[0]}; VACUUM ANALYZE before the run", flush=True)
        cur.execute("VACUUM ANALYZE")
        cur.execute(_APPLIED_LOG)
    slug = f"bench-fresh-{int(time.time())}"
    User = get_user_model()
    user = User.objects.filter(username="bench-fresh").first() or User.objects.create_user("bench-fresh", password="x")
    ws = services.workspace_create(name="Freshness bench", slug=slug, owner=user)
    t = time.perf_counter()
    c = services.collection_create(workspace=ws, files=[data / "follows.csv"])
    c.refresh_from_db()
    print(f"follows uploaded: {c.counts.get('follows_new', 0):,} in {time.perf_counter() - t:.1f} s ({c.status})")
    settings.SPREADWATCH_STREAM_MAX_BACKLOG = 10_000_000
    lines = (data / "tweets.jsonl").read_text().splitlines()
    var = ROOT / "var"
    var.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPREADWATCH_STREAM_MAX_BACKLOG": "10000000"}
    env_consumer, env_prober = {**env, "PGAPPNAME": "bench-consumers"}, {**env, "PGAPPNAME": "bench-prober"}
    results = []
    at = 0
    for rate in [int(r) for r in args.rates.split(",")]:
        per_tick = max(1, rate // 10)
        n_ticks = int(args.seconds * 10)
        if at + 200 + per_tick * n_ticks > len(lines):
            print(f"stream_freshness: not enough statuses left for {rate}/s; generate more (--retweets)")
            break
        stop = var / "stream_fresh.stop"
        stop.unlink(missing_ok=True)
        probe_out = var / f"stream_fresh_probe_{rate}.txt"
        logs, procs = [], []
        for k in range(args.consumers):
            log = (var / f"stream_fresh_consumer_{rate}_{k}.log").open("w")
            logs.append(log)
            procs.append(subprocess.Popen(
                [sys.executable, "manage.py", "stream_consume", "--workspace", slug, "--name", f"fresh-{rate}-{k}"],
                cwd=ROOT, env=env_consumer, stdout=log, stderr=subprocess.STDOUT,
            ))  # fmt: skip
        prober = subprocess.Popen(
            [sys.executable, __file__, "--probe", slug, user.username, str(probe_out), str(stop), str(args.probe_hz)],
            cwd=ROOT,
            env=env_prober,
        )
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not (
                all("ready" in Path(lg.name).read_text() for lg in logs) and probe_out.exists()
            ):
                time.sleep(0.2)
            # warm-up, not timed: the consumers' first apply loads the follower graph and numba's kernels
            warm = lines[at : at + 200]
            at += len(warm)
            stream_accept(workspace=ws, lines=list(enumerate(warm, 1)), source="bench warm-up")
            deadline = time.monotonic() + 300
            while StreamEvent.objects.filter(workspace=ws, status="queued").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(3.0)
            host = _host_speed(lines)
            load_before = os.getloadavg()
            with connection.cursor() as cur:  # the last event so far, queued or already marked (and deleted)
                cur.execute(
                    """SELECT greatest((SELECT max(id) FROM monitor_streamevent WHERE workspace_id = %s),
                                       (SELECT max(id) FROM bench_fresh_applied WHERE workspace_id = %s))""",
                    [ws.pk, ws.pk],
                )
                first_id = cur.fetchone()[0]
            group = {"feeder": [os.getpid()], "consumers": [p.pid for p in procs], "prober": [prober.pid]}
            cpu0 = _cpu_snapshot(group)
            wal0 = _wal_snapshot()
            t_start = time.perf_counter()
            wall_start = time.time()
            fed = 0
            for k in range(n_ticks):
                chunk = lines[at : at + per_tick]
                at += per_tick
                stream_accept(workspace=ws, lines=list(enumerate(chunk, 1)), source="bench")
                fed += len(chunk)
                sleep = t_start + (k + 1) * 0.1 - time.perf_counter()
                if sleep > 0:
                    time.sleep(sleep)
            fed_s = time.perf_counter() - t_start
            t_end = time.perf_counter()
            backlog_end = StreamEvent.objects.filter(workspace=ws, status="queued").count()
            deadline = time.monotonic() + 300
            while StreamEvent.objects.filter(workspace=ws, status="queued").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            drain_s = time.perf_counter() - t_end
            wall_end = time.time()
            cpu1 = _cpu_snapshot(group)
            wal1 = _wal_snapshot()
            window = time.perf_counter() - t_start
            used = {k: cpu1[k] - cpu0[k] for k in cpu0}
            used["other"] = used["machine_busy"] - sum(v for k, v in used.items() if k != "machine_busy")
            time.sleep(2.0)  # the prober sees the last apply
            load_after = os.getloadavg()
        finally:
            stop.touch()
            prober.wait(timeout=60)
            for p in procs:
                p.terminate()
                p.wait(timeout=60)
            for lg in logs:
                lg.close()
        probes = []
        for ln in probe_out.read_text().splitlines():
            a, b, s = ln.split()
            probes.append((float(a), float(b), int(s)))
        starts = [p[0] for p in probes]
        with connection.cursor() as cur:  # the marks the triggers logged: (kind, received, marked) in epoch seconds
            cur.execute(
                """SELECT kind, extract(epoch FROM received_at)::float8, extract(epoch FROM marked_at)::float8
                   FROM bench_fresh_applied WHERE workspace_id = %s AND id > %s""",
                [ws.pk, first_id or 0],
            )
            marked = cur.fetchall()
        by_status = dict(
            StreamEvent.objects.filter(workspace=ws, pk__gt=first_id or 0)
            .exclude(status="applied")
            .values_list("status")
            .annotate(n=Count("pk"))
        )
        by_status["applied"] = len(marked)
        applied, fresh, not_shown = [], [], 0
        for kind, r, a in marked:
            if kind != "retweet":
                continue
            applied.append(a - r)
            i = bisect.bisect_right(starts, a)
            if i < len(probes):
                fresh.append(probes[i][1] - r)
            else:
                not_shown += 1
        page = [b - a for a, b, s in probes if s == 200]
        third = len(fresh) // 3
        res = {
            "rate": rate,
            "fed": fed,
            "fed_per_s": round(fed / fed_s),
            "consumers": args.consumers,
            "events_by_status": by_status,
            "backlog_at_end_of_feed": backlog_end,
            "drain_s": round(drain_s, 2),
            "sustained": drain_s <= 2.0,
            "applied_p50_s": _pct(applied, 50),
            "applied_p99_s": _pct(applied, 99),
            "fresh_p50_s": _pct(fresh, 50),
            "fresh_p99_s": _pct(fresh, 99),
            "fresh_max_s": round(max(fresh), 3) if fresh else None,
            "fresh_p99_first_third_s": _pct(fresh[:third], 99),
            "fresh_p99_last_third_s": _pct(fresh[-third:], 99) if third else None,
            "retweets_not_yet_shown": not_shown,
            "page_requests": len(probes),
            "page_errors": sum(1 for p in probes if p[2] != 200),
            "page_p50_s": _pct(page, 50),
            "page_p99_s": _pct(page, 99),
            "probe_hz": args.probe_hz,
            # CPU seconds per 10,000 events fed, from the feed's start to the drain's end, by process group
            # ("machine_busy": every core's busy time; "other": what none of the groups used), and the
            # share of the two cores that was busy in that window
            "cpu_s_per_10k": {k: round(v / fed * 10_000, 3) for k, v in used.items()},
            "cores_busy": round(used["machine_busy"] / window, 2),
            # the whole server's WAL per event fed, and the checkpoints in the window (from the feed's start to
            # the drain's end)
            "wal_bytes_per_event": round((wal1[0] - wal0[0]) / max(fed, 1)),
            "checkpoints": wal1[1] - wal0[1],
            "micro_batches": _micro_batches([Path(lg.name) for lg in logs], wall_start, wall_end),
            "host": host,
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in load_after],
        }
        print(json.dumps(res), flush=True)
        results.append(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
