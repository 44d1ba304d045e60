"""What a second connection would buy a first import (issue 42): the 1M-retweet upload's three bulk loads — 2.34M
follows, 1.0M retweets and 1.4M follower-count snapshots, four 64-bit columns each, by binary COPY into fresh tables
with a two-column index built after — one after the other on one connection, against the follows and the
snapshots on a second connection while the first loads the retweets (what loading a first import's follows and
snapshots beside its retweets, then attaching them, would do). Tables ``twoconn_*`` in the given database, dropped
at the end.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> .venv/bin/python benchmarks/two_connections_bench.py \\
        [--repeat 3] [--no-index]
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from monitor.db import _COPY_STEP as STEP  # rows per write, as copy_in sends them
from monitor.db import COPY_HEADER, COPY_TRAILER


def _rows(rng, n: int) -> np.ndarray:
    """``n`` binary COPY rows of four bigints: a workspace, a sorted key, a random key, a collection."""
    fields = [("n", ">i2")]
    for i in range(4):
        fields += [(f"l{i}", ">i4"), (f"v{i}", ">i8")]
    a = np.empty(n, dtype=fields)
    a["n"] = 4
    for i in range(4):
        a[f"l{i}"] = 8
    a["v0"], a["v1"], a["v2"], a["v3"] = 7, np.sort(rng.integers(0, 430_000, n)), rng.integers(0, 430_000, n), 3
    return a


def _load(conn, table: str, rows: np.ndarray, index: bool) -> None:
    with conn.cursor() as cur:
        cur.execute(f"DROP TABLE IF EXISTS {table}")
        cur.execute(f"CREATE TABLE {table} (workspace_id bigint, a bigint, b bigint, collection_id bigint)")
        with cur.copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as cp:
            cp.write(COPY_HEADER)
            for i in range(0, len(rows), STEP):
                cp.write(rows[i : i + STEP].tobytes())
            cp.write(COPY_TRAILER)
        if index:
            cur.execute(f"CREATE INDEX {table}_pair ON {table} (a, b)")
    conn.commit()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-index", action="store_true", help="the COPYs alone, no index built after them")
    args = ap.parse_args()
    import psycopg

    url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    rng = np.random.default_rng(1)
    follows, retweets, snapshots = _rows(rng, 2_336_715), _rows(rng, 1_000_000), _rows(rng, 1_400_000)
    index = not args.no_index
    with psycopg.connect(url) as one, psycopg.connect(url) as two:
        for _ in range(args.repeat):
            t = time.perf_counter()
            for table, rows in (("twoconn_f", follows), ("twoconn_r", retweets), ("twoconn_c", snapshots)):
                _load(one, table, rows, index)
            alone = time.perf_counter() - t
            t = time.perf_counter()
            side = threading.Thread(
                target=lambda: (_load(two, "twoconn_f", follows, index), _load(two, "twoconn_c", snapshots, index))
            )
            side.start()
            _load(one, "twoconn_r", retweets, index)
            side.join()
            beside = time.perf_counter() - t
            print(f"one connection {alone:.2f} s; follows and snapshots on a second one {beside:.2f} s", flush=True)
        with one.cursor() as cur:
            for table in ("twoconn_f", "twoconn_r", "twoconn_c"):
                cur.execute(f"DROP TABLE IF EXISTS {table}")
        one.commit()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
