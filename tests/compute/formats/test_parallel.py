"""Reading a v1.1 JSONL file on several processes (``compute.formats._parallel``) gives what the serial reader gives:
the same tables in the same order, the same report (counts, the records shown and their order under
``max_shown``), the same error in strict mode. The files are small, the ranges a few hundred bytes and the
chunks a few rows, so every case meets range and chunk boundaries many times."""

from __future__ import annotations

import gzip
import json
import logging
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from compute.formats import InputError, Parallel, ReadReport, SeenTweets, _parallel, iter_tweets
from compute.formats._io import line_ranges
from compute.tables import concat_tweets

# Celery's multiprocessing fork, which the parallel reader uses; the GPU machine has no Celery (make test-gpu)
billiard = pytest.importorskip("billiard", reason="the parallel reader runs on billiard, which is not installed here")

T0 = 1539202764  # 2018-10-10
BASE = 1050118621198921728
COLUMNS = (
    "tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count", "screen_name", "text", "lines",
    "hashtags", "urls",
)  # fmt: skip


def _status(tid: int, uid: int, t: int | str, fol: object = 10, rt: dict | None = None) -> dict:
    st = {
        "id_str": str(tid),
        "created_at": t if isinstance(t, str) else _twitter_time(t),
        "text": f"text of {tid}",
        "user": {"id_str": str(uid), "screen_name": f"u{uid}", "followers_count": fol},
    }
    k = tid % 4  # entities of every shape: none, one tag, several (repeated), malformed
    if k == 1:
        st["entities"] = {"hashtags": [{"text": "Tag"}], "urls": [{"url": f"u{tid % 7}"}]}
    elif k == 2:
        st["entities"] = {"hashtags": [{"text": f"T{tid % 3}"}, {"text": "t0"}], "urls": [{"url": "u"}]}
    elif k == 3:
        st["entities"] = {"urls": [1]}
    if rt is not None:
        st["retweeted_status"] = rt
    return st


def _twitter_time(t: int) -> str:
    import time

    return time.strftime("%a %b %d %H:%M:%S +0000 %Y", time.gmtime(t))


def _lines(n: int = 250, *, bad: bool = True) -> list[str]:
    """Originals and their retweets (each embedding its original again: duplicates across every range), with
    bad lines of every kind spread over the file when ``bad``."""
    out: list[str] = []
    originals = [_status(BASE + i, 1000 + i, T0 + i) for i in range(20)]
    for i in range(n):
        o = originals[i % len(originals)]
        out.append(json.dumps(_status(BASE + 10_000 + i, 5000 + i, T0 + 100 + i, rt=o)))
        if i < len(originals):
            out.append(json.dumps(originals[i]))
        if not bad:
            continue
        k = i % 37
        if k == 3:
            out.append('{"id_str": "12", "user": ')  # invalid JSON
        elif k == 7:
            out.append(json.dumps(_status(BASE + 20_000 + i, 7, "not a time")))  # bad time (found per chunk)
        elif k == 11:
            out.append(json.dumps(_status(BASE + 30_000 + i, 8, T0, fol=10**12)))  # count out of range
        elif k == 13:
            # a conflicting duplicate: an original read before, here by another user (names that earlier line)
            o2 = dict(originals[i % 20], user={"id_str": "999", "screen_name": "x", "followers_count": 1})
            out.append(json.dumps(_status(BASE + 40_000 + i, 9, T0 + 200, rt=o2)))
        elif k == 17:
            out.append('{"delete": {"status": {"id": 1}}}')  # a notice: skipped, not bad
        elif k == 19:
            out.append("")  # blank lines
            out.append("   ")
        elif k == 23:
            out.append('["a", "list"]')  # wrong type
        elif k == 29:
            out.append(json.dumps({"id_str": str(BASE + 50_000 + i), "created_at": "x"}))  # no user
        elif k == 31:
            out.append('{"id_str": "' + "9" * 700 + '"}')  # longer than the record limit below
        elif k == 5:
            out.append(json.dumps(_status(BASE + 60_000 + i, 10, T0 + 5, fol=-1)))  # negative count
    return out


