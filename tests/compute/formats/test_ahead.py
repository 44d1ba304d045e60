"""Follow edges parsed ahead in a thread give what the caller's own parse gives: the chunks, the error, the report."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from compute.formats import InputError, ReadReport, iter_follows
from compute.formats._ahead import read_ahead


def _edge_file(tmp_path, n: int, bad_at: int | None = None):
    rng = np.random.default_rng(5)
    e = rng.integers(0, 2**40, size=(n, 2))
    lines = [f"{a},{b}" for a, b in e.tolist()]
    if bad_at is not None:
        lines[bad_at] = "12,x"
    p = tmp_path / "follows.csv"
    p.write_text("follower_id,followee_id\n" + "\n".join(lines) + "\n")
    return p, e


def _collect(it):
    """The chunks an iterator gave before it ended or raised, and what it raised."""
    got = []
    try:
        for c in it:
            got.append((c.follower_id.copy(), c.followee_id.copy()))
    except InputError as exc:
        return got, str(exc)
    return got, None


def _no_reader_thread():
    return not [t for t in threading.enumerate() if t.name == "read-ahead"]


def test_parsed_ahead_it_gives_the_same_chunks_in_order(tmp_path):
    p, e = _edge_file(tmp_path, 500_000)  # ~14 MB: the parse reads 4 MiB blocks, so four chunks or more
    plain, _ = _collect(iter_follows(p, chunk_size=10_000))
    ahead, _ = _collect(iter_follows(p, chunk_size=10_000, ahead_rows=25_000))
    assert len(plain) >= 4 and len(ahead) == len(plain)
    for (a, b), (c, d) in zip(plain, ahead, strict=True):
        assert np.array_equal(a, c) and np.array_equal(b, d)
    assert np.array_equal(np.concatenate([a for a, _ in ahead]), e[:, 0])
    assert _no_reader_thread()


def test_parsed_ahead_a_bad_line_stops_it_where_the_plain_parse_stops(tmp_path):
    p, _ = _edge_file(tmp_path, 500_000, bad_at=477_777)
    plain, plain_err = _collect(iter_follows(p, chunk_size=10_000))
    ahead, ahead_err = _collect(iter_follows(p, chunk_size=10_000, ahead_rows=25_000))
    assert plain_err is not None and "477779" in plain_err and len(plain) >= 2  # the header is line 1
    assert ahead_err == plain_err
    assert len(ahead) == len(plain) and all(np.array_equal(a, c) for (a, _), (c, _) in zip(plain, ahead, strict=True))
    assert _no_reader_thread()


def test_parsed_ahead_skipped_bad_lines_are_reported_as_the_plain_parse_reports_them(tmp_path):
    p, _ = _edge_file(tmp_path, 60_000, bad_at=31_000)
    reports = []
    for ahead in (0, 20_000):
        rep = ReadReport()
        got, err = _collect(iter_follows(p, mode="skip-bad", chunk_size=10_000, report=rep, ahead_rows=ahead))
        assert err is None
        reports.append((sum(len(a) for a, _ in got), rep.n_good, rep.n_bad, [str(r) for r in rep.shown]))
    assert reports[0] == reports[1]
    assert reports[0][2] == 1 and "31002" in reports[0][3][0]


def test_parsed_ahead_progress_is_called_in_the_callers_thread_up_to_the_whole_file(tmp_path):
    p, _ = _edge_file(tmp_path, 60_000)
    calls = []
    me = threading.get_ident()
    list(
        iter_follows(
            p, chunk_size=5_000, ahead_rows=10_000, progress=lambda d, t: calls.append((d, t, threading.get_ident()))
        )
    )
    size = p.stat().st_size
    assert calls and {who for _, _, who in calls} == {me}
    assert calls[-1][:2] == (size, size)
    assert [d for d, _, _ in calls] == sorted(d for d, _, _ in calls)


def test_a_caller_that_stops_early_stops_the_reader_and_closes_its_stream():
    closed = threading.Event()

    def make(progress):
        try:
            for i in range(1_000_000):
                yield [i] * 10
        finally:
            closed.set()

    it = read_ahead(make, 50)
    assert next(it) == [0] * 10
    it.close()
    assert closed.is_set() and _no_reader_thread()


def test_the_reader_holds_no_more_than_its_bound_beyond_what_the_caller_took():
    made = []
    taken = []

    def make(progress):
        for i in range(40):
            made.append(i)
            yield [i] * 10  # 10 rows each

    it = read_ahead(make, 30)
    for item in it:
        taken.append(item[0])
        if len(taken) == 2:
            time.sleep(0.3)  # the reader runs ahead as far as it may while the caller works
            # the caller holds nothing: at most 30 rows (3 items) waiting, plus one item in the making
            assert len(made) - len(taken) <= 4
    assert taken == list(range(40))


def test_an_error_in_the_reader_reaches_the_caller_after_the_items_before_it():
    def make(progress):
        yield [1]
        yield [2]
        raise ValueError("line 3: broken")

    it = read_ahead(make, 100)
    assert next(it) == [1] and next(it) == [2]
    with pytest.raises(ValueError, match="line 3: broken"):
        next(it)
    assert _no_reader_thread()
