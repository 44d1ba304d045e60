"""Row accumulator shared by the tweet readers: Python tuples in, a :class:`TweetTable` chunk out.

Readers append one plain tuple per row (that is the only per-row Python work); columns are pulled out, converted
and checked a chunk at a time, times with the vectorised :func:`parse_times`. The rows of a record with any bad
value are dropped together (a v1.1 retweet line yields the retweet and its embedded original: both go if either
is bad), and the bad records are reported in line order so strict mode always names the first one.

Checks made here, on whole columns: times in range (:mod:`.limits`), a time for every row (else the snowflake
time of the id), and no tweet id that contradicts an earlier row with the same id (:class:`~._dups.SeenTweets`).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from ..tables import NO_TWEET, TweetTable
from ._dups import SeenTweets
from ._report import Sink
from .limits import time_problems
from .timeparse import SNOWFLAKE_MIN_ID, parse_times, snowflake_time

__all__ = ["TweetBuilder", "CheckedRows", "split_reason", "empty_tweets", "NO_TWEET"]

_COLS = ("rec", "line", "tid", "rtid", "uid", "traw", "tfield", "fol", "sn", "tx", "ht", "ur")
_GET = {name: itemgetter(i) for i, name in enumerate(_COLS)}


def split_reason(reason: str) -> tuple[str, str | None]:
    """``"unparseable time: 'x'"`` -> (``"unparseable time"``, ``"'x'"``): the kind the report counts by."""
    kind, sep, detail = reason.partition(": ")
    return (kind, detail) if sep else (reason, None)


def empty_tweets(text: bool, entities: bool | None = None) -> TweetTable:
    """No tweets, with the columns of a format that has texts (``text``) and entities (``entities``, by default
    as ``text``: the formats with texts, v1.1 and v2, have entities too)."""
    t = TweetTable.empty()
    if text:
        t.screen_name = np.zeros(0, dtype=object)
        t.text = np.zeros(0, dtype=object)
    if text if entities is None else entities:
        t.hashtags = np.zeros(0, dtype=object)
        t.urls = np.zeros(0, dtype=object)
    t.lines = np.zeros(0, dtype=np.int64)
    return t


class TweetBuilder:
    """Collects the rows of one file; :meth:`flush` turns them into a ``TweetTable``.

    A row is the tuple ``(rec, line, tid, rtid, uid, traw, tfield, fol, sn, tx, ht, ur)`` appended to
    :attr:`rows`: ``rec`` is the record key (rows sharing it are kept or dropped together; keys never decrease),
    ``rtid`` is ``NO_TWEET`` for an original, ``traw`` the raw time value, ``tfield`` the field to blame for a
    bad time, ``fol`` a number (an int or a float, NaN when unknown, checked by the reader), ``sn`` / ``tx``
    screen name and text (``None`` when absent), ``ht`` / ``ur`` the ``hashtags`` / ``urls`` strings
    (:mod:`._entities`). A tuple append is the cheapest per-row step Python has; columns come out through
    ``itemgetter`` maps, in C. A builder made with ``entities=False`` never reads ``ht`` / ``ur`` (its tables
    have no such columns), so its rows may stop after ``tx``.

    ``seen`` holds the tweet ids read before (this file's earlier chunks, or other files of the same upload);
    ``id_field`` is the name of the tweet id field after the row's prefix (``tfield`` without its last part), so
    a conflicting duplicate is reported on ``retweeted_status.id_str`` or ``data[3].id``.
    """

    def __init__(
        self,
        sink: Sink,
        *,
        text: bool = True,
        entities: bool = False,
        seen: SeenTweets | None = None,
        id_field: str = "tweet_id",
    ) -> None:
        self.sink = sink
        self.with_text = text
        self.with_entities = entities
        self.rows: list[tuple] = []
        self.seen = SeenTweets() if seen is None else seen
        self.src = self.seen.file(sink.path)
        self.id_field = id_field

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, rec: int, line: int, tid: int, rtid: int, uid: int, traw: object, tfield: str, fol: float,
            sn: str | None = None, tx: str | None = None, ht: str | None = None,
            ur: str | None = None) -> None:  # fmt: skip
        self.rows.append((rec, line, tid, rtid, uid, traw, tfield, fol, sn, tx, ht, ur))

    def columns(self) -> tuple[dict, list[tuple[int, str, str, str | None]]]:
        """Take the pending rows as columns: ``rec``, ``line``, ``tweet_id``, ``retweeted_tweet_id``,
        ``user_id``, ``followers_count`` (arrays), ``traw`` (list), ``tfield`` (list or one str), and optionally
        ``screen_name`` / ``text`` / ``label`` / ``hashtags`` / ``urls`` (object arrays); plus
        ``(row, field, kind, detail)`` for bad values. The JSON readers validated ids and counts per row already;
        the CSV reader converts here."""
        rows, self.rows = self.rows, []
        n = len(rows)

        def ints(name: str) -> np.ndarray:
            return np.fromiter(map(_GET[name], rows), dtype=np.int64, count=n)

        cols = {
            "rec": ints("rec"),
            "line": ints("line"),
            "tweet_id": ints("tid"),
            "retweeted_tweet_id": ints("rtid"),
            "user_id": ints("uid"),
            "followers_count": np.fromiter(map(_GET["fol"], rows), dtype=np.float64, count=n),
            "traw": list(map(_GET["traw"], rows)),
            "tfield": list(map(_GET["tfield"], rows)),
        }
        if self.with_text:
            for key, name in (("sn", "screen_name"), ("tx", "text")):
                a = np.empty(n, dtype=object)
                a[:] = list(map(_GET[key], rows))
                cols[name] = a
        if self.with_entities:
            for key, name in (("ht", "hashtags"), ("ur", "urls")):
                a = np.empty(n, dtype=object)
                a[:] = list(map(_GET[key], rows))
                cols[name] = a
        return cols, []

    @staticmethod
    def _field(tfield: str, name: str) -> str:
        """``name`` with the prefix of the row's time field: ``retweeted_status.`` + ``id_str``."""
        prefix = tfield.rpartition(".")[0]
        return f"{prefix}.{name}" if prefix else name

    def flush(self) -> TweetTable | None:
        """Convert the pending rows, report their bad records (in line order) and return the good ones."""
        if not len(self):
            return None
        sink = self.sink
        hook, sink.before_raise = sink.before_raise, None  # reporting from here must not re-enter flush
        try:
            return self.commit(self.checked())
        finally:
            sink.before_raise = hook

    def checked(self) -> CheckedRows:
        """Take the pending rows as columns with the checks that look at one row at a time (times, counts):
        the part of :meth:`flush` that does not depend on rows read before, so a worker process can run it on
        its stretch of a file (:mod:`._parallel`)."""
        cols, bad = self.columns()
        tfield = cols["tfield"]
        field_of = (lambda i: tfield) if isinstance(tfield, str) else tfield.__getitem__
        times, tbad = parse_times(cols["traw"])
        for i, reason in tbad:
            bad.append((i, field_of(i), *split_reason(reason)))
        missing = np.isnan(times)
        if tbad:
            missing[[i for i, _ in tbad]] = False
        if missing.any():
            idx = np.flatnonzero(missing)
            tid = cols["tweet_id"][idx]
            snow = tid >= SNOWFLAKE_MIN_ID
            times[idx[snow]] = snowflake_time(tid[snow])
            for i in idx[~snow].tolist():
                bad.append((i, field_of(i), "missing", "no time and the tweet id is not a snowflake"))
        filled = missing if missing.any() else None
        out_of_range, reasons = time_problems(times)
        for i, reason in zip(out_of_range.tolist(), reasons):
            kind, detail = split_reason(reason)
            if filled is not None and filled[i]:
                detail += " (the snowflake time of the tweet id)"
            bad.append((i, field_of(i), kind, detail))
        return CheckedRows(
            rec=cols["rec"],
            line=cols["line"],
            tweet_id=cols["tweet_id"],
            retweeted_tweet_id=cols["retweeted_tweet_id"],
            user_id=cols["user_id"],
            created_at=times,
            followers_count=cols["followers_count"],
            screen_name=cols.get("screen_name"),
            text=cols.get("text"),
            label=cols.get("label"),
            hashtags=cols.get("hashtags"),
            urls=cols.get("urls"),
            tfield=tfield,
            bad=bad,
        )

    def commit(self, c: CheckedRows) -> TweetTable:
        """The rest of :meth:`flush`, in file order: conflicting duplicates against every row read before
        (:class:`SeenTweets`), the bad records reported, the good rows as a table."""
        sink = self.sink
        field_of = c.field_of
        times = c.created_at
        bad = list(c.bad)
        lines, rec = c.line, c.rec
        tid, rt, uid = c.tweet_id, c.retweeted_tweet_id, c.user_id
        keep = None
        if bad:
            keep = ~np.isin(rec, rec[np.array([b[0] for b in bad], dtype=np.int64)])
        # conflicting duplicates, among the rows that are otherwise good (a bad row is no reference)
        k = None if keep is None else np.flatnonzero(keep)
        pick = (lambda a: a) if k is None else (lambda a: a[k])
        conflicts = self.seen.check(self.src, pick(tid), pick(rt), pick(uid), pick(times), pick(lines))
        if conflicts:
            rows = np.array([j if k is None else k[j] for j, _ in conflicts], dtype=np.int64)
            for i, (_, reason) in zip(rows.tolist(), conflicts):
                bad.append((i, self._field(field_of(i), self.id_field), "conflicting duplicate", reason))
            dropped = ~np.isin(rec, rec[rows])
            keep = dropped if keep is None else keep & dropped
        if bad:
            first: dict[int, tuple] = {}  # one report per record: its first bad value
            for b in sorted(bad, key=lambda b: (int(lines[b[0]]), b[0])):
                first.setdefault(int(rec[b[0]]), b)
            sink.bad_sorted([(int(lines[b[0]]), b[1], b[2], b[3]) for b in first.values()])
        table = TweetTable(
            tweet_id=tid,
            retweeted_tweet_id=rt,
            user_id=uid,
            created_at=times,
            followers_count=c.followers_count,
            screen_name=c.screen_name,
            text=c.text,
            label=c.label,
            lines=lines,
            hashtags=c.hashtags,
            urls=c.urls,
        )
        if keep is not None:
            table = table.take(keep)
            rec = rec[keep]
        if conflicts:  # else the check registered the chunk's ids already
            t = table
            self.seen.add(self.src, t.tweet_id, t.retweeted_tweet_id, t.user_id, t.created_at, t.lines)
        # keys never decrease, so records are runs of equal keys
        sink.report.n_good += int(np.count_nonzero(np.diff(rec))) + 1 if len(rec) else 0
        return table


_ROW_COLUMNS = ("rec", "line", "tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count")
_OBJ_COLUMNS = ("screen_name", "text", "label", "hashtags", "urls")


@dataclass(eq=False)
class CheckedRows:
    """Rows of one stretch of a file after the checks of one row at a time (:meth:`TweetBuilder.checked`), not
    yet checked against the rows before them: the columns, the time field of each row (one name for all, or a
    list), and the bad values found, ``(row, field, kind, detail)`` with ``row`` indexing these rows."""

    rec: np.ndarray
    line: np.ndarray
    tweet_id: np.ndarray
    retweeted_tweet_id: np.ndarray
    user_id: np.ndarray
    created_at: np.ndarray
    followers_count: np.ndarray
    screen_name: np.ndarray | None
    text: np.ndarray | None
    label: np.ndarray | None
    tfield: str | list[str]
    bad: list[tuple[int, str | None, str, str | None]]
    hashtags: np.ndarray | None = None
    urls: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.rec)

    def field_of(self, i: int) -> str:
        return self.tfield if isinstance(self.tfield, str) else self.tfield[i]

    def shift_lines(self, by: int) -> None:
        """Line numbers (and record keys, which are line numbers or follow them) moved down by ``by`` lines."""
        if by:
            if self.rec is not self.line:  # one array for both in some readers
                self.rec += by
            self.line += by

    def slice(self, a: int, b: int) -> CheckedRows:
        """Rows ``a:b`` (never splitting a record), with their bad values."""
        if a == 0 and b == len(self):
            return self
        kw = {n: getattr(self, n)[a:b] for n in _ROW_COLUMNS}
        kw.update({n: None if getattr(self, n) is None else getattr(self, n)[a:b] for n in _OBJ_COLUMNS})
        tf = self.tfield if isinstance(self.tfield, str) else self.tfield[a:b]
        return CheckedRows(**kw, tfield=tf, bad=[(i - a, *rest) for i, *rest in self.bad if a <= i < b])

    @staticmethod
    def concat(parts: list[CheckedRows]) -> CheckedRows:
        """The rows of ``parts`` one after the other (each part's bad values re-based)."""
        if len(parts) == 1:
            return parts[0]
        kw = {n: np.concatenate([getattr(p, n) for p in parts]) for n in _ROW_COLUMNS}
        for n in _OBJ_COLUMNS:
            cols = [getattr(p, n) for p in parts]
            kw[n] = None if any(c is None for c in cols) else np.concatenate(cols)
        tfs = [p.tfield for p in parts]
        if all(isinstance(t, str) for t in tfs) and len(set(tfs)) == 1:
            tf: str | list[str] = tfs[0]
        else:
            tf = []
            for p in parts:
                tf.extend([p.tfield] * len(p) if isinstance(p.tfield, str) else p.tfield)
        bad, base = [], 0
        for p in parts:
            bad.extend((i + base, *rest) for i, *rest in p.bad)
            base += len(p)
        return CheckedRows(**kw, tfield=tf, bad=bad)
