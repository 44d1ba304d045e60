"""Floors of the web benchmark's steps on this machine (issue 20): what the reader parses per core, and how
fast this PostgreSQL takes the benchmark's rows by binary COPY into an unindexed table, next to what the same
rows cost with the target table's indexes (COPY, plain INSERT ... SELECT, and INSERT ... ON CONFLICT).

    scripts/with_services.py -- .venv/bin/python benchmarks/floors.py --data var/bench1m

It reads the generated files of ``make bench-web`` (``tweets.jsonl``, ``follows.csv``), builds arrays of the
shapes the merge and the store write (follows: 2 keys; retweets: 2 keys, an id, a time, a count; per-cascade
results: 3 keys, a day, a label, 2 floats, a role; graph blobs), and copies them in one transaction that is
rolled back, so nothing stays. Every number is the best of ``--repeat`` tries; the load average is printed
beside it (the machine is shared).
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

_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
_PG_EPOCH_US = 946_684_800 * 1_000_000  # 2000-01-01 in Unix microseconds
_NP = {"bigint": ">i8", "int": ">i4", "float": ">f8", "ts": ">i8", "date": ">i4"}


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def binary_rows(cols: list[tuple[str, str]], arrays: list[np.ndarray]) -> bytes:
    """The COPY BINARY body of fixed-width columns (``ts``: epoch seconds -> timestamptz; ``date``: days)."""
    fields = [("n", ">i2")]
    for i, (_, kind) in enumerate(cols):
        fields += [(f"l{i}", ">i4"), (f"v{i}", _NP[kind])]
    rec = np.empty(len(arrays[0]), dtype=fields)
    rec["n"] = len(cols)
    for i, (_, kind) in enumerate(cols):
        a = arrays[i]
        if kind == "ts":
            a = (np.asarray(a) * 1e6).astype(np.int64) - _PG_EPOCH_US
        elif kind == "date":
            a = (np.asarray(a) // 86400).astype(np.int64) - 10957
        rec[f"l{i}"] = np.dtype(_NP[kind]).itemsize
        rec[f"v{i}"] = a
    return _HEADER + rec.tobytes() + b"\xff\xff"


def copy_bytes(cur, table: str, cols: list[tuple[str, str]], body: bytes) -> None:
    with cur.copy(f"COPY {table} ({', '.join(c for c, _ in cols)}) FROM STDIN (FORMAT BINARY)") as cp:
        for a in range(0, len(body), 8 << 20):
            cp.write(body[a : a + (8 << 20)])


def parse_floor(data: Path) -> dict:
    from compute.formats import iter_follows, iter_tweets

    out = {}
    for name, fn, fmt in (("tweets.jsonl", iter_tweets, "v1"), ("follows.csv", iter_follows, "follows")):
        p = data / name
        t = time.perf_counter()
        n = sum(len(chunk) for chunk in fn(p, fmt))
        s = time.perf_counter() - t
        out[name] = {"records": n, "MB": round(p.stat().st_size / 1e6, 1), "s": round(s, 2), "load": load()}
        out[name]["records_per_s"] = round(n / s)
        print(name, out[name], flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT / "var" / "bench1m"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--no-parse", action="store_true")
    args = ap.parse_args()
    data = Path(args.data)
    res: dict = {"data": str(data)}
    if not args.no_parse:
        res["parse"] = parse_floor(data)

    import psycopg

    from compute.formats import iter_follows, iter_tweets
    from compute.tables import NO_TWEET

    tw = list(iter_tweets(data / "tweets.jsonl", "v1"))
    fo = list(iter_follows(data / "follows.csv", "follows"))
    is_rt = np.concatenate([c.retweeted_tweet_id != NO_TWEET for c in tw])
    user = np.concatenate([c.user_id for c in tw])
    tid = np.concatenate([c.tweet_id for c in tw])
    rtid = np.concatenate([c.retweeted_tweet_id for c in tw])
    created = np.concatenate([c.created_at for c in tw])
    fol = np.concatenate([c.followers_count for c in tw])
    # dense keys like the merge's primary keys (sorted in their unique key's order, as the merge writes them)
    users = np.unique(
        np.concatenate([user, np.concatenate([c.follower_id for c in fo]), np.concatenate([c.followee_id for c in fo])])
    )
    a = np.searchsorted(users, np.concatenate([c.follower_id for c in fo]))
    b = np.searchsorted(users, np.concatenate([c.followee_id for c in fo]))
    o = np.lexsort((b, a))
    follows = [np.full(len(a), 1), a[o], b[o], np.full(len(a), 1)]
    origs = np.unique(tid[~is_rt])
    rt_t = np.searchsorted(origs, rtid[is_rt])
    rt_a = np.searchsorted(users, user[is_rt])
    o = np.lexsort((rt_a, rt_t))
    retweets = [rt_t[o], rt_a[o], tid[is_rt][o], created[is_rt][o], np.nan_to_num(fol[is_rt][o]), np.full(len(o), 1)]
    n_ci = len(rt_t) + len(origs)
    rng = np.random.default_rng(0)
    ci_t = np.concatenate([rt_t, np.arange(len(origs))])
    ci_a = np.concatenate([rt_a, rng.integers(0, len(users), len(origs))])
    o = np.lexsort((ci_a, ci_t))
    influence = [
        ci_t[o],
        ci_a[o],
        rng.integers(0, 27_000, n_ci),
        np.full(n_ci, 1_580_000_000.0),
        np.zeros(n_ci),
        rng.random(n_ci),
        rng.random(n_ci),
    ]
    tables = {
        "follows": (
            "monitor_follow",
            [
                ("workspace_id", "bigint"),
                ("follower_id", "bigint"),
                ("followee_id", "bigint"),
                ("collection_id", "bigint"),
            ],
            follows,
        ),
        "retweets": (
            "monitor_retweet",
            [
                ("tweet_id", "bigint"),
                ("retweeter_id", "bigint"),
                ("retweet_id", "bigint"),
                ("created_at", "ts"),
                ("followers_count", "float"),
                ("collection_id", "bigint"),
            ],
            retweets,
        ),
        "per-cascade results": (
            "monitor_cascadeinfluence",
            [
                ("tweet_id", "bigint"),
                ("account_id", "bigint"),
                ("publisher_id", "bigint"),
                ("day", "date"),
                ("label_code", "bigint"),
                ("influence", "float"),
                ("followers", "float"),
            ],
            influence,
        ),
    }
    url = os.environ["DATABASE_URL"]
    res["copy"] = {}
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        for key, (target, cols, arrays) in tables.items():
            body = binary_rows(cols, arrays)
            sqlt = {
                "bigint": "bigint",
                "int": "integer",
                "float": "double precision",
                "ts": "timestamptz",
                "date": "date",
            }
            coldefs = ", ".join(f"{c} {sqlt[k]}" for c, k in cols)
            best: dict[str, float] = {}
            for _ in range(args.repeat):
                # 1. the floor: an unindexed table
                cur.execute(f"CREATE TABLE floor_plain ({coldefs})")
                t = time.perf_counter()
                copy_bytes(cur, "floor_plain", cols, body)
                best["copy unindexed"] = min(best.get("copy unindexed", 1e9), time.perf_counter() - t)
                # 2. a temp table (no WAL): what staging costs
                cur.execute(f"CREATE TEMP TABLE floor_tmp ({coldefs})")
                t = time.perf_counter()
                copy_bytes(cur, "floor_tmp", cols, body)
                best["copy temp table"] = min(best.get("copy temp table", 1e9), time.perf_counter() - t)
                if key != "per-cascade results":
                    # 3. with the target's indexes (a copy of its definition, empty)
                    cur.execute(f"CREATE TABLE floor_idx (LIKE {target} INCLUDING ALL)")
                    t = time.perf_counter()
                    copy_bytes(cur, "floor_idx", cols, body)
                    best["copy with the target's indexes"] = min(
                        best.get("copy with the target's indexes", 1e9), time.perf_counter() - t
                    )
                    cur.execute("TRUNCATE floor_idx")
                    names = ", ".join(c for c, _ in cols)
                    t = time.perf_counter()
                    cur.execute(f"INSERT INTO floor_idx ({names}) SELECT {names} FROM floor_tmp")
                    best["insert-select with indexes"] = min(
                        best.get("insert-select with indexes", 1e9), time.perf_counter() - t
                    )
                    cur.execute("TRUNCATE floor_idx")
                    t = time.perf_counter()
                    cur.execute(f"INSERT INTO floor_idx ({names}) SELECT {names} FROM floor_tmp ON CONFLICT DO NOTHING")
                    best["insert-select on conflict with indexes"] = min(
                        best.get("insert-select on conflict with indexes", 1e9), time.perf_counter() - t
                    )
                    cur.execute("DROP TABLE floor_idx")
                cur.execute("DROP TABLE floor_plain")
                cur.execute("DROP TABLE floor_tmp")
                conn.rollback()
            n = len(arrays[0])
            res["copy"][key] = {
                "rows": n,
                "MB": round(len(body) / 1e6, 1),
                "load": load(),
                **{k: round(v, 2) for k, v in best.items()},
            }
            print(key, res["copy"][key], flush=True)
        # graph blobs: ~27K rows of ~1.7M edges in all (16 bytes an edge)
        blobs = [(i, 63, rng.integers(0, 1 << 20, 126).astype("<i8").tobytes()) for i in range(len(origs))]
        t = time.perf_counter()
        cur.execute("CREATE TABLE floor_g (tweet_id bigint, n_edges integer, edges bytea)")
        with cur.copy("COPY floor_g (tweet_id, n_edges, edges) FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int8", "int4", "bytea"])
            for r in blobs:
                cp.write_row(r)
        res["copy"]["graph blobs"] = {"rows": len(blobs), "s": round(time.perf_counter() - t, 2), "load": load()}
        print("graph blobs", res["copy"]["graph blobs"], flush=True)
        conn.rollback()
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
