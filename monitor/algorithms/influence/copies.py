"""The influence algorithm's rows by binary COPY: the per-cascade and daily rows written as NumPy records (their
text columns, the label and the role, as codes), and the codes' SQL (a stored row's label, role and day read back
as numbers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from compute.arrays import lexorder, unique

from ...db import COPY_HEADER, COPY_TRAILER, copy_out, int_array
from ...models import Label
from .rows import ROLE_CODES, InfluenceRows

_LABELS = [c.value for c in Label]


def _copy_cascade_influence(
    cur, ws: int, rows: InfluenceRows, day_label: tuple[np.ndarray, np.ndarray] | None = None
) -> _DailyInput | None:
    """Workspace ``ws``'s rows by binary COPY into ``monitor_cascadeinfluence``, in its unique key's order;
    ``day_label``: each row's day and label code (:func:`_days_and_labels`), when the caller has them already.

    The label and role are text columns given by their codes (:func:`_copy_coded`)."""
    if not len(rows.tweet):
        return None
    order = lexorder((rows.account, rows.tweet))
    rows = InfluenceRows(*(col[order] for col in rows))
    row_day, row_label = _days_and_labels(cur, rows) if day_label is None else (c[order] for c in day_label)
    _copy_coded(
        cur,
        "monitor_cascadeinfluence",
        [
            ("workspace_id", ">i8", np.full(len(rows.tweet), ws, np.int64)),
            ("tweet_id", ">i8", rows.tweet),
            ("account_id", ">i8", rows.account),
            ("publisher_id", ">i8", rows.publisher),
            ("day", ">i4", row_day),
            ("label", _LABELS, row_label),
            ("influence", ">f8", rows.influence),
            ("followers", ">f8", rows.followers),
            ("role", ROLE_CODES, rows.role),
        ],
    )
    return _DailyInput(rows.publisher, rows.account, row_day, row_label, rows.influence)


class _DailyInput(NamedTuple):
    """Per-cascade rows as the daily aggregates group them: publisher, account, day number (since 2000-01-01),
    label code (index into ``_LABELS``) and influence."""

    publisher: np.ndarray
    account: np.ndarray
    day: np.ndarray
    label: np.ndarray
    influence: np.ndarray


_LABEL_ARRAY = "ARRAY[" + ", ".join(f"'{v}'" for v in _LABELS) + "]::varchar(16)[]"  # code + 1 -> the label


_LABEL_CASE = "CASE {col} " + " ".join(f"WHEN '{v}' THEN {i}" for i, v in enumerate(_LABELS)) + " ELSE -1 END"


_ROLE_CASE = "CASE {col} " + " ".join(f"WHEN '{v}' THEN {k}" for k, v in ROLE_CODES.items()) + " ELSE -1 END"


_DAY_NUMBER = "(({col}) - DATE '2000-01-01')::bigint"  # the binary COPY's date: days since 2000-01-01


def _days_and_labels(cur, rows: InfluenceRows) -> tuple[np.ndarray, np.ndarray]:
    """Each row's day (days since 2000-01-01, UTC) and label code (index into ``_LABELS``), from its tweet."""
    pk, day, label = copy_out(
        cur,
        f"""SELECT t.id, {_DAY_NUMBER.format(col="(t.created_at AT TIME ZONE 'UTC')::date")},
                ({_LABEL_CASE.format(col="t.label")})::bigint
            FROM monitor_tweet t WHERE t.id = ANY({int_array(unique(rows.tweet))}) ORDER BY t.id""",
        [],
        [("id", "bigint"), ("day", "bigint"), ("label", "bigint")],
    )
    at = np.searchsorted(pk, rows.tweet)
    if (label < 0).any() or len(pk) != len(unique(rows.tweet)):
        raise ValueError("cascade influence: a tweet of the batch is missing or has a label outside Label")
    return day[at], label[at]


