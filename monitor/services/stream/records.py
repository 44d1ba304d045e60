"""Reading stream records: NDJSON lines in, one :class:`Record` per event out, every value checked by the same
field logic as the file readers of :mod:`compute.formats` (so a bad value is named the same way, by line and
field, whichever way it arrived).

A line is one of (docs/formats.md, "Stream records"):

* a Twitter API **v1.1 status** (``retweeted_status`` marks a retweet; its embedded original travels with it);
* a Twitter API **v2** flattened tweet, or a twarc2 **page** (``data`` + ``includes``): a page holding several
  tweets becomes one record per tweet, each with the ``includes`` it needs, so every record has one cascade;
* the **tweets CSV's fields** as a JSON object: ``tweet_id``, ``retweeted_tweet_id`` (empty or absent for an
  original), ``user_id``, ``created_at``, ``followers_count``, ``screen_name``, ``text``;
* a **follow**: ``{"follower_id": ..., "followee_id": ...}`` (the follows CSV's columns), the follower now follows
  the followee.

v1.1 stream notices (``delete``, ``limit``...) are skipped and counted, blank lines are ignored. The record's
*cascade key* is the original tweet's id (its own for an original, the retweeted one for a retweet; none for a
follow) and its *partition* a fixed mix of that key (:func:`partition_of`); a follow's partition comes from its
follower (it is applied before any later event of every partition: see ``consumer``).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from compute.formats._dups import SeenTweets
from compute.formats._fields import Bad, Ctx, to_count, to_id
from compute.formats._io import Progress
from compute.formats._json import Obj
from compute.formats._report import BadRecord, InputError, ReadReport, Sink
from compute.formats._tweets import CheckedRows, TweetBuilder
from compute.formats.csv_tweets import TWEET_COLUMNS
from compute.formats.follows import FOLLOW_COLUMNS
from compute.formats.twitter_v1 import json_error, read_v1
from compute.formats.twitter_v1 import sniff_json as sniff_v1
from compute.formats.twitter_v2 import _author, _includes_problem, _is_obj, _retweeted
from compute.formats.twitter_v2 import sniff_json as sniff_v2
from compute.tables import NO_TWEET, TweetTable

from . import _rows

__all__ = [
    "Record",
    "ReadLines",
    "read_lines",
    "partition_of",
    "KINDS",
    "FOLLOW_COLUMNS",
    "TWEET_COLUMNS",
    "InputError",
]

KINDS = ("tweet", "retweet", "follow")
_MASK = (1 << 64) - 1
_UNKNOWN = (
    "want a v1.1 status, a v2 tweet or page, the tweets CSV's fields (tweet_id, user_id, ...) "
    "or a follow (follower_id, followee_id)"
)


def partition_of(key: int, n: int) -> int:
    """The partition of a cascade key (or a follower id) among ``n``: a multiplicative mix, so snowflake ids,
    whose low bits are a sequence number often zero, still spread evenly. The same in every process."""
    x = (int(key) * 0x9E3779B97F4A7C15) & _MASK
    x ^= x >> 29
    return x % n


class Record(NamedTuple):
    """One event to store: ``line`` it came from, ``format`` (v1, v2, csv, follow), ``kind`` (tweet, retweet,
    follow), ``cascade_key`` (None for a follow), ``key`` (what the partition is taken from: the cascade key,
    or the follower), ``body``: the JSON text stored (the line as received, or one tweet of a v2 page), and
    ``rows``: for a v1.1 or v2 record, the tweet rows read from it, as stored beside the body (:mod:`._rows`).

    A named tuple, not a frozen dataclass: the intake makes one or two per line, and a frozen dataclass took
    2.8 us to make against 1.1 us (55 against 21 ms per 10,000 statuses)."""

    line: int
    format: str
    kind: str
    cascade_key: int | None
    key: int
    body: str
    rows: str | None = None


@dataclass
class ReadLines:
    records: list[Record]
    n_skipped: int  # stream notices and v2 lines with no tweet


def _csv_row(obj: dict, line: int, rec: int, builder: TweetBuilder) -> tuple[str, int]:
    tid = to_id(obj.get("tweet_id"), "tweet_id")
    rt_raw = obj.get("retweeted_tweet_id")
    rtid = NO_TWEET if rt_raw is None or rt_raw == "" else to_id(rt_raw, "retweeted_tweet_id")
    uid = to_id(obj.get("user_id"), "user_id")
    fol = to_count(obj.get("followers_count"), "followers_count")
    t = obj.get("created_at")
    if t == "":
        t = None
    sn, tx = obj.get("screen_name"), obj.get("text")
    for name, v in (("screen_name", sn), ("text", tx)):
        if v is not None and type(v) is not str:
            raise Bad(name, "wrong type", "expected a string")
    builder.add(rec, line, tid, rtid, uid, t, "created_at", fol, sn or None, tx)
    return ("tweet", tid) if rtid == NO_TWEET else ("retweet", rtid)


def _v2_tweet(tw, line: int, prefix: str, users: dict, rec: int, builder: TweetBuilder, original: bool = False):
    if not _is_obj(tw):
        raise Bad(prefix.rstrip(".") or None, "wrong type", "expected a tweet object")
    tid = to_id(tw.id, prefix + "id")
    rtid, ref = (NO_TWEET, None) if original else _retweeted(tw, prefix)
    uid, fol, sn = _author(tw, users, prefix)
    builder.add(rec, line, tid, rtid, uid, tw.created_at, prefix + "created_at", fol, sn,
                tw.text if type(tw.text) is str else None)  # fmt: skip
    return tid, rtid, ref


def _loads():
    """The fastest generic JSON decoder here (msgspec, orjson, json) and the errors it raises."""
    from compute.formats._json import backend, dict_loads

    name = backend()
    if name == "msgspec":
        import msgspec

        return msgspec.json.decode, (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
    return dict_loads(name)


def read_lines(lines: Iterable[tuple[int, str]], *, path: str = "body") -> ReadLines:
    """Check every line (``(line number, text)``) and classify it; raises :class:`InputError` naming ``path``,
    the line and the field of the first bad one (nothing is returned then: a body is taken whole or not at all).

    v1.1 statuses, the bulk of a real stream, go through the file reader itself (:func:`read_v1`, with its
    msgspec fast path) over a temporary copy of those lines; the other shapes are checked here with the readers'
    field functions. All rows meet in the same checks as in a file: times parsed and bounded, a time for every
    row (else the snowflake time of the id), follower counts bounded, and a tweet id that contradicts another
    line of the same body (another author, time or original) refused."""
    decode, errors = _loads()
    sink = Sink(path, "strict", ReadReport())
    seen = SeenTweets()
    builder = TweetBuilder(sink, text=True, seen=seen, id_field="tweet_id")
    sink.before_raise = builder.flush
    out: list[Record] = []
    v1: list[tuple[int, str]] = []
    skipped = 0
    rec = 0
    record_of_rec: dict[int, int] = {}  # the builder's record key of a v2 tweet's rows -> its index in ``out``
    first_bad: InputError | None = None
    built: tuple[TweetTable, CheckedRows] | None = None
    try:
        for line, text in lines:
            if not text or text.isspace():
                continue
            try:
                obj = decode(text.encode() if decode is not json.loads else text)
            except errors as exc:
                sink.bad(line, *json_error(exc))
            if type(obj) is not dict:
                sink.bad(line, None, "wrong type", "expected a JSON object")
            try:
                if "follower_id" in obj or "followee_id" in obj:
                    follower = to_id(obj.get("follower_id"), "follower_id")
                    to_id(obj.get("followee_id"), "followee_id")
                    out.append(Record(line, "follow", "follow", None, follower, text))
                elif "tweet_id" in obj:
                    rec += 1
                    kind, key = _csv_row(obj, line, rec, builder)
                    out.append(Record(line, "csv", kind, key, key, text))
                elif "user" in obj and "data" not in obj:  # a v1.1 status (v2 tweets have author_id / author)
                    v1.append((line, text))
                    out.append(Record(line, "v1", "", None, 0, text))  # classified by the reader below
                elif "data" in obj or "includes" in obj or (not sniff_v1(obj) and sniff_v2(obj)):
                    got = _v2_line(obj, text, line, builder, rec)
                    for i in range(len(got)):  # its rows' keys: rec + 2i + 1, and + 2 for an included original
                        record_of_rec[rec + 2 * i + 1] = record_of_rec[rec + 2 * i + 2] = len(out) + i
                    rec += max(1, 2 * len(got))
                    if not got:
                        skipped += 1
                    out.extend(got)
                elif sniff_v1(obj) or any(k in obj for k in _NOTICES):
                    v1.append((line, text))
                    out.append(Record(line, "v1", "", None, 0, text))
                else:
                    raise Bad(None, "unknown record", _UNKNOWN)
            except Bad as b:
                sink.bad(line, b.field, b.kind, b.detail)
        built = _flush(builder)  # the first bad time, count or conflicting duplicate of the lines read here
    except InputError as exc:
        first_bad = exc
    sink.before_raise = None
    stop = first_bad.record.line if first_bad is not None else None
    if v1:
        try:
            kinds = _read_v1([(n, t) for n, t in v1 if stop is None or n < stop], path, seen)
        except InputError as exc:
            if first_bad is None or exc.record.line < first_bad.record.line:
                first_bad = exc
        else:
            fixed = []
            for r in out:
                if r.format == "v1" and (stop is None or r.line < stop):
                    got = kinds.get(r.line)
                    if got is None:  # a stream notice: no tweet
                        skipped += 1
                        continue
                    kind, key, rows = got
                    r = Record(r.line, "v1", kind, key, key, r.body, rows)
                fixed.append(r)
            out = fixed
    if first_bad is not None:
        raise first_bad
    if built is not None and record_of_rec:
        out = _with_v2_rows(out, built, record_of_rec)
    return ReadLines(out, skipped)


def _flush(builder: TweetBuilder) -> tuple[TweetTable, CheckedRows] | None:
    """``builder.flush()`` that also gives the checked rows (their record keys and time fields)."""
    if not len(builder):
        return None
    sink = builder.sink
    hook, sink.before_raise = sink.before_raise, None
    try:
        checked = builder.checked()
        return builder.commit(checked), checked
    finally:
        sink.before_raise = hook


def _with_v2_rows(out: list[Record], built: tuple[TweetTable, CheckedRows], record_of_rec: dict[int, int]):
    """The v2 records of ``out`` with their rows (strict mode: every row the builder took was kept, in order)."""
    table, checked = built
    rec = checked.rec.tolist()
    # each row's record in ``out``, or -1 for a row of a CSV-fields record (parsed by the consumer)
    of = np.fromiter((record_of_rec.get(r, -1) for r in rec), dtype=np.int64, count=len(rec))
    kept = np.flatnonzero(of >= 0)
    kept = kept[np.argsort(of[kept], kind="stable")]  # a record's rows together, in the builder's order
    fields = [TweetBuilder._field(checked.field_of(i), "id") for i in kept.tolist()]  # data[2].created_at -> data[2].id
    keys, texts = _rows.encode_runs(of[kept], table.take(kept), fields)
    rows = dict(zip(keys, texts))
    return [r._replace(rows=rows[k]) if k in rows else r for k, r in enumerate(out)]


_NOTICES = ("delete", "limit", "scrub_geo", "status_withheld", "user_withheld", "disconnect", "warning")


def _read_v1(lines: list[tuple[int, str]], path: str, seen: SeenTweets) -> dict[int, tuple[str, int, str]]:
    """Run the v1.1 file reader over ``lines`` (a temporary file of them, in order): ``{line: (kind, cascade
    key, rows)}`` for the lines that hold a status (``rows`` as :mod:`._rows` stores them); its errors come back
    with the body's own line numbers."""
    if not lines:
        return {}
    numbers = np.array([n for n, _ in lines], dtype=np.int64)
    folder = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", dir=folder, encoding="utf-8") as fh:
        fh.write("\n".join(t for _, t in lines))
        fh.write("\n")
        fh.flush()
        sink = Sink(path, "strict", ReadReport())
        ctx = Ctx(path=fh.name, sink=sink, progress=Progress(None, 0), chunk_size=1 << 30, seen=seen)
        try:
            tables = [t for kind, t in read_v1(fh.name, ctx) if kind == "tweets"]
        except InputError as exc:
            r = exc.record
            line = int(numbers[r.line - 1]) if r.line is not None else None
            raise InputError(BadRecord(path, line, r.field, r.reason, r.kind)) from None
    out: dict[int, tuple[str, int, str]] = {}
    for t in tables:
        # a line's rows are consecutive: the status, then its embedded original
        first = np.ones(len(t), dtype=bool)
        first[1:] = t.lines[1:] != t.lines[:-1]
        fields = np.where(first, "id_str", "retweeted_status.id_str").tolist()
        head = np.flatnonzero(first)
        keys, texts = _rows.encode_runs(t.lines, t, fields)
        rt = t.retweeted_tweet_id[head].tolist()
        tid = t.tweet_id[head].tolist()
        for n, text, r, i in zip(numbers[np.asarray(keys, dtype=np.int64) - 1].tolist(), texts, rt, tid):
            out[n] = ("tweet", i, text) if r == NO_TWEET else ("retweet", r, text)
    return out


