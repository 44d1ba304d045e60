"""Changed per-cascade rows of a stream micro-batch: delete + COPY (what the apply does) against an UPDATE in place,
at fillfactor 100 and 90 (issue 17, ``benchmarks/stream_web.md``).

An UPDATE that changes no indexed column can be HOT (no index entry written) when the row's page has room; the
per-cascade table's four indexes cover neither ``influence`` nor ``followers``. This builds a synthetic table of
that shape (1M rows, the same four indexes) twice, at fillfactor 100 and 90, in its own database, then changes
10,000 of the newest 20,000 rows (the live cascades are the recent ones) both ways, each try rolled back, and
prints the times and how many updates were HOT.

    .venv/bin/python benchmarks/stream_changed_rows.py [--url postgres://postgres@127.0.0.1:5432/postgres]
"""

from __future__ import annotations

import argparse
import random
import time

import psycopg

N_ROWS = 1_000_000
CHANGED, AMONG = 10_000, 20_000
DB = "sw_changed_rows"

SETUP = f"""
CREATE TABLE ci100 (id bigserial PRIMARY KEY, tweet_id bigint NOT NULL, account_id bigint NOT NULL,
    publisher_id bigint NOT NULL, day date NOT NULL, label varchar(16) NOT NULL, influence double precision NOT NULL,
    followers double precision NOT NULL, role varchar(10) NOT NULL);
INSERT INTO ci100 (tweet_id, account_id, publisher_id, day, label, influence, followers, role)
    SELECT g / 100, g % 100000 + (g / 100) * 7, (g / 100) % 5000, date '2020-01-01' + (g / 100) % 30, 'unverified',
        random() * 100, random() * 1000, 'spreader'
    FROM generate_series(1, {N_ROWS}) g;
CREATE UNIQUE INDEX ON ci100 (tweet_id, account_id);
CREATE INDEX ON ci100 (account_id);
CREATE INDEX ON ci100 (publisher_id, day);
CREATE TABLE ci90 (LIKE ci100 INCLUDING ALL) WITH (fillfactor = 90);
INSERT INTO ci90 SELECT * FROM ci100;
"""


def _array(values) -> str:
    return "{" + ",".join(map(str, values)) + "}"


def _try(conn, table: str, k: int, how: str) -> tuple[float, int]:
    """Change ``CHANGED`` of the ``AMONG`` rows of window ``k`` (from the newest) one way; (ms, HOT updates)."""
    cur = conn.cursor()
    lo = N_ROWS - AMONG * (k + 1)
    cur.execute(
        f"SELECT id, tweet_id, account_id, publisher_id, day, label, role FROM {table} WHERE id > %s AND id <= %s",
        [lo, lo + AMONG],
    )
    rows = random.Random(k).sample(cur.fetchall(), CHANGED)
    conn.commit()
    ids = [r[0] for r in rows]
    t = time.perf_counter()
    if how == "delete+copy":
        cur.execute(f"DELETE FROM {table} WHERE id = ANY(%s::bigint[])", [_array(ids)])
        cols = "tweet_id, account_id, publisher_id, day, label, influence, followers, role"
        with cur.copy(f"COPY {table} ({cols}) FROM STDIN") as cp:
            for r in rows:
                cp.write_row((r[1], r[2], r[3], r[4], r[5], 1.5, 2.5, r[6]))
    else:
        cur.execute(
            f"""UPDATE {table} c SET influence = v.i, followers = v.f
                FROM unnest(%s::bigint[], %s::float8[], %s::float8[]) AS v(id, i, f) WHERE c.id = v.id""",
            [_array(ids), _array([1.5] * len(ids)), _array([2.5] * len(ids))],
        )
    ms = (time.perf_counter() - t) * 1000
    cur.execute("SELECT n_tup_hot_upd FROM pg_stat_xact_user_tables WHERE relname = %s", [table])
    hot = cur.fetchone()[0]
    conn.rollback()
    return ms, hot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", default="postgres://postgres@127.0.0.1:5432/postgres", help="a database to connect to")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with psycopg.connect(args.url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB}")
        admin.execute(f"CREATE DATABASE {DB}")
    url = args.url.rsplit("/", 1)[0] + "/" + DB
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(SETUP)
            conn.execute("VACUUM ANALYZE")
        with psycopg.connect(url) as conn:
            k = 0
            for _ in range(args.rounds):
                for table in ("ci100", "ci90"):
                    for how in ("delete+copy", "update"):
                        ms, hot = _try(conn, table, k, how)
                        k += 1
                        print(f"{table:6s} {how:12s} {ms:7.1f} ms  HOT updates {hot:,} of {CHANGED:,}", flush=True)
    finally:
        with psycopg.connect(args.url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB}")


if __name__ == "__main__":
    main()