def _copy_daily(cur, ws: int, pub, day, lab, acc, influence, cascades) -> None:
    """Daily rows by binary COPY into ``monitor_dailyinfluence``; the arrays sorted by the unique key."""
    _copy_coded(
        cur,
        "monitor_dailyinfluence",
        [
            ("workspace_id", ">i8", np.full(len(pub), ws, np.int64)),
            ("publisher_id", ">i8", pub),
            ("account_id", ">i8", acc),
            ("day", ">i4", day),
            ("label", _LABELS, lab),
            ("influence", ">f8", influence),
            ("cascades", ">i4", cascades),
        ],
    )


def _copy_coded(cur, table: str, columns: list[tuple[str, object, np.ndarray]]) -> None:
    """Rows by one binary COPY into ``table``. ``columns``: ``(name, type, values)``, the type a big-endian NumPy
    type (``>i8``, ``>i4``, ``>f8``; a ``date`` column takes ``>i4`` days since 2000-01-01), or, for a text column
    of few values, what each code stands for (a list or a dict, indexed by the ``values``, which are codes).

    A binary row is fixed-width but for its text columns; rows that share every text value are fixed-width
    records, so each such group is one NumPy structured array written as it is (``monitor.db.copy_in`` would
    encode the text row by row). The rows keep their order within a group; the groups go by their codes."""
    n = len(columns[0][2])
    coded = [i for i, (_, kind, _) in enumerate(columns) if not isinstance(kind, str)]
    names = ", ".join(name for name, _, _ in columns)
    raw = cur.cursor if hasattr(cur, "cursor") else cur
    with raw.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as cp:
        cp.write(COPY_HEADER)
        for combo, sel in _code_groups([np.asarray(columns[i][2]) for i in coded], n):
            text = {i: columns[i][1][c].encode() for i, c in zip(coded, combo)}
            dtype = [("n", ">i2")]
            for i, (_, kind, _) in enumerate(columns):
                dtype += [(f"l{i}", ">i4"), (f"v{i}", f"S{len(text[i])}" if i in text else kind)]
            rec = np.empty(len(sel), dtype=dtype)
            rec["n"] = len(columns)
            for i, (_, kind, values) in enumerate(columns):
                if i in text:
                    rec[f"l{i}"], rec[f"v{i}"] = len(text[i]), text[i]
                else:
                    rec[f"l{i}"], rec[f"v{i}"] = np.dtype(kind).itemsize, values[sel]
            cp.write(rec.tobytes())
        cp.write(COPY_TRAILER)


def _code_groups(codes: list[np.ndarray], n: int) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
    """The ``n`` rows grouped by their codes (one array per coded column, small non-negative integers): per
    combination that occurs, in ascending order, its codes and its rows' positions, ascending.

    One stable sort of a single key (the codes in mixed radix; NumPy sorts a 16-bit key by radix) and one count:
    ``np.unique(codes, axis=0)`` and a pass over every row per combination took 0.82 s for a batch's 0.51M
    per-cascade rows on a 2-core host, this 0.006 s (``benchmarks/merge_steps_bench.py``)."""
    if not n:
        return
    if not codes:
        yield (), np.arange(n)
        return
    radix = []
    for c in codes:
        if c.min() < 0:
            raise ValueError("a coded column holds a negative code")
        radix.append(int(c.max()) + 1)
    key = np.zeros(n, np.int64)
    for c, r in zip(codes, radix, strict=True):
        key = key * r + c
    size = int(np.prod(radix))
    order = np.argsort(key.astype(np.uint16) if size <= 1 << 16 else key, kind="stable")
    counts = np.bincount(key, minlength=size)
    ends = np.cumsum(counts)
    for k in np.flatnonzero(counts).tolist():
        combo, rest = [], k
        for r in reversed(radix):
            rest, c = divmod(rest, r)
            combo.append(c)
        yield tuple(reversed(combo)), order[int(ends[k] - counts[k]) : int(ends[k])]
