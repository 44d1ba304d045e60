from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest

from compute.formats.timeparse import (
    MS_THRESHOLD,
    SNOWFLAKE_MIN_ID,
    is_snowflake,
    parse_time,
    parse_times,
    snowflake_time,
)

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st

T = 1539202764.0  # Wed Oct 10 20:19:24 UTC 2018

FORMS = [
    ("Wed Oct 10 20:19:24 +0000 2018", T),
    ("Wed Oct 10 22:19:24 +0200 2018", T),
    ("Wed Oct 10 18:49:24 -0130 2018", T),
    ("2018-10-10T20:19:24Z", T),
    ("2018-10-10T20:19:24z", T),
    ("2018-10-10 20:19:24", T),
    ("2018-10-10T20:19:24", T),
    ("2018-10-10T20:19:24.000Z", T),
    ("2018-10-10T20:19:24.5Z", T + 0.5),
    ("2018-10-10T20:19:24.123456+00:00", T + 0.123456),
    ("2018-10-10T22:19:24+02:00", T),
    ("2018-10-10T15:19:24-0500", T),
    ("2018-10-10T23:19:24+03", T),
    ("2018-10-10", T - (20 * 3600 + 19 * 60 + 24)),
    ("1539202764", T),
    ("1539202764.25", T + 0.25),
    ("1539202764000", T),
    (" 2018-10-10T20:19:24Z ", T),
    (1539202764, T),
    (1539202764000, T),
    (1539202764.5, T + 0.5),
]


@pytest.mark.parametrize(("value", "expected"), FORMS)
def test_it_parses_every_time_form(value, expected):
    assert parse_time(value) == pytest.approx(expected, abs=1e-6)
    got, bad = parse_times([value])
    assert bad == []
    assert got[0] == pytest.approx(expected, abs=1e-6)


def test_it_parses_a_mixed_column_at_once():
    values = [v for v, _ in FORMS]
    got, bad = parse_times(values)
    assert bad == []
    np.testing.assert_allclose(got, [e for _, e in FORMS], atol=1e-6)


def test_it_marks_missing_values_as_nan_and_not_bad():
    got, bad = parse_times([None, "", "   ", "2018-10-10T20:19:24Z"])
    assert bad == []
    assert np.isnan(got[:3]).all() and got[3] == T
    assert parse_time(None) is None and parse_time("") is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("yesterday", "unparseable time"),
        ("2018-02-30T00:00:00Z", "unparseable time"),
        ("Wed Foo 10 20:19:24 +0000 2018", "unknown month"),
        ("Wed Feb 30 20:19:24 +0000 2018", "impossible time"),
        ("2018-10-10T25:19:24Z", "unparseable time"),
        (float("nan"), "not a finite number"),
        (True, "not a time"),
        ([1], "not a time"),
    ],
)
def test_it_reports_unparseable_times_by_index(value, reason):
    with pytest.raises(ValueError, match=reason):
        parse_time(value)
    got, bad = parse_times(["2018-10-10T20:19:24Z", value])
    assert [i for i, _ in bad] == [1]
    assert reason in bad[0][1]
    assert got[0] == T and np.isnan(got[1])


def test_it_treats_large_epochs_as_milliseconds():
    assert MS_THRESHOLD == 1e11
    assert parse_time(99_999_999_999) == 99_999_999_999  # seconds: the year 5138, but below the threshold
    assert parse_time(100_000_000_001) == pytest.approx(100_000_000.001)


