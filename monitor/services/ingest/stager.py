"""The staging area of one load: every parsed chunk copied at once into partitioned temporary tables.

Memory. The stager keeps no rows: each chunk a reader yields is copied (binary COPY on PostgreSQL) into
temporary tables and let go, so reading holds one chunk (about 200K statuses or 1M follow edges) whatever the
upload's size. Each kind of row goes to one of ``K`` partitions (``SPREADWATCH_INGEST_PARTITIONS``) by a hash
of the key its merge step groups by:

* ``tid``: statuses with a tweet id, by tweet id (the check against stored tweets, the originals);
* ``usr``: every status, by author (retweets: one per user and tweet; follower-count snapshots: one per account
  and time);
* ``fol``: follow edges, by follower (one per pair);
* ``uid``: the users named by follows and given edges (both ends), by user id: with the authors in ``usr``,
  the accounts; ``nam``: the last screen name per user of each chunk, by user id;
* ``txt``: the first text and label per original of each chunk, by tweet id.

The merge then reads one partition at a time, resolves Twitter ids to primary keys in the database (a join),
and deduplicates and sorts in NumPy: its peak is about ``1/K`` of the upload's rows plus a constant. The
formats read whole (trees, TUDataset, spreading-graph archives) are in memory once they are read anyway; their
given edges and "times known" flags stay in memory.
"""

from __future__ import annotations

import time

import numpy as np
from django.conf import settings
from django.db import connection

from compute.formats import ReadReport, snowflake_time
from compute.structures import SpreadingGraphs
from compute.tables import NO_TWEET, FollowTable, TweetTable

from ...db import copy_in, copy_out, create_temp, dialect, temp_table_name
from ...models import Label
from .columns import EdgeRows, FollowRows, TweetRows, cat

__all__ = ["LABELS", "Stager", "partition_of", "text_rows"]

LABELS = {c.value for c in Label}
_LABEL_ALIASES = {"nonrumor": "non-rumor", "non_rumor": "non-rumor", "non-rumour": "non-rumor", "": "unknown"}

DEFAULT_PARTITIONS = 8

# the staged columns of the statuses, in both partitionings ("seq": the row's place in the upload, for the
# "first"/"last" rules; "src", "line": where it was read, for the messages)
TWEET_COLS = [
    ("seq", "bigint"),
    ("src", "int"),
    ("line", "bigint"),
    ("tweet_id", "bigint"),
    ("rt", "bigint"),
    ("user_id", "bigint"),
    ("created_at", "float"),
    ("followers", "float"),
]
FOL_COLS = [("follower", "bigint"), ("followee", "bigint")]
UID_COLS = [("twitter_id", "bigint")]


def partition_of(ids: np.ndarray, k: int) -> np.ndarray:
    """The partition (0..k-1) of each id: a multiplicative hash, so consecutive ids spread evenly."""
    if k == 1:
        return np.zeros(len(ids), np.int64)
    h = ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return ((h >> np.uint64(33)) % np.uint64(k)).astype(np.int64)


