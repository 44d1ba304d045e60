"""``monitor.db.copy_in``: rows straight into a table, by binary COPY on PostgreSQL and ``executemany`` on SQLite,
with times stored exactly as ``to_timestamp`` (or SQLite's ``strftime``) stores them, NULLs where the masks
say, text of any width, and the rows in the order given."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from monitor.db import copy_in, create_temp, dialect, pg_timestamptz

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="binary COPY is PostgreSQL's")


def _awkward_seconds() -> np.ndarray:
    """Epoch seconds where a conversion that is not exactly ``to_timestamp``'s stores another microsecond."""
    rng = np.random.default_rng(20261130)
    fixed = [
        0.0, -0.0, 5e-324, -5e-324, 0.5e-6, 1.5e-6, 2.5e-6, -0.5e-6, -1.5e-6, 1e-7, -1e-7,
        1.5e9 + 0.0000005, 1.5e9 - 0.0000005, 1.5e9 + 0.0000015, 1.5e9 + 0.0000025,
        1474796843.8984666, 1588341557.6964786, 1613851296.6470366,  # round(x * 1e6) - epoch differs here
        1288834974.657, 1_600_000_000.123456, 1_600_000_000.1234565, 946684800.0, 946684800.0000005,
        946684799.9999995, -1.0, -0.25, -1e9 + 0.3, -86400.0000005,
        -210866803200.0, -210866803199.9999995,  # to_timestamp's first second (4714-11-24 BC)
        9224318015999.0, 9224318015999.999,  # and its last (294276-12-31)
        4e12 + 0.5, 2**31 + 0.5, 2**32 - 0.5, 1e11 + 1e-5,
    ]  # fmt: skip
    half = 1.2e9 + (np.arange(-2000, 2000) + 0.5) / 1e6  # half microseconds: rint's ties go to even
    tweets = np.floor(rng.uniform(1.15e9, 1.8e9, 4000)) + rng.integers(0, 10**7, 4000) / 1e7
    plain = rng.uniform(1.15e9, 1.8e9, 2000)
    millis = rng.integers(1_150_000_000_000, 1_800_000_000_000, 1000) / 1000.0  # snowflake times
    wide = rng.uniform(-2.1e11, 9.2e12, 2000)
    negative = -rng.uniform(0, 1e9, 1000)
    return np.concatenate([fixed, half, tweets, plain, millis, wide, negative])


def test_the_awkward_values_tell_a_near_miss_conversion_apart():
    """The values below would catch a conversion that is off by a microsecond somewhere."""
    s = _awkward_seconds()
    s = s[np.abs(s) < 4e9]
    near = np.rint(s * 1e6).astype(np.int64) - 946_684_800_000_000
    assert np.count_nonzero(near != pg_timestamptz(s)) > 100


@postgres_only
def test_a_copied_time_is_the_very_timestamp_to_timestamp_stores(db):
    s = np.concatenate([_awkward_seconds(), [np.inf, -np.inf]])
    cols = [("i", "bigint"), ("x", "float"), ("a", "timestamptz")]
    with connection.cursor() as cur:
        create_temp(cur, "ts_check", cols)
        assert copy_in(cur, "ts_check", cols, [np.arange(len(s)), s, s]) == len(s)
        cur.execute("SELECT count(*), count(*) FILTER (WHERE a = to_timestamp(x)) FROM ts_check")
        assert cur.fetchone() == (len(s), len(s))
        # the same, as the microseconds PostgreSQL keeps
        cur.execute(
            """SELECT i, (extract(epoch FROM a - timestamptz '2000-01-01 00:00:00+00') * 1000000)::bigint
               FROM ts_check WHERE i < %s ORDER BY i""",
            [len(s) - 2],
        )
        got = np.array([r[1] for r in cur.fetchall()], np.int64)
    np.testing.assert_array_equal(got, pg_timestamptz(s[:-2]))


@pytest.mark.parametrize("value", [np.nan, -210866803200.5, 9224318016000.0, 1e13, -1e12])
def test_what_to_timestamp_refuses_is_refused(value):
    with pytest.raises(ValueError, match="timestamp"):
        pg_timestamptz([1.5e9, value])


