"""Tweets CSV: ``tweet_id,retweeted_tweet_id,user_id,created_at,followers_count[,screen_name,text,label]``
and the optional entity columns ``[hashtags,urls]``.

Columns are found by header name (case and surrounding blanks ignored), so their order is free and unknown
columns are ignored. ``tweet_id`` and ``user_id`` are required; a missing ``retweeted_tweet_id`` column means
all rows are originals, a missing or empty ``created_at`` falls back to the snowflake time of the id, an empty
``followers_count`` is unknown (NaN). ``label`` fills :attr:`ReadResult.labels` for the rows that have one.

``hashtags`` and ``urls`` (optional, each on its own) list a tweet's entities, separated by blanks, commas or
semicolons: ``"#Covid, vaccine;#covid"``, ``"https://a.example/x https://b.example/y"``. Hashtags may be written
with or without ``#``; they are read lowercased, without ``#``, distinct, in order, joined by one space
(``"covid vaccine"``), and URLs distinct, in order, joined by one space, a comma or semicolon inside a URL
staying part of it (:func:`._entities.tags_from_cell`, :func:`._entities.urls_from_cell`). An empty cell is
``""``, no entities; a file without the column has ``None`` for it, not known.

The csv module splits rows (quoted text may hold commas and newlines); each chunk's columns are then converted
at once, with a per-value pass only to name the bad values.

Bounds (:mod:`.limits`): a line or a field longer than the record limit is a bad record found without holding it
whole. A quote that is never closed would swallow the rest of the file into one field; it is caught when the
quoted field reaches the end of the file, grows past the record limit, spans more than ``MAX_RECORD_LINES``
lines, or holds a line that reads as a row of its own (ids where the ids go), and reported on the line where the
row (and so the quote) began. Skip-bad mode then reads on from the next line, so the rows the quote swallowed
are not lost.
"""

from __future__ import annotations

import csv
import io
import math
import operator
import re
from collections import deque
from collections.abc import Iterator
from itertools import chain

import numpy as np

from ..tables import NO_TWEET
from ._entities import tags_from_cell, urls_from_cell
from ._fields import Bad, Ctx, to_count, to_id
from ._io import BLOCK_SIZE, BOM, open_binary
from ._report import LongLines, Sink
from ._tweets import TweetBuilder
from .limits import FOLLOWERS_MAX, MAX_RECORD_LINES

__all__ = ["read_csv_tweets", "sniff_line", "TWEET_COLUMNS", "ENTITY_COLUMNS", "header_columns"]

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
#: The optional entity columns. Not in :data:`TWEET_COLUMNS`, which code that writes this format uses as the
#: header it writes: a column it writes empty would read as "no entities" where it means "not known".
ENTITY_COLUMNS = ("hashtags", "urls")
_COLUMNS = TWEET_COLUMNS + ENTITY_COLUMNS
_REQUIRED = ("tweet_id", "user_id")

_UNDECODABLE = "undecodable bytes (not UTF-8)"
_QUOTES_AND_NEWLINES = re.compile(r'""|"|\n')


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
        # NaN (empty or "nan"), negative, infinite, absurdly large
        check = np.flatnonzero(~((arr >= 0) & (arr <= FOLLOWERS_MAX)))
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

    def __init__(self, sink: Sink, cols: dict[str, int], seen=None) -> None:
        super().__init__(
            sink,
            text="screen_name" in cols or "text" in cols,
            entities="hashtags" in cols or "urls" in cols,
            seen=seen,
            id_field="tweet_id",
        )
        self.names = [c for c in _COLUMNS if c in cols]
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
        for name, parse in (("hashtags", tags_from_cell), ("urls", urls_from_cell)):
            if name in got:
                a = np.empty(n, dtype=object)
                a[:] = list(map(parse, got[name]))
                cols[name] = a
        return cols, bad


