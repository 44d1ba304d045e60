"""Issue 4's web benchmark: import + compute 1M retweets (v1.1 JSONL, generated) on PostgreSQL with the CPU
backend, until the ranking page shows them; then the ranking page's latency with that data loaded.

    make bench-web          # = scripts/with_services.py -- .venv/bin/python benchmarks/web_bench.py

It needs DATABASE_URL to point at PostgreSQL (with_services provides it) and writes into that database's
``bench-1m`` workspace (dropped and recreated first). Ingest and compute run in this one process, as an eager
Celery task would: the time is the wall time of ``collection_create`` returning with the run done, plus the
first ranking request. The page latency is measured with Django's test client (view + template + SQL, no
network), over the overall ranking and the ten biggest publishers' rankings, every aggregate.

The process's resident memory is sampled every 0.05 s (``--rss-every``) from the upload to the last request:
``peak_rss_mb`` is its highest value (without the input's generation; ``vm_hwm_mb``, the kernel's high-water mark
that ``/usr/bin/time -v`` reports, can read lower: benchmarks/data_layer.md) and ``peak_rss_at_s`` when it came,
seconds from the upload, to be read against the import's and the run's step times; ``rss_trace_mb`` has each
second's highest sample, anonymous and file-backed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
os.environ.setdefault("SPREADWATCH_BACKEND", "cpu")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"


class RssSampler(threading.Thread):
    """Samples this process's resident set size (``/proc/self/status``) until stopped; keeps the peak and when."""

    def __init__(self, every: float):
        super().__init__(daemon=True)
        self.every, self.t0 = every, time.perf_counter()
        self.peak_kb, self.peak_at = 0, 0.0
        self.trace: list[tuple[int, int, int]] = []  # (second, MB anonymous, MB file-backed) at each second's top
        self.done = threading.Event()

    @staticmethod
    def rss_kb() -> dict[str, int]:
        """VmRSS and its anonymous and file-backed parts (mapped files: the follower graph's, for one), in kB."""
        with open("/proc/self/status") as f:
            return {
                k: int(v.split()[0])
                for k, v in (ln.split(":", 1) for ln in f)
                if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile")
            }

    def run(self) -> None:
        second, top = 0, (0, 0, 0)
        while not self.done.wait(self.every):
            t, kb = time.perf_counter() - self.t0, self.rss_kb()
            if kb["VmRSS"] > self.peak_kb:
                self.peak_kb, self.peak_at = kb["VmRSS"], t
            if int(t) > second:
                self.trace.append((second, top[1] // 1024, top[2] // 1024))
                second, top = int(t), (0, 0, 0)
            if kb["VmRSS"] > top[0]:
                top = (kb["VmRSS"], kb["RssAnon"], kb["RssFile"])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, default=1_000_000)
    ap.add_argument("--data", default=str(ROOT / "var" / "bench1m"), help="folder for the generated files")
    ap.add_argument("--requests", type=int, default=200, help="ranking page requests for the latency")
    ap.add_argument(
        "--full-graph-scale",
        type=float,
        help="instead of --retweets: the twitter preset at this scale with its whole follower graph "
        "(1.0: the bigger4-sized collection, 3.68M retweets and 341.7M follows)",
    )
    ap.add_argument(
        "--rerun-backends",
        default="",
        help="after the requests, run the compute again over the same tweets on each of these backends "
        "(comma-separated, e.g. gpu,cpu): a worker's compute end to end on the same data, side by side",
    )
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--rss-every", type=float, default=0.05, help="seconds between two samples of the memory")
    args = ap.parse_args()

    from _setup import django_on_postgres, full_graph_collection, generated_collection

    if not django_on_postgres("web_bench", os.environ.get("DATABASE_URL", "")):
        return 2
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    if args.full_graph_scale:
        files = full_graph_collection(Path(args.data), args.full_graph_scale)
    else:
        files = generated_collection(Path(args.data), args.retweets)
    size = sum(f.stat().st_size for f in files)

    from monitor import selectors, services
    from monitor.models import Workspace

    for old in Workspace.objects.filter(slug="bench-1m"):
        services.workspace_purge(workspace=old)
    ws = services.workspace_create(name="Benchmark 1M", slug="bench-1m")
    User = get_user_model()
    user, _ = User.objects.get_or_create(username="bench")
    services.membership_add(workspace=ws, user=user)
    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE")

    from monitor.boot import freeze_long_lived

    freeze_long_lived()  # what a Celery worker does when it is ready (monitor/celery.py), this process being one
    rss = RssSampler(args.rss_every)
    rss_before_mb = rss.rss_kb()["VmRSS"] // 1024  # the input's generation, when it ran in this process
    rss.start()
    t0 = time.perf_counter()
    c = services.collection_create(workspace=ws, files=files, user=user, name="bench 1M")
    c.refresh_from_db()
    t_import = time.perf_counter() - t0
    run = c.compute_runs.get()
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["*"]
    # no collectstatic here: serve asset URLs unhashed, as in DEBUG
    from django.test import override_settings

    override_settings(
        STORAGES={
            **settings.STORAGES,
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        }
    ).enable()
    client = Client()
    client.force_login(user)
    r = client.get(f"/w/{ws.slug}/ranking/")
    t_total = time.perf_counter() - t0
    assert r.status_code == 200, r.status_code
    # the warm-up's second part (account pages, explorers, variants) runs in a thread after the run's commit
    # (monitor/services/warmup.py): when it is done too, and the latencies below are measured after it
    from monitor.services.warmup import wait_for_rest

    wait_for_rest()
    t_warm = time.perf_counter() - t0
    page = selectors.ranking(ws, limit=1)
    assert page.total_rows > 0

    pubs = [p["twitter_id"] for p in selectors.publishers_summary(ws, limit=10)]
    urls = [f"/w/{ws.slug}/ranking/?aggregate={a}" for a in ("total", "mean", "participation")]
    urls += [f"/w/{ws.slug}/publishers/{p}/?aggregate={a}" for p in pubs for a in ("total", "participation")]
    lat: dict[str, list[float]] = {"all publishers": [], "one publisher": []}
    for i in range(args.requests):
        u = urls[i % len(urls)]
        t = time.perf_counter()
        resp = client.get(u)
        lat["one publisher" if "/publishers/" in u else "all publishers"].append(time.perf_counter() - t)
        assert resp.status_code == 200, (u, resp.status_code)

    t_requests = time.perf_counter() - t0
    run.refresh_from_db()
    failed = list(run.batches.exclude(status="done").values_list("index", "error"))
    if failed:  # the ranking shows what the other batches stored: not a run to report as one
        print(f"web_bench: compute run {run.pk} is {run.status}; batches not done: {failed}", file=sys.stderr)
    reruns = []
    for backend in filter(None, args.rerun_backends.split(",")):
        t = time.perf_counter()
        again = services.compute_run_start(workspace=ws, collection=c, user=user, backend=backend)
        again.refresh_from_db()
        wall = time.perf_counter() - t
        wait_for_rest()  # the warm-up the run started, so that it does not overlap the next one
        not_done = again.batches.exclude(status="done").count()
        reruns.append(
            {
                "backend": backend,
                "status": again.status,
                "batches_not_done": not_done,
                "wall_s": round(wall, 2),
                "timings": again.timings,
            }
        )
    rss.done.set()

    def pct(xs: list[float], q: float) -> float:
        xs = sorted(xs)
        return round(1000 * xs[int(q * (len(xs) - 1))], 1)

    every = [x for xs in lat.values() for x in xs]
    rows = (
        c.counts.get("retweets_in_upload", 0)
        + c.counts.get("follows_in_upload", 0)
        + c.counts.get("tweets_in_upload", 0)
    )
    res = {
        "retweets": c.counts.get("retweets_in_upload"),
        "tweets": c.counts.get("tweets_in_upload"),
        "follows": c.counts.get("follows_in_upload"),
        "input_bytes": size,
        "status": c.status,
        "import_files_s": c.timings.get("files_s"),  # the input's paths copied into the media folder
        "import_read_s": c.timings.get("read_s"),
        "import_merge_s": c.timings.get("merge_s"),
        "import_merge_steps_s": c.timings.get("merge_steps_s"),
        "compute_s": run.timings,
        "run_status": run.status,
        "batches_not_done": len(failed),
        "batches": run.n_batches,
        "import_and_compute_s": round(t_import, 2),
        "until_ranking_shows_s": round(t_total, 2),
        "until_warm_up_done_s": round(t_warm, 2),
        "ingest_rows_per_s": round(rows / (c.timings.get("read_s", 0) + c.timings.get("merge_s", 0))),
        "ranking_requests": len(every),
        "ranking_p50_ms": pct(every, 0.5),
        "ranking_p95_ms": pct(every, 0.95),
        "ranking_max_ms": pct(every, 1.0),
        "ranking_by_kind_ms": {k: {"n": len(v), "p50": pct(v, 0.5), "p95": pct(v, 0.95)} for k, v in lat.items()},
        "peak_rss_mb": rss.peak_kb // 1024,
        "peak_rss_at_s": round(rss.peak_at, 1),
        "rss_before_upload_mb": rss_before_mb,
        "requests_done_s": round(t_requests, 2),
        "vm_hwm_mb": rss.rss_kb()["VmHWM"] // 1024,  # the kernel's high-water mark, the generation included
        "cpu_count": os.cpu_count(),
        "reruns": reruns,
        "rss_trace_mb": rss.trace,
    }
    shown = json.dumps({k: v for k, v in res.items() if k != "rss_trace_mb"}, indent=2)
    print(shown)
    if args.json:  # the trace on one line
        Path(args.json).write_text(f'{shown[:-2]},\n  "rss_trace_mb": {json.dumps(res["rss_trace_mb"])}\n}}\n')
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
