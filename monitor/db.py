"""Bulk SQL helpers: moving NumPy columns in and out of the database fast, on PostgreSQL and SQLite.

On PostgreSQL, columns travel as binary COPY (``COPY ... FROM STDIN (FORMAT BINARY)`` and ``COPY (SELECT ...)
TO STDOUT (FORMAT BINARY)``): a NumPy structured array *is* the wire format, so a million rows cost one
``tobytes()`` instead of a million Python tuples. SQLite (the no-services demo) gets ``executemany`` and
``fetchall``. A few SQL fragments differ between the two (epoch <-> timestamp, UTC day); :class:`Dialect`
names them once so the service SQL reads the same on both.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from django.db import connection

__all__ = [
    "ARRAY_LOOKUP_MAX",
    "COPY_HEADER",
    "COPY_TRAILER",
    "Dialect",
    "analyze_after_bulk_write",
    "dialect",
    "copy_in",
    "copy_out",
    "copy_text",
    "int_array",
    "pg_timestamptz",
    "renew_follows_token",
    "temp_table_name",
]


def copy_text(value: str) -> str:
    """``value`` as a field of text-format COPY: backslash, tab, newline and carriage return escaped, NUL dropped
    (a PostgreSQL string cannot hold it).

    Each character is looked for with ``in`` and replaced with ``str.replace`` (both scan in C), and only where it
    occurs. ``str.translate`` with a mapping looks each character up in a dict: on 10,000 stream bodies of ~420
    characters it took 57 ms, and 440 ms where the bodies had JSON escapes, against 3 and 10 ms here
    (``benchmarks/stream_web.md``)."""
    if "\\" in value:
        value = value.replace("\\", "\\\\")
    if "\t" in value:
        value = value.replace("\t", "\\t")
    if "\n" in value:
        value = value.replace("\n", "\\n")
    if "\r" in value:
        value = value.replace("\r", "\\r")
    if "\x00" in value:
        value = value.replace("\x00", "")
    return value


# column type name -> (SQL type, big-endian NumPy type for binary COPY; None: variable width)
_TYPES = {
    "bigint": ("bigint", ">i8"),
    "int": ("integer", ">i4"),
    "float": ("double precision", ">f8"),
    # float epoch seconds in; on the wire int64 microseconds since 2000-01-01 (see pg_timestamptz)
    "timestamptz": ("timestamp with time zone", ">i8"),
    "text": ("text", None),  # str in (UTF-8 on the wire)
}
_SQLITE_TYPES = {"bigint": "INTEGER", "int": "INTEGER", "float": "REAL", "timestamptz": "TEXT", "text": "TEXT"}
# binary COPY framing (PostgreSQL docs, "Binary Format"): the signature, flags and extension length; the end
COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + b"\x00\x00\x00\x00" + b"\x00\x00\x00\x00"
COPY_TRAILER = b"\xff\xff"
_temp_counter = itertools.count()


@dataclass(frozen=True)
class Dialect:
    postgres: bool

    @property
    def join(self) -> str:
        """A join that keeps the written table order. SQLite plans joins without statistics on temporary
        tables and may put a big table first and loop over it; CROSS JOIN pins the staging table outermost."""
        return "JOIN" if self.postgres else "CROSS JOIN"

    def sql_type(self, kind: str) -> str:
        return _TYPES[kind][0] if self.postgres else _SQLITE_TYPES[kind]

    def epoch_to_ts(self, expr: str) -> str:
        """SQL turning epoch seconds into a value of a DateTimeField column."""
        if self.postgres:
            return f"to_timestamp({expr})"
        # Django stores SQLite datetimes as 'YYYY-MM-DD HH:MM:SS[.ffffff]' text in UTC
        return f"strftime('%%Y-%%m-%%d %%H:%%M:%%f', {expr}, 'unixepoch')"

    def epoch_column(self, expr: str) -> str:
        """A DateTimeField column as :func:`copy_out` reads it in an ``"epoch"`` column: on PostgreSQL the column
        itself, sent in binary and turned into epoch seconds by the client; on SQLite its epoch seconds."""
        return expr if self.postgres else self.ts_to_epoch(expr)

    def ts_to_epoch(self, expr: str) -> str:
        if self.postgres:
            return f"extract(epoch from {expr})::double precision"
        return f"((julianday({expr}) - 2440587.5) * 86400.0)"

    def epoch_to_day(self, expr: str) -> str:
        """The UTC calendar day of epoch seconds, as a DateField value."""
        if self.postgres:
            return f"(to_timestamp({expr}) AT TIME ZONE 'UTC')::date"
        return f"date({expr}, 'unixepoch')"

    def ts_to_day(self, expr: str) -> str:
        """The UTC calendar day of a DateTimeField column."""
        return f"({expr} AT TIME ZONE 'UTC')::date" if self.postgres else f"date({expr})"

    def nan_to_null(self, expr: str) -> str:
        # NaN travels in binary COPY; SQLite's executemany already turned NaN into NULL (see copy_in)
        return f"NULLIF({expr}, 'NaN'::double precision)" if self.postgres else expr

    def greatest(self, a: str, b: str) -> str:
        return f"GREATEST({a}, {b})" if self.postgres else f"MAX({a}, {b})"

    def least(self, a: str, b: str) -> str:
        return f"LEAST({a}, {b})" if self.postgres else f"MIN({a}, {b})"


def dialect() -> Dialect:
    return Dialect(postgres=connection.vendor == "postgresql")


def temp_table_name(prefix: str) -> str:
    return f"sw_{prefix}_{next(_temp_counter)}"


def create_temp(cursor, name: str, columns: Sequence[tuple[str, str]]) -> None:
    d = dialect()
    cols = ", ".join(f"{c} {d.sql_type(k)}" for c, k in columns)
    cursor.execute(f"DROP TABLE IF EXISTS {name}")
    cursor.execute(f"CREATE TEMP TABLE {name} ({cols})")


def empty_table(cursor, table: str) -> None:
    """Delete every row of ``table`` (a temporary table this connection reuses): TRUNCATE where there is one."""
    cursor.execute(f"TRUNCATE {table}" if connection.vendor == "postgresql" else f"DELETE FROM {table}")


def copy_in(
    cursor,
    table: str,
    columns: Sequence[tuple[str, str]],
    arrays: Sequence,
    *,
    nulls: Mapping[str, np.ndarray] | None = None,
) -> int:
    """Append rows to ``table`` in the order given; ``columns`` are ``(name, kind)`` with kind
    ``bigint|int|float|timestamptz|text``; returns the number of rows.

    ``timestamptz`` takes float epoch seconds and stores what ``to_timestamp`` would (:func:`pg_timestamptz`;
    on SQLite :meth:`Dialect.epoch_to_ts`'s text). ``text`` takes a sequence of ``str`` (``None``: NULL); on
    PostgreSQL a NUL character is dropped, as :func:`copy_text` drops it. ``nulls`` maps column names to a
    boolean mask of the rows whose value is NULL (their values are ignored): NaN follower counts, ids that mean
    "none". Floats not masked may be NaN: PostgreSQL keeps NaN (wrap the column in :meth:`Dialect.nan_to_null`
    when reading it back if NaN means unknown), SQLite's ``executemany`` stores NULL.

    On PostgreSQL the rows travel as one binary COPY, built from NumPy structured arrays (:func:`_pg_rows`): a
    NULL field is a length of -1 without a value and text varies in width, so such rows are cut out of an array
    laid out at full width. The rows reach the table in the order given, which the merge uses to write a big
    table in its unique key's order (B-tree inserts at the right edge).
    """
    n = len(arrays[0]) if len(arrays) else 0
    if n == 0:
        return 0
    masks = [None if not nulls or c not in nulls else np.asarray(nulls[c], bool) for c, _ in columns]
    for (name, _), arr, mask in zip(columns, arrays, masks):
        if len(arr) != n or (mask is not None and len(mask) != n):
            raise ValueError(f"copy_in: column {name} (or its NULL mask) does not have {n} values")
    names = ", ".join(c for c, _ in columns)
    if connection.vendor == "postgresql":
        step = _COPY_STEP
        raw = cursor.cursor if hasattr(cursor, "cursor") else cursor
        with raw.copy(f"COPY {table} ({names}) FROM STDIN (FORMAT BINARY)") as cp:
            cp.write(COPY_HEADER)
            for a in range(0, n, step):
                b = min(n, a + step)
                parts = [arr[a:b] for arr in arrays]
                part_masks = [None if m is None or not m[a:b].any() else m[a:b] for m in masks]
                cp.write(_pg_rows(columns, parts, part_masks))
            cp.write(COPY_TRAILER)
        return n
    ts = Dialect(postgres=False).epoch_to_ts("%s")
    placeholders = ", ".join(ts if kind == "timestamptz" else "%s" for _, kind in columns)
    sql = f"INSERT INTO {table} ({names}) VALUES ({placeholders})"
    step = 50_000
    for a in range(0, n, step):
        cols = []
        for arr, (_, kind), mask in zip(arrays, columns, masks):
            part = arr[a : a + step]
            if kind == "text":
                lst = [None if v is None else str(v) for v in part]
            elif kind in ("float", "timestamptz"):
                part = np.asarray(part, dtype=np.float64)
                lst = part.tolist()
                if np.isnan(part).any():
                    lst = [None if x != x else x for x in lst]
            else:
                lst = np.asarray(part, dtype=np.int64).tolist()
            if mask is not None:
                for i in np.flatnonzero(mask[a : a + step]).tolist():
                    lst[i] = None
            cols.append(lst)
        cursor.executemany(sql, list(zip(*cols)))
    return n


# PostgreSQL's timestamps are int64 microseconds since 2000-01-01 UTC. ``to_timestamp(double precision)``
# (``float8_timestamptz``) takes Unix seconds in [_TS_MIN_S, _TS_END_S) (4714-11-24 BC to 294277-01-01) and a
# timestamp must come out in [_TS_MIN_US, _TS_END_US); infinities are -infinity and infinity
_PG_EPOCH_S = 946_684_800.0
_TS_MIN_S, _TS_END_S = -210_866_803_200.0, 9_224_318_016_000.0
_TS_MIN_US, _TS_END_US = -211_813_488_000_000_000, 9_223_371_331_200_000_000
_COPY_STEP = 1 << 18  # rows per buffer of a binary COPY (1M rows of six columns: 19 MB, twice while masked)


def pg_timestamptz(seconds) -> np.ndarray:
    """Float epoch seconds as the int64 microseconds since 2000-01-01 that PostgreSQL's ``to_timestamp`` stores
    for them, computed as it computes them: in float8, ``seconds - 946684800``, times 10**6, rounded half to
    even (``rint``). So a value copied in is bit for bit the one an ``INSERT ... SELECT to_timestamp(x)`` stored,
    and the merge's checks against stored rows (``observed_at = to_timestamp(s.t)``) find it. Infinities give
    -infinity and infinity; NaN or a time out of range raises ValueError, where ``to_timestamp`` raises an error."""
    s = np.asarray(seconds, dtype=np.float64)
    if np.isnan(s).any():
        raise ValueError("timestamp cannot be NaN")
    finite = np.isfinite(s)
    if not finite.all():
        out = np.where(s > 0, np.iinfo(np.int64).max, np.iinfo(np.int64).min)
        out[finite] = pg_timestamptz(s[finite])
        return out
    bad = (s < _TS_MIN_S) | (s >= _TS_END_S)
    if bad.any():
        raise ValueError(f"timestamp out of range: {s[bad][0]!r}")
    us = np.rint((s - _PG_EPOCH_S) * 1e6)
    bad = (us < _TS_MIN_US) | (us >= _TS_END_US)  # both bounds are exact in float64
    if bad.any():
        raise ValueError(f"timestamp out of range: {s[bad][0]!r}")
    return us.astype(np.int64)


def _pg_rows(columns, parts, masks) -> bytes:
    """Binary COPY rows, in the order given, of one chunk.

    Every field is laid out at its full width in one NumPy structured array (a text column as wide as its widest
    value). Rows without NULL or text are exactly that array's bytes; otherwise the array's bytes that belong to
    no field, the value bytes of a NULL (length -1, no value) and the padding of a shorter text, are left out by
    one boolean mask over them, which keeps the rows in order. 1M rows of six columns took 0.13 s without NULLs
    and 0.28 s with NULLs scattered over 1 % of them; placing each field at its own per-row offset took 1.5 s."""
    m = len(parts[0])
    fields, text = [("n", ">i2")], {}
    for i, (_, kind) in enumerate(columns):
        fields.append((f"l{i}", ">i4"))
        if kind == "text":
            null = np.fromiter((v is None for v in parts[i]), bool, m)
            if masks[i] is not None:
                null |= masks[i]
            enc = [b"" if z else str(v).replace("\x00", "").encode() for v, z in zip(parts[i], null.tolist())]
            length = np.fromiter(map(len, enc), np.int64, m)
            length[null] = -1
            text[i] = (np.array(enc, dtype=f"S{max(int(length.max()), 1)}"), length)
            fields.append((f"v{i}", text[i][0].dtype))
        else:
            fields.append((f"v{i}", _TYPES[kind][1]))
    rec = np.empty(m, dtype=fields)
    rec["n"] = len(columns)
    keep = None  # the bytes of the array that go on the wire, where some do not
    for i, (_, kind) in enumerate(columns):
        mask, v = masks[i], f"v{i}"
        width = rec.dtype.fields[v][0].itemsize
        if kind == "text":
            rec[v], length = text[i]
        else:
            values = parts[i]
            if kind == "timestamptz":
                values = pg_timestamptz(values if mask is None else np.where(mask, 0.0, values))
            rec[v] = values
            length = None if mask is None else np.where(mask, -1, width)
        if length is None:
            rec[f"l{i}"] = width
            continue
        rec[f"l{i}"] = length
        if keep is None:
            keep = np.ones((m, rec.dtype.itemsize), bool)
        at = rec.dtype.fields[v][1]
        keep[:, at : at + width] = np.arange(width) < length[:, None]
    if keep is None:
        return rec.tobytes()
    return rec.view(np.uint8).reshape(m, -1)[keep].tobytes()


_SEND = {"bigint": "int8send", "int": "int4send", "float": "float8send", "epoch": "timestamptz_send"}
# copy_out's column kinds -> the big-endian NumPy type of their binary form: an "epoch" column is a timestamptz
_WIRE = {**{k: _TYPES[k][1] for k in ("bigint", "int", "float")}, "epoch": _TYPES["timestamptz"][1]}
_PG_EPOCH_US = 946_684_800_000_000  # 2000-01-01 in microseconds since 1970-01-01


def _out_array(kind: str, wire: np.ndarray) -> np.ndarray:
    """A column as copy_out returns it: ``float`` as float64, ``epoch`` (a timestamptz's microseconds since
    2000-01-01) as float epoch seconds, the rest as int64.

    The epoch is the value ``extract(epoch from t)::double precision`` gives, bit for bit: that is a ``numeric``
    of the exact microseconds over 10**6, rounded once to the nearest double; here the microseconds since 1970
    are divided by 10**6 once, which IEEE rounds the same way where they are exact as a double (below 2**53: the
    years 1685 to 2255), and the rare others exactly, as fractions. Sending the
    timestamp instead of that ``numeric`` saved 0.3 s of server time per million rows (``benchmarks/data_layer.md``,
    2026-12-04 (sixth)). ``infinity`` and ``-infinity`` give inf and -inf, as ``extract`` does."""
    if kind == "float":
        return wire.astype(np.float64)
    if kind != "epoch":
        return wire.astype(np.int64)
    us = wire.astype(np.int64)
    since_1970 = us + _PG_EPOCH_US  # wraps only for the infinities, set below
    out = since_1970.astype(np.float64) / 1e6
    far = np.flatnonzero(np.abs(since_1970) >= 2**53)
    if len(far):
        out[far] = [float(Fraction(int(u), 10**6)) for u in since_1970[far].tolist()]
    out[us == np.iinfo(np.int64).max] = np.inf
    out[us == np.iinfo(np.int64).min] = -np.inf
    return out


def _gathered(raw, text: str, columns: Sequence[tuple[str, str]]) -> list[np.ndarray]:
    """``copy_out`` on PostgreSQL, gathered: one row of (row count, one ``bytea`` per column). The aggregates of
    one query read the same input rows in the same order, so the columns stay aligned; an ordered subquery is
    not flattened into the query around it, so its order is the order the aggregates see.

    The row is fetched in binary, by a cursor of its own (Django's client-side cursors fetch text only): as text
    each ``bytea`` arrives hex-encoded, twice its size, and is decoded by the client. The server's result is freed
    before the columns are converted, and each column's bytes as soon as its array is made, so the client holds
    the data about twice at most, not four times: the all-time sums of a 10M-retweet workspace (4.3M rows, six
    columns) peaked at 1,205 MB resident and now at about half that (``benchmarks/data_layer.md``, 2026-11-30)."""
    import psycopg

    names = ", ".join(f"c{i}" for i in range(len(columns)))
    aggs = ", ".join(f"string_agg({_SEND[kind]}(x.c{i}), ''::bytea)" for i, (_, kind) in enumerate(columns))
    with psycopg.Cursor(raw.connection) as cur:
        cur.execute(f"SELECT count(*), {aggs} FROM ({text}) AS x({names})", binary=True)
        n, *values = cur.fetchone()
    out = []
    for i, (name, kind) in enumerate(columns):
        dtype = np.dtype(_WIRE[kind])
        data, values[i] = (b"" if values[i] is None else values[i]), None
        if len(data) != n * dtype.itemsize:  # string_agg leaves NULLs out: the column would not line up
            raise ValueError(f"copy_out: column {name} has NULLs or another type")
        out.append(_out_array(kind, np.frombuffer(data, dtype)))
    return out


ARRAY_LOOKUP_MAX = 50_000  # keys read by one array literal at most; more are staged in a temporary table


def int_array(values) -> str:
    """A PostgreSQL array literal of integers, for ``= ANY(...)`` or ``unnest(...)`` inside a statement that takes
    no parameters (COPY): each value is formatted as an integer, never as text."""
    return f"'{int_array_param(values)}'::bigint[]"


def int_array_param(values) -> str:
    """Integers as the text of a PostgreSQL array (``{1,2,3}``), the value for a ``%s::bigint[]`` parameter.
    Passed as a Python list, psycopg's array dumper handled each element in Python: 9-13 ms for 10,000 ids,
    against 2 ms for this text (a stream micro-batch passes six such lists)."""
    vals = values.tolist() if isinstance(values, np.ndarray) else values
    return "{" + ",".join(map(str, map(int, vals))) + "}"


def copy_out(
    cursor, select_sql: str, params: Sequence, columns: Sequence[tuple[str, str]], *, gather: bool = True
) -> list[np.ndarray]:
    """Run ``select_sql`` (no NULLs in its result: COALESCE them) and return one NumPy array per column.

    ``params`` fill ``%s`` placeholders and must be integers (ids). ``columns`` are ``(name, kind)``: ``bigint``,
    ``int`` and ``float`` as their SQL types; ``epoch`` a timestamp returned as float epoch seconds, which the
    statement selects as :meth:`Dialect.epoch_column` gives (the timestamptz itself on PostgreSQL).

    On PostgreSQL the server **gathers** each column into one binary value (``string_agg`` of ``int8send`` over
    the rows, in the rows' order) and the client reads one row: 90,000 rows x 3 columns took 0.008 CPU s of
    this process against 0.097 s read as binary COPY, whose rows arrive as one message each and cost Python
    work per message (``benchmarks/copy_out_bench.py``). A gathered value is one ``bytea``, at most 1 GB:
    a result that may hold 100 million rows or more (a workspace's whole follower graph) passes
    ``gather=False`` and is streamed by binary COPY.
    """
    if connection.vendor == "postgresql":
        raw = cursor.cursor if hasattr(cursor, "cursor") else cursor
        # COPY takes no bind parameters; ours are ids, so they are formatted in as integers (never text)
        text = select_sql % tuple(int(p) for p in params) if params else select_sql
        if gather:
            return _gathered(raw, text, columns)
        parts = []
        with raw.copy(f"COPY ({text}) TO STDOUT (FORMAT BINARY)") as cp:
            for chunk in cp:
                parts.append(bytes(chunk))
        data = b"".join(parts)
        header = 19  # signature, flags, extension length 0
        body = data[header:-2]
        fields = [("n", ">i2")]
        for i, (_, kind) in enumerate(columns):
            fields += [(f"l{i}", ">i4"), (f"v{i}", _WIRE[kind])]
        rec_type = np.dtype(fields)
        if len(body) % rec_type.itemsize:  # a NULL (length -1, no value) or a narrower value shifted the rows
            raise ValueError(f"copy_out: a column of {[c for c, _ in columns]} has NULLs or another type")
        rec = np.frombuffer(body, dtype=rec_type)
        out = []
        for i, (_, kind) in enumerate(columns):
            if len(rec) and (rec[f"l{i}"] != np.dtype(_WIRE[kind]).itemsize).any():
                raise ValueError(f"copy_out: column {columns[i][0]} has NULLs or another type")
            out.append(_out_array(kind, rec[f"v{i}"]))
        return out
    cursor.execute(select_sql, params)
    rows = cursor.fetchall()
    out = []
    for i, (_, kind) in enumerate(columns):
        dt = np.float64 if kind in ("float", "epoch") else np.int64
        out.append(np.array([r[i] for r in rows], dtype=dt) if rows else np.zeros(0, dt))
    return out


_SEQUENCES: dict[str, str] = {}  # table -> its id sequence's name (a table's identity keeps its name)


def reserve_ids(cursor, table: str, n: int) -> np.ndarray:
    """``n`` keys of ``table``'s ``id`` taken from its sequence, sorted, for rows a COPY then writes with their keys
    (PostgreSQL only). The writer knows its rows' keys without reading them back: at the 10M benchmark the
    import read its 4.4M new accounts' keys back in 5.1 s; taking the keys costs one ``nextval`` each
    (0.4 us), which the COPY's column default paid before (``benchmarks/data_layer.md``). Each key is drawn by
    ``nextval``, so a writer of the same table in another session at the same time draws others: the keys need
    not be consecutive, only unique, and are all above every key drawn before."""
    if n <= 0:
        return np.zeros(0, np.int64)
    sequence = _SEQUENCES.get(table)
    if sequence is None:  # looked up once per table and process: a stream micro-batch draws its events' keys
        cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
        (sequence,) = cursor.fetchone()
        if not sequence:
            raise ValueError(f"reserve_ids: {table}.id has no sequence")
        _SEQUENCES[table] = sequence
    sql = f"SELECT nextval('{sequence}'::regclass) FROM generate_series(1, %s)"
    (ids,) = copy_out(cursor, sql, [n], [("id", "bigint")])
    if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():
        ids = np.sort(ids)
    return ids


def analyze_after_bulk_write(
    cursor,
    tables: Sequence[str],
    rows: int | None,
    *,
    committed: bool = False,
    changed: bool = False,
    columns: Sequence[str] = (),
    grown: float = 0.1,
    floor: int | None = None,
) -> bool:
    """Refresh the planner's statistics of those of ``tables`` that have grown past them, counting the ``rows``
    this transaction adds; PostgreSQL only; returns whether any was analysed. A write that added no rows checks
    nothing, unless ``committed``: a check after the commit, whose rows the server counts itself (a stream
    consumer checks so, beside its micro-batches: ``monitor.services.stream._statistics``).

    Right after a bulk import or compute the statistics still describe the tables as they were (autovacuum
    analyses a table only after a delay, and not at all where it is off), and the planner then picks plans
    for empty tables: at the 1M-retweet benchmark a publisher's ranking took 2.7 s instead of 0.1 s. ANALYZE
    samples a fixed number of rows (a fraction of a second per table) and, run inside the writing transaction,
    counts that transaction's own new rows; the statistics become visible with its commit.

    A table counts as grown when its live rows (the committed ones, plus ``rows``) exceed the rows its last
    ANALYZE saw by a tenth, and by at least ``SPREADWATCH_ANALYZE_MIN_ROWS``. So an import into an empty
    workspace analyses what it wrote, as before; and a live stream, whose micro-batches each rewrite 40-90K
    rows of the same cascades but add a few thousand, analyses once its tables have grown by a tenth, not at
    every micro-batch (0.4 s each time, ``benchmarks/stream_web.md``). Between two ANALYZEs the planner scales
    the row counts by the tables' pages on its own; what goes stale is only the distribution of values.

    ``changed``: the ``rows`` were updated in place (a compute batch's tweets, from pending to computed), so the
    tables do not grow; they count as stale when the rows changed since their last ANALYZE (the server's count of
    the committed ones, plus ``rows``) reach a tenth of them, and at least ``SPREADWATCH_ANALYZE_MIN_ROWS`` / 10.
    Left stale, the statistics of the 10M benchmark's tweets said almost none was computed, and a join filtered
    on it took 113 s instead of 0.2 s (``benchmarks/data_layer.md``).

    ``rows=None`` (not with ``changed``): each table's rows inserted so far by this transaction, as the server
    counts them (``pg_stat_get_xact_tuples_inserted``; a rolled-back savepoint's rows too, which can only bring an
    ANALYZE forward), instead of one count for every table.

    ``grown``: the growth, as a fraction of what the last ANALYZE saw, that makes a table stale (a tenth by
    default). A compute run's batches pass 1.0, so that its result tables are analysed when they have doubled,
    not after every batch (the 10M benchmark's eleven batches analysed them eleven times, 5.0-5.5 s of the run),
    and the run's end checks them once more at a tenth (``monitor.algorithms.influence.Influence.finish``), before
    the warm-up and the pages read them.

    ``floor``: the fewest rows that count as growth (default ``SPREADWATCH_ANALYZE_MIN_ROWS``); the run's end
    passes 1, so that a result table smaller than that (the per-day totals of a 1M-retweet run, 25K rows) is
    analysed once its run has written it.

    ``columns``: only those columns' statistics are refreshed (the row and page counts always are), the columns
    the write changed. A compute batch's tweets change their outcome, not their text: ANALYZE of the whole
    tweets table also rebuilds the search column's statistics, whose target of 2,000 samples every row, 150 ms
    for the 1M benchmark's 27K tweets against 53 ms for the outcome columns."""
    from django.conf import settings

    if changed and rows is None:
        raise ValueError("analyze_after_bulk_write: rows=None counts inserted rows, not changed ones")
    if floor is None:
        floor = getattr(settings, "SPREADWATCH_ANALYZE_MIN_ROWS", 50_000)
    if connection.vendor != "postgresql" or (rows is not None and rows <= 0 and not committed):
        return False
    if changed:
        cursor.execute(
            """SELECT c.relname, greatest(c.reltuples, 0), pg_stat_get_mod_since_analyze(c.oid)
               FROM pg_class c WHERE c.oid = ANY(%s::regclass[])""",
            [list(tables)],
        )
        stale = [name for name, seen, mods in cursor.fetchall() if mods + rows >= max(floor / 10, grown * seen)]
    else:
        cursor.execute(
            # the statistics function, not the pg_stat_user_tables view (0.6 ms against 7 ms: the view sums over
            # every table's indexes)
            # this transaction's own inserts, as the server counts them (``rows=None``)
            f"""SELECT c.relname, greatest(c.reltuples, 0), pg_stat_get_live_tuples(c.oid)
                   + {"pg_stat_get_xact_tuples_inserted(c.oid)" if rows is None else int(rows)}
               FROM pg_class c WHERE c.oid = ANY(%s::regclass[])""",
            [list(tables)],
        )
        stale = [name for name, seen, live in cursor.fetchall() if live - seen >= max(floor, grown * seen)]
    if stale:
        if columns:
            targets = [f"{name} ({', '.join(columns)})" for name in sorted(stale)]
        else:
            targets = _split_wide_samples(cursor, sorted(stale))
        cursor.execute("ANALYZE " + ", ".join(targets))
    return bool(stale)


def _split_wide_samples(cursor, tables: list[str]) -> list[str]:
    """``tables`` as ANALYZE targets, a table with columns of a raised statistics target (the tweets' search
    document: 2,000) given as two: those columns, then the others. ANALYZE samples rows for the largest target of
    the columns it analyses (300 rows per unit of target) and then computes every column over that sample: the
    whole tweets table at 10M retweets sampled all its 270K rows for the search column and detoasted every text
    for theirs, 1.25-1.54 s, against 0.34 s for the search column alone and 0.24 s for the others on 30K rows
    (``benchmarks/data_layer.md``, 2026-12-06 (fourth)). The other columns' statistics are then what the
    default target gives, as for every other table."""
    # only a table with more rows than the default sample (300 per unit of target): below it both samples are the
    # whole table, and two passes over it cost more than one (the 1M benchmark's 27K tweets: 0.27 s against 0.25)
    cursor.execute(
        """SELECT c.relname, a.attname, a.attstattarget > current_setting('default_statistics_target')::int
           FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
           WHERE c.oid = ANY(%s::regclass[]) AND a.attnum > 0 AND NOT a.attisdropped
               AND pg_stat_get_live_tuples(c.oid) + pg_stat_get_xact_tuples_inserted(c.oid)
                   > 300 * current_setting('default_statistics_target')::int
           ORDER BY c.relname, a.attnum""",
        [tables],
    )
    wide: dict[str, list[str]] = {}
    narrow: dict[str, list[str]] = {}
    for table, column, raised in cursor.fetchall():
        (wide if raised else narrow).setdefault(table, []).append('"' + column.replace('"', '""') + '"')
    out = []
    for table in tables:
        if table in wide and narrow.get(table):
            out += [f"{table} ({', '.join(wide[table])})", f"{table} ({', '.join(narrow[table])})"]
        else:
            out.append(table)
    return out


def renew_follows_token(cursor, workspace_id: int) -> None:
    """Give the workspace a new ``follows_token`` in the current transaction: every write to its follows calls
    this, so a follower graph kept under the old token (``monitor.algorithms.influence``) is read again."""
    from .models.core import new_token

    cursor.execute("UPDATE monitor_workspace SET follows_token = %s WHERE id = %s", [new_token(), workspace_id])