class _CsvText:
    """The file as blocks of decoded text (whole lines each), to be chained into ``csv.reader``.

    A block is decoded in one call; only a block that is not valid UTF-8 is redone line by line, to note which
    lines hold the bad bytes (they are decoded with replacement characters and reported by the reader). A line
    longer than ``limit`` bytes is never held whole: ``too_long(line)`` reports it as soon as it passes the limit
    (strict mode stops there), and it is replaced by an empty line, so the csv module's line count stays right.
    The bytes of the last blocks (at least ``2 * limit``) are kept so the reader can read again from the line
    after an unclosed quote (:meth:`text_from`).
    """

    def __init__(self, stream, raw, progress, limit: int, too_long) -> None:
        self.stream, self.raw, self.progress, self.limit = stream, raw, progress, limit
        self.too_long = too_long
        # line -> what is wrong with it, for the reader to report (None: reported already; drop its row)
        self.flagged: dict[int, str | None] = {}
        self.recent: deque[tuple[int, bytes]] = deque()  # (first line, bytes) of the last blocks
        self.recent_bytes = 0
        self.blocks = self._blocks()

    def _blocks(self) -> Iterator[io.StringIO]:
        limit = self.limit
        size = max(1, min(BLOCK_SIZE, limit))  # a line inside one read is then never too long
        line = 0  # lines in the blocks yielded so far
        carry = b""
        skipping = False  # inside an over-long line, looking for its end
        first = True
        while True:
            chunk = self.stream.read(size)
            if first and chunk.startswith(BOM):
                chunk = chunk[len(BOM) :]
            first = False
            if skipping:
                if chunk:
                    nl = chunk.find(b"\n")
                    if nl < 0:
                        continue
                    chunk = chunk[nl:]  # the long line becomes an empty one
                else:
                    chunk = b"\n"
                skipping = False
            if chunk:
                data = carry + chunk if carry else chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    if len(data) > limit:
                        self.flagged[line + 1] = None
                        self.too_long(line + 1)
                        carry, skipping = b"", True
                    else:
                        carry = data
                    continue
                if carry:
                    nl = len(carry) + chunk.find(b"\n")
                    if nl > limit:
                        self.flagged[line + 1] = None
                        self.too_long(line + 1)
                        data, cut = data[nl:], cut - nl
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
                        self.flagged.setdefault(line + k + 1, _UNDECODABLE)
                        parts[k] = part.decode("utf-8", "replace")
                text = "\n".join(parts)
            self._remember(line + 1, block)
            line += block.count(b"\n")
            yield io.StringIO(text, newline="\n")
            if self.progress is not None:
                self.progress.at(self.raw.tell())

    def _remember(self, first_line: int, block: bytes) -> None:
        self.recent.append((first_line, block))
        self.recent_bytes += len(block)
        while len(self.recent) > 1 and self.recent_bytes - len(self.recent[0][1]) >= 2 * self.limit:
            self.recent_bytes -= len(self.recent.popleft()[1])

    def text_from(self, line: int) -> str | None:
        """The text read so far from the start of ``line`` on (``None`` if it is no longer kept)."""
        if not self.recent or self.recent[0][0] > line:
            return None
        blocks = list(self.recent)
        k = max(i for i, (first, _) in enumerate(blocks) if first <= line)
        first, data = blocks[k]
        pos = 0
        for _ in range(line - first):
            pos = data.find(b"\n", pos) + 1
            if pos == 0:
                return ""
        rest = data[pos:] + b"".join(b for _, b in blocks[k + 1 :])
        return rest.decode("utf-8", "replace")

    def line(self, line: int) -> str | None:
        text = self.text_from(line)
        return None if text is None else text.split("\n", 1)[0]

    def skip_row(self, line: int) -> tuple[int, str] | None:
        """Pass over the row that begins on ``line`` and whose quoted field outgrew the limit: follow the quotes
        (``""`` is an escaped one) through the text read so far and then further blocks, one at a time, to the
        end of the line where the row ends. Returns (that line's number, the text after it), or ``None`` when
        the quote is never closed (or the row is no longer kept)."""
        text = self.text_from(line)
        if text is None:
            return None
        in_quote = False
        ln = line
        for piece in chain([text], (b.read() for b in self.blocks)):
            for m in _QUOTES_AND_NEWLINES.finditer(piece):
                tok = m.group()
                if tok == "\n":
                    if not in_quote:
                        return ln, piece[m.end() :]
                    ln += 1
                elif tok == '"':
                    in_quote = not in_quote
        return None


def _looks_like_a_row(line: str | None, width: int, id_cols: tuple[int, ...]) -> bool:
    """Whether one line, on its own, reads as a complete row: ``width`` fields with integer ids where the ids
    go. A quoted field whose continuation line looks like that has swallowed rows: its quote was never closed."""
    if not line:
        return False
    try:
        fields = next(csv.reader([line]), [])
    except csv.Error:
        return False
    return len(fields) == width and all(fields[c].strip().isdigit() for c in id_cols)


def _swallowed(row: list[str], width: int, id_cols: tuple[int, ...]) -> bool:
    """A multi-line row whose quoted field holds, after its first newline, a line that reads as a row."""
    for f in row:
        i = f.find("\n")
        if i >= 0:
            return _looks_like_a_row(f[i + 1 :].split("\n", 1)[0], width, id_cols)
    return False


