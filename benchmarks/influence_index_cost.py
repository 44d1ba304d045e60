"""What each index of the per-cascade rows costs their writers (migration 0023, benchmarks/stream_web.md).

Every compute run and every stream micro-batch inserts ``monitor_cascadeinfluence`` rows. This times one insert of
``--rows`` rows (copies of stored rows under new tweet ids, so every key is new) into the table as it stands, with
each set of indexes below, each trial in its own transaction that is rolled back: the table is left as it was.
Each variant first drops the table's secondary indexes and then builds its own, so the variants compare on the
same heap whatever schema the database has (the indexes are freshly built, not aged by updates):

* ``unique``: the unique (tweet, account) key alone (the schema since migration 0023), without the id key;
* ``unique+id``: and the primary key on ``id`` (what the table has);
* ``+account``, ``+publisher_day``: and the index dropped in 0023;
* ``all``: the four indexes the table had before 0023.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_ab_state .venv/bin/python benchmarks/influence_index_cost.py

``sw_ab_state`` is the state ``stream_apply_state.py build`` makes; any database holding computed rows will do.
Prints one JSON object: per variant the median and all trials in ms.

It measures the table as it was from migration 0023 to 0047, one table for every workspace: since migration 0048 the
table is partitioned by workspace and this script's index changes do not apply to it; run it on a database
migrated back to 0047 (``manage.py migrate monitor 0047``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import psycopg

COLUMNS = "tweet_id, account_id, publisher_id, day, label, influence, followers, role"
INDEXES = {
    "id": "ALTER TABLE monitor_cascadeinfluence ADD CONSTRAINT monitor_cascadeinfluence_pkey PRIMARY KEY (id)",
    "unique": "ALTER TABLE monitor_cascadeinfluence ADD CONSTRAINT cascadeinfluence_unique "
    "UNIQUE (tweet_id, account_id)",
    "account": "CREATE INDEX influence_by_account ON monitor_cascadeinfluence (account_id)",
    "publisher_day": "CREATE INDEX influence_for_refresh ON monitor_cascadeinfluence (publisher_id, day)",
}
VARIANTS = {
    "unique": ["unique"],
    "unique+id": ["unique", "id"],
    "unique+id+account": ["unique", "id", "account"],
    "unique+id+publisher_day": ["unique", "id", "publisher_day"],
    "all": ["unique", "id", "account", "publisher_day"],
}


def _drop_all(x) -> None:
    """Drop every index and constraint of the table (inside the trial's transaction)."""
    keys = """SELECT conname FROM pg_constraint
              WHERE conrelid = 'monitor_cascadeinfluence'::regclass AND contype IN ('p', 'u')"""
    for (name,) in x(keys).fetchall():
        x(f"ALTER TABLE monitor_cascadeinfluence DROP CONSTRAINT {name}")
    for (name,) in x("SELECT indexname FROM pg_indexes WHERE tablename = 'monitor_cascadeinfluence'").fetchall():
        x(f"DROP INDEX {name}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=6, help="rounds over the variants (the first is not counted)")
    args = ap.parse_args()
    conn = psycopg.connect(os.environ["DATABASE_URL"].replace("postgres://", "postgresql://", 1), autocommit=True)
    x = conn.execute
    x("SET max_parallel_maintenance_workers = 0")
    x(f"CREATE TEMP TABLE src AS SELECT * FROM monitor_cascadeinfluence ORDER BY random() LIMIT {int(args.rows)}")
    x("UPDATE src SET tweet_id = tweet_id + 1000000000000")  # new keys: nothing collides with a stored row
    stored = x("SELECT count(*) FROM monitor_cascadeinfluence").fetchone()[0]
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for _ in range(args.repeat):
        for variant, names in VARIANTS.items():
            with conn.transaction(force_rollback=True):
                _drop_all(x)
                for n in names:
                    x(INDEXES[n])
                t = time.perf_counter()
                x(f"INSERT INTO monitor_cascadeinfluence ({COLUMNS}) SELECT {COLUMNS} FROM src")
                times[variant].append((time.perf_counter() - t) * 1000)
    out = {
        "stored_rows": stored,
        "rows": args.rows,
        "ms": {
            v: {"median": round(statistics.median(ts[1:]), 1), "all": [round(t, 1) for t in ts]}
            for v, ts in times.items()
        },
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
