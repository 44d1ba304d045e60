"""Readers for every input format of docs/formats.md, streaming, with bad records named by file, line and field.

>>> res = read("tweets.jsonl")                       # format detected from the content
>>> res.tweets, res.report.n_bad
>>> for chunk in iter_tweets("big.jsonl.gz", mode="skip-bad"):   # bounded memory, ~200K rows a chunk
...     ...

Formats (:data:`FORMATS`, the one registry of them, in :mod:`.registry`): ``csv`` (tweets CSV), ``follows``
(follows CSV or edge list), ``v1`` (API v1.1 JSONL), ``v2`` (API v2 JSONL, twarc2 pages or flattened tweets),
``trees`` (Twitter15/16 cascade trees), ``tudataset`` (the thesis' spreading graphs), ``npz`` (our
spreading-graph or collection archive). Text inputs may be gzip, bzip2 or xz compressed; a UTF-8 BOM is skipped.

``mode="strict"`` raises :class:`InputError` on the first bad record; ``mode="skip-bad"`` leaves bad records
out, counts them in :class:`ReadReport` and lists the first ``max_shown``. Only NumPy is required: msgspec
(fastest) or orjson speed up the JSON readers when installed.

What every reader refuses, besides values it cannot parse (:mod:`.limits` has the numbers): a record longer
than ``max_record_bytes`` (16 MiB unless the caller says otherwise; never read whole), a CSV quote that is never
closed, a time before 2006-03-21 or more than a day in the future, a follower count above 10**9, and a tweet id
read again with another author, time or retweeted tweet (:class:`SeenTweets`: identical repeats are fine). A
problem of a whole file (empty, no header, unreadable...) is one bad record that also lists the file in
``report.skipped_files``: strict mode stops there, skip-bad mode skips the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from ..structures import Cascades, FollowerGraph, SpreadingGraphs
from ..tables import FollowTable, TweetTable, concat_follows, concat_tweets
from ._ahead import read_ahead
from ._dups import SeenTweets
from ._fields import Ctx
from ._io import Progress, input_size
from ._parallel import Parallel, parallel_reader
from ._report import MODES, BadRecord, InputError, ReadReport, Sink
from ._tweets import empty_tweets
from .detect import detect_format
from .limits import MAX_RECORD_BYTES
from .registry import AUTO, FORMATS, FormatSpec, format_choices
from .timeparse import parse_time, parse_times, snowflake_time
from .tudataset import tudataset_files

__all__ = [
    "AUTO",
    "FORMATS",
    "FormatSpec",
    "format_choices",
    "MODES",
    "BadRecord",
    "ReadReport",
    "InputError",
    "ReadResult",
    "SeenTweets",
    "Parallel",
    "MAX_RECORD_BYTES",
    "detect_format",
    "read",
    "iter_tweets",
    "iter_follows",
    "read_many",
    "parse_time",
    "parse_times",
    "snowflake_time",
]

ProgressFn = Callable[[int, int], None]


@dataclass(eq=False)
class ReadResult:
    """Everything read from one input (or several, :func:`read_many`).

    ``tweets`` / ``follows`` are ``None`` when the format carries none (an empty table when it does but every
    record was bad); ``graphs`` comes from a TUDataset or spreading-graph archive, ``follower_graph`` from a
    collection archive; ``labels`` maps tweet (cascade) id to truth label.
    """

    format: str
    tweets: TweetTable | None = None
    follows: FollowTable | None = None
    graphs: SpreadingGraphs | None = None
    follower_graph: FollowerGraph | None = None
    labels: dict[int, str] = field(default_factory=dict)
    report: ReadReport = field(default_factory=ReadReport)

    def __repr__(self) -> str:
        parts = [f"format={self.format!r}"]
        if self.tweets is not None:
            parts.append(f"tweets={len(self.tweets)}")
        if self.follows is not None:
            parts.append(f"follows={len(self.follows)}")
        if self.graphs is not None:
            parts.append(f"graphs={self.graphs.n_cascades}")
        if self.follower_graph is not None:
            parts.append(f"follower_graph={self.follower_graph.n_users} users/{self.follower_graph.n_edges} edges")
        parts.append(f"labels={len(self.labels)}")
        parts.append(f"bad={self.report.n_bad}")
        return f"ReadResult({', '.join(parts)})"


def _check_args(format: str, mode: str, max_record_bytes: int = MAX_RECORD_BYTES) -> None:
    if int(max_record_bytes) < 1:
        raise ValueError(f"max_record_bytes must be positive, not {max_record_bytes!r}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if format != AUTO and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; want 'auto' or one of {', '.join(FORMATS)}")


def _resolve(path: str | os.PathLike, format: str) -> str:
    return detect_format(path) if format == AUTO else format


def _size(path: str | os.PathLike, fmt: str) -> int:
    """Bytes the read will go through, for progress (a TUDataset may be given by its prefix)."""
    if fmt == "tudataset":
        files = tudataset_files(path)
        return sum(f.stat().st_size for f in files.values()) if files else 0
    return input_size(path)


def _stream(
    path, fmt: str, mode: str, report: ReadReport, progress: Progress, parallel: Parallel | None = None, **ctx_kw
) -> tuple[Ctx, Iterator]:
    shown = os.fspath(path)
    report.files.append(shown)
    ctx = Ctx(path=shown, sink=Sink(shown, mode, report), progress=progress, **ctx_kw)
    reader = parallel_reader(parallel, shown, fmt) or FORMATS[fmt].reader
    return ctx, reader(shown, ctx)


def _read_one(path, fmt: str, mode: str, report: ReadReport, progress: Progress, **ctx_kw) -> ReadResult:
    ctx, parts = _stream(path, fmt, mode, report, progress, **ctx_kw)
    first_shown = len(report.shown)
    tweets: list[TweetTable] = []
    follows: list[FollowTable] = []
    res = ReadResult(format=fmt, report=report)
    for kind, obj in parts:
        if kind == "tweets":
            tweets.append(obj)
        elif kind == "follows":
            follows.append(obj)
        elif kind == "graphs":
            res.graphs = obj
        elif kind == "follower_graph":
            res.follower_graph = obj
    spec = FORMATS[fmt].of(path)
    if spec.has_tweets:
        res.tweets = concat_tweets(tweets) if tweets else empty_tweets(spec.text)
        if spec.text and res.tweets.screen_name is None:
            res.tweets = empty_tweets(True)
    if "follows" in spec.holds:  # a collection archive's follower graph stays a graph here
        res.follows = concat_follows(follows)
    res.labels = ctx.labels
    # bad times are found a chunk at a time, after the line's other checks: list this file's records in order
    report.shown[first_shown:] = sorted(report.shown[first_shown:], key=lambda r: (r.path, r.line is None, r.line or 0))
    return res


def read(
    path: str | os.PathLike,
    format: str = "auto",
    *,
    mode: str = "strict",
    max_shown: int = 20,
    progress: ProgressFn | None = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
    seen: SeenTweets | None = None,
    report: ReadReport | None = None,
) -> ReadResult:
    """Read one input whole. ``format="auto"`` detects it from the content (:func:`detect_format`);
    ``progress(bytes_done, bytes_total)`` is called now and then. A record longer than ``max_record_bytes`` is
    a bad record; ``seen`` carries the tweet ids of inputs read before, for conflicting duplicates across them.
    ``report``: a report to count into (then ``max_shown`` is its own) instead of a new one: its counts grow while
    the input is read, so a caller's progress can say how many records it has read so far."""
    _check_args(format, mode, max_record_bytes)
    fmt = _resolve(path, format)
    total = _size(path, fmt)
    prog = Progress(progress, total)
    report = ReadReport(max_shown=max_shown) if report is None else report
    res = _read_one(path, fmt, mode, report, prog, max_record=int(max_record_bytes), seen=seen)
    prog.base = 0
    prog.at(total)
    return res


