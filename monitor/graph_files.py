"""A workspace's follower graph as files: one CSR per (database, workspace, follows token), memory-mapped.

The follows stay in ``monitor_follow`` (exports, the API and the network pages' sub-graphs read them there), but
the compute no longer reads them back row by row: every process that needs a workspace's whole graph (the
influence batches, who-to-follow, network analytics) maps the same three files, so a machine holds **one copy**
in its page cache however many workers it runs, and a process's own memory holds none of it.

Layout, under ``SPREADWATCH_GRAPH_DIR`` (default ``<SPREADWATCH_DATA_DIR>/graphs``)::

    <database>/<workspace pk>/<follows token>/ids.npy       int64[U]    account pks, ascending
                                              indptr.npy    int64[U+1]
                                              indices.npy   int32[E]    (int64 from 2**31 accounts on)

Row ``i`` lists, sorted and without duplicates, the dense indices of the accounts that account ``ids[i]``
follows: the layout of :class:`compute.structures.FollowerGraph` and of :func:`compute.graphs.graph_from_edges`,
which take the arrays as they are (no copy).

**Versions.** Every write to a workspace's follows gives it a new ``follows_token`` in the writing transaction
(``monitor.db.renew_follows_token``), so a token names one content forever: a file is written once, never
changed, and a reader that sees the token in its transaction reads the graph that transaction sees. A folder is
written under a temporary name and renamed into place (atomic on one file system); two processes that build
the same version at once both succeed and one rename wins. A token whose transaction rolled back is never read
again; :func:`prune` keeps the newest ``KEEP`` versions of a workspace (a process that has an older one mapped
keeps reading it: unlinking does not unmap).

**Who writes.** An import writes the new version itself from the version before and the edges it merged
(:class:`ImportedFollows`, in a thread while its last statements run, waited for before it commits), when that
version is on this machine or the workspace had no accounts; otherwise the first reader builds it from the rows
(:func:`follower_csr`) and every later reader on the machine maps it.

**Beyond one machine**: the folder may be shared storage (NFS, or object storage mounted read-only by the
workers); nothing here assumes that the writer and the readers share a host, only that a rename is atomic.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.db import connection

from compute.arrays import sorted_positions_each, unique

from .db import copy_out
from .kept_follows import KeptFollows

log = logging.getLogger(__name__)

__all__ = [
    "KEEP",
    "Csr",
    "ImportedFollows",
    "csr_from_edges",
    "drop",
    "follower_csr",
    "follows_token",
    "load",
    "prune",
    "save",
]

#: versions of a workspace's graph kept on disk (the current one and the one before, which a run that started
#: before the last import may still be reading)
KEEP = 2


class Csr(NamedTuple):
    """A follower graph in CSR over account pks (see the module's docstring)."""

    ids: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray

    @property
    def n_edges(self) -> int:
        return len(self.indices)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """The edges as (follower pk, followee pk) arrays, in (follower, followee) order."""
        src = np.repeat(self.ids, np.diff(self.indptr))
        return src, self.ids[self.indices]


def _root() -> Path:
    return Path(getattr(settings, "SPREADWATCH_GRAPH_DIR", "") or Path(settings.DATA_DIR) / "graphs")


def _folder(ws: int) -> Path:
    return _root() / _safe(str(connection.settings_dict["NAME"])) / str(int(ws))


def _safe(name: str) -> str:
    """A database name (a path for SQLite) as one folder name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[-120:] or "default"


def csr_from_edges(follower: np.ndarray, followee: np.ndarray) -> Csr:
    """The CSR of follow edges given as account pks; self-follows and duplicates are dropped."""
    return _csr_from_owned([follower, followee])


def _csr_from_owned(edges: list) -> Csr:
    """:func:`csr_from_edges` of ``edges`` = [follower pks, followee pks], a list it empties, so that a caller that
    keeps no other reference to the two arrays has them freed once their positions are known. It then holds about
    two arrays of the edges' length at once, int64 each: the ends' positions among the ids, then the edges' keys
    sorted in place (an import's last step on 13.9M follows held seven before, the largest of its memory's peaks:
    ``benchmarks/data_layer.md``)."""
    fr = np.asarray(edges[0], dtype=np.int64)
    fe = np.asarray(edges[1], dtype=np.int64)
    edges.clear()
    if not len(fr):
        return Csr(np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int32))
    ids = unique(np.concatenate([unique(fr), unique(fe)]))  # each end's distinct ids: no copy of both ends at once
    n = np.int64(len(ids))
    (key, _), (b, _) = sorted_positions_each(ids, [fr, fe])  # each is among the ids
    del fr, fe
    keep = key != b
    if not keep.all():
        key, b = key[keep], b[keep]
    del keep
    key *= n  # the key of (follower, followee), in place
    key += b
    del b
    key = unique(key, overwrite=True)  # sorted by (follower, followee) in place, each edge once
    src = key // n
    indptr = np.zeros(len(ids) + 1, np.int64)
    np.cumsum(np.bincount(src, minlength=len(ids)), out=indptr[1:])
    src *= n
    np.subtract(key, src, out=src)  # the followees' positions, in place
    del key
    return Csr(ids, indptr, src.astype(np.int32 if len(ids) < 2**31 else np.int64))


def _imported_csr(follows: ImportedFollows) -> Csr:
    """The CSR of the version an import writes: its base's edges and the ones it kept. A first import's (no base
    edges) straight from the kept keys, sorted already, in about a third of the memory
    (:meth:`~monitor.kept_follows.KeptFollows.pop_csr`); else from the edges' two ends."""
    arrays = follows.kept.pop_csr() if follows.base.n_edges == 0 else None
    if arrays is not None:
        return Csr(*arrays)
    return _csr_from_owned(list(follows._ends()))


def load(ws: int, token: str) -> Csr | None:
    """The graph of version ``token`` mapped from its files, or None when this machine has none."""
    path = _folder(ws) / token
    try:
        # copy-on-write, not read-only: the pages are the page cache's until written (nothing writes them), and
        # writable arrays keep the kernels' numba signatures: a read-only array is another type to numba, compiled
        # again in a fresh checkout's first run (5 s) although compute.precompile compiled the kernels
        arrays = [np.load(path / f"{name}.npy", mmap_mode="c", allow_pickle=False) for name in Csr._fields]
    except (FileNotFoundError, NotADirectoryError):
        return None
    return Csr(*(np.asarray(a) for a in arrays))  # plain ndarrays over the mapping (no copy)


def save(ws: int, token: str, csr: Csr) -> Csr:
    """Write version ``token`` (once: an existing one is kept) and return it mapped from the files."""
    folder = _folder(ws)
    final = folder / token
    if not final.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{token}-", dir=folder))
        try:
            for name, arr in zip(Csr._fields, csr):
                with open(tmp / f"{name}.npy", "wb") as f:
                    np.save(f, np.ascontiguousarray(arr), allow_pickle=False)
            try:
                os.rename(tmp, final)
            except OSError:  # another process renamed the same version into place first
                if not final.exists():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        prune(ws, keep=token)
    mapped = load(ws, token)
    if mapped is None:  # pragma: no cover - pruned by another process between the two steps
        return csr
    return mapped


def prune(ws: int, *, keep: str = "") -> int:
    """Remove all but the newest :data:`KEEP` versions of workspace ``ws`` (and ``keep`` stays); returns how
    many went. Half-written folders of processes that died are removed after an hour."""
    folder = _folder(ws)
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return 0
    now = time.time()
    done = [e for e in entries if not e.name.startswith(".") and e.is_dir()]
    done.sort(key=lambda e: e.stat().st_mtime, reverse=True)
    gone = [e for e in done[KEEP:] if e.name != keep]
    gone += [e for e in entries if e.name.startswith(".") and now - e.stat().st_mtime > 3600]
    for e in gone:
        shutil.rmtree(e.path, ignore_errors=True)
    return len(gone)


def drop(ws: int) -> None:
    """Remove every version of workspace ``ws`` (its follows were deleted)."""
    shutil.rmtree(_folder(ws), ignore_errors=True)


def follows_token(cur, ws: int) -> str:
    """The workspace's current follows version as this transaction sees it."""
    cur.execute("SELECT follows_token FROM monitor_workspace WHERE id = %s", [ws])
    row = cur.fetchone()
    if row is None:
        raise ValueError(f"workspace {ws} does not exist")
    return row[0]


def follower_csr(ws: int, timings: dict[str, float] | None = None) -> tuple[Csr, str]:
    """Workspace ``ws``'s whole follower graph as this transaction sees it, and its version (the token; empty
    when a write committed while the rows were read, so that the graph read belongs to no one version).

    Mapped from this machine's files; built from ``monitor_follow`` and written there by the first reader of a
    version (binary COPY, streamed: a big workspace's graph is more than one gathered value can hold)."""
    with connection.cursor() as cur:
        token = follows_token(cur, ws)
        csr = load(ws, token)
        if csr is not None:
            return csr, token
        t = time.perf_counter()
        src, dst = copy_out(
            cur,
            "SELECT follower_id, followee_id FROM monitor_follow WHERE workspace_id = %s",
            [ws],
            [("src", "bigint"), ("dst", "bigint")],
            gather=False,
        )
        # a write that committed between the two reads of the token may be in the rows: use them, keep nothing
        unchanged = follows_token(cur, ws) == token
    if timings is not None:
        timings["load_follows_s"] = timings.get("load_follows_s", 0.0) + time.perf_counter() - t
    edges = [src, dst]
    del src, dst
    csr = _csr_from_owned(edges)  # the rows' arrays freed once their positions are known
    if unchanged:
        try:
            csr = save(ws, token, csr)
        except OSError:  # a full or read-only disk costs speed, never a result
            log.warning("the follower graph of workspace %s could not be written to %s", ws, _root(), exc_info=True)
    return csr, token if unchanged else ""


class ImportedFollows:
    """The follow edges one import merges, to write the version its commit makes from the one before.

    :meth:`start` runs once the import holds the workspace's merge lock, before its first part: it notes the
    version it builds on (the files of the token then, or an empty graph when the workspace has no accounts, so
    no follows). :meth:`add` takes each part's merged edges (account pks), kept as sorted keys
    (:class:`monitor.kept_follows.KeptFollows`, 8 bytes a follow), which :meth:`stored` asks for a later part;
    :meth:`finish`, in the import's transaction after its last part, writes the new token's version. Without a
    base on this machine it writes nothing and the first reader builds the version from the rows."""

    def __init__(self) -> None:
        self.ws: int | None = None
        self.base: Csr | None = None
        self.kept = KeptFollows()
        self.seconds = 0.0

    def start(self, cur, ws: int) -> None:
        self.ws = ws
        t = time.perf_counter()
        cur.execute("SELECT EXISTS (SELECT 1 FROM monitor_account WHERE workspace_id = %s)", [ws])
        if not cur.fetchone()[0]:
            self.base = Csr(np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int32))
        else:
            self.base = load(ws, follows_token(cur, ws))
        self.seconds += time.perf_counter() - t

    def add(self, follower: np.ndarray, followee: np.ndarray) -> None:
        """Keep a part's merged edges (nothing without a base: no version will be written)."""
        if self.base is None or not len(follower):
            return
        self.kept.add(follower, followee)

    def stored(self, follower: np.ndarray, followee: np.ndarray) -> np.ndarray | None:
        """Mask of the edges (account pks) that a part added so far, or None where the parts cannot tell: their
        follows are not kept (no base on this machine) or a part's pks span 2**32 or more."""
        if self.base is None:
            return None
        return self.kept.stored(follower, followee)

    def _ends(self) -> tuple[np.ndarray, np.ndarray]:
        """The version before's edges and every kept one, as (follower pks, followee pks), int64; the kept runs
        freed as they are copied."""
        old_src, old_dst = self.base.edges()
        n = len(old_src) + len(self.kept)
        src, dst = np.empty(n, np.int64), np.empty(n, np.int64)
        src[: len(old_src)], dst[: len(old_dst)] = old_src, old_dst
        at = len(old_src)
        del old_src, old_dst
        for fr, fe in self.kept.pop_ends():
            src[at : at + len(fr)], dst[at : at + len(fe)] = fr, fe
            at += len(fr)
        return src, dst

    def finish(self, cur) -> float:
        """Write the new version (when there is one to write); returns the seconds the whole record took."""
        if self._has_version():
            self._write(follows_token(cur, self.ws))
        return self.seconds

    def finish_later(self, cur) -> Callable[[], float]:
        """:meth:`finish` in a thread of this process, so that the import's statements after its merge (the planner
        statistics, the compute's plan) run meanwhile: the version's token is read here, on the caller's
        connection; the thread touches no database. Returns ``wait()``, which waits for the thread, raises what it
        raised and returns the seconds the whole record took; the import waits before it commits. The thread's
        NumPy and numba steps hold the interpreter while the caller's statements wait on the server, which is what
        the overlap is for (2.1 s of the 10M benchmark's import: ``benchmarks/data_layer.md``)."""
        if not self._has_version():
            return lambda: self.seconds
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"graph-file-w{self.ws}")
        done = pool.submit(self._write, follows_token(cur, self.ws))
        pool.shutdown(wait=False)  # the thread ends with its one task
        return lambda: (done.result(), self.seconds)[1]

    def _has_version(self) -> bool:
        """Whether there is a version to write: a base on this machine and edges merged into it."""
        return self.base is not None and len(self.kept) > 0 and self.ws is not None

    def _write(self, token: str) -> None:
        t = time.perf_counter()
        try:
            try:
                save(self.ws, token, _imported_csr(self))
            except OSError:
                log.warning("the follower graph of workspace %s could not be written", self.ws, exc_info=True)
        finally:
            self.seconds += time.perf_counter() - t
