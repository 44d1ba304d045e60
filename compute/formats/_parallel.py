"""Reading one large file on several cores: byte ranges parsed by worker processes, merged in file order.

A v1.1 JSONL file above :attr:`Parallel.min_bytes` (and not compressed) is cut into ranges of about
:attr:`Parallel.range_bytes` that end just after a newline. Each worker process runs the reader's own line loop
over its range (:func:`~.twitter_v1.v1_chunks`) and the checks of one row at a time
(:meth:`~._tweets.TweetBuilder.checked`: times, follower counts), numbering lines from the range's start. This
process then takes the ranges in file order, moves their line numbers by the lines before them, and replays what
the serial reader does in the same order: the same chunks of ``chunk_size`` rows (cut after the same lines), each
checked against every row before it (:class:`~._dups.SeenTweets`, which only this process holds) and reported
with :meth:`~._tweets.TweetBuilder.commit`; the bad lines a worker found reported between them where the serial
loop would have met them, in strict mode after the pending rows (``Sink.before_raise``) as there. So the tables,
the report (counts, the records shown, their order, what ``max_shown`` keeps) and the error a strict read raises
are the serial reader's; ``tests/compute/formats/test_parallel.py`` compares them on files built to hit each case.

A worker keeps at most ``max_shown`` of its bad lines (1 in strict mode) and counts the rest: the report cannot
show a later one, since the ones kept come before it. A worker runs at most about one range ahead of this
process, so memory stays bounded by a few ranges' rows, as the serial reader's is by a chunk's; or, with
:attr:`Parallel.ahead_bytes`, up to that many of the file's bytes ahead, its results waiting on disk in a spool
folder of the system's temporary directory (a file per range, removed as this process takes it; the folder
removed when the read ends, or fails), so that the workers go on reading while this process does something else
with its rows: an import merging a part of the upload into the database (:class:`_Readers`).

Processes come from ``billiard`` (Celery's fork of :mod:`multiprocessing`) when it is installed: a Celery prefork
worker, which runs the imports in production (``docs/deploy.md``), is a daemonic process, and the standard
library refuses to start children there (``AssertionError: daemonic processes are not allowed to have children``,
``concurrent.futures`` and every start method alike); billiard allows it. Without billiard, ``multiprocessing``
with fork. Where no pool can be started, the read is serial, with a log line. Fork, not spawn or forkserver: the
children need the modules this process has imported already, and start in milliseconds.

A worker holds nothing of this process's but its range and its pipe, and does not outlive it. The workers are
forked inside the import's database transaction (``monitor/services/ingest``): a child that kept the parent's
database socket kept its session, its open transaction and its row locks alive after a ``kill -9`` of the parent,
and a child that kept the read end of a pipe could never see the pipe break and blocked on it for ever. So a worker,
as it starts (:func:`_detach`), closes the read ends of every pipe, points every inherited socket at ``/dev/null``
(``dup2``: the descriptor stays valid and the socket itself is untouched, so nothing, not even a database
protocol's goodbye, reaches the parent's connections; the parent's sessions end when it does), asks Linux to kill it
when its parent dies (``PR_SET_PDEATHSIG``), and exits at once if the parent is already gone; a send that finds the
pipe broken ends it quietly. The parent's own failure handling is unchanged: a worker that ends early is an error
(:meth:`_Readers.__iter__`).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import pickle
import shutil
import signal
import stat
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ._fields import Ctx
from ._io import LineBlocks, is_compressed, line_ranges
from ._report import LongLines, ReadReport, Sink
from ._tweets import CheckedRows, TweetBuilder
from .twitter_v1 import V1Counts, v1_builder, v1_chunks

__all__ = ["Parallel", "parallel_reader"]

log = logging.getLogger(__name__)

#: the formats that can be read this way (line-oriented, one record a line)
FORMATS = ("v1",)


@dataclass(frozen=True)
class Parallel:
    """How to read a large file: ``workers`` processes (1: the serial reader) for files of at least
    ``min_bytes``, in ranges of about ``range_bytes``; the workers read up to about ``ahead_bytes`` of the file
    ahead of the reading process, their results waiting in spool files (0: about one range, through their pipes)."""

    workers: int = 1
    min_bytes: int = 32 << 20
    range_bytes: int = 8 << 20
    ahead_bytes: int = 0

    def ahead_ranges(self) -> int:
        """The ranges each worker may have read and the reading process not yet taken (0: no spool)."""
        per_worker = self.ahead_bytes // max(self.range_bytes, 1) // max(self.workers, 1)
        return per_worker if per_worker > 1 else 0

    def applies(self, path: str | os.PathLike, fmt: str) -> bool:
        if self.workers < 2 or fmt not in FORMATS:
            return False
        try:
            return os.path.isfile(path) and os.path.getsize(path) >= self.min_bytes and not is_compressed(path)
        except OSError:
            return False


def parallel_reader(parallel: Parallel | None, path: str, fmt: str):
    """The reader to use for ``path`` (``reader(path, ctx)``), or ``None`` for the format's own."""
    if parallel is None or not parallel.applies(path, fmt):
        return None
    return lambda p, ctx: _read_v1(p, ctx, parallel)


