"""The thesis' TUDataset files: spreading graphs given directly (docs/formats.md).

Files of a dataset ``DS`` (a folder holding one ``DS_A.txt``, or the prefix path ``.../DS``):

* ``DS_A.txt``: lines ``i, j`` (1-based global node numbers): *i's value flows to j*, i.e. the spreading edge
  ``(src, dst) = (i-1, j-1)``;
* ``DS_graph_indicator.txt``: line ``k`` holds the (1-based) graph id of node ``k``; nodes of a graph must be
  consecutive and graph ids non-decreasing, as TUDataset writes them; graph ids become the ``tweet_ids``;
* ``DS_node_attributes.txt`` (lines ``user_id, followers_count``) or, if absent, ``DS_node_labels.txt`` (a user
  id per line; followers unknown, so n_v = 1 and the unit is "retweeters");
* ``DS_graph_labels.txt`` (optional): line ``g`` is the label of graph ``g``.

The publisher of a graph is its unique sink: the node with out-degree 0 and in-degree > 0 (or the only node of
a one-node graph). A graph with several sinks or none is a bad record naming the graph. Cycles are left to the
backward phase, which detects them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..arrays import unique
from ..structures import Cascades, SpreadingGraphs
from ._fields import Bad, Ctx, to_count, to_id
from ._io import LineBlocks, parse_int_block
from ._report import LongLines
from .limits import FOLLOWERS_MAX

__all__ = ["read_tudataset", "sniff_path", "tudataset_files", "SUFFIXES"]

SUFFIXES = ("_A.txt", "_graph_indicator.txt", "_node_attributes.txt", "_node_labels.txt", "_graph_labels.txt")


class _Fatal(Exception):
    """A problem that makes the whole dataset unusable (already reported in skip-bad mode)."""


def tudataset_files(path: str | Path) -> dict[str, Path] | None:
    """``{suffix: file}`` of the dataset at ``path`` (folder, ``DS_A.txt`` itself, or the prefix ``.../DS``);
    ``None`` when there is no ``*_A.txt`` with a ``*_graph_indicator.txt`` beside it."""
    p = Path(path)
    prefix: str | None = None
    if p.is_dir():
        cands = sorted(str(f)[: -len("_A.txt")] for f in p.glob("*_A.txt"))
        cands = [c for c in cands if Path(c + "_graph_indicator.txt").is_file()]
        if len(cands) == 1:
            prefix = cands[0]
    elif p.is_file() and p.name.endswith(SUFFIXES):
        for suf in SUFFIXES:
            if p.name.endswith(suf):
                prefix = str(p)[: -len(suf)]
                break
    elif Path(str(p) + "_A.txt").is_file():
        prefix = str(p)
    if prefix is None or not Path(prefix + "_graph_indicator.txt").is_file() or not Path(prefix + "_A.txt").is_file():
        return None
    return {suf: Path(prefix + suf) for suf in SUFFIXES if Path(prefix + suf).is_file()}


def _shown(f: Path, root: Path, display: str) -> str:
    try:
        return str(Path(display) / f.relative_to(root)) if root.is_dir() else str(Path(display).parent / f.name)
    except ValueError:
        return str(f)


def _split(s: str) -> list[str]:
    return [p.strip() for p in (s.split(",") if "," in s else s.split())]


def _blocks(f: Path, ctx: Ctx) -> LineBlocks:
    """The line blocks of one file, lines past the record limit reported on ``ctx.sink`` (its current path)."""
    return LineBlocks(f, ctx.progress, max_line=ctx.max_record, too_long=LongLines(ctx.sink, ctx.max_record))


def _read_columns(
    f: Path, shown: str, ncols: int, ctx: Ctx, parse_line, count_col: int | None = None
) -> tuple[np.ndarray, np.ndarray, list]:
    """Rows of an integer table file: (values (n, ncols) int64 or float, line numbers, bad rows).

    Every non-blank line is a row (rows are positional: row k is node k), so a bad line keeps its place: its
    row index goes to ``bad`` and the reader drops whatever depends on it. Column ``count_col`` holds follower
    counts: above :data:`~.limits.FOLLOWERS_MAX` is a bad value (the careful path checks it in ``parse_line``).
    """
    sink = ctx.sink
    old, sink.path = sink.path, shown
    try:
        parts, lines, bad = [], [], []
        n_rows = 0
        blocks = _blocks(f, ctx)
        for block, first in blocks:
            got = parse_int_block(block, ncols, with_lines=True)
            if got is not None:
                vals, idx = got
                if count_col is not None:
                    for k in np.flatnonzero(vals[:, count_col] > FOLLOWERS_MAX).tolist():
                        sink.bad(int(first + idx[k]), "followers_count", "count out of range",
                                 f"'{int(vals[k, count_col])}' is more than {FOLLOWERS_MAX:,.0f}")  # fmt: skip
                        bad.append(n_rows + k)
                parts.append(vals)
                lines.append(first + idx)
                n_rows += len(vals)
                continue
            rows, rlines = [], []
            for k, raw in enumerate(block.split(b"\n")):
                s = raw.decode("utf-8", "replace").strip()
                if not s:
                    continue
                lineno = first + k
                try:
                    if "\ufffd" in s:
                        raise Bad(None, "undecodable bytes (not UTF-8)")
                    fields = _split(s)
                    if len(fields) < ncols:
                        raise Bad(None, "wrong number of fields", f"expected {ncols}, got {len(fields)}")
                    rows.append(parse_line(fields))
                except Bad as b:
                    sink.bad(lineno, b.field, b.kind, b.detail)
                    bad.append(n_rows + len(rows))
                    rows.append((0,) * ncols)
                rlines.append(lineno)
            if rows:
                parts.append(np.array(rows, dtype=object).reshape(-1, ncols))
                lines.append(np.array(rlines, dtype=np.int64))
                n_rows += len(rows)
        ctx.progress.file_done(f.stat().st_size)
        if not blocks.saw_data:
            sink.bad_file("empty file")
            raise _Fatal
        return parts, (np.concatenate(lines) if lines else np.zeros(0, np.int64)), bad
    finally:
        sink.path = old


def _ids_column(parts: list, col: int) -> np.ndarray:
    return np.concatenate([np.asarray(p[:, col]).astype(np.int64) for p in parts]) if parts else np.zeros(0, np.int64)


def read_tudataset(path: str, ctx: Ctx) -> Iterator[tuple[str, object]]:
    sink = ctx.sink
    root = Path(path)
    files = tudataset_files(root)
    if files is None:
        sink.bad_file("not a TUDataset (want DS_A.txt and DS_graph_indicator.txt)")
        return
    try:
        graphs = _read(files, root, ctx)
    except _Fatal:
        return
    if graphs is not None:
        yield "graphs", graphs


def _read(files: dict[str, Path], root: Path, ctx: Ctx) -> SpreadingGraphs | None:
    sink = ctx.sink

    def show(suf: str) -> str:
        return _shown(files[suf], root, ctx.path)

    def one_id(field: str):
        return lambda f: (to_id(f[0], field),)

    # graph indicator ------------------------------------------------------------------------------------
    parts, gi_lines, gi_bad = _read_columns(
        files["_graph_indicator.txt"], show("_graph_indicator.txt"), 1, ctx, one_id("graph_id")
    )
    gi = _ids_column(parts, 0)
    n = len(gi)
    if gi_bad:
        # a node without a graph shifts every graph after it: nothing after it can be trusted
        sink.bad_file(
            "the graph indicator has bad lines, so no node can be placed in its graph",
            path=show("_graph_indicator.txt"),
        )
        raise _Fatal
    if n and gi.min() < 1:
        k = int(np.argmin(gi))
        sink.bad_file(
            "graph ids start at 1",
            str(int(gi[k])),
            line=int(gi_lines[k]),
            field="graph_id",
            path=show("_graph_indicator.txt"),
        )
        raise _Fatal
    down = np.flatnonzero(np.diff(gi) < 0)
    if len(down):
        k = int(down[0]) + 1
        sink.bad_file(
            "graph ids must not decrease (nodes of a graph are consecutive)",
            f"{int(gi[k])} after {int(gi[k - 1])}",
            line=int(gi_lines[k]),
            field="graph_id",
            path=show("_graph_indicator.txt"),
        )
        raise _Fatal

    # node info --------------------------------------------------------------------------------------------
    if "_node_attributes.txt" in files:
        suf, unit = "_node_attributes.txt", "followers"

        def parse_attr(f):
            if not f[1]:
                raise Bad("followers_count", "missing required field")
            return to_id(f[0], "user_id"), to_count(f[1], "followers_count")

        parts, _, node_bad = _read_columns(files[suf], show(suf), 2, ctx, parse_attr, count_col=1)
        user_ids = _ids_column(parts, 0)
        followers = np.concatenate([np.asarray(p[:, 1]).astype(np.float64) for p in parts]) if parts else np.zeros(0)
    elif "_node_labels.txt" in files:
        suf, unit = "_node_labels.txt", "retweeters"
        parts, _, node_bad = _read_columns(files[suf], show(suf), 1, ctx, one_id("user_id"))
        user_ids = _ids_column(parts, 0)
        followers = np.ones(len(user_ids))
    else:
        sink.bad_file(
            "no node file (want DS_node_attributes.txt or DS_node_labels.txt)",
            path=str(Path(show("_A.txt")).parent),
        )
        raise _Fatal
    if len(user_ids) != n:
        sink.bad_file(f"has {len(user_ids)} node lines, the graph indicator has {n}", path=show(suf))
        raise _Fatal

    # edges ------------------------------------------------------------------------------------------------
    gids, g_of_node = np.unique(gi, return_inverse=True)
    idx_dtype = np.int32 if n < 2**31 else np.int64
    g_of_node = g_of_node.astype(idx_dtype)
    src, dst = _read_edges(files["_A.txt"], show("_A.txt"), ctx, g_of_node, gi, idx_dtype)

    # graphs and publishers ----------------------------------------------------------------------------------
    t = len(gids)
    sizes = np.bincount(g_of_node, minlength=t)
    outdeg = np.bincount(src, minlength=n)
    indeg = np.bincount(dst, minlength=n)
    is_sink = (outdeg == 0) & (indeg > 0)
    offsets = np.zeros(t + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    is_sink[offsets[:-1][sizes == 1]] = True  # a one-node graph's node publishes it
    n_sinks = np.bincount(g_of_node[is_sink], minlength=t)
    keep_g = n_sinks == 1
    if node_bad:
        keep_g[unique(g_of_node[np.asarray(node_bad, dtype=np.int64)])] = False  # already reported per line
    for g in np.flatnonzero(n_sinks != 1).tolist():
        what = "no sink" if n_sinks[g] == 0 else f"{int(n_sinks[g])} sinks"
        sink.bad(
            None,
            None,
            "no single publisher",
            f"graph {int(gids[g])} has {what} (want exactly one node with out-degree 0 and in-degree > 0; "
            f"it has {int(sizes[g])} nodes)",
            path=show("_A.txt"),
        )

    # labels -------------------------------------------------------------------------------------------------
    labels = None
    if "_graph_labels.txt" in files:
        labels = _graph_labels(files["_graph_labels.txt"], show("_graph_labels.txt"), gids, ctx)

    # drop bad graphs and renumber -------------------------------------------------------------------------
    if not keep_g.all():
        keep_n = keep_g[g_of_node]
        new_index = (np.cumsum(keep_n) - 1).astype(idx_dtype)
        ke = keep_n[src]
        src, dst = new_index[src[ke]], new_index[dst[ke]]
        gi_kept = g_of_node[keep_n]
        g_of_node = np.searchsorted(np.flatnonzero(keep_g), gi_kept).astype(idx_dtype)
        user_ids, followers, is_sink = user_ids[keep_n], followers[keep_n], is_sink[keep_n]
        gids, sizes = gids[keep_g], sizes[keep_g]
        if labels is not None:
            labels = labels[keep_g]
        t = len(gids)
        offsets = np.zeros(t + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
    publisher = np.flatnonzero(is_sink)
    # edges grouped by graph, in file order within a graph (TUDataset writes them grouped: then no sort)
    eg = g_of_node[src]
    if len(eg) and np.any(eg[1:] < eg[:-1]):
        order = np.argsort(eg, kind="stable")
        src, dst = src[order], dst[order]
    e_off = np.zeros(t + 1, dtype=np.int64)
    np.cumsum(np.bincount(eg, minlength=t), out=e_off[1:])
    del eg
    sink.report.n_good += t
    if labels is not None:
        for g, lab in zip(gids.tolist(), labels.tolist()):
            if lab is not None:
                ctx.labels[g] = lab
    cascades = Cascades(
        node_offsets=offsets,
        user_ids=user_ids,
        followers=followers,
        publisher=publisher,
        tweet_ids=gids,
        times=None,
        unit=unit,
        labels=labels,
    )
    return SpreadingGraphs(cascades, e_off, src.astype(idx_dtype), dst.astype(idx_dtype), orphans="given")


def _read_edges(f: Path, shown: str, ctx: Ctx, g_of_node: np.ndarray, gi: np.ndarray, idx_dtype) -> tuple:
    """(src, dst) of the good edge lines of ``DS_A.txt`` as 0-based node indices in ``idx_dtype``.

    Checked a block at a time (syntax, node range, both ends in one graph) and kept in the index width, so a
    file of hundreds of millions of edges costs 8 bytes an edge, not a Python object or an int64 line number.
    """
    sink = ctx.sink
    n = len(g_of_node)
    old, sink.path = sink.path, shown
    srcs, dsts = [], []
    try:
        blocks = _blocks(f, ctx)
        for block, first in blocks:
            errs: list = []
            got = parse_int_block(block, 2, with_lines=True)
            if got is not None:
                vals, lines = got[0], first + got[1]
            else:
                rows, rlines = [], []
                for k, raw in enumerate(block.split(b"\n")):
                    text = raw.decode("utf-8", "replace").strip()
                    if not text:
                        continue
                    try:
                        fields = _split(text)
                        if "\ufffd" in text:
                            raise Bad(None, "undecodable bytes (not UTF-8)")
                        if len(fields) != 2:
                            raise Bad(None, "wrong number of fields", f"expected 2, got {len(fields)}")
                        rows.append((to_id(fields[0], "i"), to_id(fields[1], "j")))
                        rlines.append(first + k)
                    except Bad as b:
                        errs.append((first + k, b.field, b.kind, b.detail))
                vals = np.array(rows, dtype=np.int64).reshape(-1, 2)
                lines = np.array(rlines, dtype=np.int64)
            src, dst = vals[:, 0] - 1, vals[:, 1] - 1
            ok = (src >= 0) & (src < n) & (dst >= 0) & (dst < n)
            for k in np.flatnonzero(~ok).tolist():
                errs.append((int(lines[k]), None, "node number out of range",
                             f"{int(vals[k, 0])}, {int(vals[k, 1])} (nodes 1..{n})"))  # fmt: skip
            if not ok.all():
                src, dst, vals, lines = src[ok], dst[ok], vals[ok], lines[ok]
            cross = g_of_node[src] != g_of_node[dst]
            for k in np.flatnonzero(cross).tolist():
                ends = f"{int(vals[k, 0])} (graph {int(gi[src[k]])}), {int(vals[k, 1])} (graph {int(gi[dst[k]])})"
                errs.append((int(lines[k]), None, "edge joins two graphs", ends))
            sink.bad_sorted(errs)
            keep = ~cross
            srcs.append(src[keep].astype(idx_dtype))
            dsts.append(dst[keep].astype(idx_dtype))
        ctx.progress.file_done(f.stat().st_size)
    finally:
        sink.path = old
    if not srcs:
        return np.zeros(0, idx_dtype), np.zeros(0, idx_dtype)
    return np.concatenate(srcs), np.concatenate(dsts)


def _graph_labels(f: Path, shown: str, gids: np.ndarray, ctx: Ctx) -> np.ndarray | None:
    """Label of each graph (object array), line ``g`` of the file labelling graph id ``g``."""
    sink = ctx.sink
    values: list[str] = []
    old, sink.path = sink.path, shown
    try:
        for block, _first in _blocks(f, ctx):
            for raw in block.split(b"\n"):
                s = raw.decode("utf-8", "replace").strip()
                if s:
                    values.append(s)
    finally:
        sink.path = old
    ctx.progress.file_done(f.stat().st_size)
    if len(values) < int(gids.max(initial=0)):
        sink.bad(
            None, None, f"has {len(values)} labels for graph ids up to {int(gids.max())}; labels ignored", path=shown
        )
        return None
    return np.array([values[g - 1] for g in gids.tolist()], dtype=object)


def sniff_path(p: Path) -> bool:
    """Detection (:mod:`.detect`): a folder holding exactly one ``DS_A.txt`` with its
    ``DS_graph_indicator.txt``, the prefix ``.../DS`` of such files, or one of the files itself."""
    if p.is_file() and not p.name.endswith(SUFFIXES):
        return False
    return tudataset_files(p) is not None
