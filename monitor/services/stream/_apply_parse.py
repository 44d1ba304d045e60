"""Reading stream bodies with the upload's readers: one micro-batch of records in, one table of rows out.

Every body is one JSON object: a v1.1 status, a v2 tweet (or twarc2 page), the tweets CSV's fields as a JSON
object, or a follow ``{"follower": id, "followee": id}``. The body's own keys decide which (the formats' detection
hooks, :mod:`compute.formats.registry`), not the event's ``kind``. The v1.1 and v2 bodies of a micro-batch are
written one per line to a temporary JSONL file and read by ``compute.formats.iter_tweets`` in skip-bad mode, and
the CSV-field bodies are written as rows of a tweets CSV and read the same way, so a stream record is checked
exactly as the same record in an upload (ids, counts, times in range, conflicting duplicates inside the
micro-batch) and a bad one is named by its field. Follow records are checked with the readers' id check.

The rows come out as one :class:`~compute.tables.TweetTable` whose ``lines`` column holds each row's *event
index* (its position in the micro-batch), in arrival order: the merge's "first row wins" rules (an original's
follower count, text and label) then pick the earliest record, as an upload of the same records in arrival
order does.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

from compute.arrays import unique
from compute.formats import MAX_RECORD_BYTES, ReadReport, SeenTweets, iter_tweets
from compute.formats._fields import Bad, to_id
from compute.formats.csv_tweets import TWEET_COLUMNS
from compute.formats.twitter_v1 import sniff_json as is_v1
from compute.formats.twitter_v2 import sniff_json as is_v2
from compute.tables import FollowTable, TweetTable, concat_tweets

from . import _rows

__all__ = ["Parsed", "parse_bodies", "parse_events"]

try:  # the readers' fastest JSON backend decides the format here too
    import orjson

    _loads = orjson.loads
    _JSON_ERRORS: tuple[type[BaseException], ...] = (orjson.JSONDecodeError, UnicodeDecodeError)
except ImportError:  # pragma: no cover - orjson is a dependency of the readers' fast path
    _loads = json.loads
    _JSON_ERRORS = (json.JSONDecodeError, UnicodeDecodeError, RecursionError)

_NOTICES = ("delete", "limit", "scrub_geo", "status_withheld", "user_withheld", "disconnect", "warning")
_FOLLOW_KEYS = (("follower", "follower_id"), ("followee", "followee_id"))
_WHAT = (
    "cannot tell the record's format: expected a v1.1 status (id_str, user...), a v2 tweet (author_id, "
    "referenced_tweets... or a data/includes page), the tweets CSV's fields (tweet_id, user_id, created_at...) "
    'or a follow {"follower": id, "followee": id}'
)


@dataclass
class Parsed:
    """What a micro-batch's bodies hold. Indices are event indices (positions in the bodies given)."""

    tweets: TweetTable  # ``lines``: the event index of each row; rows in event order
    follows: FollowTable
    follow_event: np.ndarray  # the event index of each follow edge
    bad: dict[int, str] = field(default_factory=dict)  # event index -> why it cannot be read
    empty: set[int] = field(default_factory=set)  # readable events that carry no tweet (v1.1 stream notices)


def _record_error(field_name: str | None, reason: str) -> str:
    return reason if field_name is None else f"field '{field_name}': {reason}"


def _kind(obj) -> str | None:
    """``v1``, ``v2``, ``csv``, ``follow`` or None (unknown) for a decoded body."""
    if not isinstance(obj, dict):
        return None
    if any(k in obj for pair in _FOLLOW_KEYS for k in pair) and "tweet_id" not in obj and "id" not in obj:
        return "follow"
    if is_v2(obj):
        return "v2"
    if is_v1(obj) or (any(n in obj for n in _NOTICES) and "id" not in obj):
        return "v1"
    if "tweet_id" in obj or "user_id" in obj:
        return "csv"
    return None


