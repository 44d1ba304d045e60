"""What a fresh process pays for its first look-alike panel: ``wtf`` on one seed in a new process, the first call
(loading or compiling the numba kernels) against the second (warm), on a random follower graph.

    .venv/bin/python benchmarks/wtf_first_call.py --accounts 20000 --follows 1000000 --processes 3

Each process is started anew (``sys.executable``), so numba's on-disk cache is what it finds. Prints JSON lines.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
import numpy as np
sys.path.insert(0, {root!r})
from compute.algorithms.wtf import wtf
from compute.graphs import graph_from_edges
rng = np.random.default_rng(0)
g = graph_from_edges(rng.integers(0, {n}, {m}), rng.integers(0, {n}, {m}))
t = time.perf_counter(); wtf(g, [5], backend="cpu"); first = time.perf_counter() - t
t = time.perf_counter(); wtf(g, [6], backend="cpu"); second = time.perf_counter() - t
print(json.dumps({{"first_s": first, "second_s": second}}))
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--accounts", type=int, default=20_000)
    p.add_argument("--follows", type=int, default=1_000_000)
    p.add_argument("--processes", type=int, default=3)
    args = p.parse_args(argv)
    code = CHILD.format(root=str(ROOT), n=args.accounts, m=args.follows)
    for i in range(args.processes):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
        row = {"process": i, "accounts": args.accounts, "follows": args.follows, **json.loads(out.splitlines()[-1])}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