def _write(path, lines: list[str], *, nl: str = "\n", bom: bool = False, final_newline: bool = True) -> str:
    data = nl.join(lines) + (nl if final_newline else "")
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data.encode())
    return str(path)


def _read(path, *, mode: str, parallel: Parallel | None, max_shown: int = 1000, seen: SeenTweets | None = None):
    """(tables, report, error) of a whole read; the tables read before a strict error are kept."""
    report = ReadReport(max_shown=max_shown)
    tables, error = [], None
    try:
        for t in iter_tweets(
            path, "v1", mode=mode, chunk_size=7, report=report, max_record_bytes=600, seen=seen, parallel=parallel
        ):
            tables.append(t)
    except InputError as exc:
        error = exc
    return tables, report, error


PAR = Parallel(workers=2, min_bytes=0, range_bytes=1500)
# the workers read up to 4 ranges each ahead of the reading process, their results waiting in spool files
AHEAD = Parallel(workers=2, min_bytes=0, range_bytes=1500, ahead_bytes=8 * 1500)
PARS = pytest.mark.parametrize("par", [PAR, AHEAD], ids=["one-range-ahead", "spooled-ahead"])


def _same(a, b) -> None:
    ta, ra, ea = a
    tb, rb, eb = b
    assert (ea is None) == (eb is None)
    if ea is not None:
        assert str(ea) == str(eb) and ea.record == eb.record
    assert len(ta) == len(tb)
    if ta:
        ca, cb = concat_tweets(ta), concat_tweets(tb)
        for name in COLUMNS:
            x, y = getattr(ca, name), getattr(cb, name)
            assert (x is None) == (y is None), name
            if x is not None:
                assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    assert ra.to_dict() == rb.to_dict()
    assert ra.by_reason == rb.by_reason


@PARS
@pytest.mark.parametrize("max_shown", [1000, 5, 0])
def test_it_reads_with_workers_what_it_reads_alone_skipping_bad_lines(tmp_path, max_shown, par):
    p = _write(tmp_path / "t.jsonl", _lines())
    assert len(line_ranges(p, os.path.getsize(p), PAR.range_bytes)) > 20
    serial = _read(p, mode="skip-bad", parallel=None, max_shown=max_shown)
    _same(serial, _read(p, mode="skip-bad", parallel=par, max_shown=max_shown))
    report = serial[1]
    assert report.n_bad > 50 and report.n_skipped > 5
    kinds = {r.split(": ")[-1] for r in report.by_reason}
    assert {"invalid JSON", "conflicting duplicate", "count out of range", "record longer than 600 bytes"} <= kinds


@PARS
def test_it_raises_in_strict_mode_the_error_the_serial_read_raises(tmp_path, par):
    lines = _lines()
    p = _write(tmp_path / "t.jsonl", lines)
    serial = _read(p, mode="strict", parallel=None)
    assert serial[2] is not None and serial[2].record.line == 9
    _same(serial, _read(p, mode="strict", parallel=par))
    # the first bad line later and later: in the middle of a range, at its start, in a later chunk
    good = _lines(bad=False)
    for at in (30, 31, 57, 200, len(good) - 1):
        for bad_line in ('{"id_str": ', json.dumps(_status(BASE + 77, 7, "not a time"))):
            p = _write(tmp_path / f"s{at}.jsonl", [*good[:at], bad_line, *good[at:]])
            serial = _read(p, mode="strict", parallel=None)
            assert serial[2].record.line == at + 1
            _same(serial, _read(p, mode="strict", parallel=par))


