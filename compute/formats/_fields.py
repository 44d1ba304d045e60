"""Checks for single field values (ids, counts) and the reader context every format reader receives."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ._io import Progress
from ._report import Sink
from .limits import FOLLOWERS_MAX, MAX_RECORD_BYTES

__all__ = ["Bad", "to_id", "to_count", "Ctx"]

_ID_MAX = (1 << 63) - 1


class Bad(Exception):
    """A bad field value found while reading one record; the reader turns it into a ``BadRecord``."""

    def __init__(self, field: str | None, kind: str, detail: str | None = None) -> None:
        super().__init__(kind)
        self.field = field
        self.kind = kind
        self.detail = detail


def _show(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def to_id(v: Any, field: str) -> int:
    """A non-negative int64 id from a JSON int or a decimal string."""
    t = type(v)
    if t is str:
        if v.isascii() and v.isdigit():
            # int() refuses strings of over 4,300 digits with a ValueError of its own: no id is that long
            n = int(v) if len(v) <= 19 or len(v.lstrip("0")) <= 19 else _ID_MAX + 1
            if n <= _ID_MAX:
                return n
            raise Bad(field, "id out of range", _show(v))
        s = v.strip()
        if s.isascii() and s.isdigit():
            return to_id(s, field)
        if s.startswith("-") and s[1:].isascii() and s[1:].isdigit():
            raise Bad(field, "negative id", _show(v))
        raise Bad(field, "not an integer id", _show(v))
    if t is int:
        if 0 <= v <= _ID_MAX:
            return v
        raise Bad(field, "negative id" if v < 0 else "id out of range", _show(v))
    if v is None:
        raise Bad(field, "missing required field")
    if t is float and v.is_integer() and 0 <= v < 2**53:
        return int(v)  # ids written as 1.0 by spreadsheets are still exact below 2**53
    raise Bad(field, "not an integer id", _show(v))


def to_count(v: Any, field: str) -> float:
    """A follower count: a finite number from 0 to :data:`~.limits.FOLLOWERS_MAX` (or such a numeric string);
    ``None`` -> NaN (unknown)."""
    t = type(v)
    if t is int and v > FOLLOWERS_MAX:  # before float(), which cannot hold an int of over 308 digits
        raise Bad(field, "count out of range", f"{_show(v)} is more than {FOLLOWERS_MAX:,.0f}")
    if t is int or t is float:
        x = float(v)
    elif v is None:
        return math.nan
    elif t is str:
        s = v.strip()
        if not s:
            return math.nan
        try:
            x = float(s)
        except ValueError:
            raise Bad(field, "not a number", _show(v)) from None
    else:
        raise Bad(field, "not a number", _show(v))
    if not math.isfinite(x):
        raise Bad(field, "not a finite number", _show(v))
    if x < 0:
        raise Bad(field, "negative count", _show(v))
    if x > FOLLOWERS_MAX:
        raise Bad(field, "count out of range", f"{_show(v)} is more than {FOLLOWERS_MAX:,.0f}")
    return x


@dataclass
class Ctx:
    """What a format reader needs: where to report, how big to make chunks, what the caller wants."""

    path: str
    sink: Sink
    progress: Progress
    chunk_size: int = 200_000
    follow_chunk: int = 1_000_000
    want_tweets: bool = True
    want_follows: bool = True
    follows_from_graph: bool = False  # iter_follows over a collection archive: its graph as edge chunks
    labels: dict[int, str] = field(default_factory=dict)
    max_record: int = MAX_RECORD_BYTES  # longest record (line, CSV field) kept; longer ones are bad records
    seen: Any = None  # a ``SeenTweets`` shared by the files of one read, for conflicting duplicate tweet ids
