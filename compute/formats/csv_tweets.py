"""Tweets CSV: ``tweet_id,retweeted_tweet_id,user_id,created_at,followers_count[,screen_name,text,label]``.

Columns are found by header name (case and surrounding blanks ignored), so their order is free and unknown
columns are ignored. ``tweet_id`` and ``user_id`` are required; a missing ``retweeted_tweet_id`` column means
all rows are originals, a missing or empty ``created_at`` falls back to the snowflake time of the id, an empty
``followers_count`` is unknown (NaN). ``label`` fills :attr:`ReadResult.labels` for the rows that have one.

The csv module splits rows (quoted text may hold commas and newlines); each chunk's columns are then converted
at once, with a per-value pass only to name the bad values.
"""

from __future__ import annotations

import csv
import io
import math
import operator
from collections.abc import Iterator
from itertools import chain

import numpy as np

from ..tables import NO_TWEET
from ._fields import Bad, Ctx, to_count, to_id
from ._io import BLOCK_SIZE, BOM, open_binary
from ._report import Sink
from ._tweets import TweetBuilder

__all__ = ["read_csv_tweets", "TWEET_COLUMNS"]

TWEET_COLUMNS = (
    "tweet_id",
    "retweeted_tweet_id",
    "user_id",
    "created_at",
    "followers_count",
    "screen_name",
    "text",
    "label",
)
_REQUIRED = ("tweet_id", "user_id")

csv.field_size_limit(1 << 26)  # tweet text is short, but a default of 128 KiB fails on odd exports


def _ints(strs: list[str], field: str, *, optional: bool, bad: list) -> np.ndarray:
    """int64 column from strings; empty -> NO_TWEET when ``optional``; bad values go to ``bad``."""
    try:
        arr = np.array([int(s) if s else NO_TWEET for s in strs] if optional else list(map(int, strs)), np.int64)
        check = np.flatnonzero((arr < 0) & (arr != NO_TWEET)) if optional else np.flatnonzero(arr < 0)
    except (ValueError, OverflowError):
        arr = np.zeros(len(strs), dtype=np.int64)
        check = range(len(strs))
    for i in check:
        s = strs[i].strip()
        if optional and not s:
            arr[i] = NO_TWEET
            continue
        try:
            if not s:
                raise Bad(field, "missing required field")
            arr[i] = to_id(s, field)
        except Bad as b:
            bad.append((int(i), field, b.kind, b.detail))
    return arr


def _counts(strs: list[str], field: str, bad: list) -> np.ndarray:
    """float64 follower counts from strings; empty -> NaN (unknown); bad values go to ``bad``."""
    try:
        arr = np.array([float(s) if s else math.nan for s in strs], dtype=np.float64)
        check = np.flatnonzero(~(arr >= 0) | np.isinf(arr))  # NaN (empty or "nan"), negative, infinite
    except ValueError:
        arr = np.full(len(strs), math.nan)
        check = range(len(strs))
    for i in check:
        try:
            arr[i] = to_count(strs[i], field)
        except Bad as b:
            bad.append((int(i), field, b.kind, b.detail))
    return arr


class _CsvBuilder(TweetBuilder):
    """Rows are the wanted fields of each CSV row (strings) plus its line; converted a chunk at a time."""

    def __init__(self, sink: Sink, cols: dict[str, int]) -> None:
        super().__init__(sink, text="screen_name" in cols or "text" in cols)
        self.names = [c for c in TWEET_COLUMNS if c in cols]
        self.getter = operator.itemgetter(*[cols[c] for c in self.names])
        self.row_lines: list[int] = []

    def columns(self):
        rows, lines = self.rows, self.row_lines
        self.rows, self.row_lines = [], []
        n = len(rows)
        got = {name: list(map(operator.itemgetter(i), rows)) for i, name in enumerate(self.names)}
        bad: list = []
        line = np.array(lines, dtype=np.int64)
        cols = {
            "rec": line,
            "line": line,
            "tweet_id": _ints(got["tweet_id"], "tweet_id", optional=False, bad=bad),
            "user_id": _ints(got["user_id"], "user_id", optional=False, bad=bad),
            "retweeted_tweet_id": (
                _ints(got["retweeted_tweet_id"], "retweeted_tweet_id", optional=True, bad=bad)
                if "retweeted_tweet_id" in got
                else np.full(n, NO_TWEET, dtype=np.int64)
            ),
            "followers_count": (
                _counts(got["followers_count"], "followers_count", bad)
                if "followers_count" in got
                else np.full(n, np.nan)
            ),
            "traw": got.get("created_at", [None] * n),
            "tfield": "created_at",
        }
        for name, empty_is_none in (("screen_name", True), ("text", False), ("label", True)):
            if name in got:
                a = np.empty(n, dtype=object)
                a[:] = [(s.strip() or None) for s in got[name]] if empty_is_none else got[name]
                cols[name] = a
            elif name != "label" and self.with_text:
                cols[name] = np.full(n, None, dtype=object)
        return cols, bad