@pytest.mark.parametrize(
    "layout",
    [{"nl": "\r\n"}, {"bom": True}, {"final_newline": False}, {"nl": "\r\n", "bom": True, "final_newline": False}],
    ids=["crlf", "bom", "no-final-newline", "all-three"],
)
@pytest.mark.parametrize("mode", ["skip-bad", "strict"])
@PARS
def test_it_reads_every_file_layout_alike(tmp_path, layout, mode, par):
    p = _write(tmp_path / "t.jsonl", _lines(), **layout)
    _same(_read(p, mode=mode, parallel=None), _read(p, mode=mode, parallel=par))


@pytest.mark.parametrize("range_bytes", [1, 150, 333, 4096])
def test_a_bad_line_at_every_range_boundary_keeps_its_line_number(tmp_path, range_bytes):
    # ranges of 1 byte: every line is a range of its own
    p = _write(tmp_path / "t.jsonl", _lines(80))
    par = Parallel(workers=2, min_bytes=0, range_bytes=range_bytes)
    for mode in ("skip-bad", "strict"):
        _same(_read(p, mode=mode, parallel=None), _read(p, mode=mode, parallel=par))


@pytest.mark.parametrize("mode", ["skip-bad", "strict"])
def test_a_line_longer_than_the_cut_search_ends_the_cutting_and_reads_alike(tmp_path, mode):
    lines = _lines(60)
    p = _write(tmp_path / "t.jsonl", [*lines[:40], "x" * (3 << 20), *lines[40:]])
    _same(_read(p, mode=mode, parallel=None), _read(p, mode=mode, parallel=PAR))


def test_conflicts_with_an_earlier_file_name_it_and_its_line(tmp_path):
    first = _write(tmp_path / "a.jsonl", _lines(60, bad=False))
    second = _write(tmp_path / "b.jsonl", _lines(200))
    out = []
    for par in (None, PAR):
        seen = SeenTweets()
        _read(first, mode="skip-bad", parallel=par, seen=seen)
        out.append(_read(second, mode="skip-bad", parallel=par, seen=seen))
    _same(*out)
    assert any(f"{first}:" in r.reason for r in out[1][1].shown)


def test_a_file_of_blank_lines_is_empty_alike(tmp_path):
    p = _write(tmp_path / "t.jsonl", ["   "] * 500)
    for mode in ("skip-bad", "strict"):
        serial = _read(p, mode=mode, parallel=None)
        assert "empty file" in str(serial[1].shown[0] if mode == "skip-bad" else serial[2])
        _same(serial, _read(p, mode=mode, parallel=PAR))


def test_it_starts_processes_only_for_plain_files_above_the_threshold(tmp_path, monkeypatch):
    p = _write(tmp_path / "t.jsonl", _lines(50, bad=False))
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(gzip.compress(Path(p).read_bytes()))
    started = []
    real = _parallel._readers
    monkeypatch.setattr(_parallel, "_readers", lambda *a: started.append(a[2]) or real(*a))
    _read(p, mode="strict", parallel=Parallel(workers=2, min_bytes=10**9, range_bytes=600))
    _read(p, mode="strict", parallel=Parallel(workers=1, min_bytes=0, range_bytes=600))
    _read(p, mode="strict", parallel=Parallel(workers=2, min_bytes=0, range_bytes=10**9))  # one range
    _read(str(gz), mode="strict", parallel=PAR)
    assert started == []
    _read(p, mode="strict", parallel=PAR)
    assert started == [2]


class _NoChildren:
    """A multiprocessing context in a daemonic process of the standard library: no process may start."""

    Pipe = staticmethod(billiard.get_context("fork").Pipe)

    class Process:
        def __init__(self, *a, **kw) -> None:
            pass

        def start(self) -> None:
            raise AssertionError("daemonic processes are not allowed to have children")


def test_it_reads_alone_with_a_log_line_where_no_process_can_start(tmp_path, monkeypatch, caplog):
    p = _write(tmp_path / "t.jsonl", _lines(100))
    monkeypatch.setattr(billiard, "get_context", lambda name: _NoChildren)
    with caplog.at_level(logging.WARNING, logger="compute.formats._parallel"):
        got = _read(p, mode="skip-bad", parallel=PAR)
    assert "reading on one core: cannot start 2 reader processes (daemonic processes" in caplog.text
    _same(_read(p, mode="skip-bad", parallel=None), got)


