"""Fairness between workspaces: how long a small upload of workspace B waits for its ranking while workspace A runs
a long graph-wide analysis (betweenness of A's follower graph from ``--samples`` sources, 0: exact), with real
processes: PostgreSQL, Redis as the broker, and the Celery workers as ``docker/compose.yml`` runs them
(``worker-ingest`` -Q ingest -c 2, ``worker-cpu`` -Q cpu,default -c 1, and, in the ``after`` layout,
``worker-analysis`` -Q analysis -c 1).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_fairness \\
    CELERY_BROKER_URL=redis://127.0.0.1:6379/15 REDIS_URL=redis://127.0.0.1:6379/15 \\
    .venv/bin/python benchmarks/fairness_bench.py --layout before --analysis-retweets 60000 --samples 256

``--layout before``: one compute queue, as before the analysis queue (``SPREADWATCH_ANALYSIS_QUEUE=cpu``: the
analysis' batches and the upload's influence batch share ``worker-cpu``). ``--layout after``: the analyses on
their own queue and worker (the default). The Redis database is flushed at the start (give the benchmark one of
its own). Workspace A's collection is generated and imported once per size (kept in the database between runs);
every upload goes to a fresh workspace B. An upload's wait is from ``collection_create`` (what the upload request
does) to its collection being done (imported and its ranking computed), split into the import, the time its
compute batch waited in the queue, its compute and what follows it (the run's completion, the read cache's
warm-up). The uploads start ``--first-after`` seconds after the analysis and follow one another (``--gap``
seconds apart) while it runs. Prints a JSON line per upload and a Markdown row.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

WORKERS = {  # name: (queues, processes), as docker/compose.yml runs them
    "ingest": ("ingest", 2),
    "cpu": ("cpu,default", 1),
    "analysis": ("analysis", 1),
}


def _generate(folder: Path, retweets: int, seed: int) -> list[Path]:
    if not (folder / "tweets.csv").exists():
        from compute.generators import generate

        generate("twitter", folder, fmt="csv", retweets=retweets, seed=seed)
    return [folder / "tweets.csv", folder / "follows.csv"]


def _worker(name: str, queues: str, n: int, env: dict, logs: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "celery", "-A", "monitor", "worker", "-Q", queues, f"--concurrency={n}",
            "--prefetch-multiplier=1", "--without-mingle", "--without-gossip", "-l", "info",
            "-n", f"{name}-{os.getpid()}@%h"]  # fmt: skip
    out = open(logs / f"{name}.log", "w")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _wait_ready(procs: dict[str, subprocess.Popen], logs: Path, timeout: float = 90) -> None:
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        if all("ready." in (logs / f"{n}.log").read_text(errors="replace") for n in procs):
            return
        for n, p in procs.items():
            if p.poll() is not None:
                raise SystemExit(f"worker {n} exited:\n{(logs / f'{n}.log').read_text()[-3000:]}")
        time.sleep(0.3)
    raise SystemExit("workers did not start")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layout", choices=("before", "after"), required=True)
    ap.add_argument("--analysis-retweets", type=int, default=60_000, help="size of workspace A's collection")
    ap.add_argument(
        "--samples", type=int, default=256, help="betweenness sources of A's analysis (0: exact; 64 per batch)"
    )
    ap.add_argument("--upload-retweets", type=int, default=300, help="size of each small upload of workspace B")
    ap.add_argument("--uploads", type=int, default=2, help="uploads made one after the other during the analysis")
    ap.add_argument("--first-after", type=float, default=5.0, help="seconds after the analysis starts")
    ap.add_argument("--gap", type=float, default=2.0, help="seconds between one upload's end and the next")
    ap.add_argument("--cap", type=float, default=170.0, help="stop waiting after this many seconds in all")
    ap.add_argument("--data", type=Path, default=Path("/tmp/spreadwatch-fairness"))
    a = ap.parse_args()

    url = os.environ.get("DATABASE_URL", "")
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not url.startswith("postgres") or not broker.startswith("redis://"):
        print("fairness_bench: set DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL (Redis)", file=sys.stderr)
        return 2
    a.data.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    os.environ.setdefault("SPREADWATCH_DATA_DIR", str(a.data / "var"))
    os.environ["SPREADWATCH_ANALYSIS_QUEUE"] = "cpu" if a.layout == "before" else "analysis"
    os.environ["SPREADWATCH_BACKEND"] = "cpu"
    os.environ.setdefault("REDIS_URL", broker)

    from _setup import django_on_postgres

    if not django_on_postgres("fairness_bench", url):
        return 2
    import redis
    from django.db import connection

    from monitor import services
    from monitor.celery import app
    from monitor.models import Collection, ComputeBatch, ComputeRun, Workspace

    redis.Redis.from_url(broker).flushdb()

    # workspace A: imported once per size, in this process
    slug_a = f"fair-a-{a.analysis_retweets}"
    ws_a = Workspace.objects.filter(slug=slug_a).first()
    if ws_a is None:
        files = _generate(a.data / f"a{a.analysis_retweets}", a.analysis_retweets, seed=1)
        ws_a = services.workspace_create(name=f"Fairness A {a.analysis_retweets}", slug=slug_a)
        app.conf.task_always_eager = True
        try:
            services.collection_create(workspace=ws_a, files=files, compute=False)
        finally:
            app.conf.task_always_eager = False
    small = _generate(a.data / f"b{a.upload_retweets}", a.upload_retweets, seed=2)
    n_nodes = ws_a.accounts.count()

    logs = a.data / f"logs-{a.layout}"
    logs.mkdir(exist_ok=True)
    env = {**os.environ}
    names = ["ingest", "cpu"] + (["analysis"] if a.layout == "after" else [])
    procs = {n: _worker(n, *WORKERS[n], env, logs) for n in names}
    rows = []
    try:
        _wait_ready(procs, logs)
        t_start = time.monotonic()
        run = services.compute_run_start(
            workspace=ws_a, backend="cpu", algorithm="network", params={"samples": a.samples, "graph": "follows"}
        )
        sources = "exact" if not a.samples else f"{a.samples} sources"
        print(f"analysis: run {run.pk}, betweenness ({sources}) of {n_nodes:,} accounts in {run.n_batches} batches")
        time.sleep(a.first_after)
        for i in range(a.uploads):
            if time.monotonic() - t_start > a.cap:
                break
            ws_b = services.workspace_create(name=f"Fairness B {os.getpid()}-{i}", slug=f"fair-b-{os.getpid()}-{i}")
            t0 = time.time()
            c = services.collection_create(workspace=ws_b, files=small)
            while time.monotonic() - t_start < a.cap:
                c.refresh_from_db()
                if c.status in (Collection.Status.DONE, Collection.Status.FAILED):
                    break
                time.sleep(0.1)
            t1 = time.time()
            r = ComputeRun.objects.filter(collection=c).first()
            b = ComputeBatch.objects.filter(run=r).order_by("started_at").first() if r else None
            analysis = ComputeRun.objects.get(pk=run.pk)
            row = {
                "layout": a.layout,
                "upload": i,
                "status": c.status,
                "wait_s": round(t1 - t0, 2),
                "import_s": round(r.created_at.timestamp() - t0, 2) if r else None,
                "queued_s": round(b.started_at.timestamp() - r.created_at.timestamp(), 2)
                if b and b.started_at
                else None,
                "compute_s": round(b.finished_at.timestamp() - b.started_at.timestamp(), 2)
                if b and b.finished_at and b.started_at
                else None,
                # after its batch: the run's completion and the read cache's warm-up, in the batch's transaction
                "finish_s": round(c.finished_at.timestamp() - b.finished_at.timestamp(), 2)
                if b and b.finished_at and c.finished_at
                else None,
                "analysis_batches_done": analysis.batches_done,
                "analysis_batches": analysis.n_batches,
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            time.sleep(a.gap)
        # how long the analysis took (waited for up to the cap)
        while time.monotonic() - t_start < a.cap:
            run.refresh_from_db()
            if run.status in (ComputeRun.Status.DONE, ComputeRun.Status.FAILED):
                break
            time.sleep(0.5)
        run.refresh_from_db()
        took = (run.finished_at - run.created_at).total_seconds() if run.finished_at else None
        print(
            json.dumps({"analysis_status": run.status, "analysis_s": took, "batches": run.n_batches}),
            flush=True,
        )
        worst = max((r["wait_s"] for r in rows), default=None)
        waits = ", ".join(f"{r['wait_s']:.1f}" for r in rows)
        print(
            f"| {a.layout} | {n_nodes:,} accounts, {sources}, {run.n_batches} batches | "
            f"{f'{took:.0f} s' if took else 'not done in the cap'} | {len(rows)} | "
            f"{waits} | **{worst} s** |"
        )
    finally:
        from monitor.services.runs import compute_run_cancel

        for r in ComputeRun.objects.filter(workspace=ws_a, status__in=("waiting", "queued", "running")):
            compute_run_cancel(run=r)  # the next invocation starts with nothing in flight
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGQUIT)  # cold: the analysis left running does not matter any more
        for p in procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        connection.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