def _text_blocks(stream, raw, progress, undecodable: set[int]) -> Iterator[io.StringIO]:
    """The file as blocks of decoded text (whole lines each), to be chained into ``csv.reader``.

    A block is decoded in one call; only a block that is not valid UTF-8 is redone line by line, to note which
    lines hold the bad bytes (they are decoded with replacement characters and reported by the reader).
    """
    line = 0
    carry = b""
    first = True
    while True:
        chunk = stream.read(BLOCK_SIZE)
        if first and chunk.startswith(BOM):
            chunk = chunk[len(BOM) :]
        first = False
        if chunk:
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n")
            if cut < 0:
                carry = data
                continue
            block, carry = data[: cut + 1], data[cut + 1 :]
        elif carry:
            block, carry = carry, b""
        else:
            return
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            parts = block.split(b"\n")
            for k, part in enumerate(parts):
                try:
                    parts[k] = part.decode("utf-8")
                except UnicodeDecodeError:
                    undecodable.add(line + k + 1)
                    parts[k] = part.decode("utf-8", "replace")
            text = "\n".join(parts)
        line += block.count(b"\n")
        yield io.StringIO(text, newline="\n")
        if progress is not None:
            progress.at(raw.tell())


def read_csv_tweets(path: str, ctx: Ctx) -> Iterator[tuple[str, object]]:
    sink = ctx.sink
    stream, raw = open_binary(path)
    try:
        undecodable: set[int] = set()
        reader = csv.reader(chain.from_iterable(_text_blocks(stream, raw, ctx.progress, undecodable)))
        header = None
        while header is None:
            try:
                row = next(reader)
            except StopIteration:
                sink.bad(None, None, "empty file")
                return
            except csv.Error as exc:
                sink.bad(reader.line_num, None, "malformed CSV", str(exc))
                return
            if row and any(c.strip() for c in row):
                header = row
        names = [h.strip().lower() for h in header]
        cols: dict[str, int] = {}
        for i, h in enumerate(names):
            cols.setdefault(h, i)
        missing = [c for c in _REQUIRED if c not in cols]
        if missing:
            sink.bad(reader.line_num, missing[0], "missing required column", f"header is {','.join(header)!r}")
            return
        builder = _CsvBuilder(sink, {c: cols[c] for c in TWEET_COLUMNS if c in cols})
        sink.before_raise = builder.flush
        width = len(header)
        getter = builder.getter
        chunk = ctx.chunk_size
        last = reader.line_num
        done = False
        while not done:
            rows, lines = builder.rows, builder.row_lines
            add_row, add_line = rows.append, lines.append
            try:
                for row in reader:
                    start, last = last + 1, reader.line_num
                    if len(row) != width:
                        if not row or (len(row) == 1 and not row[0].strip()):
                            continue  # a blank line
                        sink.bad(start, None, "wrong number of fields", f"expected {width}, got {len(row)}")
                        continue
                    if undecodable and any(n in undecodable for n in range(start, last + 1)):
                        sink.bad(start, None, "undecodable bytes (not UTF-8)")
                        continue
                    add_row(getter(row))
                    add_line(start)
                    if len(rows) >= chunk:
                        break
                else:
                    done = True
            except csv.Error as exc:
                sink.bad(reader.line_num, None, "malformed CSV", str(exc))
                last = reader.line_num
            if len(rows) >= chunk or done:
                yield from _emit(builder, ctx)
        sink.before_raise = None
    finally:
        stream.close()
        raw.close()


def _emit(builder: _CsvBuilder, ctx: Ctx) -> Iterator[tuple[str, object]]:
    table = builder.flush()
    if table is None:
        return
    if table.label is not None:
        has = np.flatnonzero(np.array([x is not None for x in table.label], dtype=bool))
        for i in has.tolist():
            ctx.labels[int(table.tweet_id[i])] = table.label[i]
    yield "tweets", table