def _nulls(pattern: str, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    none = np.zeros(n, bool)
    if pattern == "none":
        return {"rid": none, "f": none, "t": none}
    if pattern == "all":
        return {"rid": ~none, "f": ~none, "t": ~none}
    if pattern == "few runs":  # a long run of each kind: written run by run
        a, b = np.zeros(n, bool), np.zeros(n, bool)
        a[n // 3 : n // 2] = True
        b[n // 2 :] = True
        return {"rid": a, "f": b, "t": none}
    return {"rid": rng.random(n) < 0.3, "f": rng.random(n) < 0.5, "t": rng.random(n) < 0.1}  # scattered


@pytest.mark.parametrize("text", [False, True], ids=["fixed", "with text"])
@pytest.mark.parametrize("pattern", ["none", "all", "few runs", "scattered"])
def test_masked_rows_are_null_and_the_rest_arrive_in_order(db, pattern, text, monkeypatch):
    monkeypatch.setattr("monitor.db._COPY_STEP", 1024)  # several buffers, some without a NULL
    n = 3000
    i = np.arange(n, dtype=np.int64)
    rid = np.where(i % 5 == 0, 0, 10_000 + i)  # a value the mask hides may be anything
    f = np.where(i % 7 == 0, np.nan, i / 4.0)
    t = 1.5e9 + i * 0.3 + 0.0000005
    names = [None if k % 11 == 0 else f"name {k}\t\\ ünï 🙂" * (k % 4) for k in range(n)]
    nulls = _nulls(pattern, n)
    nulls["f"] = nulls["f"] | np.isnan(f)
    cols = [("i", "bigint"), ("rid", "bigint"), ("f", "float"), ("t", "timestamptz"), ("x", "float")]
    arrays = [i, rid, f, t, t]
    if text:
        cols.append(("name", "text"))
        arrays.append(names)
    d = dialect()
    with connection.cursor() as cur:
        create_temp(cur, "null_check", cols)
        assert copy_in(cur, "null_check", cols, arrays, nulls=nulls) == n
        order = "ctid" if d.postgres else "rowid"
        cur.execute(
            f"""SELECT i, rid, f, t IS NULL, t = {d.epoch_to_ts("x")}{", name" if text else ""}
                FROM null_check ORDER BY {order}""",
            [],
        )
        rows = cur.fetchall()
    assert [r[0] for r in rows] == i.tolist()  # in the order given
    assert [r[1] for r in rows] == [None if z else int(v) for v, z in zip(rid, nulls["rid"])]
    got_f = [r[2] for r in rows]
    assert [v is None for v in got_f] == nulls["f"].tolist()  # NaN masked: NULL, not NaN
    assert [v for v in got_f if v is not None] == f[~nulls["f"]].tolist()
    assert [r[3] for r in rows] == nulls["t"].tolist()
    assert all(r[4] for r in rows if r[4] is not None) and sum(r[4] is None for r in rows) == nulls["t"].sum()
    if text:
        assert [r[5] for r in rows] == names


@postgres_only
def test_an_unmasked_nan_stays_nan_on_postgresql(db):
    with connection.cursor() as cur:
        create_temp(cur, "nan_check", [("f", "float")])
        copy_in(cur, "nan_check", [("f", "float")], [np.array([1.0, np.nan, 2.0])])
        cur.execute("SELECT count(*) FILTER (WHERE f = 'NaN'), count(*) FILTER (WHERE f IS NULL) FROM nan_check")
        assert cur.fetchone() == (1, 0)


def test_text_of_every_width_is_stored_as_given(db):
    names = ["", "a", 'a,b "c"', "{x,y}", "back\\slash", "tab\there", "line\nbreak", "naïve 名前", "🙂" * 64,
             "x" * 64, "NULL", "\\N", None]  # fmt: skip
    if connection.vendor == "postgresql":
        names.append("nul\x00dropped")  # a PostgreSQL string cannot hold NUL: dropped, as copy_text drops it
    keys = np.arange(len(names), dtype=np.int64) * 3
    with connection.cursor() as cur:
        create_temp(cur, "text_check", [("k", "bigint"), ("name", "text")])
        copy_in(cur, "text_check", [("k", "bigint"), ("name", "text")], [keys, names])
        cur.execute("SELECT k, name FROM text_check ORDER BY k")
        got = cur.fetchall()
    want = [(int(k), None if v is None else v.replace("\x00", "")) for k, v in zip(keys, names)]
    assert got == want


def test_columns_of_different_lengths_are_refused(db):
    with connection.cursor() as cur, pytest.raises(ValueError, match="column b"):
        copy_in(cur, "nowhere", [("a", "bigint"), ("b", "bigint")], [np.arange(3), np.arange(2)])
