"""Row accumulator shared by the tweet readers: Python tuples in, a :class:`TweetTable` chunk out.

Readers append one plain tuple per row (that is the only per-row Python work); columns are pulled out, converted
and checked a chunk at a time, times with the vectorised :func:`parse_times`. The rows of a record with any bad
value are dropped together (a v1.1 retweet line yields the retweet and its embedded original: both go if either
is bad), and the bad records are reported in line order so strict mode always names the first one.
"""

from __future__ import annotations

from operator import itemgetter

import numpy as np

from ..tables import NO_TWEET, TweetTable
from ._report import Sink
from .timeparse import SNOWFLAKE_MIN_ID, parse_times, snowflake_time

__all__ = ["TweetBuilder", "split_reason", "empty_tweets", "NO_TWEET"]

_COLS = ("rec", "line", "tid", "rtid", "uid", "traw", "tfield", "fol", "sn", "tx")
_GET = {name: itemgetter(i) for i, name in enumerate(_COLS)}


def split_reason(reason: str) -> tuple[str, str | None]:
    """``"unparseable time: 'x'"`` -> (``"unparseable time"``, ``"'x'"``): the kind the report counts by."""
    kind, sep, detail = reason.partition(": ")
    return (kind, detail) if sep else (reason, None)


def empty_tweets(text: bool) -> TweetTable:
    t = TweetTable.empty()
    if text:
        t.screen_name = np.zeros(0, dtype=object)
        t.text = np.zeros(0, dtype=object)
    t.lines = np.zeros(0, dtype=np.int64)
    return t


class TweetBuilder:
    """Collects the rows of one file; :meth:`flush` turns them into a ``TweetTable``.

    A row is the tuple ``(rec, line, tid, rtid, uid, traw, tfield, fol, sn, tx)`` appended to :attr:`rows`:
    ``rec`` is the record key (rows sharing it are kept or dropped together; keys never decrease), ``rtid`` is
    ``NO_TWEET`` for an original, ``traw`` the raw time value, ``tfield`` the field to blame for a bad time,
    ``fol`` a float (NaN when unknown), ``sn`` / ``tx`` screen name and text (``None`` when absent). A tuple
    append is the cheapest per-row step Python has; columns come out through ``itemgetter`` maps, in C.
    """

    def __init__(self, sink: Sink, *, text: bool = True) -> None:
        self.sink = sink
        self.with_text = text
        self.rows: list[tuple] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, rec: int, line: int, tid: int, rtid: int, uid: int, traw: object, tfield: str, fol: float,
            sn: str | None = None, tx: str | None = None) -> None:  # fmt: skip
        self.rows.append((rec, line, tid, rtid, uid, traw, tfield, fol, sn, tx))

    def columns(self) -> tuple[dict, list[tuple[int, str, str, str | None]]]:
        """Take the pending rows as columns: ``rec``, ``line``, ``tweet_id``, ``retweeted_tweet_id``,
        ``user_id``, ``followers_count`` (arrays), ``traw`` (list), ``tfield`` (list or one str), and optionally
        ``screen_name`` / ``text`` / ``label`` (object arrays); plus ``(row, field, kind, detail)`` for bad
        values. The JSON readers validated ids and counts per row already; the CSV reader converts here."""
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
        return cols, []

    def flush(self) -> TweetTable | None:
        """Convert the pending rows, report their bad records (in line order) and return the good ones."""
        if not len(self):
            return None
        sink = self.sink
        hook, sink.before_raise = sink.before_raise, None  # reporting from here must not re-enter flush
        try:
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
            lines, rec = cols["line"], cols["rec"]
            keep = None
            if bad:
                rows = np.array([b[0] for b in bad], dtype=np.int64)
                keep = ~np.isin(rec, rec[rows])
                first: dict[int, tuple] = {}  # one report per record: its first bad value
                for b in sorted(bad, key=lambda b: (int(lines[b[0]]), b[0])):
                    first.setdefault(int(rec[b[0]]), b)
                sink.bad_sorted([(int(lines[b[0]]), b[1], b[2], b[3]) for b in first.values()])
            table = TweetTable(
                tweet_id=cols["tweet_id"],
                retweeted_tweet_id=cols["retweeted_tweet_id"],
                user_id=cols["user_id"],
                created_at=times,
                followers_count=cols["followers_count"],
                screen_name=cols.get("screen_name"),
                text=cols.get("text"),
                label=cols.get("label"),
                lines=lines,
            )
            if keep is not None:
                table = table.take(keep)
                rec = rec[keep]
            # keys never decrease, so records are runs of equal keys
            sink.report.n_good += int(np.count_nonzero(np.diff(rec))) + 1 if len(rec) else 0
            return table
        finally:
            sink.before_raise = hook
