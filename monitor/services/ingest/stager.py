"""The staging area of one load: everything read so far as NumPy columns, and the temporary tables of the merge."""

from __future__ import annotations

import time

import numpy as np

from compute.formats import ReadReport, snowflake_time
from compute.structures import SpreadingGraphs
from compute.tables import NO_TWEET, FollowTable, TweetTable

from ...db import copy_in, create_temp, dialect, temp_table_name
from ...models import Label
from .columns import EdgeRows, FollowRows, TweetRows, cat

__all__ = ["LABELS", "Stager", "text_rows"]

LABELS = {c.value for c in Label}
_LABEL_ALIASES = {"nonrumor": "non-rumor", "non_rumor": "non-rumor", "non-rumour": "non-rumor", "": "unknown"}


class Stager:
    """Everything read so far, as NumPy columns (about 40 bytes per record), plus the few text columns.

    Ids are resolved to primary keys, deduplicated and sorted here, so the database receives each big table's
    rows once, in its unique key's order (B-tree inserts at the right edge, no joins, no DISTINCT).
    """

    def __init__(self, cursor, *, mode: str = "strict", report: ReadReport | None = None) -> None:
        self.cur = cursor
        self.d = dialect()
        self.mode = mode
        self.report = ReadReport() if report is None else report
        self.names: list[str] = []  # the files read, as uploaded (``src`` indexes them)
        self.tweet_parts: list[TweetRows] = []
        self.where_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (file index, line or -1) of each row
        self.follow_parts: list[FollowRows] = []
        self.edge_parts: list[EdgeRows] = []
        self.given: dict[int, bool] = {}  # tweet id -> times known
        self.rows = 0
        self.timings: dict[str, float] = {}
        self.n_follows = 0
        self.missing_times = 0
        self.unknown_labels = 0
        self.names_seen: dict[int, str] = {}
        self.texts_seen: dict[int, tuple[str, str]] = {}
        self.affected: list[int] = []  # Tweet pks, set by the merge
        self.temps: list[str] = []  # temporary tables to drop

    def drop(self) -> None:
        # temporary tables live as long as the connection (workers keep theirs open): drop them now
        for t in self.temps:
            self.cur.execute(f"DROP TABLE IF EXISTS {t}")
        self.temps.clear()

    def add_tweets(self, t: TweetTable, labels: dict[int, str] | None = None) -> None:
        ok = ~np.isnan(t.created_at)
        self.missing_times += int(np.count_nonzero(~ok))
        if not ok.all():
            t = t.take(ok)
        n = len(t)
        if not n:
            return
        self.rows += n
        self.tweet_parts.append(TweetRows(t.tweet_id, t.retweeted_tweet_id, t.user_id, t.created_at, t.followers_count))
        lines = t.lines if t.lines is not None else np.full(n, -1, np.int64)
        self.where_parts.append((np.full(n, len(self.names) - 1, np.int32), lines))
        if t.screen_name is not None:
            names = t.screen_name
            has = np.flatnonzero(names != None)  # noqa: E711  (object array: elementwise test)
            # the last name seen wins (accounts rename; uploads are roughly in time order)
            self.names_seen.update(zip(t.user_id[has].tolist(), names[has].tolist()))
        self._add_texts(t, labels)

    def _add_texts(self, t: TweetTable, labels: dict[int, str] | None) -> None:
        """Text and truth label of each original, the first seen per tweet id."""
        orig = np.flatnonzero(t.retweeted_tweet_id == NO_TWEET)
        if not len(orig):
            return
        # a v1.1 retweet embeds its original, so the same original comes once per retweet: first row wins
        _, first = np.unique(t.tweet_id[orig], return_index=True)
        orig = orig[np.sort(first)]
        ids = t.tweet_id[orig].tolist()
        text = t.text[orig].tolist() if t.text is not None else [None] * len(orig)
        lab = t.label[orig].tolist() if t.label is not None else [None] * len(orig)
        for tid, tx, lb in zip(ids, text, lab):
            if labels and tid in labels:
                lb = labels[tid]
            if tid not in self.texts_seen and (tx or lb is not None):
                self.texts_seen[tid] = (tx or "", self._label(lb))

    def _label(self, lb) -> str:
        if lb is None:
            return "unknown"
        v = str(lb).strip().lower()
        v = _LABEL_ALIASES.get(v, v)
        if v not in LABELS:
            self.unknown_labels += 1
            return "unknown"
        return v

    def add_follows(self, f: FollowTable) -> None:
        self.follow_parts.append(FollowRows(f.follower_id, f.followee_id))
        self.n_follows += len(f)

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
        self.edge_parts.append(EdgeRows(c.tweet_ids[ecasc], c.user_ids[g.edge_src], c.user_ids[g.edge_dst]))

    def tweets(self) -> TweetRows:
        """Every staged tweet row, in upload order."""
        cols = list(zip(*self.tweet_parts)) if self.tweet_parts else [[]] * len(TweetRows._fields)
        return TweetRows(*(cat(list(c), dt) for c, dt in zip(cols, TweetRows.DTYPES)))

    def follows(self) -> FollowRows:
        """Every staged follow edge (Twitter user ids), in upload order."""
        return FollowRows(*(cat([p[k] for p in self.follow_parts], np.int64) for k in range(2)))

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

    def where(self) -> tuple[np.ndarray, np.ndarray]:
        """(file index, line or -1) of every staged tweet row, in the order of :meth:`tweets`."""
        return cat([w[0] for w in self.where_parts], np.int32), cat([w[1] for w in self.where_parts], np.int64)

    @property
    def empty(self) -> bool:
        return not (self.rows or self.n_follows or self.edge_parts)


# PostgreSQL text cannot hold NUL: a NUL in a name or text (JSON \u0000, a stray byte in a CSV) is dropped
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": ""})


def text_rows(cur, d, table: str, cols: tuple[str, ...], rows: list[tuple]) -> None:
    """Rows of ints and strings into a temporary table (PostgreSQL: one COPY text buffer per 100K rows)."""
    if d.postgres:
        with cur.cursor.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
            for a in range(0, len(rows), 100_000):
                cp.write(
                    "".join("\t".join(str(v).translate(_COPY_ESCAPES) for v in r) + "\n" for r in rows[a : a + 100_000])
                )
    else:
        cur.executemany(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(cols))})", rows)