def iter_tweets(
    path: str | os.PathLike,
    format: str = "auto",
    *,
    mode: str = "strict",
    chunk_size: int = 200_000,
    report: ReadReport | None = None,
    progress: ProgressFn | None = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
    seen: SeenTweets | None = None,
    parallel: Parallel | None = None,
) -> Iterator[TweetTable]:
    """Stream the tweets of one input as ``TweetTable`` chunks of about ``chunk_size`` rows (bounded memory,
    plus about 50-80 bytes per distinct tweet id for the duplicate check).

    Bad records go to ``report`` (skip-bad) or raise ``InputError`` (strict). Labels are not returned here;
    use :func:`read` for them. ``progress(bytes_done, bytes_total)`` is called now and then;
    ``max_record_bytes`` and ``seen`` as for :func:`read`. With ``parallel`` (:class:`Parallel`), a large
    enough file of a format that allows it is parsed by several processes; the tables and the report are the
    same as the serial reader's (:mod:`._parallel`).
    """
    _check_args(format, mode, max_record_bytes)
    fmt = _resolve(path, format)
    if not FORMATS[fmt].of(path).has_tweets:
        raise ValueError(f"{os.fspath(path)}: a {fmt!r} input holds no tweets (use read() for its graphs)")
    report = ReadReport() if report is None else report
    prog = Progress(progress, _size(path, fmt) if progress else 0)
    _, parts = _stream(
        path, fmt, mode, report, prog, parallel, chunk_size=chunk_size, want_follows=False,
        max_record=int(max_record_bytes), seen=seen,
    )  # fmt: skip
    for kind, obj in parts:
        if kind == "tweets" and len(obj):
            yield obj


