"""Issue 42: the import's and the store's steps between their COPYs, the way they were against the way they are
(``benchmarks/data_layer.md``, 2026-12-01 (later)).

Arrays shaped as the 1M-retweet web benchmark's (``web_bench.py``): 430,000 accounts, 2.3M follows, 1M retweets
and follower counts, 1M per-cascade rows and as many daily rows in two batches of ~0.5M; and, with ``--redis``, the
read cache's operations. Each step runs the old call and the new one on the same arrays, checks that they give the
same result, and keeps the best of ``--rounds`` process CPU times (``time.process_time``: what the step costs this
process, whatever else the host runs; it is also the step's wall time, these steps being single-threaded).

    .venv/bin/python benchmarks/merge_steps_bench.py [--rounds 5] [--redis redis://127.0.0.1:6379/7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compute.arrays import lexorder, sorted_positions  # noqa: E402


def best(f, rounds: int) -> float:
    out = []
    for _ in range(rounds):
        t = time.process_time()
        f()
        out.append(time.process_time() - t)
    return min(out)


def searched(keys, want):
    pos = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    return pos, keys[pos] == want


def old_groups(codes: list[np.ndarray], n: int):
    """What ``_copy_coded`` did before: ``np.unique`` over the rows of codes, then a pass per combination."""
    stacked = np.stack([np.asarray(c, np.int64) for c in codes], axis=1)
    return [(tuple(c.tolist()), np.flatnonzero((stacked == c).all(axis=1))) for c in np.unique(stacked, axis=0)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--redis", help="a Redis URL: time the read cache's GET through Django's client and ours")
    ap.add_argument("--json")
    args = ap.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    if args.redis:
        os.environ["REDIS_URL"] = args.redis
    import django

    django.setup()  # the store's module imports the models (no database is opened)
    from monitor.algorithms.influence.copies import _code_groups

    rng = np.random.default_rng(0)
    accounts = np.unique(rng.integers(10**9, 10**18, 430_000))
    follower = accounts[rng.integers(0, len(accounts), 2_300_000)]
    pk_a, pk_b = rng.integers(1, 430_001, 2_300_000), rng.integers(1, 430_001, 2_300_000)
    n_rt = 1_000_000
    rt_rows = np.arange(n_rt)
    rt_time = rng.uniform(1.5e9, 1.6e9, n_rt)
    rt_account, rt_tweet = rng.integers(1, 430_001, n_rt), rng.integers(1, 27_001, n_rt)
    fc_count = rng.integers(0, 10**6, n_rt)
    half = 510_000
    pub, day = rng.integers(1, 27_001, half), rng.integers(0, 400, half)
    lab, role, acc = rng.integers(0, 5, half), rng.integers(0, 4, half), rng.integers(1, 430_001, half)

    steps = {
        # (old, new, their results compared by)
        "account lookup, 2.3M follows' followers among 430,000": (
            lambda: searched(accounts, follower),
            lambda: sorted_positions(accounts, follower),
        ),
        "order of 2.3M follows by (follower, followee)": (
            lambda: np.lexsort((pk_b, pk_a)),
            lambda: lexorder((pk_b, pk_a)),
        ),
        "order of 1M retweets by (tweet, account, time, row)": (
            lambda: np.lexsort((rt_rows, rt_time, rt_account, rt_tweet)),
            lambda: lexorder((rt_rows, rt_time, rt_account, rt_tweet)),
        ),
        "order of 1M follower counts by (account, time, -count)": (
            lambda: np.lexsort((-fc_count, rt_time, rt_account)),
            lambda: lexorder((-fc_count, rt_time, rt_account)),
        ),
        "order of a batch's 0.51M daily rows by their unique key": (
            lambda: np.lexsort((acc, lab, day, pub)),
            lambda: lexorder((acc, lab, day, pub)),
        ),
        "groups of a batch's 0.51M per-cascade rows by (label, role)": (
            lambda: old_groups([lab, role], half),
            lambda: list(_code_groups([lab, role], half)),
        ),
    }
    out: dict[str, dict] = {"rounds": args.rounds, "cpu": os.cpu_count(), "steps": {}}
    for name, (old, new) in steps.items():
        a, b = old(), new()
        if isinstance(a, tuple):
            same = all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
        elif isinstance(a, list):
            same = len(a) == len(b) and all(x[0] == y[0] and np.array_equal(x[1], y[1]) for x, y in zip(a, b))
        else:
            same = np.array_equal(a, b)
        if not same:
            print(f"{name}: the new call's result differs", file=sys.stderr)
            return 1
        t_old, t_new = best(old, args.rounds), best(new, args.rounds)
        out["steps"][name] = {"before_s": round(t_old, 4), "now_s": round(t_new, 4)}
        print(f"{name}: {t_old:.3f} s -> {t_new:.3f} s")
    if args.redis:
        from django.core.cache.backends.redis import RedisCache

        from monitor.softcache import SoftRedisCache

        stock, ours = RedisCache(args.redis, {}), SoftRedisCache(args.redis, {})
        stock.set("merge-steps-bench", 1)
        n = 3000

        def gets(c):
            return lambda: [c.get("merge-steps-bench") for _ in range(n)]

        # wall time: a GET waits for Redis
        per = {}
        for label, c in (("Django's client", stock), ("one client per pool", ours)):
            walls = []
            for _ in range(args.rounds):
                t = time.perf_counter()
                gets(c)()
                walls.append(time.perf_counter() - t)
            per[label] = round(min(walls) / n * 1e6, 1)
        stock.delete("merge-steps-bench")
        out["cache_get_us"] = per
        print(f"a read cache GET: {per}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