def parse_events(
    bodies: list[str | None], rows: list[str | None], event_ids: list[int], *, max_record: int | None = None
) -> Parsed:
    """A micro-batch's events as one :class:`Parsed`: from the rows the intake stored (:mod:`._rows`) where an
    event has them, else from its body (:func:`parse_bodies`); never raises for bad input.

    The rows were checked one record at a time at intake, so what is left to check is what only the micro-batch
    sees: a tweet id that two of its events give differently (another author, time or original). The rows are
    checked with the readers' own :class:`SeenTweets` in arrival order, the first event's row being the reference,
    and an event with a conflicting row is a dead letter naming its field, the reference's event and the
    difference, e.g. ``field 'retweeted_status.id_str': conflicting duplicate: tweet 7 was read before (event
    1234) by user 5, not 6``. The bodies of the other events are then read with the same record of ids."""
    stored = [i for i, r in enumerate(rows) if r is not None]
    if not stored:
        return parse_bodies(bodies, max_record=max_record)
    seen = SeenTweets()
    bad: dict[int, str] = {}
    idx = np.asarray(stored, dtype=np.int64)
    table, fields = _rows.decode([rows[i] for i in stored])
    pks = np.asarray(event_ids, dtype=np.int64)
    table.lines = idx[table.lines]  # record index -> event index
    event_pk = pks[table.lines]
    src = seen.file("micro-batch")
    conflicts = seen.check(src, table.tweet_id, table.retweeted_tweet_id, table.user_id, table.created_at, event_pk)
    if conflicts:
        for row, reason in conflicts:
            ev = int(table.lines[row])
            if ev not in bad:
                reason = reason.replace(" was read before (line ", " was read before (event ", 1)
                bad[ev] = _record_error(fields[row], f"conflicting duplicate: {reason}")
        table = table.take(~np.isin(table.lines, list(bad)))
        seen.add(src, table.tweet_id, table.retweeted_tweet_id, table.user_id, table.created_at, pks[table.lines])
    if len(stored) == len(rows):
        return Parsed(table, FollowTable(np.zeros(0, np.int64), np.zeros(0, np.int64)), np.zeros(0, np.int64), bad)
    rest = [i for i, r in enumerate(rows) if r is None]
    other = parse_bodies([bodies[i] for i in rest], max_record=max_record, seen=seen)
    back = np.asarray(rest, dtype=np.int64)
    if other.tweets.lines is not None and len(other.tweets):
        other.tweets.lines = back[other.tweets.lines]
        table = concat_tweets([table, other.tweets])
        table = table.take(np.argsort(table.lines, kind="stable"))
    bad.update({int(back[i]): m for i, m in other.bad.items()})
    return Parsed(table, other.follows, back[other.follow_event], bad, {int(back[i]) for i in other.empty})


def parse_bodies(bodies: list[str], *, max_record: int | None = None, seen: SeenTweets | None = None) -> Parsed:
    """Read ``bodies`` (one JSON object each) with the readers of ``compute.formats``; never raises for bad input.
    ``seen``: the tweet ids read before in the same micro-batch (:func:`parse_events`)."""
    max_record = int(max_record or MAX_RECORD_BYTES)
    groups: dict[str, list[int]] = {"v1": [], "v2": [], "csv": [], "follow": []}
    objs: dict[int, dict] = {}
    bad: dict[int, str] = {}
    for i, body in enumerate(bodies):
        if len(body) > max_record:
            bad[i] = f"record longer than {max_record:,} bytes"
            continue
        try:
            obj = _loads(body)
        except _JSON_ERRORS as exc:
            bad[i] = f"invalid JSON: {exc}"
            continue
        kind = _kind(obj)
        if kind is None:
            bad[i] = "wrong type: expected a JSON object" if not isinstance(obj, dict) else _WHAT
            continue
        groups[kind].append(i)
        if kind in ("csv", "follow"):
            objs[i] = obj
    if seen is None:  # one per micro-batch, as one per upload: a tweet id must agree with itself
        seen = SeenTweets()
    report = ReadReport(max_shown=len(bodies) + 10)
    tables: list[TweetTable] = []
    with tempfile.TemporaryDirectory(prefix="spreadwatch-stream-") as tmp:
        for fmt in ("v1", "v2"):
            if groups[fmt]:
                tables += _read_json_lines(tmp, fmt, [bodies[i] for i in groups[fmt]], groups[fmt], report, seen, bad,
                                           max_record)  # fmt: skip
        if groups["csv"]:
            tables += _read_csv_fields(tmp, [objs[i] for i in groups["csv"]], groups["csv"], report, seen, bad,
                                       max_record)  # fmt: skip
    tweets = concat_tweets(tables)
    if tweets.lines is None:
        tweets.lines = np.zeros(0, np.int64)
    if len(tweets):
        tweets = tweets.take(np.argsort(tweets.lines, kind="stable"))
    follows, follow_event = _follows(groups["follow"], objs, bad)
    with_rows = set(unique(tweets.lines).tolist())
    empty = {i for fmt in ("v1", "v2") for i in groups[fmt] if i not in with_rows and i not in bad}
    return Parsed(tweets, follows, follow_event, bad, empty)


