"""Issue 42: what writing a workspace's bulk rows costs in PostgreSQL under three table layouts, measured on the
rows of a real import, so that the data layer's design is chosen by measurement.

For each bulk table the 1M-retweet benchmark writes (follows, retweets, follower-count snapshots, accounts,
per-cascade influence, daily aggregates) the script takes the rows of the ``bench-1m`` workspace of
``--source`` (a database ``make bench-web`` filled), ``--scale`` copies of them with disjoint ids, in the table's
unique-key order (the order the application writes), and times loading them by server-side binary COPY, each load
in its own transaction with its commit, after a ``CHECKPOINT``:

* **shared**: into one table with the application's indexes that already holds as many rows of another
  workspace (what every import does today: each row updates every index);
* **partition, indexes after**: into a fresh table without indexes, then ``CREATE INDEX`` for each of the
  application's indexes (what a per-workspace or per-import partition loaded before it is attached would cost);
* **partition, indexes before**: into a fresh, empty table with the indexes (a later import into a workspace's
  own partition, whose B-trees hold only that workspace's rows).

Then, once: ``ALTER TABLE ... ATTACH PARTITION`` of a loaded follows partition whose CHECK constraint proves the
partition bound (no validation scan).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_web .venv/bin/python benchmarks/bulk_layout_bench.py \\
        --scale 1 [--json out.json]

``DATABASE_URL`` is the database with the workspace (the script makes its ``lay_*`` tables there, like the
application's, and drops them again); the files go to
``--dir`` (default ``/tmp/sw_layout``, which the PostgreSQL server must be able to write: server-side COPY,
so no client time is counted). It needs a superuser (server-side files).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import psycopg

# table: (the workspace's rows as a SELECT over alias t with {ws}, the unique key's columns). Every column whose
# name ends in _id is an id and is shifted for each copy (and for the timed load against the shared table's rows)
TABLES = {
    "monitor_follow": ("SELECT {cols} FROM monitor_follow t WHERE t.workspace_id = {ws}", "follower_id, followee_id"),
    "monitor_retweet": (
        "SELECT {cols} FROM monitor_retweet t JOIN monitor_tweet w ON w.id = t.tweet_id WHERE w.workspace_id = {ws}",
        "tweet_id, retweeter_id",
    ),
    "monitor_followercount": (
        "SELECT {cols} FROM monitor_followercount t JOIN monitor_account a ON a.id = t.account_id "
        "WHERE a.workspace_id = {ws}",
        "account_id, observed_at",
    ),
    "monitor_account": ("SELECT {cols} FROM monitor_account t WHERE t.workspace_id = {ws}", "workspace_id, twitter_id"),
    "monitor_cascadeinfluence": (
        "SELECT {cols} FROM monitor_cascadeinfluence t JOIN monitor_tweet w ON w.id = t.tweet_id "
        "WHERE w.workspace_id = {ws}",
        "tweet_id, account_id",
    ),
    "monitor_dailyinfluence": (
        "SELECT {cols} FROM monitor_dailyinfluence t WHERE t.workspace_id = {ws}",
        "workspace_id, publisher_id, day, label, account_id",
    ),
}
COPY_STEP = 1_000_000_000  # id shift between copies
OTHER = 100 * COPY_STEP  # id shift of the timed rows against the shared table's


def _columns(src, table: str) -> list[str]:
    rows = src.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s AND column_name <> 'id' "
        "ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [r[0] for r in rows]


def _indexes(src, table: str) -> list[str]:
    """The table's index definitions; for a table partitioned by workspace (``monitor_follow``: its indexes are
    its partitions'), those of one partition, written for the table itself."""
    rows = src.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s ORDER BY indexname", [table])
    found = [d for _, d in rows.fetchall()]
    if found:
        return found
    part = src.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass "
        "ORDER BY c.relname LIMIT 1",
        [table],
    ).fetchone()
    return [d.replace(part[0], table) for d in _indexes(src, part[0])] if part else []


def _export(src, table: str, cols: list[str], ws: int, scale: int, shift: int, path: str) -> int:
    select, key = TABLES[table]
    shifted = ", ".join(
        f"t.{c} + {shift} + g * {COPY_STEP}" if c.endswith("_id") else f"t.{c}" for c in cols
    )  # a NULL id stays NULL
    inner = select.format(cols=f"{shifted}, g", ws=ws).replace(
        f" FROM {table} t", f" FROM {table} t CROSS JOIN generate_series(0::bigint, {scale - 1}::bigint) g", 1
    )
    names = ", ".join(cols)
    sql = f"COPY (SELECT {names} FROM ({inner}) x({names}, g) ORDER BY {key}) TO '{path}' (FORMAT BINARY)"
    return src.execute(sql).rowcount


def _timed(db, statements: list[str]) -> list[float]:
    """Each statement's seconds, in one transaction after a checkpoint; the commit's counted with the last."""
    db.execute("CHECKPOINT")
    db.execute("BEGIN")
    out = []
    for sql in statements:
        t = time.perf_counter()
        db.execute(sql)
        out.append(time.perf_counter() - t)
    t = time.perf_counter()
    db.execute("COMMIT")
    out[-1] += time.perf_counter() - t
    return out


def _copy(dst: str, cols: list[str], path: str) -> str:
    return f"COPY {dst} ({', '.join(cols)}) FROM '{path}' (FORMAT BINARY)"


def _index_sql(defs: list[str], table: str, dst: str) -> list[str]:
    out = []
    for i, d in enumerate(defs):
        body = d.split(" USING ", 1)[1]
        unique = "UNIQUE " if d.startswith("CREATE UNIQUE") else ""
        out.append(f"CREATE {unique}INDEX {dst}_i{i} ON {dst} USING {body}")
    return out


