"""The read step alone: one v1.1 JSONL file through ``iter_tweets`` serial and with worker processes, alternately.

    python benchmarks/read_parallel_bench.py --data /work/wt20/var/bench1m --repeat 2 --json out.json

Each read is what the import's reading does for this file (strict mode, one ``SeenTweets``, 200K-row chunks),
without the staging; every parallel read's tables and report are checked against the serial one's. Prints the
seconds and the load average before each read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from compute.formats import Parallel, ReadReport, SeenTweets, iter_tweets  # noqa: E402


def _read(path: Path, parallel: Parallel | None):
    report = ReadReport(max_shown=50)
    t0 = time.perf_counter()
    tables = list(iter_tweets(path, "v1", report=report, seen=SeenTweets(), parallel=parallel))
    return time.perf_counter() - t0, tables, report


def _digest(tables) -> list:
    return [
        (len(t), int(t.tweet_id.sum()), int(t.user_id.sum()), float(np.nansum(t.created_at)), int(t.lines.sum()))
        for t in tables
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="folder with tweets.jsonl")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--range-bytes", type=int, default=8 << 20)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    path = a.data / "tweets.jsonl"
    par = Parallel(workers=a.workers, min_bytes=0, range_bytes=a.range_bytes)
    runs = []
    ref = None
    for i in range(a.repeat):
        for name, p in (("serial", None), (f"workers={a.workers}", par)):
            load = Path("/proc/loadavg").read_text().split()[:3]
            s, tables, report = _read(path, p)
            got = (_digest(tables), report.to_dict())
            ref = ref or got
            assert got == ref, f"{name}: tables or report differ from the first read"
            runs.append({"run": i, "read": name, "seconds": round(s, 3), "load_before": " ".join(load)})
            print(f"{i} {name:>10}: {s:6.2f} s  rows {sum(len(t) for t in tables):,}  load before {' '.join(load)}")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"file": str(path), "bytes": os.path.getsize(path), "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
