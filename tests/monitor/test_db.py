"""``monitor.db.copy_out``: a query's columns as NumPy arrays, gathered by the server or streamed by binary COPY,
with the same values in the same order either way; ``reserve_ids``: keys taken from a table's sequence before its
rows are written."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from monitor.db import copy_in, copy_out, int_array, int_array_param, reserve_ids
from monitor.models import Account, Workspace

COLS = [("a", "bigint"), ("b", "int"), ("c", "float")]
# rows in an order no index or insertion gives: the ORDER BY must survive the gathering
ROWS = """SELECT g::bigint * 7919 % 1000, (g % 5)::integer, g / 4.0::double precision
          FROM generate_series(1, 2000) g ORDER BY (g * 7919) % 1000 DESC, g"""


def _expected():
    g = np.arange(1, 2001)
    key = (g * 7919) % 1000
    o = np.lexsort((g, -key))
    return [key[o], (g % 5)[o], g[o] / 4.0]


pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="gathering and COPY are PostgreSQL's")


@pytest.mark.parametrize("gather", [True, False], ids=["gathered", "streamed"])
def test_the_rows_come_back_as_arrays_in_the_querys_order(db, gather):
    with connection.cursor() as cur:
        got = copy_out(cur, ROWS, [], COLS, gather=gather)
    for col, want in zip(got, _expected()):
        np.testing.assert_array_equal(col, want)
    assert [c.dtype for c in got] == [np.int64, np.int64, np.float64]


@pytest.mark.parametrize("gather", [True, False], ids=["gathered", "streamed"])
def test_an_empty_result_gives_empty_arrays(db, gather):
    with connection.cursor() as cur:
        got = copy_out(cur, "SELECT 1::bigint, 2.0::double precision WHERE false", [], COLS[::2], gather=gather)
    assert [len(c) for c in got] == [0, 0]


@pytest.mark.parametrize("gather", [True, False], ids=["gathered", "streamed"])
def test_a_null_is_refused_naming_its_column_rather_than_shifting_the_rows(db, gather):
    sql = "SELECT g::bigint, CASE WHEN g = 3 THEN NULL ELSE g END::bigint FROM generate_series(1, 5) g"
    named = "column b" if gather else r"a column of \['a', 'b'\]"  # streamed rows do not say which one
    with connection.cursor() as cur, pytest.raises(ValueError, match=f"{named} has NULLs"):
        copy_out(cur, sql, [], [("a", "bigint"), ("b", "bigint")], gather=gather)


def test_integer_parameters_are_formatted_in(db):
    with connection.cursor() as cur:
        (got,) = copy_out(cur, "SELECT g::bigint FROM generate_series(%s, %s) g", [3, 6], [("g", "bigint")])
    assert got.tolist() == [3, 4, 5, 6]


@pytest.mark.parametrize(
    "ids", [[], [5], [3, -1, 2**62], np.array([7, 8, 9], np.int64)], ids=["none", "one", "wide", "numpy"]
)
def test_an_int_array_parameter_reaches_the_server_as_those_integers(db, ids):
    with connection.cursor() as cur:
        cur.execute(
            "SELECT coalesce(array_agg(x ORDER BY n), '{}') FROM unnest(%s::bigint[]) WITH ORDINALITY u(x, n)",
            [int_array_param(ids)],
        )
        assert cur.fetchone()[0] == [int(i) for i in ids]


def test_an_int_array_parameter_refuses_what_is_not_an_integer():
    with pytest.raises(ValueError):
        int_array_param(["1}", "{2"])


@pytest.mark.parametrize(
    "value",
    ["plain", 'a "quoted" \\u00e9 escape', "back\\slash\\\\es", "tab\there", "line\nbreak\r\n", "nul\x00dropped",
     "\\N", "", "ünïcødé 🙂"],
)  # fmt: skip
def test_copy_text_gives_back_every_value_through_a_text_copy_but_nul(db, value):
    from monitor.db import copy_text

    with connection.cursor() as cur:
        cur.execute("CREATE TEMPORARY TABLE copy_text_check (k int, v text)")
        with cur.cursor.copy("COPY copy_text_check (k, v) FROM STDIN") as cp:
            cp.write(f"1\t{copy_text(value)}\n")
        cur.execute("SELECT v FROM copy_text_check WHERE k = 1")
        assert cur.fetchone()[0] == value.replace("\x00", "")


def test_reserved_keys_are_sorted_unique_above_every_key_before_and_the_table_goes_on_above_them(db):
    ws = Workspace.objects.create(name="keys")
    before = Account.objects.create(workspace=ws, twitter_id=1).pk
    with connection.cursor() as cur:
        keys = reserve_ids(cur, "monitor_account", 5)
        other = reserve_ids(cur, "monitor_account", 3)  # another writer drawing meanwhile: other keys
        copy_in(
            cur,
            "monitor_account",
            [("id", "bigint"), ("workspace_id", "bigint"), ("twitter_id", "bigint"), ("screen_name", "text")],
            [keys, np.full(5, ws.pk, np.int64), np.arange(10, 15, dtype=np.int64), ["a", "b", "c", "d", "e"]],
        )
    assert keys.dtype == np.int64 and len(set(keys.tolist()) | set(other.tolist())) == 8
    assert keys.tolist() == sorted(keys.tolist()) and keys.min() > before
    stored = dict(Account.objects.filter(workspace=ws, twitter_id__gte=10).values_list("twitter_id", "pk"))
    assert stored == dict(zip(range(10, 15), keys.tolist()))
    after = Account.objects.create(workspace=ws, twitter_id=2).pk  # the table's own default draws past them all
    assert after > max(keys.max(), other.max())
    with connection.cursor() as cur:
        assert len(reserve_ids(cur, "monitor_account", 0)) == 0


def test_reserving_keys_of_a_table_without_a_sequence_is_refused_naming_it(db):
    with connection.cursor() as cur:
        cur.execute("CREATE TEMPORARY TABLE plain_keys (id bigint)")
        with pytest.raises(ValueError, match=r"plain_keys\.id has no sequence"):
            reserve_ids(cur, "plain_keys", 2)


# times PostgreSQL's extract turns into epoch seconds: before 1970, fractions of microseconds' worth, the far future
TIMES = """SELECT g, t FROM unnest(ARRAY[
    '1969-12-31 23:59:59.999999+00', '1970-01-01 00:00:00+00', '2000-01-01 00:00:00.000001+00',
    '2020-06-01 12:34:56.789012+00', '2021-03-28 01:59:59.5+00', '1901-12-13 20:45:52.123457+00',
    '2262-04-11 23:47:16.854775+00', 'infinity', '-infinity'
]::timestamptz[]) WITH ORDINALITY AS x(t, g)"""


@pytest.mark.parametrize("gather", [True, False], ids=["gathered", "streamed"])
def test_an_epoch_column_is_the_timestamps_epoch_seconds_bit_for_bit_as_extract_gives_them(db, gather):
    with connection.cursor() as cur:
        order, got = copy_out(cur, f"SELECT g, t FROM ({TIMES}) s ORDER BY g", [], [("g", "bigint"), ("t", "epoch")],
                              gather=gather)  # fmt: skip
        (want,) = copy_out(
            cur, f"SELECT extract(epoch from t)::double precision FROM ({TIMES}) s ORDER BY g", [], [("t", "float")]
        )
    assert order.tolist() == list(range(1, 10)) and got.dtype == np.float64
    assert got.tobytes() == want.tobytes()  # the same doubles, infinities included
    assert got[-2:].tolist() == [np.inf, -np.inf]


def test_random_timestamps_read_as_epoch_equal_extract_exactly(db):
    rng = np.random.default_rng(7)
    # microseconds since 1970: the years 1906-2096, and 4000 BC to 8300 AD (beyond 2**53, no longer exact as doubles)
    us = np.concatenate([rng.integers(-2 * 10**15, 4 * 10**15, 10_000), rng.integers(-19 * 10**16, 2 * 10**17, 10_000)])
    times = f"""SELECT g, to_timestamp(0) + u * interval '1 microsecond' AS t
                FROM unnest({int_array(us)}) WITH ORDINALITY AS x(u, g)"""
    with connection.cursor() as cur:
        (got,) = copy_out(cur, f"SELECT t FROM ({times}) s ORDER BY g", [], [("t", "epoch")])
        want_sql = f"SELECT extract(epoch from t)::double precision FROM ({times}) s ORDER BY g"
        (want,) = copy_out(cur, want_sql, [], [("t", "float")])
    assert len(got) == 20_000 and got.tobytes() == want.tobytes()