def test_it_reads_snowflake_times():
    # Twitter's documented example: id 1050118621198921728 was created Wed Oct 10 20:19:24 +0000 2018
    assert snowflake_time(1050118621198921728) == pytest.approx(T + 0.211)
    got = snowflake_time(np.array([1050118621198921728, 498430783699554305]))
    assert got.dtype == np.float64 and got[0] == pytest.approx(T + 0.211)
    assert datetime.fromtimestamp(got[1], UTC).year == 2014
    assert is_snowflake(SNOWFLAKE_MIN_ID) and not is_snowflake(29_700_000_000)
    assert is_snowflake(np.array([1, 1050118621198921728])).tolist() == [False, True]


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _forms(dt: datetime, offset_min: int, micro: int) -> list[tuple[str, float]]:
    """``dt`` (UTC) written in several forms, with the epoch each should give."""
    t = dt.timestamp()
    tz = timezone(timedelta(minutes=offset_min))
    local = dt.astimezone(tz)
    sign = "+" if offset_min >= 0 else "-"
    hh, mm = divmod(abs(offset_min), 60)
    tw = (
        f"{_DAYS[local.weekday()]} {_MONTHS[local.month - 1]} {local.day:02d} {local:%H:%M:%S} {sign}{hh:02d}{mm:02d} "
        f"{local.year}"
    )
    frac = dt.replace(microsecond=micro)
    return [
        (tw, t),
        (dt.strftime("%Y-%m-%dT%H:%M:%SZ"), t),
        (local.strftime("%Y-%m-%dT%H:%M:%S") + f"{sign}{hh:02d}:{mm:02d}", t),
        (local.strftime("%Y-%m-%d %H:%M:%S") + f"{sign}{hh:02d}{mm:02d}", t),
        (frac.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), frac.timestamp()),
        (frac.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3], frac.timestamp() - (micro % 1000) / 1e6),
        (str(int(t)), t),
        (str(int(t * 1000)), t),
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.datetimes(min_value=datetime(1974, 1, 1), max_value=datetime(2200, 12, 31)),
            st.integers(-12 * 60, 14 * 60),
            st.integers(0, 999_999),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_it_agrees_with_the_scalar_parser(items):
    """The vectorised column parser gives exactly what the scalar reference gives, for every form (from 1974 on:
    earlier epoch milliseconds fall below MS_THRESHOLD and read as seconds, by design)."""
    values, expected = [], []
    for naive, off, micro in items:
        dt = naive.replace(microsecond=0, tzinfo=UTC)
        for v, t in _forms(dt, off, micro):
            values.append(v)
            expected.append(t)
    got, bad = parse_times(values)
    assert bad == []
    scalar = np.array([parse_time(v) for v in values])
    np.testing.assert_allclose(got, scalar, rtol=0, atol=2e-6)
    np.testing.assert_allclose(got, expected, rtol=0, atol=2e-6)


def _mutated_twitter_times(n: int, seed: int) -> list[str]:
    """Twitter-form times, a third of them with one character replaced by a random printable ASCII one."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        dt = datetime(1990, 1, 1, tzinfo=UTC) + timedelta(seconds=int(rng.integers(0, 60 * 365 * 86400)))
        off = int(rng.integers(-12 * 60, 14 * 60))
        s = _forms(dt, off, 0)[0][0]
        if rng.random() < 1 / 3:
            j = int(rng.integers(0, len(s)))
            s = s[:j] + chr(int(rng.integers(32, 127))) + s[j + 1 :]
        out.append(s)
    return out


def test_the_row_parser_and_the_block_parser_agree_on_good_and_bad_times():
    """The compiled row-at-a-time parser of Twitter times (numba, over ASCII bytes) takes the same rows as the
    NumPy block parser, with the same seconds, and leaves the same rows to the scalar parser."""
    from compute.formats import timeparse as tp

    leap = ["Wed Feb 29 20:19:24 +0000 2019", "Wed Feb 29 20:19:24 +0000 2020"]
    values = [*_mutated_twitter_times(3000, seed=7), *leap]
    c = tp._ascii_rows(values, 30)
    assert c.dtype == np.uint8
    secs, ok = tp._twitter_rows(c, tp._MONTH_CODES, tp._MONTH_OF_CODE, tp._DAYS_IN_MONTH)
    ref_secs, ref_ok = tp._twitter_block(c)
    assert ok.tolist() == ref_ok.tolist()
    assert 0 < ok.sum() < len(values)
    np.testing.assert_array_equal(secs[ok], ref_secs[ok])
    assert ok[-2:].tolist() == [False, True]  # no 29 February in 2019


@pytest.mark.parametrize("compiled_from", [1, 10**9])
def test_a_column_of_mutated_times_parses_as_the_scalar_parser_does(monkeypatch, compiled_from):
    """By the compiled pass (a large column) or by NumPy (a small one), as the scalar parser reads each value."""
    from compute.formats import timeparse as tp

    monkeypatch.setattr(tp, "_COMPILED_MIN", compiled_from)
    values = _mutated_twitter_times(2000, seed=11)
    got, bad = parse_times(values)
    bad_at = dict(bad)
    for i, v in enumerate(values):
        try:
            t = parse_time(v)
        except ValueError as exc:
            assert bad_at[i] == str(exc)
            continue
        assert i not in bad_at and got[i] == t


def test_times_with_characters_beyond_ascii_are_still_parsed_or_named():
    """A column with one non-ASCII value of the Twitter width takes the unicode path and loses nothing."""
    good = "Wed Oct 10 20:19:24 +0000 2018"
    odd = "Wéd Oct 10 20:19:24 +0000 2018"
    worse = "Wed Öct 10 20:19:24 +0000 2018"
    got, bad = parse_times([good, odd, worse, good])
    assert got[0] == T and got[3] == T and np.isnan(got[1:3]).all()
    assert bad == [(1, f"unparseable time: {odd!r}"), (2, f"unparseable time: {worse!r}")]