@dataclass(eq=False)
class _Range:
    """What a worker read from one range: lines numbered from the range's start."""

    rows: CheckedRows | None
    bad: list = field(default_factory=list)  # BadRecord of the bad lines, the first ``keep`` of them
    n_bad: int = 0  # all of them
    by_reason: Counter = field(default_factory=Counter)  # all of them
    n_skipped: int = 0
    nonblank: int = 0
    longs: int = 0
    newlines: int = 0
    end: int = 0


class _Stop(Exception):
    """A worker of a strict read met its first bad line: nothing after it can matter."""


class _FirstBad(Sink):
    """A strict read's worker: keep the first bad line, then stop (the reading process raises it, or an earlier
    one); a strict read that meets a 2 GB line stops once the line passes the limit, as the serial one does."""

    def bad(self, *a, **kw) -> None:
        super().bad(*a, **kw)
        raise _Stop


class _Checker(TweetBuilder):
    """A worker's builder: a chunk's rows come out checked one row at a time, not committed."""

    def flush(self) -> CheckedRows | None:  # type: ignore[override]
        return self.checked() if len(self) else None


def _read_range(
    path: str, start: int, end: int, chunk: int, max_record: int, keep: int, strict: bool = False
) -> _Range:
    """Run in a worker: the rows and bad lines of ``path[start:end]`` (in strict mode, up to the first bad line)."""
    report = ReadReport(max_shown=keep)
    # collects; the reading process decides what strict mode raises
    sink = (_FirstBad if strict else Sink)(path, "skip-bad", report)
    builder = v1_builder(sink, cls=_Checker)
    longs = LongLines(sink, max_record)
    blocks = LineBlocks(path, None, max_line=max_record, too_long=longs, start=start, end=end)
    counts = V1Counts()
    parts: list[CheckedRows] = []
    try:
        for p in v1_chunks(blocks.lines(), sink, builder, chunk, counts):
            if p is not None:
                parts.append(p)
    except _Stop:
        counts.nonblank = 1  # not an empty file: it has a bad line (and the read raises there or before)
    last = builder.flush()
    if last is not None:
        parts.append(last)
    return _Range(
        rows=CheckedRows.concat(parts) if parts else None,
        bad=list(report.shown),
        n_bad=report.n_bad,
        by_reason=report.by_reason,
        n_skipped=report.n_skipped,
        nonblank=counts.nonblank,
        longs=longs.n,
        newlines=blocks.newlines,
        end=end,
    )


_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with(parent: int) -> None:
    """Linux: this process gets SIGKILL when the thread that forked it ends (the reading process's thread, which
    joins its workers before it ends), and exits now if ``parent`` is already gone. Elsewhere, nothing: a
    worker whose parent is gone still ends at its next send (the pipe is broken, :func:`_serve`)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died between the fork and the prctl
        os._exit(1)


def _inherited_fds() -> list[int]:
    for folder in ("/proc/self/fd", "/dev/fd"):
        with contextlib.suppress(OSError):
            return sorted(int(name) for name in os.listdir(folder))
    return []


def _detach(parent: int, keep: int, pipes: list) -> None:
    """In a worker, first thing: let go of what it inherited from the reading process (see the module). ``keep``
    is the descriptor of its own pipe's write end; ``pipes`` the read ends of every worker's pipe."""
    _die_with(parent)
    for other in pipes:
        with contextlib.suppress(OSError):
            other.close()
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in _inherited_fds():
            if fd <= 2 or fd in (keep, null):  # standard streams stay, for the worker's own error output
                continue
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.dup2(null, fd)  # not close(): a later write through a stale handle must not hit a new file
            except OSError:  # closed meanwhile (the listing's own descriptor)
                continue
    finally:
        os.close(null)


# a send's errors once the reading process is gone (its end of the pipe closed with it)
_GONE = (BrokenPipeError, ConnectionResetError, EOFError)


def _serve(
    conn,
    path: str,
    ranges: list[tuple[int, int]],
    kw: dict,
    parent: int,
    pipes: list,
    spool: str | None = None,
    ahead=None,
) -> None:
    """A worker process: read ``ranges`` in turn, each result (or the error) down ``conn``; with a ``spool``
    folder, each result into a file of it and its name down ``conn``, reading a range only once ``ahead`` (a
    semaphore the reading process releases as it takes a result) lets it. Returns quietly when the reading
    process is gone: nobody is left to tell."""
    _detach(parent, conn.fileno(), pipes)
    if ahead is not None:
        # reading ahead, on what the reading process and the database leave: at the lowest priority, so that the
        # merge the reading process waits for is never the slower for it (benchmarks/data_layer.md)
        with contextlib.suppress(OSError):
            os.nice(19)
    try:
        for i, (a, b) in enumerate(ranges):
            if ahead is not None:
                ahead.acquire()
            result = _read_range(path, a, b, **kw)
            conn.send((True, _spooled(result, spool, i) if spool else result))
    except _GONE:
        return
    except BaseException as exc:  # whatever it is, the reading process raises it
        with contextlib.suppress(*_GONE):
            try:
                conn.send((False, exc))
            except _GONE:
                raise
            except Exception:  # one that does not pickle: its traceback instead
                conn.send((False, RuntimeError(traceback.format_exc())))
    finally:
        conn.close()


def _spooled(result: _Range, spool: str, i: int) -> _Range | str:
    """``result`` written to a file of ``spool``: the file's name; ``result`` itself where it cannot be written
    (a full disk costs the read-ahead, not the read)."""
    name = os.path.join(spool, f"{os.getpid()}-{i}")
    try:
        with open(name, "wb") as fh:
            pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(name)
        return result
    return name


def _unspooled(value: _Range | str) -> _Range:
    """A worker's result as :func:`_spooled` sent it, its file removed."""
    if not isinstance(value, str):
        return value
    try:
        with open(value, "rb") as fh:
            return pickle.load(fh)
    finally:
        os.unlink(value)