class Stager:
    """The staging area: partitioned temporary tables filled a chunk at a time, and the few counts reading keeps.

    Instrumented for the tests (counts, not timings): ``peak_chunk_rows`` / ``peak_chunk_follows``, the most
    statuses / follow edges one call was given (the stager holds nothing else); ``peak_loaded_rows``, the most
    staged rows the merge read back at once.
    """

    def __init__(
        self, cursor, *, mode: str = "strict", report: ReadReport | None = None, partitions: int | None = None
    ) -> None:
        self.cur = cursor if cursor is not None else connection.cursor()
        self.d = dialect()
        self.mode = mode
        self.report = ReadReport() if report is None else report
        k = partitions if partitions is not None else getattr(settings, "SPREADWATCH_INGEST_PARTITIONS", None)
        self.k = max(1, int(k or DEFAULT_PARTITIONS))
        self.names: list[str] = []  # the files read, as uploaded (``src`` indexes them)
        self.edge_parts: list[EdgeRows] = []  # given spreading edges (formats read whole)
        self.given: dict[int, bool] = {}  # tweet id -> times known (formats read whole)
        self.rows = 0  # statuses staged
        self.seq = 0  # statuses numbered so far (the upload order)
        self.timings: dict[str, float] = {}
        self.n_follows = 0
        self.missing_times = 0
        self.affected: list[int] = []  # Tweet pks, set by the merge
        self.temps: list[str] = []  # temporary tables to drop
        self.parts: dict[str, list[str]] = {}  # kind -> its K partition tables (made on first use)
        self.dropped: str | None = None  # temporary table of tweet ids left out (conflicts with stored tweets)
        self.stored_checked = False
        self.conflicting_rows = 0
        self.peak_chunk_rows = 0
        self.peak_chunk_follows = 0
        self.peak_loaded_rows = 0

    def drop(self) -> None:
        # temporary tables live as long as the connection (workers keep theirs open): drop them now
        for t in self.temps:
            self.cur.execute(f"DROP TABLE IF EXISTS {t}")
        self.temps.clear()
        self.parts.clear()
        self.dropped = None

    # --- staging, a chunk at a time -------------------------------------------------------------------------

    def _tables(self, kind: str, cols: list[tuple[str, str]] | str) -> list[str]:
        if kind not in self.parts:
            names = []
            for _ in range(self.k):
                name = temp_table_name(kind)
                self.temps.append(name)
                if isinstance(cols, str):
                    self.cur.execute(f"DROP TABLE IF EXISTS {name}")
                    self.cur.execute(f"CREATE TEMP TABLE {name} ({cols})")
                else:
                    create_temp(self.cur, name, cols)
                names.append(name)
            self.parts[kind] = names
        return self.parts[kind]

    def _spill(self, kind: str, cols: list[tuple[str, str]], key: np.ndarray, arrays: list[np.ndarray]) -> None:
        """Copy rows into ``kind``'s partitions, by the hash of ``key``."""
        t = time.perf_counter()
        tables = self._tables(kind, cols)
        if self.k == 1:
            copy_in(self.cur, tables[0], cols, arrays)
        else:
            part = partition_of(key, self.k)
            order = np.argsort(part, kind="stable")
            bounds = np.searchsorted(part[order], np.arange(self.k + 1))
            for p in range(self.k):
                a, b = bounds[p], bounds[p + 1]
                if b > a:
                    rows = order[a:b]
                    copy_in(self.cur, tables[p], cols, [x[rows] for x in arrays])
        key_t = f"stage {kind}"
        self.timings[key_t] = round(self.timings.get(key_t, 0.0) + time.perf_counter() - t, 3)

    def _spill_text(self, kind: str, cols: str, names: tuple[str, ...], key: np.ndarray, rows: list[tuple]) -> None:
        tables = self._tables(kind, cols)
        part = partition_of(key, self.k).tolist()
        by: list[list[tuple]] = [[] for _ in range(self.k)]
        for p, r in zip(part, rows):
            by[p].append(r)
        for p, rs in enumerate(by):
            if rs:
                text_rows(self.cur, self.d, tables[p], names, rs)

    def _users(self, *ids: np.ndarray) -> None:
        u = np.unique(np.concatenate(ids)) if ids else np.zeros(0, np.int64)
        if len(u):
            self._spill("uid", UID_COLS, u, [u])

    def add_tweets(self, t: TweetTable, labels: dict[int, str] | None = None) -> None:
        ok = ~np.isnan(t.created_at)
        self.missing_times += int(np.count_nonzero(~ok))
        if not ok.all():
            t = t.take(ok)
        n = len(t)
        if not n:
            return
        self.peak_chunk_rows = max(self.peak_chunk_rows, n)
        seq = np.arange(self.seq, self.seq + n, dtype=np.int64)
        self.seq += n
        self.rows += n
        tid, rt, uid = t.tweet_id.astype(np.int64), t.retweeted_tweet_id.astype(np.int64), t.user_id.astype(np.int64)
        created, followers = t.created_at.astype(np.float64), t.followers_count.astype(np.float64)
        lines = t.lines.astype(np.int64) if t.lines is not None else np.full(n, -1, np.int64)
        src = np.full(n, len(self.names) - 1, np.int32)
        has_id = np.flatnonzero(tid != 0)  # 0: a retweet whose own id is unknown (trees, TUDataset)
        cols = [seq, src, lines, tid, rt, uid, created, followers]
        self._spill("tid", TWEET_COLS, tid[has_id], [c[has_id] for c in cols])
        self._spill("usr", TWEET_COLS, uid, cols)  # authors are users too: the accounts step reads them here
        if t.screen_name is not None:
            names = t.screen_name
            has = np.flatnonzero(names != None)  # noqa: E711  (object array: elementwise test)
            if len(has):
                # the last name seen wins (accounts rename; uploads are roughly in time order): the chunk's last
                rev = has[::-1]
                _, last = np.unique(uid[rev], return_index=True)
                rows = rev[last]
                self._spill_text(
                    "nam",
                    "user_id bigint, seq bigint, name text",
                    ("user_id", "seq", "name"),
                    uid[rows],
                    list(zip(uid[rows].tolist(), seq[rows].tolist(), names[rows].tolist())),
                )
        self._add_texts(t, seq, labels)

    def _add_texts(self, t: TweetTable, seq: np.ndarray, labels: dict[int, str] | None) -> None:
        """Text and truth label of each original, the first seen per tweet id (the merge keeps the first)."""
        orig = np.flatnonzero(t.retweeted_tweet_id == NO_TWEET)
        if not len(orig):
            return
        # a v1.1 retweet embeds its original, so the same original comes once per retweet: first row wins
        _, first = np.unique(t.tweet_id[orig], return_index=True)
        orig = orig[np.sort(first)]
        ids = t.tweet_id[orig].tolist()
        text = t.text[orig].tolist() if t.text is not None else [None] * len(orig)
        lab = t.label[orig].tolist() if t.label is not None else [None] * len(orig)
        rows, keys = [], []
        for tid, s, tx, lb in zip(ids, seq[orig].tolist(), text, lab):
            if labels and tid in labels:
                lb = labels[tid]
            if tx or lb is not None:
                v = self._label(lb)
                rows.append((tid, s, tx or "", v or "unknown", int(v is None)))
                keys.append(tid)
        if rows:
            self._spill_text(
                "txt",
                "tweet_id bigint, seq bigint, text text, label varchar(16), odd int",
                ("tweet_id", "seq", "text", "label", "odd"),
                np.array(keys, np.int64),
                rows,
            )

    @staticmethod
    def _label(lb) -> str | None:
        """A truth label in our words; None for one that is none of them (counted by :attr:`unknown_labels`)."""
        if lb is None:
            return "unknown"
        v = str(lb).strip().lower()
        v = _LABEL_ALIASES.get(v, v)
        return v if v in LABELS else None

    @property
    def unknown_labels(self) -> int:
        """Originals whose first text row gave a truth label that is none of ours (once per tweet id)."""
        n = 0
        for t in self.partitions("txt"):
            if self.d.postgres:
                sql = f"""SELECT count(*) FROM (SELECT DISTINCT ON (tweet_id) odd FROM {t} ORDER BY tweet_id, seq) x
                          WHERE odd = 1"""
            else:  # SQLite: a bare column beside min() comes from the row of the minimum
                sql = f"SELECT count(*) FROM (SELECT odd, min(seq) FROM {t} GROUP BY tweet_id) x WHERE odd = 1"
            self.cur.execute(sql)
            n += int(self.cur.fetchone()[0] or 0)
        return n

    def add_follows(self, f: FollowTable) -> None:
        n = len(f)
        if not n:
            return
        self.peak_chunk_follows = max(self.peak_chunk_follows, n)
        a, b = f.follower_id.astype(np.int64), f.followee_id.astype(np.int64)
        self._spill("fol", FOL_COLS, a, [a, b])
        self._users(a, b)
        self.n_follows += n

    def add_graphs(self, g: SpreadingGraphs) -> None:
        """Given spreading graphs: the participants become tweets + retweets, the edges go to GivenEdge."""
        c = g.cascades
        casc = np.repeat(np.arange(c.n_cascades), c.sizes)
        is_pub = np.zeros(c.n_nodes, bool)
        is_pub[c.publisher] = True
        tid = c.tweet_ids[casc]
        times_known = c.times is not None
        if times_known:
            times = c.times.astype(np.float64)
        else:
            # no times (TUDataset): the tweet's snowflake time for everyone; the cascade is flagged so the
            # backward phase treats it as untimed (a cycle rejects it rather than dropping edges)
            base = np.array([snowflake_time(int(x)) for x in c.tweet_ids.tolist()], dtype=np.float64)
            times = base[casc]
        followers = c.followers if c.unit == "followers" else np.full(c.n_nodes, np.nan)
        rt = np.where(is_pub, NO_TWEET, tid)
        tweet_col = np.where(is_pub, tid, 0)
        labels = None
        if c.labels is not None:
            labels = {int(t): str(lb) for t, lb in zip(c.tweet_ids.tolist(), c.labels.tolist()) if lb is not None}
        self.add_tweets(TweetTable(tweet_col, rt, c.user_ids, times, followers), labels=labels)
        self.given.update(dict.fromkeys(c.tweet_ids.tolist(), times_known))
        ecasc = np.repeat(np.arange(c.n_cascades), np.diff(g.edge_offsets))
        e = EdgeRows(c.tweet_ids[ecasc].astype(np.int64), c.user_ids[g.edge_src], c.user_ids[g.edge_dst])
        self.edge_parts.append(e)
        self._users(e.src.astype(np.int64), e.dst.astype(np.int64))

    # --- reading back, a partition at a time ----------------------------------------------------------------

    def partitions(self, kind: str) -> list[str]:
        """The partition tables of ``kind`` (none when nothing of that kind was staged)."""
        return self.parts.get(kind, [])

    def loaded(self, n: int) -> None:
        """Note that the merge holds ``n`` staged rows at once (instrumentation)."""
        self.peak_loaded_rows = max(self.peak_loaded_rows, int(n))

    def not_dropped(self, alias: str) -> str:
        """SQL condition: row ``alias`` is not of a tweet id left out by the check against stored tweets."""
        if self.dropped is None:
            return "true" if self.d.postgres else "1"
        return f"NOT EXISTS (SELECT 1 FROM {self.dropped} x WHERE x.tweet_id = {alias}.tweet_id)"

    def read_back(self, what: str, sql: str, params: list, cols: list[tuple[str, str]]) -> list[np.ndarray]:
        """``copy_out`` of staged rows (timed as ``read <what>``, and counted: :attr:`peak_loaded_rows`)."""
        t = time.perf_counter()
        out = copy_out(self.cur, sql, params, cols)
        key = f"read {what}"
        self.timings[key] = round(self.timings.get(key, 0.0) + time.perf_counter() - t, 3)
        self.loaded(len(out[0]))
        return out

    def tweet_rows(
        self, table: str, where: str = "true", params: list | None = None
    ) -> tuple[TweetRows, tuple[np.ndarray, np.ndarray]]:
        """One partition's statuses (``tid`` or ``usr``; ``where``: an SQL condition on its rows, alias ``s``),
        in upload order, and their (file index, line or -1)."""
        _, src, line, *cols = self.read_back(
            "statuses",
            f"SELECT {', '.join('s.' + c for c, _ in TWEET_COLS)} FROM {table} s WHERE {where} ORDER BY s.seq",
            params or [],
            TWEET_COLS,
        )
        return TweetRows(*cols), (src.astype(np.int32), line)

    def _all_tweets(self) -> tuple[TweetRows, tuple[np.ndarray, np.ndarray]]:
        parts = [self.tweet_rows(t) for t in self.partitions("usr")]
        rows = TweetRows(*(cat([p[0][i] for p in parts], dt) for i, dt in enumerate(TweetRows.DTYPES)))
        src = cat([p[1][0] for p in parts], np.int32)
        line = cat([p[1][1] for p in parts], np.int64)
        seq = cat(
            [
                copy_out(self.cur, f"SELECT seq FROM {t} ORDER BY seq", [], [("seq", "bigint")])[0]
                for t in self.partitions("usr")
            ],
            np.int64,
        )
        order = np.argsort(seq, kind="stable")
        return rows.take(order), (src[order], line[order])

    def tweets(self) -> TweetRows:
        """Every staged status, in upload order: for small stagings only (the live stream's batches)."""
        return self._all_tweets()[0]

    def where(self) -> tuple[np.ndarray, np.ndarray]:
        """(file index, line or -1) of every staged status, in the order of :meth:`tweets` (small stagings)."""
        return self._all_tweets()[1]

    def follows(self) -> FollowRows:
        """Every staged follow edge (Twitter user ids): for small stagings only."""
        parts = [
            copy_out(self.cur, f"SELECT follower, followee FROM {t}", [], FOL_COLS) for t in self.partitions("fol")
        ]
        return FollowRows(*(cat([p[k] for p in parts], np.int64) for k in range(2)))

    def edges(self) -> EdgeRows:
        """Every given spreading edge (Twitter ids), in upload order."""
        return EdgeRows(*(cat([p[k] for p in self.edge_parts], np.int64) for k in range(3)))

    def stage(self, prefix: str, cols: list[tuple[str, str]], arrays: list[np.ndarray]) -> str:
        """Copy ``arrays`` into a new temporary table (dropped by :meth:`drop`); returns its name."""
        t = time.perf_counter()
        name = temp_table_name(prefix)
        self.temps.append(name)
        create_temp(self.cur, name, cols)
        copy_in(self.cur, name, cols, arrays)
        key = f"stage {prefix}"
        self.timings[key] = round(self.timings.get(key, 0.0) + time.perf_counter() - t, 3)
        return name

    def stage_text(self, prefix: str, cols: str, names: tuple[str, ...], rows: list[tuple]) -> str:
        """A new temporary table of ints and strings (``cols``: its column definitions); returns its name."""
        name = temp_table_name(prefix)
        self.temps.append(name)
        self.cur.execute(f"CREATE TEMP TABLE {name} ({cols})")
        if rows:
            text_rows(self.cur, self.d, name, names, rows)
        return name

    @property
    def empty(self) -> bool:
        return not (self.rows or self.n_follows or self.edge_parts)


# PostgreSQL text cannot hold NUL: a NUL in a name or text (JSON \u0000, a stray byte in a CSV) is dropped
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": ""})


def _copy_text(v) -> str:
    return "\\N" if v is None else str(v).translate(_COPY_ESCAPES)


def text_rows(cur, d, table: str, cols: tuple[str, ...], rows: list[tuple]) -> None:
    """Rows of ints and strings into a temporary table (PostgreSQL: one COPY text buffer per 100K rows)."""
    if d.postgres:
        with cur.cursor.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
            for a in range(0, len(rows), 100_000):
                cp.write("".join("\t".join(map(_copy_text, r)) + "\n" for r in rows[a : a + 100_000]))
    else:
        cur.executemany(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(cols))})", rows)
