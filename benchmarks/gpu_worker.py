"""The GPU worker end to end, on the GPU machine: a Celery worker started like docker/compose.yml's
``worker-gpu`` (``-Q gpu --pool=solo``, ``SPREADWATCH_BACKEND=gpu``) imports and computes uploads queued by
another process, and its per-cascade influence equals a CPU run's.

The GPU machine has no PostgreSQL or Redis (and no package index: Django and Celery travel as wheels), so this
runs on SQLite with kombu's file-based broker; what it checks is the worker path — queue routing, the solo
pool, the lazy CUDA import, the GPU backend inside ``compute_batch_run`` — not the database.

    python3 benchmarks/gpu_worker.py --retweets 200000
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, default=200_000, help="size of the generated collection")
    ap.add_argument("--backend", default="gpu", help="the worker's SPREADWATCH_BACKEND (cpu: rehearse anywhere)")
    ap.add_argument("--timeout", type=float, default=400)
    args = ap.parse_args()

    data = Path(tempfile.mkdtemp(prefix="spreadwatch-gpu-worker-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "monitor.settings",
        "SPREADWATCH_DATA_DIR": str(data),
        "CELERY_BROKER_URL": "filesystem://",
        "SPREADWATCH_COMPUTE_QUEUE": "gpu",
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    log = data / "worker.log"
    with open(log, "w") as out:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "monitor", "worker", "-Q", "ingest,gpu", "--pool=solo",
             "--without-heartbeat", "--without-mingle", "--without-gossip", "-l", "info", "-n", "gpu@%h"],
            cwd=ROOT, env={**env, "SPREADWATCH_BACKEND": args.backend}, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        return _run(args, data, log, worker)
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def _wait(pred, what: str, log: Path, worker, timeout: float) -> None:
    deadline = time.time() + timeout
    while not pred():
        if worker.poll() is not None:
            raise SystemExit(f"the worker exited while {what}:\n{log.read_text()[-4000:]}")
        if time.time() > deadline:
            raise SystemExit(f"timed out {what}:\n{log.read_text()[-4000:]}")
        time.sleep(0.5)


def _run(args, data: Path, log: Path, worker) -> int:
    import numpy as np

    from compute.generators import generate
    from monitor import services
    from monitor.models import CascadeInfluence, Collection, ComputeRun

    _wait(lambda: "ready." in log.read_text(), "starting", log, worker, 120)
    ws = services.workspace_create(name="GPU worker check", slug="gpu-check")
    sample = ROOT / "tests" / "data" / "thesis_example"
    t = time.perf_counter()
    generate("twitter", data / "gen", fmt="v1", retweets=args.retweets, seed=1)
    print(f"generated {args.retweets:,} retweets in {time.perf_counter() - t:.1f} s", flush=True)
    cols = []
    for name, files in (
        ("thesis example", [sample / "tweets.csv", sample / "follows.csv"]),
        ("generated", [data / "gen" / "tweets.jsonl", data / "gen" / "follows.csv"]),
    ):
        t0 = time.perf_counter()
        c = services.collection_create(workspace=ws, files=files, name=name)

        def done(c=c) -> bool:
            c.refresh_from_db()
            return not c.is_active

        _wait(done, f"importing {name}", log, worker, args.timeout)
        run = c.compute_runs.order_by("-pk").first()
        print(
            f"{name}: {c.status} in {time.perf_counter() - t0:.1f} s; run {run.status if run else '-'} on "
            f"{', '.join(run.devices) if run else '-'}; batch timings {run.timings if run else {}}",
            flush=True,
        )
        assert c.status == Collection.Status.DONE, c.error
        assert run is not None and run.status == ComputeRun.Status.DONE, run and run.error
        cols.append(c)

    def snapshot():
        rows = CascadeInfluence.objects.filter(tweet__workspace=ws).order_by("tweet_id", "account_id")
        return np.array(list(rows.values_list("tweet_id", "account_id"))), np.array(
            list(rows.values_list("influence", flat=True))
        )

    keys_gpu, inf_gpu = snapshot()
    t0 = time.perf_counter()
    cpu_run = services.compute_run_start(workspace=ws, backend="cpu")
    _wait(
        lambda: ComputeRun.objects.get(pk=cpu_run.pk).status in ("done", "failed"), "recomputing on the CPU", log,
        worker, args.timeout,
    )  # fmt: skip
    cpu_run.refresh_from_db()
    print(f"CPU recompute: {cpu_run.status} in {time.perf_counter() - t0:.1f} s on {cpu_run.devices}; "
          f"timings {cpu_run.timings}", flush=True)  # fmt: skip
    keys_cpu, inf_cpu = snapshot()
    assert np.array_equal(keys_gpu, keys_cpu), "different (tweet, account) rows"
    rel = np.abs(inf_gpu - inf_cpu) / np.maximum(np.abs(inf_cpu), 1.0)
    print(f"{len(inf_gpu):,} per-cascade rows; max relative difference GPU vs CPU {rel.max():.2e}", flush=True)
    assert rel.max() <= 1e-12
    text = log.read_text()
    assert "monitor.tasks.compute_batch" in text and "monitor.tasks.ingest_collection" in text
    print("OK: the gpu-queue worker imported, computed and matched the CPU", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