def _collect_bad(report: ReadReport, start: int, event_of_line, bad: dict[int, str]) -> None:
    """Turn the reader's bad records from ``report.shown[start:]`` into event errors (the first per event)."""
    for rec in report.shown[start:]:
        if rec.line is None:
            continue
        ev = event_of_line(rec.line)
        if ev is not None:
            bad.setdefault(ev, _record_error(rec.field, rec.reason))


def _read_json_lines(tmp, fmt, bodies, events, report, seen, bad, max_record) -> list[TweetTable]:
    """v1.1 or v2 bodies, one per line of a temporary JSONL file (line k is ``events[k - 1]``)."""
    path = os.path.join(tmp, f"stream.{fmt}.jsonl")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        # a raw line break inside a JSON object can only be whitespace between tokens: a blank keeps it one line
        f.write("".join(b.replace("\r", " ").replace("\n", " ") + "\n" for b in bodies))
    ev = np.asarray(events, dtype=np.int64)
    start = len(report.shown)
    out = []
    for chunk in iter_tweets(path, fmt, mode="skip-bad", report=report, seen=seen, max_record_bytes=max_record):
        chunk.lines = ev[chunk.lines - 1]
        out.append(chunk)
    _collect_bad(report, start, lambda line: events[line - 1] if 0 < line <= len(events) else None, bad)
    return out


def _cell(v, name: str) -> str:
    """A JSON value as the tweets CSV would hold it; raises ``Bad`` for values a CSV cell cannot be."""
    t = type(v)
    if v is None:
        return ""
    if t is str:
        return v
    if t is int:
        return str(v)
    if t is float:
        return repr(v)
    raise Bad(name, "wrong type", "expected a string or a number")


def _read_csv_fields(tmp, objs, events, report, seen, bad, max_record) -> list[TweetTable]:
    """The tweets CSV's fields as JSON objects: rows of a temporary tweets CSV, read by the CSV reader."""
    path = os.path.join(tmp, "stream.csv")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TWEET_COLUMNS)
    line = 2
    line_event: dict[int, int] = {}
    for obj, i in zip(objs, events):
        try:
            row = [_cell(obj.get(c), c) for c in TWEET_COLUMNS]
        except Bad as b:
            bad[i] = _record_error(b.field, f"{b.kind}: {b.detail}" if b.detail else b.kind)
            continue
        line_event[line] = i
        w.writerow(row)
        line += 1 + sum(c.count("\n") for c in row)
    if not line_event:
        return []
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(buf.getvalue())
    lines = np.zeros(line + 1, np.int64)
    for k, i in line_event.items():
        lines[k] = i
    start = len(report.shown)
    out = []
    for chunk in iter_tweets(path, "csv", mode="skip-bad", report=report, seen=seen, max_record_bytes=max_record):
        chunk.lines = lines[chunk.lines]
        out.append(chunk)
    _collect_bad(report, start, line_event.get, bad)
    return out


def _follows(events: list[int], objs: dict[int, dict], bad: dict[int, str]) -> tuple[FollowTable, np.ndarray]:
    """Follow records, their ids checked as the follows reader checks them."""
    a, b, ev = [], [], []
    for i in events:
        obj = objs[i]
        try:
            ids = []
            for name, alias in _FOLLOW_KEYS:
                key = name if name in obj else alias
                v = obj.get(key)
                if v is None:
                    raise Bad(name, "missing required field")
                ids.append(to_id(v, key))
        except Bad as e:
            bad[i] = _record_error(e.field, f"{e.kind}: {e.detail}" if e.detail else e.kind)
            continue
        a.append(ids[0])
        b.append(ids[1])
        ev.append(i)
    return FollowTable(np.array(a, np.int64), np.array(b, np.int64)), np.array(ev, np.int64)