def _v2_line(obj: dict, text: str, line: int, builder: TweetBuilder, rec: int) -> list[Record]:
    """The records of one v2 line: a flattened tweet (kept as received) or a page (one record per tweet)."""
    w = Obj(obj)
    data = w.data
    if data is None:
        if w.id is None:
            return []
        tid, rtid, ref = _v2_tweet(w, line, "", {}, rec + 1, builder)
        if ref is not None and (ref[1].author_id is not None or ref[1].author is not None):
            _v2_tweet(ref[1], line, f"referenced_tweets[{ref[0]}].", {}, rec + 1, builder, original=True)
        key = tid if rtid == NO_TWEET else rtid
        return [Record(line, "v2", "tweet" if rtid == NO_TWEET else "retweet", key, key, text)]
    many = isinstance(data, list)
    raw_tweets = obj["data"] if many else [obj["data"]]
    if not raw_tweets:
        return []
    problem = _includes_problem(w.includes)
    if problem is not None:
        raise Bad(problem, "wrong type", "expected an object" if problem == "includes" else "expected a list")
    raw_inc = obj.get("includes") or {}
    users: dict = {}
    raw_users: dict = {}
    originals: dict = {}
    for j, u in enumerate(raw_inc.get("users") or ()):
        if type(u) is dict and u.get("id") is not None:
            try:
                uid = to_id(u["id"], "")
            except Bad:
                continue  # matches no tweet; a tweet needing it reports its own field
            users[uid] = (Obj(u), f"includes.users[{j}]")
            raw_users[uid] = u
    for j, t in enumerate(raw_inc.get("tweets") or ()):
        if type(t) is dict and t.get("id") is not None:
            originals.setdefault(str(t["id"]), (j, t))
    out = []
    for i, raw in enumerate(raw_tweets):
        r = rec + 2 * i + 1
        tw = Obj(raw) if type(raw) is dict else raw
        tid, rtid, _ = _v2_tweet(tw, line, f"data[{i}]." if many else "data.", users, r, builder)
        au = _author_id(raw) if type(raw) is dict else None
        inc_users = [raw_users[au]] if au in raw_users else []
        inc_tweets = []
        if rtid != NO_TWEET and str(rtid) in originals:
            j, t = originals[str(rtid)]
            _v2_tweet(Obj(t), line, f"includes.tweets[{j}].", users, r + 1, builder, original=True)
            inc_tweets.append(t)
            ou = _author_id(t)
            if ou in raw_users and raw_users[ou] not in inc_users:
                inc_users.append(raw_users[ou])
        key = tid if rtid == NO_TWEET else rtid
        if len(raw_tweets) == 1:
            body = text
        else:
            body = json.dumps({"data": raw, "includes": {"users": inc_users, "tweets": inc_tweets}})
        out.append(Record(line, "v2", "tweet" if rtid == NO_TWEET else "retweet", key, key, body))
    return out


def _author_id(raw: dict) -> int | None:
    v = raw.get("author_id")
    if v is None and type(raw.get("author")) is dict:
        v = raw["author"].get("id")
    try:
        return to_id(v, "")
    except Bad:
        return None