def read_csv_tweets(path: str, ctx: Ctx) -> Iterator[tuple[str, object]]:
    sink = ctx.sink
    limit = ctx.max_record
    stream, raw = open_binary(path)
    old_limit = csv.field_size_limit()
    try:
        # the csv module counts a field's characters; no field may outgrow the record limit
        csv.field_size_limit(max(limit, 1))
        text = _CsvText(stream, raw, ctx.progress, limit, LongLines(sink, limit))
        flagged = text.flagged
        reader = csv.reader(chain.from_iterable(text.blocks), strict=True)
        base = 0  # line number of the line before the reader's first (after reading again from a line)
        header = None
        while header is None:
            try:
                row = next(reader)
            except StopIteration:
                sink.bad_file("empty file")
                return
            except csv.Error as exc:
                sink.bad_file("malformed CSV header", str(exc), line=reader.line_num)
                return
            if flagged and reader.line_num in flagged:
                if flagged[reader.line_num] is not None:
                    sink.bad_file(flagged[reader.line_num], line=reader.line_num)
                else:  # an over-long header, reported already: the file has no header to go by
                    sink.report.skipped_files.append(sink.path)
                return
            if row and any(c.strip() for c in row):
                header = row
        names = [h.strip().lower() for h in header]
        cols: dict[str, int] = {}
        for i, h in enumerate(names):
            cols.setdefault(h, i)
        missing = [c for c in _REQUIRED if c not in cols]
        if missing:
            sink.bad_file(
                "missing required column", f"header is {','.join(header)!r}", line=reader.line_num, field=missing[0]
            )
            return
        builder = _CsvBuilder(sink, {c: cols[c] for c in _COLUMNS if c in cols}, seen=ctx.seen)
        sink.before_raise = builder.flush
        width = len(header)
        id_cols = (cols["tweet_id"], cols["user_id"])
        getter = builder.getter
        chunk = ctx.chunk_size
        last = reader.line_num
        done = False

        def read_on(again: str, line: int) -> None:
            """Go on reading with a fresh csv reader from ``again``, the text from the line after ``line``."""
            nonlocal reader, base, last
            reader = csv.reader(chain(io.StringIO(again, newline="\n"), chain.from_iterable(text.blocks)), strict=True)
            base = last = line

        def unclosed(start: int, end: int, how: str) -> None:
            """Report the row from ``start`` as an unclosed quote and read on from the line after it."""
            nonlocal reader, base, last
            sink.bad(start, None, "unclosed quote", f"the quoted field begun on this line {how}")
            again = text.text_from(start + 1)
            if again is None:  # no longer kept (a row of many huge lines): go on after it
                last = end
                return
            read_on(again, start)

        while not done:
            rows, lines = builder.rows, builder.row_lines
            add_row, add_line = rows.append, lines.append
            try:
                for row in reader:
                    start, last = last + 1, base + reader.line_num
                    if last > start and (last - start >= MAX_RECORD_LINES or _swallowed(row, width, id_cols)):
                        unclosed(start, last, f"runs to line {last}" if last - start < MAX_RECORD_LINES else
                                 f"spans {last - start + 1:,} lines (at most {MAX_RECORD_LINES:,})")  # fmt: skip
                        break
                    if flagged:
                        bad_line = next((n for n in range(start, last + 1) if n in flagged), None)
                        if bad_line is not None:
                            if flagged[bad_line] is not None:
                                sink.bad(start, None, flagged[bad_line])
                            continue
                    if len(row) != width:
                        if not row or (len(row) == 1 and not row[0].strip()):
                            continue  # a blank line
                        sink.bad(start, None, "wrong number of fields", f"expected {width}, got {len(row)}")
                        continue
                    add_row(getter(row))
                    add_line(start)
                    if len(rows) >= chunk:
                        break
                else:
                    done = True
            except csv.Error as exc:
                start, end = last + 1, base + reader.line_num
                msg = str(exc)
                if msg.startswith("unexpected end of data"):
                    unclosed(start, end, "runs to the end of the file")
                elif msg.startswith("field larger than field limit"):
                    if _looks_like_a_row(text.line(start + 1), width, id_cols):
                        unclosed(start, end, f"grows past {limit:,} bytes, holding rows")
                    else:  # a quoted field that is just too long: skip its row
                        sink.bad(start, None, f"record longer than {limit:,} bytes", "a quoted field outgrows it")
                        got = text.skip_row(start)
                        if got is None:
                            reader, done = iter(()), True
                        else:
                            read_on(got[1], got[0])
                elif end > start and _looks_like_a_row(text.line(start + 1), width, id_cols):
                    unclosed(start, end, f"runs to line {end}")
                else:
                    sink.bad(end, None, "malformed CSV", msg)
                    last = end
            if len(rows) >= chunk or done:
                yield from _emit(builder, ctx)
        sink.before_raise = None
    finally:
        csv.field_size_limit(old_limit)
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


def header_columns(line: bytes) -> list[str]:
    """The column names a first line would give as a CSV header (lower case, blanks and quotes stripped)."""
    return [c.strip().strip('"').lower() for c in line.decode("utf-8", "replace").split(",")]


def sniff_line(line: bytes) -> bool:
    """Detection (:mod:`.detect`): a first line that is a header naming ``tweet_id`` and ``user_id``."""
    cols = header_columns(line)
    return "tweet_id" in cols and "user_id" in cols