def _read_in_daemon(path: str) -> tuple[list[int], dict, list[str]]:
    assert billiard.current_process().daemon
    got = []
    real = _parallel._readers
    _parallel._readers = lambda *a: got.append(real(*a)) or got[-1]  # this process is a throwaway fork
    tables, report, _ = _read(path, mode="skip-bad", parallel=PAR)
    return concat_tweets(tables).tweet_id.tolist(), report.to_dict(), [type(r).__name__ for r in got]


def test_it_reads_with_workers_inside_a_daemonic_process_as_celery_runs_it(tmp_path):
    # a Celery prefork worker is a daemonic billiard process: the standard library would refuse to fork there
    p = _write(tmp_path / "t.jsonl", _lines(100))
    with billiard.get_context("fork").Pool(1) as outer:
        ids, report, readers = outer.apply(_read_in_daemon, (p,))
    tables, serial, _ = _read(p, mode="skip-bad", parallel=None)
    assert readers == ["_Readers"]
    assert ids == concat_tweets(tables).tweet_id.tolist() and report == serial.to_dict()


def _boom(*a, **kw):
    raise MemoryError("no room for this range")


def test_an_error_in_a_worker_is_raised_by_the_read(tmp_path, monkeypatch):
    p = _write(tmp_path / "t.jsonl", _lines(100, bad=False))
    monkeypatch.setattr(_parallel, "_read_range", _boom)  # the workers are forked after this
    with pytest.raises(MemoryError, match="no room"):
        _read(p, mode="skip-bad", parallel=PAR)


# --- what a worker holds, and how long it lives ---------------------------------------------------------------------

KW = {"chunk": 7, "max_record": 600, "keep": 1000, "strict": False}


def _blocked_readers(tmp_path) -> tuple[str, list[tuple[int, int]]]:
    """A file whose ranges' results fill the workers' pipes many times over: the workers are still alive, blocked
    on a send, while the reading process takes nothing."""
    p = _write(tmp_path / "t.jsonl", _lines(3000, bad=False))
    return p, line_ranges(p, os.path.getsize(p), 1500)


