"""Issue 42: the import's sorts, the way they were against the way they are (``benchmarks/data_layer.md``,
2026-12-04 (third)).

* **A 10M import's follower-count snapshots**: of each (account, time) the row with the highest count. Before: one
  ``lexorder`` by (account, time, count descending), three float keys ranked by ``np.unique`` and over 64 bits
  together. Now: ``lexorder`` by (account, time), the times packed by their span (whole seconds), then each run's
  highest count found by ``np.maximum.reduceat``. Arrays shaped as one part of the 10M benchmark's import (3M rows,
  4.3M accounts, 30 days).
* **``unique`` of account keys**: ``np.sort`` and a mask, against ``compute.arrays.sort_ints``'s radix sort, at 10M
  keys of 23 bits (account primary keys) and of 62 bits (Twitter ids).
* **a part's last screen name per user** (``np.unique(..., return_index=True)`` against ``unique_first``) over 3M
  Twitter ids, and **the all-time sums' pairs** (``np.unique(..., return_inverse=True)`` against
  ``unique_inverse``) over 10M (account, label, own) codes of 28 bits, as the warm-up adds a 10M run's changes.
* **a compute batch's cascade order** (``compute.build.build_cascades``): its 1M retweets by (cascade, user, time,
  row) and by (cascade, time, user), by ``np.lexsort`` over Twitter ids against ``lexorder`` over the users' ranks.

Each case runs both ways on the same arrays, checks they agree and keeps the best of ``--rounds`` wall times.

    NUMBA_NUM_THREADS=2 .venv/bin/python benchmarks/sort_bench.py [--rounds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compute.arrays import lexorder, sort_ints, unique, unique_first, unique_inverse  # noqa: E402


def best(f, rounds: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(rounds):
        t = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t)
    return min(times), out


def first_of_runs(*keys: np.ndarray) -> np.ndarray:
    first = np.ones(len(keys[0]), bool)
    same = np.ones(max(len(keys[0]) - 1, 0), bool)
    for k in keys:
        same &= k[1:] == k[:-1]
    first[1:] = ~same
    return first


def snapshots_before(acc, t, count):
    order = lexorder((-count, t, acc))
    return order[first_of_runs(acc[order], t[order])]


def snapshots_now(acc, t, count):
    order = lexorder((t, acc))
    a, tt, c = acc[order], t[order], count[order]
    starts = np.flatnonzero(first_of_runs(a, tt))
    run = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, len(order))))
    top = np.flatnonzero(c == np.maximum.reduceat(c, starts)[run])
    return order[top[first_of_runs(run[top])]]


def unique_before(a):
    s = np.sort(a)
    keep = np.empty(s.size, bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = np.random.default_rng(42)
    n = 3_000_000
    acc = rng.integers(1, 4_300_000, n)
    t = 1.5e9 + rng.integers(0, 30 * 86400, n).astype(np.float64)
    again = rng.integers(0, n, n // 3)  # an original's author at its time, given again by its retweets
    acc[again], t[again] = acc[again // 2], t[again // 2]
    count = rng.integers(0, 10**7, n).astype(np.float64)
    sort_ints(np.arange(1 << 17, 0, -1))  # numba's kernels loaded before the clock starts
    unique_first(np.arange(1 << 17, 0, -1) << 40)
    cases = {
        "follower-count snapshots, 3M rows": (
            lambda: snapshots_before(acc, t, count),
            lambda: snapshots_now(acc, t, count),
        ),
    }
    for bits in (23, 62):
        keys = rng.integers(0, 2**bits, 10_000_000)
        cases[f"unique, 10M keys of {bits} bits"] = (lambda k=keys: unique_before(k), lambda k=keys: unique(k))
    users = rng.integers(10**17, 2 * 10**18, 3_000_000)[rng.integers(0, 3_000_000, 3_000_000)]
    cases["last name per user, 3M Twitter ids"] = (
        lambda: np.unique(users[::-1], return_index=True),
        lambda: unique_first(users[::-1]),
    )
    pairs = rng.integers(0, 2**28, 10_000_000)
    cases["all-time pairs, 10M codes of 28 bits"] = (
        lambda: np.unique(pairs, return_inverse=True),
        lambda: unique_inverse(pairs),
    )
    casc = np.sort(rng.integers(0, 25_000, 1_000_000))
    rt_user = rng.integers(10**15, 2 * 10**18, 400_000)[rng.integers(0, 400_000, 1_000_000)]
    rt_time = 1.5e9 + rng.integers(0, 30 * 86400, 1_000_000).astype(np.float64)
    rt_rows = np.arange(1_000_000) * 3

    def batch_ranked():
        rank = unique_inverse(rt_user)[1]
        return lexorder((rt_rows, rt_time, rank, casc)), lexorder((rank, rt_time, casc))

    cases["a batch's cascade order, 1M retweets"] = (
        lambda: (np.lexsort((rt_rows, rt_time, rt_user, casc)), np.lexsort((rt_user, rt_time, casc))),
        batch_ranked,
    )
    out = {}
    print("| case | before | now |\n| --- | ---: | ---: |")
    for name, (before, now) in cases.items():
        tb, rb = best(before, args.rounds)
        tn, rn = best(now, args.rounds)
        same = all(map(np.array_equal, rb, rn)) if isinstance(rb, tuple) else np.array_equal(rb, rn)
        assert same, name
        out[name] = {"before_s": round(tb, 3), "now_s": round(tn, 3)}
        print(f"| {name} | {tb:.3f} s | {tn:.3f} s |")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
