"""An import's peak memory and time against the size of its parts (issue 20: "an import must stream in bounded
memory"): the generated v1.1 collection of ``make bench-web`` imported without its compute, once per
``SPREADWATCH_IMPORT_PART_ROWS`` value, each in a fresh process (peak RSS is the process's high-water mark,
``VmHWM``: not ``ru_maxrss``, which Linux carries over from the parent through fork and exec), into a fresh
workspace of the ``DATABASE_URL`` PostgreSQL.

    scripts/with_services.py -- .venv/bin/python benchmarks/import_memory.py \\
        --retweets 1000000 --data var/bench1m --part-rows 0,5000000,1000000 --json out.json

Every run must store the same rows and counts (checked: the script exits 1 otherwise). The input is generated
first when missing (``benchmarks/_setup.generated_collection``, which is not bounded: 16 GB at 10M).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "1"


def peak_rss_mb() -> int:
    """This process's peak resident set (``VmHWM``), in MB."""
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return round(int(line.split()[1]) / 1024)


def one(data: Path, retweets: int, part_rows: int) -> dict:
    """Import once (this process: ``--one``) and return what it measured."""
    os.environ["SPREADWATCH_IMPORT_PART_ROWS"] = str(part_rows)
    from _setup import django_on_postgres, generated_collection

    if not django_on_postgres("import_memory", os.environ.get("DATABASE_URL", "")):
        raise SystemExit(2)
    from django.db import connection

    from monitor import services
    from monitor.models import Account, Follow, FollowerCount, Retweet, Tweet, Workspace

    files = generated_collection(data, retweets)
    slug = "bench-import-memory"
    for old in Workspace.objects.filter(slug=slug):
        services.workspace_purge(workspace=old)
    ws = services.workspace_create(name="Import memory", slug=slug)
    with connection.cursor() as cur:
        cur.execute("VACUUM ANALYZE")
    rss_before = peak_rss_mb()
    t0 = time.perf_counter()
    c = services.collection_create(workspace=ws, files=files, name="import memory", compute=False)
    c.refresh_from_db()
    wall = time.perf_counter() - t0
    assert c.status == c.Status.DONE, (c.status, c.error)
    stored = {
        "accounts": Account.objects.filter(workspace=ws).count(),
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "retweets": Retweet.objects.filter(tweet__workspace=ws).count(),
        "follower_counts": FollowerCount.objects.filter(account__workspace=ws).count(),
        "follows": Follow.objects.filter(workspace=ws).count(),
    }
    services.workspace_purge(workspace=ws)
    return {
        "part_rows": part_rows,
        "parts": c.timings.get("parts", 1),
        "import_s": round(wall, 1),
        "read_s": c.timings.get("read_s"),
        "merge_s": c.timings.get("merge_s"),
        "duplicate_check_spilled_s": c.timings.get("merge_steps_s", {}).get("duplicate check, spilled", 0.0),
        "peak_rss_mb": peak_rss_mb(),
        "rss_before_import_mb": rss_before,
        "counts": c.counts,
        "stored": stored,
        "merge_steps_s": c.timings.get("merge_steps_s", {}),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, default=1_000_000)
    ap.add_argument("--data", default=str(ROOT / "var" / "bench1m"))
    ap.add_argument("--part-rows", default="0,5000000", help="comma-separated SPREADWATCH_IMPORT_PART_ROWS values")
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # internal: one import in this process
    args = ap.parse_args()
    if args.one is not None:
        print("RESULT " + json.dumps(one(Path(args.data), args.retweets, args.one)), flush=True)
        return 0
    from _setup import generated_collection

    generated_collection(Path(args.data), args.retweets)  # once, before any measured process
    results = []
    for p in [int(x) for x in args.part_rows.split(",")]:
        cmd = [sys.executable, __file__, "--retweets", str(args.retweets), "--data", args.data, "--one", str(p)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        r = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
        r["load_avg"] = os.getloadavg()
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k not in ("counts", "merge_steps_s")}), flush=True)
    same = all(r["stored"] == results[0]["stored"] and r["counts"] == results[0]["counts"] for r in results)
    print("same rows and counts in every run:", same)
    if args.json:
        Path(args.json).write_text(json.dumps({"retweets": args.retweets, "runs": results, "same": same}, indent=1))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
