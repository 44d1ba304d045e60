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
3. with ``--cpu-baseline``: the same influence run by one CPU worker (``SPREADWATCH_BACKEND=cpu``, every core
   of the machine), the GPU's baseline through the same stack (issue 18 part 3);
4. with ``--rsg SCALE``: the thesis' ``rsg`` preset at that scale (spreading graphs given, so a batch runs the
   backward phase only), imported as its ``.npz`` archive into a workspace of its own and computed the same way;
5. the same for a sampled-betweenness network run (``--samples`` sources, one block of 64 sources per batch);
6. checks that every N gives the same rows as N = 1 (influence: to 1e-12 relative; betweenness: 1e-12) and
   prints a JSON summary (``--json`` writes it too, after every run, so a cut-short call keeps what it did).

Each run reports each worker's share (batches, participants, busy time) and the sum of its batches' step
timings (load, forward, backward, store and its parts, waits for the locks), so it shows where a batch's time
goes when more workers share one PostgreSQL.

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
    ap.add_argument("--cpu-baseline", action="store_true", help="also compute the influence run on one CPU worker")
    ap.add_argument("--rsg", type=float, default=0.0, help="also import and compute the rsg preset at this scale")
    ap.add_argument("--skip-twitter", action="store_true", help="no influence run on the twitter collection")
    ap.add_argument(
        "--warmup",
        action="store_true",
        help="before each series, one untimed run per backend (a fresh machine compiles the CuPy kernels and numba "
        "functions on their first use and caches them on disk: without it the first timed run pays for that)",
    )
    ap.add_argument(
        "--runs-per-worker",
        type=int,
        default=1,
        help="runs one after the other on the same worker processes (the first is reported; the others show "
        "what a worker keeps between runs: compiled kernels, the follower graph, its device copy)",
    )
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

    def unbounded(w) -> None:
        """This benchmark runs big analyses (exact betweenness) on purpose, on GPUs: its workspaces' cost budgets
        (monitor/services/budgets.py, estimated for one CPU worker) are a week and 1 TB instead of the defaults."""
        w.budget_run_seconds, w.budget_run_memory_mb = 7 * 86400, 1024 * 1024
        w.save(update_fields=["budget_run_seconds", "budget_run_memory_mb"])

    data = Path(args.data)
    files = generated_collection(data, args.retweets)
    for old in Workspace.objects.filter(slug="scaleout"):
        services.workspace_purge(workspace=old)
    ws = services.workspace_create(name="Scale-out", slug="scaleout")
    unbounded(ws)
    t = time.perf_counter()
    c = services.collection_create(workspace=ws, files=files, compute=False)
    c = services.collection_ingest(collection_id=c.pk)  # here, not on a worker: the runs below are what is timed
    print(f"imported {c.counts.get('retweets_in_upload')} retweets in {time.perf_counter() - t:.1f} s ({c.status})")
    if c.status != "done":
        print(f"gpu_scaleout: the import failed: {c.error}", file=sys.stderr)
        return 1

    def rsg_workspace(scale: float, folder: Path):
        """The rsg preset's spreading-graph archive imported into a workspace of its own (not computed)."""
        from compute.generators import generate

        path = folder / f"rsg-{scale:g}.npz"
        if not path.exists():
            generate("rsg", path, scale=scale, seed=0)
        for old in Workspace.objects.filter(slug="scaleout-rsg"):
            services.workspace_purge(workspace=old)
        rws = services.workspace_create(name="Scale-out rsg", slug="scaleout-rsg")
        unbounded(rws)
        t = time.perf_counter()
        rc = services.collection_create(workspace=rws, files=[path], compute=False)
        rc = services.collection_ingest(collection_id=rc.pk)
        print(f"imported rsg@{scale:g} ({rc.counts}) in {time.perf_counter() - t:.1f} s ({rc.status})", flush=True)
        if rc.status != "done":
            print(f"gpu_scaleout: the rsg import failed: {rc.error}", file=sys.stderr)
            return None
        return rws

    def shares(run) -> tuple[dict, list]:
        """Each device's batches, participants, busy time and summed step timings in ``run``; and the batches."""
        batches = list(run.batches.values("index", "device", "n_nodes", "timings", "started_at", "finished_at"))
        if not batches or any(b["device"] == "" for b in batches):
            raise SystemExit(f"run {run.pk}: batches without a device: {batches[:3]}")
        share: dict[str, dict] = defaultdict(lambda: {"batches": 0, "nodes": 0, "busy_s": 0.0, "steps": {}})
        for b in batches:
            s = share[b["device"]]
            s["batches"] += 1
            s["nodes"] += b["n_nodes"]
            s["busy_s"] = round(s["busy_s"] + (b["timings"] or {}).get("total_s", 0.0), 3)
            for k, v in (b["timings"] or {}).items():
                s["steps"][k] = round(s["steps"].get(k, 0.0) + v, 3)
        return dict(share), batches

    def run_with(n: int, algorithm: str, params: dict | None, ws=ws, backend: str = args.backend) -> dict:
        settings.SPREADWATCH_RUN_WORKERS = n
        stack = contextlib.ExitStack()
        tag = f"{ws.slug}-{algorithm}-{backend}-{n}"
        logs = [stack.enter_context((data / f"worker-{tag}-{i}.log").open("w")) for i in range(n)]
        argv = [sys.executable, "-m", "celery", "-A", "monitor", "worker", "-Q", queue, "--pool=solo"]
        argv += ["--concurrency=1", "--prefetch-multiplier=1", "-l", "info", "--without-gossip", "--without-mingle"]
        procs = [
            subprocess.Popen(
                [*argv, "-n", f"w{i}@%h"],
                cwd=ROOT,
                env={
                    **env,
                    # a CPU worker listens on the same queue (the routes are fixed when the settings load)
                    "CUDA_VISIBLE_DEVICES": str(i) if backend == "gpu" else "",
                    "SPREADWATCH_BACKEND": backend,
                    "SPREADWATCH_RUN_WORKERS": str(n),
                },
                stdout=logs[i],
                stderr=subprocess.STDOUT,
            )
            for i in range(n)
        ]
        try:
            time.sleep(8)  # the workers connect to the broker (and import CuPy) before the clock starts
            walls, done = [], []
            for _ in range(max(1, args.runs_per_worker)):
                t0 = time.perf_counter()
                run = services.compute_run_start(workspace=ws, backend=backend, algorithm=algorithm, params=params)
                while True:
                    run.refresh_from_db()
                    if run.status in (ComputeRun.Status.DONE, ComputeRun.Status.FAILED, ComputeRun.Status.CANCELLED):
                        break
                    if time.perf_counter() - t0 > args.timeout:
                        raise SystemExit(f"run {run.pk} ({algorithm}, {n} workers) not done after {args.timeout} s")
                    time.sleep(0.2)
                walls.append(round(time.perf_counter() - t0, 3))
                done.append(run)
            wall, run = walls[0], done[0]
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=60)
            stack.close()
        share, batches = shares(run)
        later = [{"wall_s": w, "share": shares(r)[0]} for w, r in zip(walls[1:], done[1:])]
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
        return {"workspace": ws.slug, "backend": backend, "workers": n, "status": run.status, "error": run.error,
                "wall_s": round(wall, 3), "batches": len(batches), "share": share, "later_runs": later,
                "rows": rows}  # fmt: skip

    summary: dict = {"backend": args.backend, "retweets": c.counts.get("retweets_in_upload"), "runs": []}

    def same(rows, base) -> bool:
        # the same rows; values to 1e-12 relative (a batch's cascades are summed on the device in an order that
        # follows the batch's make-up, so the last bits may differ between plans)
        return len(rows) == len(base) and all(
            a[:-1] == b[:-1] and abs(a[-1] - b[-1]) <= 1e-12 * max(abs(b[-1]), 1e-300) for a, b in zip(rows, base)
        )

    def series(label: str, algorithm: str, params: dict | None, plan: list[tuple[int, str]], ws=ws) -> None:
        base, first = None, None
        for backend in dict.fromkeys(b for _, b in plan) if args.warmup else ():
            warm = run_with(1, algorithm, params, ws=ws, backend=backend)
            warm.pop("rows")
            summary.setdefault("warmups", []).append({**warm, "label": label, "algorithm": algorithm})
            print(json.dumps({"warmup": label, "backend": backend, "wall_s": warm["wall_s"]}), flush=True)
        for n, backend in plan:
            res = run_with(n, algorithm, params, ws=ws, backend=backend)
            rows = res.pop("rows")
            if base is None:
                base, first = rows, res
                res["same_as_first"] = True
            else:
                res["same_as_first"] = same(rows, base)
                res["bitwise"] = rows == base
            res["algorithm"], res["label"], res["rows"] = algorithm, label, len(rows)
            res["speedup"] = round(first["wall_s"] / res["wall_s"], 3)
            summary["runs"].append(res)
            print(json.dumps(res), flush=True)
            if args.json:
                Path(args.json).write_text(json.dumps(summary, indent=2))

    gpu_plan = [(n, args.backend) for n in counts]
    if not args.skip_twitter:
        series("influence, twitter", "influence", None, gpu_plan + ([(1, "cpu")] if args.cpu_baseline else []))
    if args.rsg:
        rsg_ws = rsg_workspace(args.rsg, data)
        if rsg_ws is not None:
            series(f"influence, rsg@{args.rsg:g}", "influence", None, gpu_plan, ws=rsg_ws)
    if args.samples:
        series("betweenness", "network", {"samples": args.samples}, gpu_plan)
    ok = all(r["status"] == "done" and r["same_as_first"] for r in summary["runs"])
    print("gpu_scaleout:", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
