"""Our own ``.npz`` archives: the spreading-graph archive (:func:`compute.structures.load_archive`) and the
collection archive (:func:`compute.collection.load_collection`), told apart by the arrays they hold."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

from ..collection import is_collection_archive, load_collection
from ..structures import is_spreading_archive, load_archive
from ..tables import FollowTable
from ._fields import Ctx

__all__ = ["read_npz", "npz_kind"]


def npz_keys(path: str | Path) -> list[str]:
    """Array names in an ``.npz`` (from the zip directory, without loading anything)."""
    with zipfile.ZipFile(path) as z:
        return [n[:-4] if n.endswith(".npy") else n for n in z.namelist()]


def npz_kind(path: str | Path) -> str | None:
    """``"spreading"``, ``"collection"`` or ``None`` (some other npz)."""
    try:
        keys = npz_keys(path)
    except (zipfile.BadZipFile, OSError):
        return None
    if is_collection_archive(keys):
        return "collection"
    if is_spreading_archive(keys):
        return "spreading"
    return None


def read_npz(path: str, ctx: Ctx) -> Iterator[tuple[str, object]]:
    sink = ctx.sink
    kind = npz_kind(path)
    if kind is None:
        try:
            keys = ", ".join(npz_keys(path)) or "none"
        except (zipfile.BadZipFile, OSError) as exc:
            sink.bad(None, None, "not a readable .npz archive", str(exc))
            return
        sink.bad(None, None, "neither a spreading-graph nor a collection archive", f"arrays: {keys}")
        return
    problem = None
    try:
        if kind == "spreading":
            graphs = load_archive(path)
        else:
            tweets, graph, labels = load_collection(path)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        problem = str(exc)
        if problem.startswith(f"{path}: "):
            problem = problem[len(str(path)) + 2 :]
    if problem is not None:  # reported outside the except: InputError is a ValueError too
        sink.bad(None, None, "bad archive", problem)
        return
    ctx.progress.at(Path(path).stat().st_size)
    if kind == "spreading":
        c = graphs.cascades
        sink.report.n_good += c.n_cascades
        if c.labels is not None:
            for tid, lab in zip(c.tweet_ids.tolist(), c.labels.tolist()):
                if lab is not None:
                    ctx.labels[tid] = lab
        yield "graphs", graphs
        return
    sink.report.n_good += len(tweets)
    ctx.labels.update(labels)
    yield "follower_graph", graph
    step = max(ctx.chunk_size, 1)
    for a in range(0, len(tweets), step):
        yield "tweets", tweets.take(slice(a, a + step))
    if ctx.follows_from_graph:
        fr, fe = graph.to_edges()
        step = max(ctx.follow_chunk, 1)
        for a in range(0, len(fr), step):
            yield "follows", FollowTable(fr[a : a + step], fe[a : a + step])
