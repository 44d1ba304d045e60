"""Coordinated accounts (issue 43): both methods on the retweets of the generated benchmark collection (the one
``make bench-web`` uploads), on the CPU and, where there is one, the GPU.

    python benchmarks/coordination_bench.py --retweets 1000000 --data var/bench1m --backends cpu --repeat 3
    python benchmarks/coordination_bench.py --retweets 1000000 --data var/bench1m --copies 10 --backends gpu,cpu

``--copies K`` repeats the retweets K times, each copy with its own tweets and accounts (ids shifted, the same
times): K times the rows with the collection's own shape per tweet and per account, so 10M rows without
generating a 10M collection. Each timing is the engine's call alone (the input read first, not timed), after one warm-up
call (numba and CuPy compile); the median of ``--repeat``. Prints JSON lines, then a table.
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

METHODS = {
    "co-retweet": {"window": 60.0, "min_count": 2},
    "similarity": {"min_retweets": 10, "threshold": 0.9},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--retweets", type=int, default=1_000_000)
    ap.add_argument("--data", default=str(ROOT / "var" / "bench1m"), help="folder of the generated collection")
    ap.add_argument("--copies", type=int, default=1)
    ap.add_argument("--backends", default="cpu")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", help="write the rows here too (JSON)")
    args = ap.parse_args()

    from _setup import generated_collection

    from compute.algorithms.coordination import coordination
    from compute.formats import read_many
    from compute.tables import NO_TWEET

    files = generated_collection(Path(args.data), args.retweets)
    t0 = time.perf_counter()
    tab = read_many([files[0]]).tweets
    rt = np.flatnonzero(tab.retweeted_tweet_id != NO_TWEET)
    tweet, account, when = tab.retweeted_tweet_id[rt], tab.user_id[rt], tab.created_at[rt]
    # small ids, so that each copy can shift them past the one before
    originals, tweet = np.unique(tweet, return_inverse=True)
    users, account = np.unique(account, return_inverse=True)
    tweet = np.concatenate([tweet.astype(np.int64) + k * len(originals) for k in range(args.copies)])
    account = np.concatenate([account.astype(np.int64) + k * len(users) for k in range(args.copies)])
    when = np.tile(when, args.copies)
    rows: list[dict] = []

    def emit(row: dict) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)

    emit({"case": "input", "retweets": len(tweet), "accounts": len(np.unique(account)),
          "tweets": len(np.unique(tweet)), "read_s": time.perf_counter() - t0})  # fmt: skip
    for backend in args.backends.split(","):
        for method in args.methods.split(","):
            kw = METHODS[method]
            coordination(tweet[:10_000], account[:10_000], when[:10_000], method=method, backend=backend, **kw)
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                res = coordination(tweet, account, when, method=method, backend=backend, **kw)
                times.append(time.perf_counter() - t)
            emit({"case": "run", "backend": backend, "method": method, **kw, "retweets": len(tweet),
                  "pairs": res.pairs, "edges": len(res), "clusters": int(res.cluster.max()) if len(res) else 0,
                  "median_s": float(np.median(times)), "min_s": min(times), "max_s": max(times)})  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    print("\n| retweets | backend | method | pairs compared | edges | clusters | median (min–max) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if r["case"] == "run":
            print(f"| {r['retweets']:,} | {r['backend']} | {r['method']} | {r['pairs']:,} | {r['edges']:,} | "
                  f"{r['clusters']:,} | {r['median_s']:.2f} s ({r['min_s']:.2f}–{r['max_s']:.2f}) |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
