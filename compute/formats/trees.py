"""Twitter15/16 cascade trees (Ma et al. 2017): a folder with ``tree/<source_id>.txt`` and ``label.txt``.

Each tree line is ``['uid', 'tweet_id', 'delay_minutes']->['uid', 'tweet_id', 'delay_minutes']``. What we
make of a tree (docs/formats.md lists the formats):

* tweets: one original per tree, ``tweet_id`` = the source id (the file name), user = the child of the
  ``ROOT`` line; one retweet row per other uid, ``retweeted_tweet_id`` = the source id and ``tweet_id`` = **0**
  (the tree's per-line tweet ids are mostly the source id again, so a retweet's own id is unknown; nothing
  downstream needs it — dedupe originals by ``tweet_id`` only where ``retweeted_tweet_id == -1``);
  ``followers_count`` NaN (the trees carry none, so n_v = 1 downstream);
* times: ``snowflake_time(source_id) + delay_minutes * 60``, a uid keeping its smallest delay. The delays are
  minutes after the source tweet, so in the usual tree the ROOT child has delay 0 and the original's time is the
  source id's own snowflake time. In a few trees (9 of Twitter16's 818) the ROOT child has a *negative* delay:
  the cascade began with an earlier tweet; the publisher then keeps that earlier time, which keeps it before
  its retweeters, as the delays say;
* follows: a line parent -> child means *child follows parent*: ``FollowTable(follower=child, followee=parent)``;
  ``ROOT`` lines and self lines give none;
* labels: ``label.txt`` lines ``label:source_id`` -> ``{source_id: label}``.

Real trees are messy (about 1% of lines go backward in time, some tie, some are self lines): none of that is a
reader error; only malformed lines are. ``lines`` of the tweet rows are line numbers within each tree's own file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..tables import NO_TWEET, FollowTable, TweetTable
from ._fields import Bad, Ctx, to_id
from ._io import LineBlocks, head_bytes
from ._report import LongLines
from .limits import TIME_MIN, fmt_time, time_max
from .timeparse import SNOWFLAKE_MIN_ID, snowflake_time

__all__ = ["read_trees", "sniff_line", "sniff_path", "tree_files", "RETWEET_ID"]

#: ``tweet_id`` of the retweet rows a tree yields (their own ids are unknown).
RETWEET_ID = 0

_Q = r"""\s*['"]([^'"]*)['"]\s*"""
_LINE = re.compile(rf"^\[{_Q},{_Q},{_Q}\]\s*->\s*\[{_Q},{_Q},{_Q}\]$")
_LABEL = re.compile(r"^\s*([^:\s][^:]*?)\s*:\s*(\S+)\s*$")


def tree_files(path: str | Path) -> tuple[list[Path], Path | None]:
    """The tree files and the label file of a Twitter15/16 folder (or of a single tree file)."""
    p = Path(path)
    if p.is_file():
        label = p.parent.parent / "label.txt" if p.parent.name == "tree" else None
        return [p], label if label is not None and label.is_file() else None
    tree_dir = p / "tree" if (p / "tree").is_dir() else p
    files = sorted(f for f in tree_dir.glob("*.txt") if f.name != "label.txt")
    label = p / "label.txt"
    return files, label if label.is_file() else None


def _delay(s: str, field: str, t0: float, t1: float, base: float) -> float:
    """A delay in minutes that puts the tweet between ``t0`` and ``t1`` (epoch seconds) after ``base``."""
    try:
        d = float(s)
    except ValueError:
        raise Bad(field, "not a number", repr(s)) from None
    if not math.isfinite(d):
        raise Bad(field, "not a finite number", repr(s))
    t = base + d * 60.0
    if not t0 <= t <= t1:
        why = "before Twitter existed (2006-03-21)" if t < t0 else "in the future"
        raise Bad(field, "time out of range", f"a delay of {s} minutes puts the tweet at {fmt_time(t)}, {why}")
    return d


def _uid(s: str, field: str) -> int:
    if not s:
        raise Bad(field, "missing required field")
    return to_id(s, field)


def _lines(f: Path, shown: str, sink, longs: LongLines) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of the non-blank lines of ``f``, streamed; a line that is not UTF-8 or longer than
    the record limit is reported (a bad record) and left out."""
    blocks = LineBlocks(f, None, max_line=longs.limit, too_long=longs)
    for lineno, raw in blocks.lines():
        try:
            s = str(raw, "utf-8").strip()
        except UnicodeDecodeError as exc:
            sink.bad(lineno, None, "undecodable bytes (not UTF-8)", f"byte {exc.start}", path=shown)
            continue
        if s:
            yield lineno, s