class _Readers:
    """``workers`` forked processes: worker ``w`` reads ranges ``w``, ``w + workers``, ... in turn and sends each
    result down its own pipe, so this process takes them in file order, and a worker runs at most about one range
    ahead (a send waits for the receive once the pipe's buffer is full): memory stays bounded.

    With ``ahead`` > 0 a worker runs up to ``ahead`` of its ranges ahead instead, its results waiting in files of
    a spool folder (removed by :meth:`close`) and their names in its pipe: while the reading process is busy
    elsewhere (an import merges a part of the upload, and the database takes one core: ``monitor.services.ingest``)
    the workers go on reading on the core it leaves, and this process's memory still holds one range. Each worker
    has its own semaphore: with one shared by all, a worker that ran ahead could hold every permit while the
    reading process waits for the other worker's next range.

    A pool (``Pool.apply_async``) was tried first: billiard's takes about a second to close or terminate (its
    handler threads poll), which is a sixth of the read it saves.
    """

    def __init__(self, path: str, ranges: list[tuple[int, int]], workers: int, kw: dict, ahead: int = 0) -> None:
        try:
            import billiard as mp
        except ImportError:  # pragma: no cover - installed with Celery
            import multiprocessing as mp
        ctx = mp.get_context("fork")
        self.procs: list = []
        self.conns: list = []
        self.aheads: list = []
        self.spool: str | None = None
        self.n = len(ranges)
        parent = os.getpid()
        try:
            ahead = min(ahead, self.n)  # a semaphore's count is bounded: never more than the file's ranges
            if ahead > 0:
                self.spool = tempfile.mkdtemp(prefix="spreadwatch-read-")
            for w in range(workers):
                recv, send = ctx.Pipe(duplex=False)
                self.conns.append(recv)
                self.aheads.append(ctx.Semaphore(ahead) if ahead > 0 else None)
                # the worker closes every read end it inherits: its own, and those of the workers before it
                args = (send, path, ranges[w::workers], kw, parent, list(self.conns), self.spool, self.aheads[w])
                proc = ctx.Process(target=_serve, args=args, daemon=True)
                proc.start()
                self.procs.append(proc)
                send.close()
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> Iterator[_Range]:
        """The results in file order; raises what a worker raised, or if one ended without a result."""
        k = len(self.procs)
        for i in range(self.n):
            conn, proc = self.conns[i % k], self.procs[i % k]
            while not conn.poll(1.0):
                if not proc.is_alive() and not conn.poll(0):
                    raise RuntimeError(f"a reader process ended (exit code {proc.exitcode}) before its range")
            ok, value = conn.recv()
            if not ok:
                raise value
            result = _unspooled(value)
            if self.aheads[i % k] is not None:
                self.aheads[i % k].release()
            yield result

    def close(self) -> None:
        """Stop the workers still running (a strict read that stopped early) and wait for every one."""
        for proc in self.procs:
            if proc.is_alive():
                proc.terminate()
        for proc in self.procs:
            proc.join()
        for conn in self.conns:
            conn.close()
        if self.spool is not None:
            shutil.rmtree(self.spool, ignore_errors=True)


