"""Follow edges: a CSV with a ``follower_id,followee_id`` header (columns by name, others ignored) or a headerless
edge list, ``follower followee`` per line, separated by blanks (or a comma), ``#`` comment lines allowed.

Edge lists reach hundreds of millions of lines, so blocks of plain digit lines are parsed with array operations
(:func:`parse_int_block`); a block holding anything else (comments, signs, stray text) is re-read line by line
so each bad line is named.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ..tables import FollowTable
from ._fields import Bad, Ctx, to_id
from ._io import LineBlocks, parse_int_block
from ._report import LongLines
from .csv_tweets import header_columns

__all__ = ["read_follows", "sniff_line", "FOLLOW_COLUMNS"]

FOLLOW_COLUMNS = ("follower_id", "followee_id")


def _split(line: str) -> list[str]:
    parts = line.split(",") if "," in line else line.split()
    return [p.strip().strip('"').strip() for p in parts]


def _id(s: str, field: str) -> int:
    if not s:
        raise Bad(field, "missing required field")
    return to_id(s, field)


class _Edges:
    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx
        self.parts: list[np.ndarray] = []
        self.n = 0

    def add(self, pairs: np.ndarray) -> Iterator[tuple[str, object]]:
        if len(pairs):
            self.parts.append(pairs)
            self.n += len(pairs)
            self.ctx.sink.report.n_good += len(pairs)
        if self.n >= self.ctx.follow_chunk:
            yield from self.flush()

    def flush(self) -> Iterator[tuple[str, object]]:
        if self.parts:
            pairs = np.concatenate(self.parts) if len(self.parts) > 1 else self.parts[0]
            self.parts, self.n = [], 0
            yield "follows", FollowTable(pairs[:, 0], pairs[:, 1])


def read_follows(path: str, ctx: Ctx) -> Iterator[tuple[str, object]]:
    sink = ctx.sink
    longs = LongLines(sink, ctx.max_record)
    blocks = LineBlocks(path, ctx.progress, max_line=ctx.max_record, too_long=longs)
    edges = _Edges(ctx)
    header_seen = False
    width = 2
    pick = (0, 1)  # column of follower, followee
    names = FOLLOW_COLUMNS
    for block, first in blocks:
        if not header_seen:
            # find the first line that is neither blank nor a comment: a header if it holds letters
            pos, line = 0, first
            while pos < len(block):
                end = block.find(b"\n", pos)
                end = len(block) if end < 0 else end + 1
                text = block[pos:end].strip()
                if text and not text.startswith(b"#"):
                    break
                pos, line = end, line + 1
            if pos >= len(block):
                continue
            head = block[pos:end].decode("utf-8", "replace").strip()
            header_seen = True
            if any(ch.isalpha() for ch in head):
                cols = [c.lower() for c in _split(head)]
                missing = [c for c in FOLLOW_COLUMNS if c not in cols]
                if missing:
                    sink.bad_file("missing required column", f"header is {head!r}", line=line, field=missing[0])
                    return
                width = len(cols)
                pick = (cols.index("follower_id"), cols.index("followee_id"))
                block, first = block[end:], line + 1
            else:
                block, first = block[pos:], line  # leading comments would send the block to the slow path
        pairs = parse_int_block(block, 2) if width == 2 else None
        if pairs is not None:
            if pick != (0, 1):
                pairs = pairs[:, list(pick)]
            yield from edges.add(pairs)
            continue
        # careful path: one line at a time, so every bad line is reported with its number
        good: list[tuple[int, int]] = []
        for k, raw in enumerate(block.split(b"\n")):
            lineno = first + k
            try:
                s = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                sink.bad(lineno, None, "undecodable bytes (not UTF-8)", f"byte {exc.start}")
                continue
            s = s.strip()
            if not s or s.startswith("#"):
                continue
            parts = _split(s)
            if len(parts) != width:
                sink.bad(lineno, None, "wrong number of fields", f"expected {width}, got {len(parts)}: {s[:60]!r}")
                continue
            try:
                good.append((_id(parts[pick[0]], names[0]), _id(parts[pick[1]], names[1])))
            except Bad as b:
                sink.bad(lineno, b.field, b.kind, b.detail)
        yield from edges.add(np.array(good, dtype=np.int64).reshape(-1, 2))
    if not header_seen and not longs.n:  # nothing but blanks and comments
        sink.bad_file("empty file")
    yield from edges.flush()


_TWO_INTS = re.compile(rb"^\s*\d+\s*[,\s]\s*\d+\s*$")


def sniff_line(line: bytes) -> bool:
    """Detection (:mod:`.detect`): a ``#`` comment, two integers, or a header naming both follow columns."""
    if line.startswith(b"#") or _TWO_INTS.match(line):
        return True
    cols = header_columns(line)
    return all(c in cols for c in FOLLOW_COLUMNS)
