"""Issue 42: what drawing the bulk tables' ``id`` keys costs a load, measured on the rows a web benchmark run wrote
(``benchmarks/data_layer.md``, 2026-12-04 (sixth)).

Every row a COPY writes without an ``id`` draws one from its identity sequence. Two forms are timed, each
``--rounds`` times, alternated, by server-side binary COPY (no client time counted) into fresh tables shaped like
the application's:

* **retweets**: the workspace's retweets into a logged table without indexes (a first import's partition), its
  sequence with a cache of 1 (every draw visits the sequence) against 1,000 (migration 0047), and with no ``id``
  column at all (the floor);
* **accounts**: the workspace's accounts, in the unique key's order, into a logged table with the application's
  two indexes, the keys drawn by the column's default and then read back along the primary key (the import before
  2026-12-04 (sixth)), against the keys drawn first (``monitor.db.reserve_ids``: ``nextval`` over
  ``generate_series``) and written with the rows.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a database web_bench.py filled> .venv/bin/python \\
        benchmarks/key_draw_cost.py [--rounds 2] [--json out.json]

The files go to ``--dir`` (default ``/tmp/sw_keys``), which the PostgreSQL server must be able to write (a
superuser). The script's ``_kx`` tables are dropped again.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import psycopg

RT_COLS = "tweet_id, retweeter_id, created_at, followers_count, collection_id, workspace_id"


def _timed(cur, sql: str) -> float:
    t = time.perf_counter()
    cur.execute(sql)
    return round(time.perf_counter() - t, 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dir", default="/tmp/sw_keys")
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    os.chmod(args.dir, 0o777)
    rt_file, acc_file, acc_ids_file = (os.path.join(args.dir, f) for f in ("rt.bin", "acc.bin", "accid.bin"))
    out: dict = {"rounds": []}
    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT workspace_id FROM monitor_retweet GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
        (ws,) = cur.fetchone()
        cur.execute(
            f"COPY (SELECT {RT_COLS} FROM monitor_retweet WHERE workspace_id = {ws}) TO '{rt_file}' (FORMAT binary)"
        )
        out["retweets"] = cur.rowcount
        cur.execute(
            f"""COPY (SELECT workspace_id, twitter_id, screen_name FROM monitor_account WHERE workspace_id = {ws}
                      ORDER BY twitter_id) TO '{acc_file}' (FORMAT binary)"""
        )
        out["accounts"] = cur.rowcount
        cur.execute(
            f"""COPY (SELECT 1000000000 + row_number() OVER (ORDER BY twitter_id), workspace_id, twitter_id, screen_name
                      FROM monitor_account WHERE workspace_id = {ws} ORDER BY twitter_id) TO '{acc_ids_file}'
                      (FORMAT binary)"""
        )
        n_acc = out["accounts"]
        for r in range(args.rounds):
            got: dict[str, float] = {}
            for cache in (1, 1000, None):
                cur.execute("DROP TABLE IF EXISTS rt_kx")
                if cache is None:
                    cur.execute("CREATE TABLE rt_kx (LIKE monitor_retweet INCLUDING DEFAULTS)")
                    cur.execute("ALTER TABLE rt_kx DROP COLUMN id")
                else:
                    cur.execute("CREATE TABLE rt_kx (LIKE monitor_retweet INCLUDING DEFAULTS INCLUDING IDENTITY)")
                    cur.execute(f"ALTER TABLE rt_kx ALTER COLUMN id SET CACHE {cache}")
                cur.execute("CHECKPOINT")
                key = f"retweets, cache {cache}" if cache else "retweets, no id column"
                got[key] = _timed(cur, f"COPY rt_kx ({RT_COLS}) FROM '{rt_file}' (FORMAT binary)")
            cur.execute("DROP TABLE IF EXISTS rt_kx")
            for form in ("default + read back", "drawn first"):
                cur.execute("DROP TABLE IF EXISTS acc_kx")
                cur.execute("CREATE TABLE acc_kx (LIKE monitor_account INCLUDING ALL)")
                cur.execute("CHECKPOINT")
                if form == "drawn first":
                    draw = _timed(
                        cur,
                        f"""SELECT length(string_agg(int8send(v), '')) FROM
                            (SELECT nextval('acc_kx_id_seq'::regclass) v FROM generate_series(1, {n_acc})) s""",
                    )
                    load = _timed(
                        cur,
                        f"COPY acc_kx (id, workspace_id, twitter_id, screen_name) FROM '{acc_ids_file}' "
                        "(FORMAT binary)",
                    )
                else:
                    load = _timed(
                        cur, f"COPY acc_kx (workspace_id, twitter_id, screen_name) FROM '{acc_file}' (FORMAT binary)"
                    )
                    draw = _timed(
                        cur,
                        f"""SELECT length(string_agg(int8send(twitter_id), '')), length(string_agg(int8send(id), ''))
                            FROM (SELECT twitter_id, id FROM acc_kx WHERE id > 0 AND workspace_id = {ws}
                                  ORDER BY id) s""",
                    )
                got[f"accounts, {form}: copy"] = load
                got[f"accounts, {form}: keys"] = draw
            cur.execute("DROP TABLE IF EXISTS acc_kx")
            print(f"round {r + 1}:", json.dumps(got))
            out["rounds"].append(got)
    for f in (rt_file, acc_file, acc_ids_file):
        os.unlink(f)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