def _readers(path: str, ranges: list[tuple[int, int]], workers: int, kw: dict, ahead: int = 0) -> _Readers | None:
    """The worker processes, or ``None`` (with a log line) where none can be started."""
    try:
        return _Readers(path, ranges, workers, kw, ahead)
    except (AssertionError, OSError, ValueError) as exc:
        log.warning("reading on one core: cannot start %d reader processes (%s)", workers, exc)
        return None


class _Chunks:
    """The serial reader's chunks, rebuilt: rows come in by ranges; a chunk is committed after the line that
    brings it to ``chunk`` rows or more, as :func:`~.twitter_v1.v1_chunks` flushes."""

    def __init__(self, commit, chunk: int) -> None:
        self.commit, self.chunk = commit, chunk
        self.parts: list[CheckedRows] = []
        self.n = 0

    def feed(self, rows: CheckedRows) -> Iterator:
        if len(rows):
            self.parts.append(rows)
            self.n += len(rows)
        while self.n >= self.chunk:
            pending = CheckedRows.concat(self.parts)
            rec = pending.rec
            cut = int(np.searchsorted(rec, rec[self.chunk - 1], side="right"))  # the end of that row's record
            if cut < self.chunk:  # keys decrease: ranges out of order or lines numbered wrong
                raise RuntimeError(f"record keys out of order near line {int(pending.line[cut])}")
            self.parts = [pending.slice(cut, len(pending))] if cut < len(pending) else []
            self.n = len(pending) - cut
            yield self.commit(pending.slice(0, cut))

    def take(self) -> CheckedRows | None:
        """The pending rows (a partial chunk), taken."""
        if not self.parts:
            return None
        pending = CheckedRows.concat(self.parts)
        self.parts, self.n = [], 0
        return pending


def _read_v1(path: str, ctx: Ctx, parallel: Parallel) -> Iterator[tuple[str, object]]:
    size = os.path.getsize(path)
    # a cut that finds no newline in the next MiB or record limit is inside a line too long to read: the rest of
    # the file is one range (a strict read stops on that line soon after, as the serial read does)
    ranges = line_ranges(path, size, parallel.range_bytes, max_scan=max(ctx.max_record + 1, 1 << 20))
    sink = ctx.sink
    keep = 1 if sink.strict else max(sink.report.max_shown, 1)
    kw = {"chunk": ctx.chunk_size, "max_record": ctx.max_record, "keep": keep, "strict": sink.strict}
    workers = min(parallel.workers, len(ranges))
    readers = _readers(path, ranges, workers, kw, parallel.ahead_ranges()) if workers > 1 else None
    if readers is None:
        from .twitter_v1 import read_v1

        yield from read_v1(path, ctx)
        return
    report = sink.report
    builder = v1_builder(sink, ctx.seen)

    def commit(rows: CheckedRows):
        """``builder.commit`` as the serial reader's ``builder.flush`` runs it: not re-entered by its own raise."""
        hook, sink.before_raise = sink.before_raise, None
        try:
            return builder.commit(rows)
        finally:
            sink.before_raise = hook

    chunks = _Chunks(commit, ctx.chunk_size)

    def before_raise() -> None:  # the serial reader's ``builder.flush``: commit what is pending (may raise)
        pending = chunks.take()
        if pending is not None:
            commit(pending)

    sink.before_raise = before_raise
    base = 0  # lines before the range
    nonblank = longs = 0
    try:
        for r in readers:
            rows = r.rows
            pos = 0
            if rows is not None:
                rows.shift_lines(base)
            for rec in r.bad:
                line = rec.line + base
                if rows is not None:  # the rows of the lines before this one come first
                    k = int(np.searchsorted(rows.line, line))
                    yield from (("tweets", t) for t in chunks.feed(rows.slice(pos, k)) if len(t))
                    pos = k
                detail = None if rec.reason == rec.kind else rec.reason.removeprefix(f"{rec.kind}: ")
                sink.bad(line, rec.field, rec.kind, detail)
            if rows is not None:
                yield from (("tweets", t) for t in chunks.feed(rows.slice(pos, len(rows))) if len(t))
            if r.n_bad > len(r.bad):  # the ones the worker did not keep: no report shows them, count them
                rest = r.by_reason.copy()
                rest.subtract(Counter(b.category for b in r.bad))
                report.n_bad += r.n_bad - len(r.bad)
                report.by_reason.update(+rest)
            report.n_skipped += r.n_skipped
            nonblank += r.nonblank
            longs += r.longs
            base += r.newlines
            ctx.progress.at(r.end)
        if not nonblank and not longs:
            sink.bad_file("empty file")
        pending = chunks.take()
        if pending is not None:
            table = commit(pending)
            if len(table):
                yield "tweets", table
        sink.before_raise = None
    finally:
        readers.close()