def measure(src, db, table: str, ws: int, scale: int, folder: str) -> dict:
    cols = _columns(src, table)
    defs = _indexes(src, table)
    prefill, timed = f"{folder}/{table}_prefill.bin", f"{folder}/{table}_timed.bin"
    n = _export(src, table, cols, ws, scale, 0, prefill)
    _export(src, table, cols, ws, scale, OTHER, timed)
    res = {"rows": n, "indexes": len(defs)}
    like = f"(LIKE {table} INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING CONSTRAINTS)"

    # shared: the other workspace's rows first (loaded, then indexed: untimed), then the timed load
    db.execute(f"DROP TABLE IF EXISTS lay_shared; CREATE TABLE lay_shared {like}")
    db.execute(_copy("lay_shared", cols, prefill))
    for sql in _index_sql(defs, table, "lay_shared"):
        db.execute(sql)
    db.execute("VACUUM ANALYZE lay_shared")
    res["shared_s"] = round(sum(_timed(db, [_copy("lay_shared", cols, timed)])), 3)
    db.execute("DROP TABLE lay_shared")

    # a fresh partition, indexes built after the load
    db.execute(f"DROP TABLE IF EXISTS lay_part; CREATE TABLE lay_part {like}")
    steps = _timed(db, [_copy("lay_part", cols, timed), *_index_sql(defs, table, "lay_part")])
    res["after_copy_s"] = round(steps[0], 3)
    res["after_indexes_s"] = round(sum(steps[1:]), 3)
    res["after_s"] = round(sum(steps), 3)
    db.execute("DROP TABLE lay_part")

    # a fresh partition with its indexes before the load
    db.execute(f"DROP TABLE IF EXISTS lay_part; CREATE TABLE lay_part {like}")
    for sql in _index_sql(defs, table, "lay_part"):
        db.execute(sql)
    res["before_s"] = round(sum(_timed(db, [_copy("lay_part", cols, timed)])), 3)
    db.execute("DROP TABLE lay_part")
    os.remove(prefill)  # the timed file stays for attach_cost; removed by main
    return res


def attach_cost(db, folder: str) -> float:
    """ATTACH PARTITION of a loaded, indexed follows partition whose CHECK proves the bound."""
    db.execute("DROP TABLE IF EXISTS lay_parent CASCADE; DROP TABLE IF EXISTS lay_child")
    db.execute(
        "CREATE TABLE lay_parent (workspace_id bigint NOT NULL, follower_id bigint NOT NULL, "
        "followee_id bigint NOT NULL, collection_id bigint) PARTITION BY LIST (workspace_id)"
    )
    db.execute("CREATE UNIQUE INDEX lay_parent_key ON lay_parent (workspace_id, follower_id, followee_id)")
    db.execute("CREATE TABLE lay_child (LIKE lay_parent)")
    path = f"{folder}/monitor_follow_timed.bin"
    db.execute(f"COPY lay_child (workspace_id, follower_id, followee_id, collection_id) FROM '{path}' (FORMAT BINARY)")
    ws = db.execute("SELECT min(workspace_id) FROM lay_child").fetchone()[0]
    db.execute(f"UPDATE lay_child SET workspace_id = {ws} WHERE workspace_id <> {ws}")
    db.execute("CREATE UNIQUE INDEX lay_child_key ON lay_child (workspace_id, follower_id, followee_id)")
    db.execute(
        f"ALTER TABLE lay_child ADD CONSTRAINT lay_child_bound CHECK (workspace_id IS NOT NULL AND workspace_id = {ws})"
    )
    secs = sum(_timed(db, [f"ALTER TABLE lay_parent ATTACH PARTITION lay_child FOR VALUES IN ({ws})"]))
    db.execute("DROP TABLE lay_parent CASCADE")
    return round(secs, 4)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--slug", default="bench-1m")
    ap.add_argument("--scale", type=int, default=1, help="copies of the workspace's rows")
    ap.add_argument("--tables", default=",".join(TABLES))
    ap.add_argument("--dir", default="/tmp/sw_layout")
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    os.chmod(args.dir, 0o777)
    src = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
    db = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
    ws = src.execute("SELECT id FROM monitor_workspace WHERE slug = %s", [args.slug]).fetchone()[0]
    settings = {
        k: db.execute(f"SHOW {k}").fetchone()[0] for k in ("shared_buffers", "max_wal_size", "synchronous_commit")
    }
    out = {"scale": args.scale, "settings": settings, "tables": {}}
    print(f"scale {args.scale}; {settings}")
    print(f"{'table':28} {'rows':>10} {'idx':>3} {'shared':>8} {'after':>8} {'(copy':>8} {'+index)':>8} {'before':>8}")
    for table in args.tables.split(","):
        r = measure(src, db, table, ws, args.scale, args.dir)
        out["tables"][table] = r
        print(
            f"{table:28} {r['rows']:>10,} {r['indexes']:>3} {r['shared_s']:>8.2f} {r['after_s']:>8.2f} "
            f"{r['after_copy_s']:>8.2f} {r['after_indexes_s']:>8.2f} {r['before_s']:>8.2f}",
            flush=True,
        )
    if "monitor_follow" in out["tables"]:
        out["attach_s"] = attach_cost(db, args.dir)
        print(f"ATTACH PARTITION of the loaded follows: {out['attach_s']} s")
    tot = {k: round(sum(r[k] for r in out["tables"].values()), 2) for k in ("shared_s", "after_s", "before_s")}
    out["total"] = tot
    print(
        f"{'all':28} {'':>10} {'':>3} {tot['shared_s']:>8.2f} {tot['after_s']:>8.2f} {'':>17} {tot['before_s']:>8.2f}"
    )
    for name in os.listdir(args.dir):
        os.remove(os.path.join(args.dir, name))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