def iter_follows(
    path: str | os.PathLike,
    format: str = "auto",
    *,
    mode: str = "strict",
    chunk_size: int = 1_000_000,
    report: ReadReport | None = None,
    progress: ProgressFn | None = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
    ahead_rows: int = 0,
) -> Iterator[FollowTable]:
    """Stream the follow edges of one input (follows file, cascade trees, or a collection archive's graph)
    as ``FollowTable`` chunks of about ``chunk_size`` edges; ``progress`` and ``max_record_bytes`` as for
    :func:`iter_tweets`. With ``ahead_rows`` > 0 the next chunks are parsed in a thread, up to that many edges
    ahead of the caller, while the caller works on the current one (:mod:`._ahead`): the same chunks, errors
    and report, progress called from the caller's thread."""
    _check_args(format, mode, max_record_bytes)
    fmt = _resolve(path, format)
    if not FORMATS[fmt].of(path).has_follows:
        raise ValueError(f"{os.fspath(path)}: a {fmt!r} input holds no follow edges")
    report = ReadReport() if report is None else report
    total = _size(path, fmt) if progress else 0

    def chunks(on_progress: ProgressFn | None) -> Iterator[FollowTable]:
        _, parts = _stream(
            path, fmt, mode, report, Progress(on_progress, total), follow_chunk=chunk_size, want_tweets=False,
            follows_from_graph=True, max_record=int(max_record_bytes),
        )  # fmt: skip
        try:
            for kind, obj in parts:
                if kind == "follows" and len(obj):
                    yield obj
        finally:
            if hasattr(parts, "close"):
                parts.close()

    if ahead_rows > 0:
        yield from read_ahead(chunks, int(ahead_rows), progress)
    else:
        yield from chunks(progress)


