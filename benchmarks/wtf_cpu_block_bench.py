"""The CPU's exact PPR with blocks of k seeds: time per seed for each k (what ``compute.algorithms.wtf.cpu_block``
chooses from), on the ``twitter`` preset's follower graph or on files.

    NUMBA_NUM_THREADS=2 .venv/bin/python benchmarks/wtf_cpu_block_bench.py --scale 0.1 --widths 1,4,16,64
    mkdir -p var/t16 && tar -xJf monitor/fixtures/sample/twitter16.tar.xz -C var/t16
    NUMBA_NUM_THREADS=2 .venv/bin/python benchmarks/wtf_cpu_block_bench.py --input var/t16/twitter16 --widths 1,4,16,64

``--seeds`` uniform random accounts (``default_rng(0)``), ``follows`` walk, tol 1e-10, max_iter 100; for each
width, the seeds go through ``personalized_pagerank`` (CPU) in blocks of that width (the choice forced), after one
warm-up block. Prints a JSON line per width (seconds a seed) and the width the product would choose.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    from _setup import add_input_argument

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.1)
    add_input_argument(p)
    p.add_argument("--widths", default="1,4,16,64")
    p.add_argument("--seeds", type=int, default=64)
    p.add_argument("--direction", choices=("follows", "followers"), default="follows")
    p.add_argument("--out", metavar="JSON")
    args = p.parse_args(argv)
    from _setup import bench_graph, json_lines

    from compute.algorithms import wtf as cpu

    rows, emit = json_lines()
    g = bench_graph(args.input, args.scale, 0, emit)
    walk = cpu._walk(g, args.direction)
    chosen = cpu.cpu_block(walk)
    seeds = np.random.default_rng(0).choice(g.n_nodes, size=min(args.seeds, g.n_nodes), replace=False)
    kw = {"direction": args.direction, "backend": "cpu"}
    chooser = cpu.cpu_block
    try:
        for width in (int(w) for w in args.widths.split(",")):
            cpu.cpu_block = lambda walk, width=width: width
            cpu.personalized_pagerank(g, seeds[: min(width, 2)], **kw)  # warm-up
            t = time.perf_counter()
            cpu.personalized_pagerank(g, seeds, **kw)
            emit({"case": "block", "width": width, "seeds": len(seeds), "s_per_seed": (time.perf_counter() - t)
                  / len(seeds), "chosen": chosen})  # fmt: skip
    finally:
        cpu.cpu_block = chooser
    if args.out:
        Path(args.out).write_text(json.dumps(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
