"""Scale-out through the real worker stack (issues 18 part 3 and 21): one run computed by 1, then N Celery
workers (one ``--pool=solo`` process per GPU, pinned with ``CUDA_VISIBLE_DEVICES``) against one PostgreSQL and
one Redis, row-for-row the same results, with the wall time, the speed-up and each worker's share.

    scripts/with_services.py -- python3 benchmarks/gpu_scaleout.py --retweets 1000000 --workers 1,2 --backend gpu

``scripts/with_services.py`` provides PostgreSQL and Redis (on the GPU machine: throwaway ones from the Debian
packages carried under ``.debs/``, see ``benchmarks/gpu_stack.sh``). What it does:

1. generates the ``twitter`` preset's v1.1 collection (the 1M-retweet benchmark collection of ``make bench-web``)
   and imports it once, in this process, without computing;
2. for each worker count N: starts N workers on the compute queue (``SPREADWATCH_BACKEND`` = ``--backend``;
   worker i sees only GPU i), starts one influence run with ``SPREADWATCH_RUN_WORKERS=N`` (batches planned for
   N workers, ``compute/batching.py``), waits for it, and records the wall time from start to done, each batch's
   device and timings, and a digest of every per-cascade row;
3. the same for a sampled-betweenness network run (``--samples`` sources, one block of 64 sources per batch);
4. checks that every N gives the same rows as N = 1 (influence: bitwise; betweenness: 1e-12 relative) and
   prints a JSON summary (``--json`` writes it too).

On a CPU-only machine ``--backend cpu`` rehearses the same path with N CPU worker processes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, default=1_000_000)
    ap.add_argument("--workers", default="1,2", help="worker counts to run, comma separated")
    ap.add_argument("--backend", default="gpu", choices=("gpu", "cpu"))
    ap.add_argument("--samples", type=int, default=256, help="betweenness sources (0: skip the network run)")
    ap.add_argument("--data", default=str(ROOT / "var" / "scaleout"), help="folder for the generated files")
    ap.add_argument("--timeout", type=float, default=900, help="seconds a run may take")
    ap.add_argument("--json", help="write the summary here too")
    args = ap.parse_args()
    counts = [int(x) for x in args.workers.split(",") if x.strip()]
    queue = "gpu" if args.backend == "gpu" else "cpu"
    redis_url = os.environ.get("REDIS_URL")
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")) or not redis_url:
        print("gpu_scaleout: run it under scripts/with_services.py (PostgreSQL and Redis)", file=sys.stderr)
        return 2
    env = {
        **os.environ,
        "CELERY_BROKER_URL": redis_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",  # the workers below run the tasks, never this process
        "SPREADWATCH_COMPUTE_QUEUE": queue,
        "SPREADWATCH_BACKEND": args.backend,
        "SPREADWATCH_BATCH_MIN_NODES": "1",
        "SPREADWATCH_NETWORK_BLOCKS_PER_BATCH": "1",
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
    }
    os.environ.update(env)
    from _setup import django_on_postgres, generated_collection

    if not django_on_postgres("gpu_scaleout", os.environ["DATABASE_URL"]):
        return 2
    from django.conf import settings

    from monitor import services
    from monitor.models import CascadeInfluence, ComputeRun, NetworkAccount, Workspace

    data = Path(args.data)
    files = generated_collection(data, args.retweets)
    for old in Workspace.objects.filter(slug="scaleout"):
        services.workspace_purge(workspace=old)
    ws = services.workspace_create(name="Scale-out", slug="scaleout")
    t = time.perf_counter()
    c = services.collection_create(workspace=ws, files=files, compute=False)
    c = services.collection_ingest(collection_id=c.pk)  # here, not on a worker: the runs below are what is timed
    print(f"imported {c.counts.get('retweets_in_upload')} retweets in {time.perf_counter() - t:.1f} s ({c.status})")
    if c.status != "done":
        print(f"gpu_scaleout: the import failed: {c.error}", file=sys.stderr)
        return 1

    def run_with(n: int, algorithm: str, params: dict | None) -> dict:
        settings.SPREADWATCH_RUN_WORKERS = n
        stack = contextlib.ExitStack()
        logs = [stack.enter_context((data / f"worker-{algorithm}-{n}-{i}.log").open("w")) for i in range(n)]
        argv = [sys.executable, "-m", "celery", "-A", "monitor", "worker", "-Q", queue, "--pool=solo"]
        argv += ["--concurrency=1", "--prefetch-multiplier=1", "-l", "info", "--without-gossip", "--without-mingle"]
        procs = [
            subprocess.Popen(
                [*argv, "-n", f"w{i}@%h"],
                cwd=ROOT,
                env={**env, "CUDA_VISIBLE_DEVICES": str(i), "SPREADWATCH_RUN_WORKERS": str(n)},
                stdout=logs[i],
                stderr=subprocess.STDOUT,
            )
            for i in range(n)
        ]
        try:
            time.sleep(8)  # the workers connect to the broker (and import CuPy) before the clock starts
            t0 = time.perf_counter()
            run = services.compute_run_start(workspace=ws, backend=args.backend, algorithm=algorithm, params=params)
            while True:
                run.refresh_from_db()
                if run.status in (ComputeRun.Status.DONE, ComputeRun.Status.FAILED, ComputeRun.Status.CANCELLED):
                    break
                if time.perf_counter() - t0 > args.timeout:
                    raise SystemExit(f"run {run.pk} ({algorithm}, {n} workers) not done after {args.timeout} s")
                time.sleep(0.2)
            wall = time.perf_counter() - t0
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=60)
            stack.close()
        batches = list(run.batches.values("index", "device", "n_nodes", "timings", "started_at", "finished_at"))
        if not batches or any(b["device"] == "" for b in batches):
            raise SystemExit(f"run {run.pk}: batches without a device: {batches[:3]}")
        share: dict[str, dict] = defaultdict(lambda: {"batches": 0, "nodes": 0, "busy_s": 0.0})
        for b in batches:
            s = share[b["device"]]
            s["batches"] += 1
            s["nodes"] += b["n_nodes"]
            s["busy_s"] = round(s["busy_s"] + (b["timings"] or {}).get("total_s", 0.0), 3)
        if algorithm == "influence":
            rows = list(
                CascadeInfluence.objects.filter(tweet__workspace=ws)
                .order_by("tweet_id", "account_id")
                .values_list("tweet_id", "account_id", "influence")
            )
        else:
            rows = list(
                NetworkAccount.objects.filter(run=run).order_by("account_id").values_list("account_id", "betweenness")
            )
        return {"workers": n, "status": run.status, "error": run.error, "wall_s": round(wall, 3),
                "batches": len(batches), "share": dict(share), "rows": rows}  # fmt: skip

    summary: dict = {"backend": args.backend, "retweets": c.counts.get("retweets_in_upload"), "runs": []}
    for algorithm, params in (("influence", None), ("network", {"samples": args.samples})):
        if algorithm == "network" and not args.samples:
            continue
        base = None
        for n in counts:
            res = run_with(n, algorithm, params)
            rows = res.pop("rows")
            if base is None:
                base = rows
                res["same_as_first"] = True
            else:
                # the same rows; values to 1e-12 relative (a batch's cascades are summed on the device in an
                # order that follows the batch's make-up, so the last bits may differ between plans)
                res["same_as_first"] = len(rows) == len(base) and all(
                    a[:-1] == b[:-1] and abs(a[-1] - b[-1]) <= 1e-12 * max(abs(b[-1]), 1e-300)
                    for a, b in zip(rows, base)
                )
                res["bitwise"] = rows == base
            res["algorithm"] = algorithm
            res["rows"] = len(rows)
            first = next(r for r in summary["runs"] if r["algorithm"] == algorithm) if n != counts[0] else res
            res["speedup"] = round(first["wall_s"] / res["wall_s"], 3)
            summary["runs"].append(res)
            print(json.dumps(res), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2))
    ok = all(r["status"] == "done" and r["same_as_first"] for r in summary["runs"])
    print("gpu_scaleout:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
