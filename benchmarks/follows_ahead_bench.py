"""A follows file parsed in the caller's thread against one parsed ahead in a thread (``iter_follows(ahead_rows=)``),
with a stand-in for an import's merge between parts: every ``--part-rows`` edges, the part's followers and followees
sorted (NumPy, as the merge's own sorts are). Prints one JSON line per setting: the wall time, the time spent
parsing in the caller's thread (waiting for the next chunk) and in the stand-in.

    .venv/bin/python benchmarks/follows_ahead_bench.py --edges 30000000 --ahead 0,3000000 --repeat 2
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compute.formats import iter_follows
from compute.generators.export import write_follows_csv


def make_file(path: Path, edges: int, seed: int = 7) -> None:
    if path.exists():
        return
    rng = np.random.default_rng(seed)
    write_follows_csv(path, rng.integers(10**6, 10**12, edges), rng.integers(10**6, 10**12, edges))


def run(path: Path, ahead: int, part_rows: int) -> dict:
    t0 = time.perf_counter()
    waited = work = 0.0
    parts, held, rows = [], 0, 0
    it = iter_follows(path, ahead_rows=ahead)
    while True:
        t = time.perf_counter()
        chunk = next(it, None)
        waited += time.perf_counter() - t
        if chunk is None:
            break
        parts.append(chunk)
        held += len(chunk)
        rows += len(chunk)
        if held >= part_rows:
            t = time.perf_counter()
            fr = np.concatenate([c.follower_id for c in parts])
            fe = np.concatenate([c.followee_id for c in parts])
            np.argsort(fr, kind="stable")
            np.argsort(fe, kind="stable")
            np.unique(fr)
            work += time.perf_counter() - t
            parts, held = [], 0
    return {
        "ahead_rows": ahead,
        "edges": rows,
        "wall_s": round(time.perf_counter() - t0, 3),
        "parse_waited_s": round(waited, 3),
        "merge_standin_s": round(work, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edges", type=int, default=30_000_000)
    ap.add_argument("--ahead", default="0,3000000")
    ap.add_argument("--part-rows", type=int, default=3_000_000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--file", default="var/follows_ahead.csv")
    a = ap.parse_args()
    path = Path(a.file)
    path.parent.mkdir(parents=True, exist_ok=True)
    make_file(path, a.edges)
    print(json.dumps({"file_bytes": path.stat().st_size, "cores": os.cpu_count()}), flush=True)
    run(path, 0, a.part_rows)  # compile the parse kernel, warm the page cache
    for _ in range(a.repeat):
        for ahead in (int(x) for x in a.ahead.split(",")):
            print(json.dumps(run(path, ahead, a.part_rows)), flush=True)


if __name__ == "__main__":
    main()
