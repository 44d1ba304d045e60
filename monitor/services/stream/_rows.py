"""The tweet rows the intake read from a record, stored beside its body (``StreamEvent.rows``), so the consumer
builds its micro-batch's table from them and never reads the body again.

The intake checks every record with the upload's readers before it stores it (:mod:`.records`), which is the whole
work of reading it: ids, times, counts, the embedded original. Until 2026-11-28 the consumer then read each body a
second time (:mod:`._apply_parse`), about a tenth of a micro-batch on the consumer's serial chain and of the
machine's CPU per event (``benchmarks/stream_web.md``). Now the intake keeps what it read.

A record's rows are one JSON array (msgspec), one row per tweet the record holds, in the reader's order (a v1.1
retweet: the retweet, then its embedded original; a v2 retweet: the retweet, then its included original)::

    [tweet_id, retweeted_tweet_id, user_id, created_at, followers_count, id_field, screen_name, text, hashtags,
     urls]

``retweeted_tweet_id`` is ``NO_TWEET`` (-1) for an original; ``created_at`` is seconds since the epoch, as parsed
and checked by the reader (every row has one: the reader takes the snowflake time where the record has none);
``followers_count`` is -1 where the record gives none (a real count is never negative: the readers refuse one);
``id_field`` names the row's tweet id field in the body (``id_str``, ``retweeted_status.id_str``, ``data.id``...):
the field a conflicting duplicate found in the consumer's micro-batch is reported on; ``screen_name`` and ``text``
are null where the record has none. A retweet's text is not kept (null): the workspace stores the texts of
originals only. ``hashtags`` and ``urls`` are an original's entities as the readers join them (space-separated;
null for a retweet or where the record has none), so that a tweet that came through the stream is searched by
them as an uploaded one is (docs/claims.md). Rows of eight columns, stored before 2026-11-30, are read as rows
without entities.

Only v1.1 and v2 records carry rows (the stream's formats); the tweets CSV's fields and follows are small and
parsed by the consumer as before, as are events stored before the column existed.
"""

from __future__ import annotations

import msgspec
import numpy as np

from compute.tables import NO_TWEET, TweetTable

__all__ = ["Row", "UnreadableRows", "encode_runs", "decode"]

# tweet_id, retweeted_tweet_id, user_id, created_at, followers_count, id_field, screen_name, text, hashtags, urls
Row = tuple[int, int, int, float, float, str, str | None, str | None, str | None, str | None]
# the layout before the entities: the same without hashtags and urls
Row8 = tuple[int, int, int, float, float, str, str | None, str | None]

_encode = msgspec.json.Encoder().encode
_decoder = msgspec.json.Decoder(list[list[Row]])  # the records of a micro-batch
_one = msgspec.json.Decoder(list[Row])  # one record, to name those that are not rows
_one8 = msgspec.json.Decoder(list[Row8])


def encode_runs(keys: np.ndarray, table: TweetTable, id_fields: list[str]) -> tuple[list[int], list[str]]:
    """The rows of several records, as the JSON text stored in ``StreamEvent.rows``: ``table``'s rows grouped into
    runs of equal ``keys`` (each record's rows are consecutive), ``id_fields`` per row; an unknown (NaN) count
    becomes -1 and a retweet's text is left out. Returns each run's key and text. The columns are converted
    once, not per row: the intake does this for every status."""
    n = len(keys)
    if not n:
        return [], []
    first = np.ones(n, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    fol = table.followers_count.copy()
    fol[np.isnan(fol)] = -1.0
    originals = table.retweeted_tweet_id == NO_TWEET
    text, tags, urls = (
        np.where(originals, col, None) if col is not None else [None] * n
        for col in (table.text, table.hashtags, table.urls)
    )
    screen = table.screen_name if table.screen_name is not None else [None] * n
    rows = list(zip(table.tweet_id.tolist(), table.retweeted_tweet_id.tolist(), table.user_id.tolist(),
                    table.created_at.tolist(), fol.tolist(), id_fields, list(screen), list(text), list(tags),
                    list(urls)))  # fmt: skip
    starts = np.flatnonzero(first).tolist()
    ends = [*starts[1:], n]
    return keys[first].tolist(), [_encode(rows[a:b]).decode() for a, b in zip(starts, ends)]


class UnreadableRows(ValueError):
    """Some records' rows are not in this layout (``indices``: their positions): an event stored by a version of
    the intake that wrote another layout. Their bodies are read instead."""

    def __init__(self, indices: list[int]) -> None:
        super().__init__(f"{len(indices)} records' rows are not in this code's layout")
        self.indices = indices


def decode(texts: list[str]) -> tuple[TweetTable, list[str]]:
    """The rows of several records (``texts``, as stored) as one table: its ``lines`` column holds each row's
    record index (position in ``texts``), rows in record order; and the id field of each row.

    Raises :class:`UnreadableRows` naming every record whose text is not rows in this layout."""
    try:
        per = _decoder.decode("[" + ",".join(texts) + "]")
    except (msgspec.ValidationError, msgspec.DecodeError):
        per = None
    if per is None or len(per) != len(texts):  # (a text holding two records' arrays would shift the rest)
        per = _one_by_one(texts)  # some are in the layout before the entities, or not rows at all
    n_rows = np.fromiter(map(len, per), dtype=np.int64, count=len(per))
    flat = [r for rows in per for r in rows]
    n = len(flat)
    if n:
        tid, rt, uid, t, fol, fields, sn, tx, tg, ur = zip(*flat)
    else:
        tid = rt = uid = t = fol = fields = sn = tx = tg = ur = ()
    followers = np.fromiter(fol, dtype=np.float64, count=n)
    followers[followers < 0] = np.nan
    screen, text, tags, urls = (np.empty(n, dtype=object) for _ in range(4))
    screen[:], text[:], tags[:], urls[:] = sn, tx, tg, ur
    table = TweetTable(
        tweet_id=np.fromiter(tid, dtype=np.int64, count=n),
        retweeted_tweet_id=np.fromiter(rt, dtype=np.int64, count=n),
        user_id=np.fromiter(uid, dtype=np.int64, count=n),
        created_at=np.fromiter(t, dtype=np.float64, count=n),
        followers_count=followers,
        screen_name=screen,
        text=text,
        lines=np.repeat(np.arange(len(per), dtype=np.int64), n_rows),
        hashtags=tags,
        urls=urls,
    )
    return table, list(fields)


def _one_by_one(texts: list[str]) -> list:
    """Each record's rows decoded alone, those of eight columns (stored before the entities) given null entities;
    raises :class:`UnreadableRows` naming the records that are rows in neither layout."""
    per, bad = [], []
    for i, text in enumerate(texts):
        try:
            per.append(_one.decode(text))
            continue
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass
        try:
            per.append([(*r, None, None) for r in _one8.decode(text)])
        except (msgspec.ValidationError, msgspec.DecodeError):
            bad.append(i)
    if bad:
        raise UnreadableRows(bad)
    return per
