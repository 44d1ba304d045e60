"""Reading one uploaded input into the staging area: its format, its size for progress, its bad records."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from compute.formats import (
    AUTO,
    FORMATS,
    MAX_RECORD_BYTES,
    InputError,
    Parallel,
    ReadReport,
    SeenTweets,
    detect_format,
    iter_follows,
    iter_tweets,
    read,
)
from compute.formats._io import head_bytes
from compute.formats._report import BadRecord
from compute.formats.detect import not_text_reason

from ..uploads import UploadError
from .stager import Stager

__all__ = ["detect", "input_size", "read_into"]


def detect(path: Path, shown: str, fmt: str) -> str:
    """The format of an input: ``fmt`` when the analyst chose one, else detected from the content."""
    if fmt not in ("", AUTO):
        if fmt not in FORMATS:
            raise UploadError(f"{shown}: unknown format {fmt!r}; want one of {', '.join(FORMATS)}")
        if FORMATS[fmt].streams and path.is_file():
            # a text format chosen for a binary or wrongly encoded file: say what the file is, once, rather
            # than a bad record (in mojibake) for each of its "lines"
            reason = not_text_reason(head_bytes(path, 1 << 16), strong_only=True)
            if reason is not None:
                raise UploadError(f"{shown}: {reason}")
        return fmt
    try:
        return detect_format(path)
    except (ValueError, OSError) as exc:
        # the reader names our storage path: name the file as uploaded, once
        msg = str(exc).removeprefix(f"{path}: ").replace(str(path), shown)
        raise UploadError(f"{shown}: {msg}") from None


def input_size(p: Path) -> int:
    """Bytes of a file, or of every file in a folder (trees, TUDataset), for progress."""
    if p.is_dir():
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return p.stat().st_size


def read_into(
    st: Stager,
    path: Path,
    shown: str,
    fmt: str,
    mode: str,
    report: ReadReport,
    on_bytes: Callable[[int, int], None],
    *,
    max_record: int = MAX_RECORD_BYTES,
    seen: SeenTweets | None = None,
) -> None:
    """Stage every record of one input; bad records name the file as uploaded (``shown``). A format that
    streams (:attr:`FormatSpec.streams`) is staged a chunk at a time; the others are read whole. A large v1.1
    JSONL file is parsed by ``SPREADWATCH_READ_WORKERS`` processes, with the same rows and report; follow edges are
    parsed up to ``SPREADWATCH_FOLLOWS_AHEAD_ROWS`` ahead in a thread while the stager merges the part before."""
    kw = {"mode": mode, "report": report, "max_record_bytes": max_record}
    if settings.SPREADWATCH_READ_CHUNK_ROWS:
        kw["chunk_size"] = settings.SPREADWATCH_READ_CHUNK_ROWS
    spec = FORMATS[fmt].of(path)
    parallel = Parallel(
        workers=settings.SPREADWATCH_READ_WORKERS,
        min_bytes=settings.SPREADWATCH_READ_PARALLEL_BYTES,
        range_bytes=settings.SPREADWATCH_READ_RANGE_BYTES,
        ahead_bytes=settings.SPREADWATCH_READ_AHEAD_BYTES,
    )
    with _shown_as(report, str(path), shown):
        if spec.streams:
            # a format read in two passes (tweets, then follows) would report its bytes twice: no live bytes
            live = on_bytes if spec.has_tweets != spec.has_follows else None
            if spec.has_tweets:
                for chunk in iter_tweets(path, fmt, progress=live, seen=seen, parallel=parallel, **kw):
                    st.add_tweets(chunk)
                    st.maybe_flush()
            if spec.has_follows:
                ahead = settings.SPREADWATCH_FOLLOWS_AHEAD_ROWS
                for chunk in iter_follows(path, fmt, progress=live, ahead_rows=ahead, **kw):
                    st.add_follows(chunk)
                    st.maybe_flush()
        else:  # trees, tudataset, spreading-graph npz: read whole (labels and graphs come with the read)
            # counted into the upload's report as it reads: the progress counts the records (a tree file's lines)
            # while the input is read, not 0 until the end
            r = read(path, fmt, mode=mode, progress=on_bytes, max_record_bytes=max_record, report=report)
            if r.graphs is not None:
                st.add_graphs(r.graphs)
            if r.tweets is not None:
                st.add_tweets(r.tweets, labels=r.labels)
            if r.follows is not None:
                st.add_follows(r.follows)
            st.maybe_flush()


@contextmanager
def _shown_as(report: ReadReport, real: str, shown: str) -> Iterator[None]:
    """Bad records name the file as the analyst uploaded it, not our storage path."""
    first = len(report.shown)
    try:
        yield
    except InputError as exc:
        rec = exc.record
        raise InputError(BadRecord(_rename(rec.path, real, shown), rec.line, rec.field, rec.reason, rec.kind)) from None
    finally:
        for i in range(first, len(report.shown)):
            r = report.shown[i]
            report.shown[i] = BadRecord(_rename(r.path, real, shown), r.line, r.field, r.reason, r.kind)
        report.files[:] = [_rename(f, real, shown) for f in report.files]
        report.skipped_files[:] = [_rename(f, real, shown) for f in report.skipped_files]


def _rename(path: str, real: str, shown: str) -> str:
    return shown + path[len(real) :] if path.startswith(real) else path
