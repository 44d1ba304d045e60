"""Issue 42: what each index of the engine's two big derived tables costs the compute's writes, measured on the rows
a web benchmark run wrote (``benchmarks/data_layer.md``, 2026-12-03).

A compute run writes ``monitor_cascadeinfluence`` and ``monitor_dailyinfluence`` batch by batch, each batch the
rows of a contiguous range of (publisher, day) pairs. The script exports those rows of the database's largest
workspace in ``--chunks`` such ranges (as many as the run's batches: 11 at 10M retweets, 2 at 1M), each chunk
in the order the store writes it (per-cascade rows by label, role, tweet and account; daily rows by their unique
key), and loads the chunks one after the other by server-side binary COPY into a fresh unlogged table shaped like
the application's, under each set of indexes in turn:

* ``none``: no index (and, timed apart, the application's indexes built once after the load);
* ``unique``: the unique key kept up row by row;
* ``unique + id``: and the index on ``id`` (the primary key the tables had until migration 0044);
* for the daily rows, ``unique + ws-day`` and all three (the ranking's (workspace, day) index).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a database web_bench.py filled> .venv/bin/python \\
        benchmarks/derived_index_cost.py --chunks 11 [--rounds 2] [--json out.json]

The files go to ``--dir`` (default ``/tmp/sw_derived``), which the PostgreSQL server must be able to write
(server-side COPY: no client time is counted; a superuser). The script's ``_dx`` tables are dropped again.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import psycopg

CI_COLS = "id, tweet_id, account_id, publisher_id, day, label, influence, followers, role"
DAILY_COLS = "id, workspace_id, publisher_id, account_id, day, label, influence, cascades"
# table: (columns, the order a batch writes its rows, {index name: columns}, index sets kept up during the load)
TABLES = {
    "monitor_cascadeinfluence": (
        CI_COLS,
        "x.label, x.role, x.tweet_id, x.account_id",
        {"unique": "tweet_id, account_id", "id": "id"},
        (("none",), ("unique",), ("unique", "id")),
    ),
    "monitor_dailyinfluence": (
        DAILY_COLS,
        "x.label, x.workspace_id, x.publisher_id, x.day, x.account_id",
        {"unique": "workspace_id, publisher_id, day, label, account_id", "id": "id", "ws-day": "workspace_id, day"},
        (("none",), ("unique",), ("unique", "id"), ("unique", "ws-day"), ("unique", "id", "ws-day")),
    ),
}


def _export(cur, table: str, ws: int, chunks: int, folder: str) -> int:
    cols, order, _, _ = TABLES[table]
    cur.execute(
        f"""CREATE TEMP TABLE _dx_pairs AS SELECT publisher_id, day, ntile({chunks}) OVER (ORDER BY publisher_id, day) k
            FROM (SELECT DISTINCT publisher_id, day FROM {table} x WHERE {_in_ws(table)}) s""",
        [ws],
    )
    n = 0
    for k in range(1, chunks + 1):
        path = os.path.join(folder, f"{table}_{k}.bin")
        cur.execute(
            f"""COPY (SELECT {", ".join("x." + c.strip() for c in cols.split(","))} FROM {table} x
                JOIN _dx_pairs p USING (publisher_id, day) WHERE p.k = {k} AND {_in_ws(table).replace("%s", str(ws))}
                ORDER BY {order}) TO '{path}' (FORMAT BINARY)"""
        )
        n += cur.rowcount
    cur.execute("DROP TABLE _dx_pairs")
    return n


def _in_ws(table: str) -> str:
    if table == "monitor_dailyinfluence":
        return "x.workspace_id = %s"
    return "x.tweet_id IN (SELECT id FROM monitor_tweet WHERE workspace_id = %s)"


def _load(cur, table: str, kept: tuple[str, ...], chunks: int, folder: str) -> tuple[float, float]:
    cols, _, indexes, _ = TABLES[table]
    cur.execute(f"DROP TABLE IF EXISTS _dx; CREATE UNLOGGED TABLE _dx (LIKE {table} INCLUDING DEFAULTS)")
    for name in kept:
        if name != "none":
            cur.execute(f"CREATE {'UNIQUE ' if name in ('unique', 'id') else ''}INDEX ON _dx ({indexes[name]})")
    cur.execute("CHECKPOINT")
    t0 = time.perf_counter()
    for k in range(1, chunks + 1):
        cur.execute(f"COPY _dx ({cols}) FROM '{os.path.join(folder, f'{table}_{k}.bin')}' (FORMAT BINARY)")
    load = time.perf_counter() - t0
    built = 0.0
    if kept == ("none",):
        t0 = time.perf_counter()
        for name, columns in indexes.items():
            cur.execute(f"CREATE {'UNIQUE ' if name in ('unique', 'id') else ''}INDEX ON _dx ({columns})")
        built = time.perf_counter() - t0
    cur.execute("DROP TABLE _dx")
    return load, built


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chunks", type=int, default=11, help="the run's batches")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--dir", default="/tmp/sw_derived")
    p.add_argument("--json", metavar="OUT")
    a = p.parse_args(argv)
    os.makedirs(a.dir, exist_ok=True)
    os.chmod(a.dir, 0o777)  # the server writes the files
    out: dict = {"chunks": a.chunks, "tables": {}}
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as con, con.cursor() as cur:
        cur.execute("SELECT workspace_id FROM monitor_dailyinfluence GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
        ws = cur.fetchone()[0]
        for table, (_, _, _, sets) in TABLES.items():
            rows = _export(cur, table, ws, a.chunks, a.dir)
            res = out["tables"][table] = {"rows": rows, "loads": {}}
            print(f"{table}: {rows:,} rows in {a.chunks} chunks", flush=True)
            for r in range(a.rounds):
                for kept in sets:
                    load, built = _load(cur, table, kept, a.chunks, a.dir)
                    label = " + ".join(kept)
                    res["loads"].setdefault(label, []).append([round(load, 2), round(built, 2)])
                    extra = f", every index built after: {built:.1f} s" if built else ""
                    print(f"  round {r + 1}, kept up: {label}: {load:.1f} s{extra}", flush=True)
            for k in range(1, a.chunks + 1):
                os.remove(os.path.join(a.dir, f"{table}_{k}.bin"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
