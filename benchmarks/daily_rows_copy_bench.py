"""How a stream micro-batch's daily rows are best written (issue 17): ``INSERT ... SELECT`` from a staged
temporary table (what ``_refresh_daily_keys`` does) against a binary COPY straight into
``monitor_dailyinfluence``, and what its (workspace, day) index costs.

Each try takes the newest ``--rows`` daily rows of the database, deletes them and writes them again one way,
inside a transaction that is rolled back; the ways alternate, four rounds. On a copy of a stream state
(``stream_apply_state.py build``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_ab1t .venv/bin/python benchmarks/daily_rows_copy_bench.py \\
        --rows 30000 [--index]

``--index`` compares the INSERT with and without the ``daily_for_workspace_ranking`` index (dropped inside the
rolled-back transaction) instead of the two ways.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from monitor.algorithms import influence as inf  # noqa: E402
from monitor.db import COPY_HEADER, COPY_TRAILER, copy_out  # noqa: E402


def _newest(cur, n: int) -> list[np.ndarray]:
    return copy_out(
        cur,
        f"""SELECT id, workspace_id, publisher_id, account_id, (day - DATE '2000-01-01')::bigint,
                ({inf._LABEL_CASE.format(col="label")})::bigint, influence, cascades::bigint
            FROM monitor_dailyinfluence ORDER BY id DESC LIMIT {int(n)}""",
        [],
        [("id", "bigint"), ("w", "bigint"), ("p", "bigint"), ("a", "bigint"), ("d", "bigint"), ("l", "bigint"),
         ("i", "float"), ("c", "bigint")],
    )  # fmt: skip


def via_insert(cur, ws: int, keys: np.ndarray, influence: np.ndarray, cascades: np.ndarray) -> None:
    """As ``_refresh_daily_keys`` writes them: staged, then ``INSERT ... SELECT``."""
    vals = inf._stage(cur, "dkput", inf._DailyRows, inf._DailyRows(*keys.T, influence, cascades))
    labels = "ARRAY[" + ", ".join(f"'{v}'" for v in inf._LABELS) + "]::varchar(16)[]"
    cur.execute(
        f"""INSERT INTO monitor_dailyinfluence (workspace_id, publisher_id, account_id, day, label, influence,
                cascades)
            SELECT %s, v.publisher, v.account, DATE '2000-01-01' + v.day::integer, ({labels})[v.label + 1],
                v.influence, v.cascades FROM {vals} v""",
        [ws],
    )
    cur.execute(f"DROP TABLE IF EXISTS {vals}")


def via_copy(cur, ws: int, keys: np.ndarray, influence: np.ndarray, cascades: np.ndarray) -> None:
    """Binary COPY into the table, one fixed-width record array per label."""
    pub, acc, day, lab = keys.T
    raw = cur.cursor if hasattr(cur, "cursor") else cur
    names = "workspace_id, publisher_id, account_id, day, label, influence, cascades"
    with raw.copy(f"COPY monitor_dailyinfluence ({names}) FROM STDIN (FORMAT BINARY)") as cp:
        cp.write(COPY_HEADER)
        for code in np.unique(lab).tolist():
            lb = inf._LABELS[code].encode()
            sel = np.flatnonzero(lab == code)
            rec = np.empty(
                len(sel),
                dtype=[("n", ">i2"), ("l0", ">i4"), ("w", ">i8"), ("l1", ">i4"), ("p", ">i8"), ("l2", ">i4"),
                       ("a", ">i8"), ("l3", ">i4"), ("d", ">i4"), ("l4", ">i4"), ("lab", f"S{len(lb)}"),
                       ("l5", ">i4"), ("i", ">f8"), ("l6", ">i4"), ("c", ">i4")],
            )  # fmt: skip
            rec["n"] = 7
            for f, width in (("l0", 8), ("l1", 8), ("l2", 8), ("l3", 4), ("l5", 8), ("l6", 4)):
                rec[f] = width
            rec["l4"] = len(lb)
            rec["w"], rec["p"], rec["a"], rec["d"], rec["lab"] = ws, pub[sel], acc[sel], day[sel], lb
            rec["i"], rec["c"] = influence[sel], cascades[sel]
            cp.write(rec.tobytes())
        cp.write(COPY_TRAILER)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=30_000)
    ap.add_argument("--index", action="store_true", help="the INSERT with and without the (workspace, day) index")
    args = ap.parse_args()
    ways = {"insert": (via_insert, False), "no (workspace, day) index": (via_insert, True)} if args.index else {
        "insert": (via_insert, False), "copy": (via_copy, False)}  # fmt: skip
    times: dict[str, list[float]] = {k: [] for k in ways}
    for rnd in range(4):
        for name in list(ways) if rnd % 2 == 0 else list(reversed(ways)):
            fn, drop_index = ways[name]
            with transaction.atomic():
                with connection.cursor() as cur:
                    ids, w, p, a, d, lab, i, c = _newest(cur, args.rows)
                    order = np.lexsort((a, lab, d, p))  # the unique key's order
                    keys = np.stack([p, a, d, lab], axis=1)[order]
                    cur.execute("DELETE FROM monitor_dailyinfluence WHERE id = ANY(%s)", [ids.tolist()])
                    if drop_index:
                        cur.execute("DROP INDEX daily_for_workspace_ranking")
                    t = time.perf_counter()
                    fn(cur, int(w[0]), keys, i[order], c[order])
                    times[name].append(time.perf_counter() - t)
                    cur.execute("SELECT count(*) FROM monitor_dailyinfluence WHERE id > %s", [int(ids.max())])
                    assert cur.fetchone()[0] == len(ids), "the rows written again are not all there"
                transaction.set_rollback(True)
    for name, ts in times.items():
        print(f"{name}: median {statistics.median(ts) * 1000:.1f} ms ({', '.join(f'{x * 1000:.1f}' for x in ts)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