def read_many(
    paths: Iterable[str | os.PathLike],
    format: str = "auto",
    *,
    mode: str = "strict",
    max_shown: int = 20,
    progress: ProgressFn | None = None,
    max_record_bytes: int = MAX_RECORD_BYTES,
) -> ReadResult:
    """Read several inputs into one result: tweets and follows concatenated, graphs appended, labels merged,
    one report. Each input is detected on its own with ``format="auto"`` (e.g. tweets + a follows file); a tweet
    id that one input gives differently from an earlier one is a bad record of the later input."""
    paths = list(paths)
    _check_args(format, mode, max_record_bytes)
    seen = SeenTweets()
    fmts = [_resolve(p, format) for p in paths]
    sizes = [_size(p, f) for p, f in zip(paths, fmts)]
    prog = Progress(progress, sum(sizes))
    report = ReadReport(max_shown=max_shown)
    results = []
    offset = 0
    for p, fmt, size in zip(paths, fmts, sizes):
        prog.base = offset
        results.append(_read_one(p, fmt, mode, report, prog, max_record=int(max_record_bytes), seen=seen))
        offset += size
    prog.base = 0
    prog.at(prog.total)
    kinds = list(dict.fromkeys(fmts))
    out = ReadResult(format=kinds[0] if len(kinds) == 1 else ("mixed" if kinds else "none"), report=report)
    tweets = [r.tweets for r in results if r.tweets is not None]
    if tweets:
        out.tweets = concat_tweets(tweets)
        if len(out.tweets) == 0:
            text = any(t.screen_name is not None for t in tweets)
            entities = any(t.hashtags is not None for t in tweets)
            if text or entities:
                out.tweets = empty_tweets(text, entities)
    follows = [r.follows for r in results if r.follows is not None]
    if follows:
        out.follows = concat_follows(follows)
    graphs = [r.graphs for r in results if r.graphs is not None]
    if graphs:
        out.graphs = graphs[0] if len(graphs) == 1 else concat_graphs(graphs)
    fgs = [r.follower_graph for r in results if r.follower_graph is not None]
    if len(fgs) == 1:
        out.follower_graph = fgs[0]
    elif fgs:
        edges = [g.to_edges() for g in fgs]
        out.follower_graph = FollowerGraph.from_edges(
            np.concatenate([e[0] for e in edges]),
            np.concatenate([e[1] for e in edges]),
            user_ids=np.concatenate([g.user_ids for g in fgs]),
        )
    for r in results:
        out.labels.update(r.labels)
    return out


def concat_graphs(graphs: list[SpreadingGraphs]) -> SpreadingGraphs:
    """Spreading graphs of several inputs as one set (node and edge indices shifted)."""
    cs = [g.cascades for g in graphs]
    node_base = np.cumsum([0] + [c.n_nodes for c in cs])
    edge_base = np.cumsum([0] + [g.n_edges for g in graphs])
    units = {c.unit for c in cs}
    unit = "followers" if units == {"followers"} else "retweeters"
    followers = [c.followers if unit == "followers" or c.unit == "retweeters" else np.ones(c.n_nodes) for c in cs]
    times = None if any(c.times is None for c in cs) else np.concatenate([c.times for c in cs])
    labels = None
    if any(c.labels is not None for c in cs):
        labels = np.concatenate(
            [c.labels if c.labels is not None else np.full(c.n_cascades, None, dtype=object) for c in cs]
        )
    orphans = {g.orphans for g in graphs}
    cascades = Cascades(
        node_offsets=np.concatenate([[0]] + [c.node_offsets[1:] + b for c, b in zip(cs, node_base)]),
        user_ids=np.concatenate([c.user_ids for c in cs]),
        followers=np.concatenate(followers),
        publisher=np.concatenate([c.publisher + b for c, b in zip(cs, node_base)]),
        tweet_ids=np.concatenate([c.tweet_ids for c in cs]),
        times=times,
        unit=unit,
        labels=labels,
    )
    idx = np.int64 if node_base[-1] >= 2**31 else np.int32
    return SpreadingGraphs(
        cascades,
        np.concatenate([[0]] + [g.edge_offsets[1:] + b for g, b in zip(graphs, edge_base)]),
        np.concatenate([g.edge_src.astype(idx) + b for g, b in zip(graphs, node_base)]).astype(idx),
        np.concatenate([g.edge_dst.astype(idx) + b for g, b in zip(graphs, node_base)]).astype(idx),
        orphans=orphans.pop() if len(orphans) == 1 else "given",
    )


__all__ += ["concat_graphs"]
