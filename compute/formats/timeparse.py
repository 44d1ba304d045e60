"""Tweet times to float64 epoch seconds (UTC), vectorised for the forms real files use.

Accepted (docs/formats.md, Times):

* Twitter's string form ``Wed Oct 10 20:19:24 +0000 2018`` (API v1.1);
* ISO 8601: ``2018-10-10T20:19:24Z``, a space instead of ``T``, fractional seconds of any length, offsets
  ``+hh:mm`` / ``+hhmm`` / ``+hh``; a naive time is UTC; a bare date is midnight UTC;
* epoch seconds or milliseconds, as numbers or numeric strings: a magnitude above :data:`MS_THRESHOLD`
  (1e11, which is the year 5138 in seconds but 1973 in milliseconds) is milliseconds;
* nothing at all: the caller falls back to :func:`snowflake_time` of the tweet id when the id is a snowflake,
  i.e. at least :data:`SNOWFLAKE_MIN_ID`.

:func:`parse_times` handles a whole column at once: the two fixed-width string forms are decoded from the
characters' codes, one byte each where the column is ASCII (a join and an encode, in C); Twitter's form in one
compiled pass for a column of 100,000 values or more where numba is installed (2M values in 0.1 s), else and for
ISO 8601 with array arithmetic (0.4-0.6 µs per value, against 1.5 µs for ``datetime``). Everything else goes
through :func:`parse_time`, which is also the reference the vectorised paths are tested against.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from .._jit import HAVE_NUMBA, njit
from ..arrays import unique

__all__ = [
    "parse_times",
    "parse_time",
    "snowflake_time",
    "is_snowflake",
    "SNOWFLAKE_EPOCH_MS",
    "SNOWFLAKE_MIN_ID",
    "MS_THRESHOLD",
]

#: Twitter's snowflake epoch (2010-11-04T01:42:54.657Z) in ms since the Unix epoch.
SNOWFLAKE_EPOCH_MS = 1288834974657
#: Ids at or above 2**40 are treated as snowflakes. Pre-snowflake tweet ids stopped near 3e10 (< 2**35), and the
#: first real snowflakes (Nov 2010) were far above 2**40, whose own time would be 4 minutes after the snowflake
#: epoch; anything smaller is a sequential id (or a synthetic one) that carries no time.
SNOWFLAKE_MIN_ID = 1 << 40
#: Epoch numbers above this magnitude are milliseconds.
MS_THRESHOLD = 1e11

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH_NUM = {m: i + 1 for i, m in enumerate(_MONTHS)}
_MONTH_CODES = np.array(sorted((ord(m[0]) << 16) | (ord(m[1]) << 8) | ord(m[2]) for m in _MONTHS), dtype=np.int64)
_MONTH_OF_CODE = np.array(
    [_MONTH_NUM[m] for m in sorted(_MONTHS, key=lambda m: (ord(m[0]) << 16) | (ord(m[1]) << 8) | ord(m[2]))],
    dtype=np.int64,
)
_DAYS_IN_MONTH = np.array([0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)

_TWITTER_RE = re.compile(
    r"^[A-Za-z]{3} (?P<mon>[A-Za-z]{3}) (?P<d>\d\d) (?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d) "
    r"(?P<sign>[+-])(?P<oh>\d\d)(?P<om>\d\d) (?P<y>\d{4})$"
)
_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def snowflake_time(ids) -> np.ndarray | float:
    """Creation time (epoch seconds, float64) encoded in Twitter snowflake id(s)."""
    a = np.asarray(ids, dtype=np.int64)
    out = ((a >> 22) + SNOWFLAKE_EPOCH_MS) / 1000.0
    return float(out) if out.ndim == 0 else out


def is_snowflake(ids) -> np.ndarray | bool:
    """Whether id(s) are large enough to carry a snowflake time (see :data:`SNOWFLAKE_MIN_ID`)."""
    a = np.asarray(ids, dtype=np.int64)
    out = a >= SNOWFLAKE_MIN_ID
    return bool(out) if out.ndim == 0 else out


def _epoch(x: float) -> float:
    if not math.isfinite(x):
        raise ValueError(f"not a finite number: {x!r}")
    return x / 1000.0 if abs(x) > MS_THRESHOLD else float(x)


def parse_time(value: object) -> float | None:
    """One time value to epoch seconds; ``None`` for a missing value (``None`` or blank string).

    Raises ``ValueError`` with a short reason for anything else it cannot read.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        return _epoch(float(value))
    if not isinstance(value, str):
        raise ValueError(f"not a time: {value!r}")
    s = value.strip()
    if not s:
        return None
    if _NUMBER_RE.match(s):
        return _epoch(float(s))
    m = _TWITTER_RE.match(s)
    if m:
        mon = _MONTH_NUM.get(m["mon"].capitalize())
        if mon is None:
            raise ValueError(f"unknown month in time: {s!r}")
        try:
            dt = datetime(int(m["y"]), mon, int(m["d"]), int(m["H"]), int(m["M"]), int(m["S"]), tzinfo=UTC)
        except ValueError as exc:
            raise ValueError(f"impossible time {s!r}: {exc}") from None
        offset = (int(m["oh"]) * 60 + int(m["om"])) * 60
        return dt.timestamp() - (offset if m["sign"] == "+" else -offset)
    if s[-1:] == "z" or s[10:11] == "t":  # ISO 8601 allows lower case; fromisoformat does not
        s = s[:10] + s[10:11].upper() + s[11:-1] + s[-1].upper() if len(s) > 10 else s.upper()
    try:
        dt = datetime.fromisoformat(s)
    except ValueError:
        raise ValueError(f"unparseable time: {s!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _days_from_civil(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's algorithm), vectorised."""
    y = y - (m <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _num(c: np.ndarray, cols: Sequence[int]) -> np.ndarray:
    """The decimal number spelled by character columns ``cols`` of the code-point matrix ``c``."""
    out = np.zeros(len(c), dtype=np.int64)
    for j in cols:
        out = out * 10 + (c[:, j].astype(np.int64) - 48)
    return out


def _digits_ok(c: np.ndarray, cols: Sequence[int]) -> np.ndarray:
    sub = c[:, list(cols)]
    return np.all((sub >= 48) & (sub <= 57), axis=1)


def _valid_date(y, mo, d, h, mi, s) -> np.ndarray:
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    dim = _DAYS_IN_MONTH[np.clip(mo, 0, 12)] - ((mo == 2) & ~leap)
    return (mo >= 1) & (mo <= 12) & (d >= 1) & (d <= dim) & (h <= 23) & (mi <= 59) & (s <= 59)


def _twitter_block(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse rows of a (n, 30) code-point matrix in Twitter's form; returns (seconds, ok)."""
    ok = np.all(c[:, [3, 7, 10, 19, 25]] == 32, axis=1)
    day = c[:, :3] | 32  # the weekday's letters, lower-cased (the scalar parser wants letters, not a given day)
    ok &= np.all((day >= 97) & (day <= 122), axis=1)
    ok &= (c[:, 13] == 58) & (c[:, 16] == 58) & ((c[:, 20] == 43) | (c[:, 20] == 45))
    ok &= _digits_ok(c, (8, 9, 11, 12, 14, 15, 17, 18, 21, 22, 23, 24, 26, 27, 28, 29))
    c456 = np.minimum(c[:, 4:7], 255).astype(np.int64)  # code points: anything past Latin-1 is no month anyway
    code = (c456[:, 0] << 16) | (c456[:, 1] << 8) | c456[:, 2]
    pos = np.minimum(np.searchsorted(_MONTH_CODES, code), 11)
    ok &= _MONTH_CODES[pos] == code
    mo = _MONTH_OF_CODE[pos]
    d, h, mi, s = _num(c, (8, 9)), _num(c, (11, 12)), _num(c, (14, 15)), _num(c, (17, 18))
    y = _num(c, (26, 27, 28, 29))
    ok &= _valid_date(y, mo, d, h, mi, s)
    off = (_num(c, (21, 22)) * 60 + _num(c, (23, 24))) * 60
    off = np.where(c[:, 20] == 45, -off, off)
    secs = _days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - off
    return secs.astype(np.float64), ok


@njit
def _twitter_rows(c: np.ndarray, codes: np.ndarray, months: np.ndarray, days_in: np.ndarray):
    """:func:`_twitter_block`'s rows one at a time (numba): the same checks and the same arithmetic on a (n, 30)
    matrix of ASCII bytes, without the dozens of whole-column temporaries NumPy makes (2M times in 0.02 s
    against 0.75 s)."""
    n = c.shape[0]
    secs = np.zeros(n, dtype=np.float64)
    ok = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        r = c[i]
        if r[3] != 32 or r[7] != 32 or r[10] != 32 or r[19] != 32 or r[25] != 32 or r[13] != 58 or r[16] != 58:
            continue
        if r[20] != 43 and r[20] != 45:
            continue
        bad = False
        for j in range(3):
            if (r[j] | 32) < 97 or (r[j] | 32) > 122:
                bad = True
        for j in (8, 9, 11, 12, 14, 15, 17, 18, 21, 22, 23, 24, 26, 27, 28, 29):
            if r[j] < 48 or r[j] > 57:
                bad = True
        if bad:
            continue
        code = (np.int64(r[4]) << 16) | (np.int64(r[5]) << 8) | np.int64(r[6])
        mo = 0
        for k in range(12):
            if codes[k] == code:
                mo = months[k]
        if mo == 0:
            continue
        d = (np.int64(r[8]) - 48) * 10 + (np.int64(r[9]) - 48)
        h = (np.int64(r[11]) - 48) * 10 + (np.int64(r[12]) - 48)
        mi = (np.int64(r[14]) - 48) * 10 + (np.int64(r[15]) - 48)
        s = (np.int64(r[17]) - 48) * 10 + (np.int64(r[18]) - 48)
        y = np.int64(0)
        for j in (26, 27, 28, 29):
            y = y * 10 + (np.int64(r[j]) - 48)
        leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0
        dim = days_in[mo] - (1 if mo == 2 and not leap else 0)
        if d < 1 or d > dim or h > 23 or mi > 59 or s > 59:
            continue
        off = (((np.int64(r[21]) - 48) * 10 + (np.int64(r[22]) - 48)) * 60
               + (np.int64(r[23]) - 48) * 10 + (np.int64(r[24]) - 48)) * 60  # fmt: skip
        if r[20] == 45:
            off = -off
        yy = y - (1 if mo <= 2 else 0)
        era = yy // 400
        yoe = yy - era * 400
        doy = (153 * (mo - 3 if mo > 2 else mo + 9) + 2) // 5 + d - 1
        doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
        days = era * 146097 + doe - 719468
        secs[i] = float(days * 86400 + h * 3600 + mi * 60 + s - off)
        ok[i] = True
    return secs, ok


#: from this many values of Twitter's form on, the compiled pass: a process loads it from numba's cache in about
#: 0.6 s the first time (2.6 s to compile it on a machine's first use), which 100,000 values repay
_COMPILED_MIN = 100_000


def _ascii_rows(group: list[str], width: int) -> np.ndarray:
    """The (n, ``width``) matrix of the character codes of ``group``'s strings, all ``width`` long: one byte each
    where every string is ASCII (a join and an encode, in C), else four (NumPy's unicode array)."""
    try:
        raw = "".join(group).encode("ascii")
    except UnicodeEncodeError:
        return np.array(group, dtype=f"U{width}").view(np.uint32).reshape(len(group), width)
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(group), width)


def _iso_block(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Parse rows of a (n, L) code-point matrix (all of one length L >= 19) as ISO 8601 date-times."""
    n, width = c.shape
    ok = (c[:, 4] == 45) & (c[:, 7] == 45) & (c[:, 13] == 58) & (c[:, 16] == 58)
    ok &= (c[:, 10] == 84) | (c[:, 10] == 32) | (c[:, 10] == 116)
    ok &= _digits_ok(c, (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18))
    y, mo, d = _num(c, (0, 1, 2, 3)), _num(c, (5, 6)), _num(c, (8, 9))
    h, mi, s = _num(c, (11, 12)), _num(c, (14, 15)), _num(c, (17, 18))
    ok &= _valid_date(y, mo, d, h, mi, s)
    secs = (_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s).astype(np.float64)
    tail = width - 19
    if tail == 0:
        return secs, ok
    # The zone suffix decides where the fraction ends; each row gets the first shape that fits it.
    last = c[:, width - 1]
    sign = lambda j: (c[:, j] == 43) | (c[:, j] == 45)  # noqa: E731
    tzlen = np.zeros(n, dtype=np.int64)
    tzlen[(last == 90) | (last == 122)] = 1
    if tail >= 6:
        tzlen[(tzlen == 0) & sign(width - 6) & (c[:, width - 3] == 58)] = 6
    if tail >= 5:
        tzlen[(tzlen == 0) & sign(width - 5)] = 5
    if tail >= 3:
        tzlen[(tzlen == 0) & sign(width - 3)] = 3
    off = np.zeros(n, dtype=np.float64)
    frac = np.zeros(n, dtype=np.float64)
    for tl in unique(tzlen).tolist():
        rows = np.flatnonzero(tzlen == tl)
        sub = c[rows]
        good = np.ones(len(rows), dtype=bool)
        if tl >= 3:
            z = width - tl
            hh = (z + 1, z + 2)
            mm = {6: (z + 4, z + 5), 5: (z + 3, z + 4), 3: ()}[tl]
            good &= _digits_ok(sub, hh + mm)
            o = _num(sub, hh) * 3600 + (_num(sub, mm) * 60 if mm else 0)
            good &= (_num(sub, hh) <= 23) & ((_num(sub, mm) <= 59) if mm else True)
            off[rows] = np.where(sub[:, z] == 45, -o, o)
        fl = tail - tl  # characters of ".fff" between seconds and zone
        if fl == 1:
            good[:] = False
        elif fl >= 2:
            good &= (sub[:, 19] == 46) | (sub[:, 19] == 44)
            cols = list(range(20, 19 + fl))
            good &= _digits_ok(sub, cols)
            digits = np.clip(sub[:, cols], 48, 57).astype(np.float64) - 48
            frac[rows] = digits @ (10.0 ** -np.arange(1, len(cols) + 1))
        ok[rows] &= good
    return secs - off + frac, ok


def _numeric_block(strs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    try:
        x = np.array(strs).astype(np.float64)
    except ValueError:
        return np.zeros(len(strs)), np.zeros(len(strs), dtype=bool)
    ok = np.isfinite(x)
    return np.where(np.abs(x) > MS_THRESHOLD, x / 1000.0, x), ok


def parse_times(values: Sequence[object]) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """Parse a column of time values.

    Returns ``(seconds, bad)``: float64 epoch seconds, ``NaN`` where the value is missing (``None`` or a
    blank string) or bad, and ``bad`` as a list of ``(index, reason)`` for values that cannot be read.
    """
    n = len(values)
    out = np.full(n, np.nan)
    bad: list[tuple[int, str]] = []
    if n == 0:
        return out, bad
    types = set(map(type, values))
    if types == {str}:
        str_idx = None
        strs = list(values)
    else:
        str_idx, strs = [], []
        for i, v in enumerate(values):
            if type(v) is str:
                str_idx.append(i)
                strs.append(v)
            elif type(v) is int or type(v) is float:
                if math.isfinite(v):
                    out[i] = v / 1000.0 if abs(v) > MS_THRESHOLD else v
                else:
                    bad.append((i, f"not a finite number: {v!r}"))
            elif v is not None:
                try:
                    out[i] = parse_time(v)
                except ValueError as exc:
                    bad.append((i, str(exc)))
    if strs:
        sub_out = np.full(len(strs), np.nan)
        lens = np.fromiter(map(len, strs), dtype=np.int64, count=len(strs))
        slow: list[int] = []
        for length in unique(lens).tolist():
            rows = np.flatnonzero(lens == length)
            group = [strs[i] for i in rows.tolist()] if len(rows) < len(strs) else strs
            if length == 0:
                continue  # missing
            if length >= 19:
                c = _ascii_rows(group, length)
                if length == 30 and c[0, 3] == 32:
                    if HAVE_NUMBA and c.dtype == np.uint8 and len(group) >= _COMPILED_MIN:
                        secs, ok = _twitter_rows(c, _MONTH_CODES, _MONTH_OF_CODE, _DAYS_IN_MONTH)
                    else:
                        secs, ok = _twitter_block(c)
                else:
                    secs, ok = _iso_block(c)
            elif group[0][:1].isdigit() or group[0][:1] in "+-.":
                secs, ok = _numeric_block(group)
            else:
                secs, ok = np.zeros(len(group)), np.zeros(len(group), dtype=bool)
            sub_out[rows[ok]] = secs[ok]
            slow.extend(rows[~ok].tolist())
        for i in slow:
            try:
                t = parse_time(strs[i])
            except ValueError as exc:
                bad.append((i if str_idx is None else str_idx[i], str(exc)))
                continue
            if t is not None:
                sub_out[i] = t
        if str_idx is None:
            out = sub_out
        else:
            out[np.asarray(str_idx, dtype=np.int64)] = sub_out
    bad.sort()
    return out, bad
