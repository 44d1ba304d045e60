"""Our own ``.npz`` archives: the spreading-graph archive (:func:`compute.structures.load_archive`) and the
collection archive (:func:`compute.collection.load_collection`), told apart by the arrays they hold.

An archive has no lines, so every problem is one of the whole file (skipped whole in skip-bad mode): not a zip,
cut short, arrays that disagree, or values out of range (follower counts of either kind; a collection's tweet
times: a spreading archive's times may have any origin, generators write times relative to the publisher)."""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..collection import is_collection_archive, load_collection
from ..structures import is_spreading_archive, load_archive
from ..tables import FollowTable
from ._fields import Ctx
from .limits import FOLLOWERS_MAX, time_problems

__all__ = ["read_npz", "npz_kind", "sniff_path"]


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
            sink.bad_file("not a readable .npz archive (cut short or not a zip file)", str(exc))
            return
        sink.bad_file("neither a spreading-graph nor a collection archive", f"arrays: {keys}")
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
    if problem is None:
        if kind == "spreading":
            problem = _out_of_range(graphs.cascades.followers, None)
        else:
            problem = _out_of_range(tweets.followers_count, tweets.created_at)
    if problem is not None:  # reported outside the except: InputError is a ValueError too
        sink.bad_file("bad archive", problem)
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


def _out_of_range(followers: np.ndarray, times: np.ndarray | None) -> str | None:
    """What is out of range in an archive's follower counts (NaN is unknown) and tweet times, if anything."""
    bad = np.flatnonzero((followers < 0) | (followers > FOLLOWERS_MAX) | np.isinf(followers))
    if len(bad):
        return (
            f"{len(bad):,} follower count(s) out of range (0 to {FOLLOWERS_MAX:,.0f}), "
            f"the first at row {int(bad[0])}: {float(followers[bad[0]])!r}"
        )
    if times is not None:
        idx, reasons = time_problems(times)
        if len(idx):
            return f"{len(idx):,} tweet time(s) out of range, the first at row {int(idx[0])}: {reasons[0]}"
    return None


def sniff_path(p: Path) -> bool:
    """Detection (:mod:`.detect`): a file starting with the zip magic is ours or no input at all: a zip that
    is neither archive kind raises ``ValueError`` saying why (detection names the file)."""
    if not p.is_file():
        return False
    with open(p, "rb") as fh:
        if fh.read(4) != b"PK\x03\x04":
            return False
    if npz_kind(p) is None:
        try:
            with zipfile.ZipFile(p) as z:
                z.namelist()
        except (zipfile.BadZipFile, OSError) as exc:
            raise ValueError(f"a zip/.npz archive that cannot be read (cut short?): {exc}") from None
        raise ValueError(
            "a zip/.npz archive, but neither a spreading-graph nor a collection archive: a zip archive of other "
            "files (tweets, trees): unpack it and name the files inside; the web upload unpacks zip and tar "
            "archives itself"
        )
    return True
