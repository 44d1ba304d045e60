"""Issue 44 on the CPU: the rate at which this machine answers the random reads a walk step makes (a probe for
the floor of the local methods, not a product path).

    NUMBA_NUM_THREADS=2 .venv/bin/python benchmarks/wtf_cpu_floor_probe.py --out benchmarks/results/wtf_cpu_floor.json

A FORA walk step reads an account's two row bounds, one follow at a random place of its row and adds to a
counter; each step waits on the one before. On the ``twitter`` preset at scale 0.1 the tables are the row
bounds (317,736 int64: 2.5 MB), the follows (34.2M int32: 137 MB) and the counters (2.5 MB). The probe measures,
on tables of those sizes filled at random, for 1 thread and for every thread:

* ``independent``: gathers whose addresses are known in advance (a stream of random indices: what the hardware
  gives when nothing waits);
* ``chained``: each gather's address comes from the value the last one read (a walk's dependent chain), as many
  independent chains as there are walks in flight per thread (``--chains``).

Prints one JSON line per measurement: nanoseconds per access and accesses per second.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from numba import get_num_threads, njit, prange, set_num_threads


@njit(parallel=True, cache=False)
def _independent(table, idx, parts):  # pragma: no cover - numba
    out = np.zeros(parts, dtype=np.int64)
    n = len(idx)
    for p in prange(parts):
        acc = 0
        for i in range(p * n // parts, (p + 1) * n // parts):
            acc += table[idx[i]]
        out[p] = acc
    return out.sum()


@njit(parallel=True, cache=False)
def _chained(table, starts, steps, parts):  # pragma: no cover - numba
    # starts: (parts, chains) current positions; each chain's next position is the value it read
    out = np.zeros(parts, dtype=np.int64)
    chains = starts.shape[1]
    m = len(table)
    for p in prange(parts):
        pos = starts[p].copy()
        acc = 0
        for s in range(steps):
            for c in range(chains):
                v = table[pos[c]]
                acc += v
                # the step number in the hash: a chain of v -> f(v) alone falls into a short cycle (a random
                # map on m entries cycles after ~sqrt(m) steps), which the caches would hold
                pos[c] = (v * 2654435761 + s * 11400714819 + c) % m
        out[p] = acc
    return out.sum()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="317736:8,34171343:4", help="entries:bytes of each table, comma-separated")
    p.add_argument("--accesses", type=int, default=20_000_000)
    p.add_argument("--chains", default="1,4,16")
    p.add_argument("--out", metavar="JSON")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []
    every = get_num_threads()
    for spec in args.sizes.split(","):
        entries, width = (int(v) for v in spec.split(":"))
        dtype = np.int64 if width == 8 else np.int32
        table = rng.integers(0, entries, size=entries, dtype=np.int64).astype(dtype)
        idx = rng.integers(0, entries, size=args.accesses, dtype=np.int64)
        for threads in sorted({1, every}):
            set_num_threads(threads)
            _independent(table, idx[:1000], threads)
            best = min(_timed(_independent, table, idx, threads) for _ in range(3))
            rows.append(_row("independent", entries, width, threads, 1, args.accesses, best))
            for chains in (int(c) for c in args.chains.split(",")):
                steps = args.accesses // (threads * chains)
                starts = rng.integers(0, entries, size=(threads, chains), dtype=np.int64)
                _chained(table, starts, 10, threads)
                best = min(_timed(_chained, table, starts, steps, threads) for _ in range(3))
                rows.append(_row("chained", entries, width, threads, chains, steps * threads * chains, best))
    if args.out:
        Path(args.out).write_text(json.dumps(rows) + "\n")
    return 0


def _timed(f, *args) -> float:
    t = time.perf_counter()
    f(*args)
    return time.perf_counter() - t


def _row(kind: str, entries: int, width: int, threads: int, chains: int, accesses: int, s: float) -> dict:
    row = {"case": kind, "table_mb": round(entries * width / 1e6, 1), "threads": threads, "chains": chains,
           "accesses": accesses, "s": s, "ns_per_access": s / accesses * 1e9, "per_s": accesses / s}  # fmt: skip
    print(json.dumps(row), flush=True)
    return row


if __name__ == "__main__":
    raise SystemExit(main())
