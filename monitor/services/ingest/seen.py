"""The upload-wide duplicate check (:class:`~compute.formats.SeenTweets`) with its references in the database.

In memory, the check keeps 50 to 80 bytes per distinct tweet id of the upload (and grows by copying): a 10M
retweet upload would hold about 0.5 GB for it alone. Here each id's reference (its first row: retweeted id,
author, second, file and line) is a row of a temporary table keyed by the tweet id, and each chunk asks for
the references of its own distinct ids only, so the reader holds one chunk whatever the upload's size. The
check and its messages are the in-memory one's (only the storage hooks differ).
"""

from __future__ import annotations

import numpy as np

from compute.formats import SeenTweets

from ...db import copy_in, copy_out, create_temp, dialect, temp_table_name

__all__ = ["StagedSeenTweets"]

_COLS = [
    ("tweet_id", "bigint"),
    ("rt", "bigint"),
    ("uid", "bigint"),
    ("sec", "bigint"),
    ("line", "bigint"),
    ("src", "int"),
]


class StagedSeenTweets(SeenTweets):
    """:class:`SeenTweets` whose references are rows of a temporary table (``tweet_id`` its primary key).

    ``temps`` collects the temporary tables made, for the caller to drop."""

    def __init__(self, cursor, temps: list[str]) -> None:
        super().__init__()
        self.cur = cursor
        self.d = dialect()
        self.count = 0
        self.table = temp_table_name("seen")
        temps.append(self.table)
        cols = ", ".join(f"{c} {self.d.sql_type(k)}" + (" PRIMARY KEY" if c == "tweet_id" else "") for c, k in _COLS)
        cursor.execute(f"DROP TABLE IF EXISTS {self.table}")
        cursor.execute(f"CREATE TEMP TABLE {self.table} ({cols})")
        self.probe = None
        if not self.d.postgres:
            self.probe = temp_table_name("seenprobe")
            temps.append(self.probe)
            create_temp(cursor, self.probe, [("tweet_id", "bigint")])

    def __len__(self) -> int:
        return self.count

    def _known(self, u: np.ndarray) -> tuple[np.ndarray, ...]:
        m = len(u)
        z = np.zeros(m, np.int64)
        if not self.count or not m:
            return np.zeros(m, bool), z, z, z, z, z
        cols = ", ".join(c for c, _ in _COLS)
        if self.d.postgres:
            # the ids are integers from NumPy: formatted in, an index scan over the key (no temporary probe)
            ids = "{" + ",".join(map(str, u.tolist())) + "}"
            sql = f"SELECT {cols} FROM {self.table} WHERE tweet_id = ANY('{ids}'::bigint[]) ORDER BY tweet_id"
        else:
            self.cur.execute(f"DELETE FROM {self.probe}")
            copy_in(self.cur, self.probe, [("tweet_id", "bigint")], [u])
            cols = ", ".join("s." + c for c, _ in _COLS)
            sql = f"""SELECT {cols} FROM {self.probe} p JOIN {self.table} s ON s.tweet_id = p.tweet_id
                      ORDER BY s.tweet_id"""
        tid, *ref = copy_out(self.cur, sql, [], _COLS)
        hit = np.zeros(m, bool)
        out = [np.zeros(m, np.int64) for _ in ref]
        if len(tid):
            at = np.searchsorted(u, tid)  # every id found is one of ``u`` (sorted, distinct)
            hit[at] = True
            for o, r in zip(out, ref):
                o[at] = r
        return (hit, *out)

    def _store(self, src: int, u: np.ndarray, rt, uid, sec, line) -> None:
        copy_in(self.cur, self.table, _COLS, [u, rt, uid, sec, line, np.full(len(u), src, np.int32)])
        self.count += len(u)