def _parse_tree(f: Path, shown: str, sink, limit: int):
    """Parse one tree file; returns (source id, publisher uid, {uid: [delay, first line]}, follow pairs, n_good)
    or ``None`` when the tree cannot be used (reported)."""
    try:
        source = to_id(f.stem, "file name")
    except Bad:
        sink.bad_file("tree file name is not a tweet id", repr(f.name), path=shown)
        return None
    if source < SNOWFLAKE_MIN_ID:
        sink.bad_file("tree file name is not a snowflake tweet id, so the tree has no time", repr(f.name), path=shown)
        return None
    base = snowflake_time(source)
    t0, t1 = TIME_MIN, time_max()
    if base > t1:
        sink.bad_file("time out of range", f"the tweet id in the file name {f.name!r} is from the future", path=shown)
        return None
    publisher: int | None = None
    root_line = 0
    seen: dict[int, list] = {}
    follows: list[tuple[int, int]] = []
    n_good = 0
    n_lines = 0
    longs = LongLines(sink, limit, path=shown)
    for lineno, s in _lines(f, shown, sink, longs):
        n_lines += 1
        m = _LINE.match(s)
        if m is None:
            sink.bad(lineno, None, "malformed tree line", repr(s[:80]), path=shown)
            continue
        pu, _pt, pd, cu, _ct, cd = m.groups()
        try:
            cuid = _uid(cu, "child.uid")
            cdel = _delay(cd, "child.delay", t0, t1, base)
            if pu == "ROOT":
                if publisher is not None and publisher != cuid:
                    raise Bad(None, "second ROOT line with another publisher", f"{cu} (first: {publisher})")
                if publisher is None:
                    publisher, root_line = cuid, lineno
                entry = seen.get(cuid)
                if entry is None:
                    seen[cuid] = [cdel, lineno]
                elif cdel < entry[0]:
                    entry[0] = cdel
                n_good += 1
                continue
            puid = _uid(pu, "parent.uid")
            pdel = _delay(pd, "parent.delay", t0, t1, base)
        except Bad as b:
            sink.bad(lineno, b.field, b.kind, b.detail, path=shown)
            continue
        n_good += 1
        for uid, d in ((puid, pdel), (cuid, cdel)):
            entry = seen.get(uid)
            if entry is None:
                seen[uid] = [d, lineno]
            elif d < entry[0]:
                entry[0] = d
        if puid != cuid:
            follows.append((cuid, puid))
    if n_lines == 0 and not longs.n:
        sink.bad_file("empty file", path=shown)
        return None
    if publisher is None:
        sink.bad_file("no ROOT line: the tree names no publisher", path=shown)
        return None
    seen[publisher][1] = root_line
    return source, publisher, seen, follows, n_good


def _read_labels(f: Path, shown: str, ctx: Ctx) -> None:
    sink = ctx.sink
    for lineno, s in _lines(f, shown, sink, LongLines(sink, ctx.max_record, path=shown)):
        m = _LABEL.match(s)
        if m is None:
            sink.bad(lineno, None, "malformed label line (want label:source_id)", repr(s[:80]), path=shown)
            continue
        try:
            source = to_id(m.group(2), "source_id")
        except Bad as b:
            sink.bad(lineno, b.field, b.kind, b.detail, path=shown)
            continue
        ctx.labels[source] = m.group(1)
        sink.report.n_good += 1


def _shown(root: Path, f: Path, display: str) -> str:
    try:
        return str(Path(display) / f.relative_to(root)) if root.is_dir() else display
    except ValueError:
        return str(f)


def read_trees(path: str, ctx: Ctx) -> Iterator[tuple[str, object]]:
    sink = ctx.sink
    root = Path(path)
    files, label = tree_files(root)
    if not files:
        sink.bad_file("no tree files (want tree/<source_id>.txt)")
        return
    if label is not None:
        _read_labels(label, _shown(root, label, ctx.path), ctx)
    done = label.stat().st_size if label is not None else 0
    rows: list[tuple[np.ndarray, ...]] = []
    n_rows = 0
    edges: list[tuple[int, int]] = []
    for f in files:
        shown = _shown(root, f, ctx.path)
        parsed = _parse_tree(f, shown, sink, ctx.max_record)
        done += f.stat().st_size
        ctx.progress.at(done)
        if parsed is None:
            continue
        source, publisher, seen, follows, n_good = parsed
        sink.report.n_good += n_good
        if ctx.want_follows:
            edges.extend(follows)
            if len(edges) >= ctx.follow_chunk:
                yield "follows", _follow_table(edges)
                edges = []
        if ctx.want_tweets:
            uids = np.fromiter(seen.keys(), dtype=np.int64, count=len(seen))
            info = np.array(list(seen.values()), dtype=np.float64).reshape(-1, 2)
            # publisher first, then retweeters in order of first appearance
            order = np.argsort(uids != publisher, kind="stable")
            uids, info = uids[order], info[order]
            n = len(uids)
            tid = np.full(n, RETWEET_ID, dtype=np.int64)
            tid[0] = source
            rtid = np.full(n, source, dtype=np.int64)
            rtid[0] = NO_TWEET
            times = snowflake_time(source) + info[:, 0] * 60.0
            rows.append((tid, rtid, uids, times, info[:, 1].astype(np.int64)))
            n_rows += n
            if n_rows >= ctx.chunk_size:
                yield "tweets", _tweet_table(rows)
                rows, n_rows = [], 0
    if rows:
        yield "tweets", _tweet_table(rows)
    if edges:
        yield "follows", _follow_table(edges)


def _tweet_table(rows: list[tuple[np.ndarray, ...]]) -> TweetTable:
    tid, rtid, uid, times, lines = (np.concatenate(c) for c in zip(*rows))
    return TweetTable(tid, rtid, uid, times, np.full(len(tid), np.nan), lines=lines)


def _follow_table(edges: list[tuple[int, int]]) -> FollowTable:
    a = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return FollowTable(a[:, 0], a[:, 1])


# a tree line as detection sees it (bytes, any quoting): looser than _LINE, which the reader checks field by field
_TREE = re.compile(rb"""^\[\s*['"][^'"]*['"]\s*,.*\]\s*->\s*\[.*\]$""")


def sniff_line(line: bytes) -> bool:
    """Detection (:mod:`.detect`): a first line ``['uid', 'tweet_id', 'delay']->[...]``: a single tree file."""
    return bool(_TREE.match(line))


def sniff_path(p: Path) -> bool:
    """Detection (:mod:`.detect`): a folder with a ``tree/`` subfolder, or whose own ``*.txt`` files start
    with tree lines."""
    if not p.is_dir():
        return False
    if (p / "tree").is_dir():
        return True
    return any(_TREE.match(head_bytes(f, 4096).split(b"\n", 1)[0].strip()) for f in sorted(p.glob("*.txt"))[:3])