def _links(pid: int) -> list[tuple[str, bool]]:
    """What the process's descriptors point at, and whether each is open for reading (both ends of a pipe have
    the pipe's one inode)."""
    out = []
    for name in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{name}")
            with open(f"/proc/{pid}/fdinfo/{name}") as fh:
                flags = int(next(x for x in fh if x.startswith("flags:")).split()[1], 8)
        except FileNotFoundError:
            continue
        out.append((link, flags & os.O_ACCMODE != os.O_WRONLY))
    return out


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads the workers' descriptors in /proc")
def test_a_worker_holds_neither_the_sockets_nor_the_pipes_of_the_reading_process(tmp_path):
    import socket
    import time

    p, ranges = _blocked_readers(tmp_path)
    mine, theirs = socket.socketpair()  # a database connection of the reading process, say
    readers = _parallel._Readers(p, ranges, 2, KW)
    try:
        ours = {os.readlink(f"/proc/self/fd/{c.fileno()}") for c in readers.conns}  # the read ends: pipe:[inode]
        assert all(link.startswith("pipe:") for link in ours)

        def held() -> list[str]:
            return [
                link
                for proc in readers.procs
                for link, reads in _links(proc.pid)
                if link.startswith("socket:") or (link in ours and reads)
            ]

        deadline = time.monotonic() + 10
        while held() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(proc.is_alive() for proc in readers.procs)  # blocked on their pipes, not gone
        assert held() == []
    finally:
        readers.close()
    mine.sendall(b"still ours")  # the reading process's socket works as before
    assert theirs.recv(16) == b"still ours"
    mine.close()
    theirs.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_workers_die_with_the_reading_process_when_it_is_killed(tmp_path):
    import signal
    import subprocess
    import time

    p, _ = _blocked_readers(tmp_path)
    script = (
        "import os, sys, time\n"
        "from compute.formats import _parallel\n"
        "from compute.formats._io import line_ranges\n"
        "p = sys.argv[1]\n"
        f"r = _parallel._Readers(p, line_ranges(p, os.path.getsize(p), 1500), 2, {KW!r})\n"
        "print(' '.join(str(x.pid) for x in r.procs), flush=True)\n"
        "time.sleep(120)\n"
    )
    root = Path(__file__).resolve().parents[3]
    reader = subprocess.Popen([sys.executable, "-c", script, p], cwd=root, stdout=subprocess.PIPE, text=True)
    workers: list[int] = []
    try:
        workers = [int(x) for x in reader.stdout.readline().split()]
        assert len(workers) == 2 and all(_running(w) for w in workers)
        reader.send_signal(signal.SIGKILL)
        reader.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(_running(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_running(w) for w in workers)
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
        reader.stdout.close()
        for w in workers:  # what a failure left (they would block for ever)
            if _running(w):
                os.kill(w, signal.SIGKILL)


def _wait_for(predicate, seconds: float = 20.0) -> bool:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def test_the_workers_read_ahead_into_spool_files_as_far_as_they_may_and_no_further(tmp_path):
    import time

    p = _write(tmp_path / "t.jsonl", _lines(400, bad=False))
    ranges = line_ranges(p, os.path.getsize(p), 1500)
    assert len(ranges) > 20
    readers = _parallel._Readers(p, ranges, 2, KW, ahead=3)
    try:
        spool = readers.spool
        assert spool is not None and os.path.isdir(spool)
        # nothing taken yet: each worker reads its 3 ranges ahead, and stops there
        assert _wait_for(lambda: len(os.listdir(spool)) >= 6)
        time.sleep(0.3)
        assert len(os.listdir(spool)) == 6
        got = list(readers)  # taking each result removes its file and lets its worker read one more
        assert os.listdir(spool) == []
    finally:
        readers.close()
    assert not os.path.exists(spool)  # the folder goes with the read
    alone = _parallel._Readers(p, ranges, 2, KW)
    try:
        assert alone.spool is None
        expected = list(alone)
    finally:
        alone.close()
    assert [r.end for r in got] == [r.end for r in expected] == [b for _, b in ranges]
    for a, b in zip(got, expected, strict=True):
        assert np.array_equal(a.rows.tweet_id, b.rows.tweet_id) and np.array_equal(a.rows.line, b.rows.line)


def test_a_strict_read_that_stops_early_removes_the_spool_its_workers_filled(tmp_path, monkeypatch):
    made = []
    real = _parallel.tempfile.mkdtemp

    def mkdtemp(**kw):
        made.append(real(dir=tmp_path, **kw))
        return made[-1]

    monkeypatch.setattr(_parallel.tempfile, "mkdtemp", mkdtemp)
    good = _lines(400, bad=False)
    p = _write(tmp_path / "t.jsonl", [*good[:50], '{"id_str": ', *good[50:]])
    serial = _read(p, mode="strict", parallel=None)
    _same(serial, _read(p, mode="strict", parallel=AHEAD))
    assert len(made) == 1 and not os.path.exists(made[0])


def test_a_result_that_cannot_be_spooled_goes_through_the_pipe_itself(tmp_path):
    # a full or read-only disk alike: the worker sends the result, and the read goes on without reading ahead
    p = _write(tmp_path / "t.jsonl", _lines(20, bad=False))
    result = _parallel._read_range(p, 0, os.path.getsize(p), **KW)
    assert _parallel._spooled(result, str(tmp_path / "gone"), 0) is result
    name = _parallel._spooled(result, str(tmp_path), 0)
    assert isinstance(name, str) and os.path.exists(name)
    back = _parallel._unspooled(name)
    assert not os.path.exists(name) and np.array_equal(back.rows.tweet_id, result.rows.tweet_id)
    assert _parallel._unspooled(result) is result
