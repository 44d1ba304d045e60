"""Duplicate tweet ids: the same id again is fine when it says the same thing, a bad record when it does not.

A tweet id names one status, so every row that carries it must agree on what it retweets (``NO_TWEET`` for an
original), who wrote it and when (to the second: one file may give the time as Twitter's string, another as
milliseconds or through the snowflake). Follower counts, names and texts may differ (they are snapshots, or cut
differently). The first row read is the reference; a later row that disagrees with it is a bad record naming
both lines. Identical repeats are no-ops (a v1.1 retweet repeats its original; a re-read file repeats
everything). Id 0 means "unknown" (a tree's retweet rows) and is never checked.

:class:`SeenTweets` keeps the reference of every id read so far as sorted NumPy columns (50 to 80 bytes per
distinct id) and checks a chunk of rows at a time, vectorised: no per-row Python on the common path.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..tables import NO_TWEET
from .limits import fmt_time

__all__ = ["SeenTweets", "Conflict", "Known"]

Conflict = tuple[int, str]  # (row index in the chunk, reason)


class Known(NamedTuple):
    """References of some tweet ids: the first row read of each (``hit``: read before at all)."""

    hit: np.ndarray
    rt: np.ndarray
    uid: np.ndarray
    sec: np.ndarray
    line: np.ndarray
    src: np.ndarray


def _grow(a: np.ndarray, need: int) -> np.ndarray:
    if need <= len(a):
        return a
    out = np.empty(max(need, 2 * len(a), 1024), dtype=a.dtype)
    out[: len(a)] = a
    return out


class SeenTweets:
    """First-seen content of every tweet id read so far: by one file, or shared by the files of one upload.

    Files are numbered by :meth:`file` (their names go into the messages, so a caller that shows files under
    other names :meth:`rename` them). Storage: a sorted index (``_tid``, ``_pos``) into append-only columns.
    """

    def __init__(self) -> None:
        self.paths: list[str] = []
        self._empty()

    def _empty(self) -> None:
        self._tid = np.zeros(0, np.int64)  # sorted distinct ids
        self._pos = np.zeros(0, np.int64)  # their row in the columns below
        self._n = 0
        self._rt = np.zeros(0, np.int64)
        self._uid = np.zeros(0, np.int64)
        self._sec = np.zeros(0, np.int64)
        self._line = np.zeros(0, np.int64)
        self._src = np.zeros(0, np.int32)

    def __len__(self) -> int:
        return len(self._tid)

    def file(self, path: str) -> int:
        """The number of ``path`` (registered on first use)."""
        try:
            return self.paths.index(path)
        except ValueError:
            self.paths.append(path)
            return len(self.paths) - 1

    def rename(self, old: str, new: str) -> None:
        self.paths = [new if p == old else p for p in self.paths]

    def check(
        self,
        src: int,
        tid: np.ndarray,
        rt: np.ndarray,
        uid: np.ndarray,
        times: np.ndarray,
        lines: np.ndarray | None,
        *,
        register: bool = True,
    ) -> list[Conflict]:
        """Rows of one chunk (in file order) that contradict an earlier row with the same id, with the reason.

        When there are none (the usual case) and ``register`` is set, the chunk's ids are registered at once,
        from the sort this check made; otherwise nothing is: call :meth:`add` with the rows that are kept.
        """
        n = len(tid)
        if n == 0:
            return []
        sec = _seconds(times)
        order = np.argsort(tid, kind="stable")
        st = tid[order]
        first = np.ones(n, bool)
        first[1:] = st[1:] != st[:-1]
        run = np.cumsum(first) - 1  # run number of each sorted row
        head = order[first]  # the chunk's first row of each id
        ref = head[run]  # ... for each sorted row
        known = self._known(st[first])
        old = known.hit[run]
        # the reference of each sorted row: what was read before this chunk, else the chunk's first row
        ref_rt = np.where(old, known.rt[run], rt[ref])
        ref_uid = np.where(old, known.uid[run], uid[ref])
        ref_sec = np.where(old, known.sec[run], sec[ref])
        differs = (rt[order] != ref_rt) | (uid[order] != ref_uid) | (sec[order] != ref_sec)
        differs &= st != 0
        if not differs.any():
            if register:
                new = ~known.hit & (st[first] != 0)
                self._register(src, st[first][new], head[new], rt, uid, sec, lines)
            return []
        out: list[Conflict] = []
        for k in np.flatnonzero(differs).tolist():
            i = int(order[k])
            if old[k]:
                r = int(run[k])
                where = self._where(int(known.src[r]), int(known.line[r]), src)
            else:
                j = int(ref[k])
                where = self._where(src, int(lines[j]) if lines is not None else -1, src)
            ref_k = (int(ref_rt[k]), int(ref_uid[k]), int(ref_sec[k]))
            what = _difference(int(rt[i]), int(uid[i]), float(times[i]), *ref_k)
            out.append((i, f"tweet {int(tid[i])} was read before ({where}) {what}"))
        out.sort()
        return out

    def add(self, src: int, tid: np.ndarray, rt: np.ndarray, uid: np.ndarray, times: np.ndarray, lines) -> None:
        """Register the first row of each id not seen yet (rows in file order; conflicting ones left out)."""
        keep = tid != 0
        if not keep.all():
            tid, rt, uid, times = tid[keep], rt[keep], uid[keep], times[keep]
            lines = lines[keep] if lines is not None else None
        if not len(tid):
            return
        u, idx = np.unique(tid, return_index=True)  # the first row of each id
        new = ~self._known(u).hit
        self._register(src, u[new], idx[new], rt, uid, _seconds(times), lines)

    def _known(self, u: np.ndarray) -> Known:
        """The references of the sorted distinct ids ``u``, where read before (``hit``; zeros elsewhere).
        A subclass that keeps older references elsewhere (a database) extends this and :meth:`forget`."""
        n = len(u)
        out = Known(np.zeros(n, bool), *(np.zeros(n, dt) for dt in (np.int64, np.int64, np.int64, np.int64, np.int32)))
        if len(self._tid):
            at = np.minimum(np.searchsorted(self._tid, u), len(self._tid) - 1)
            out.hit[:] = self._tid[at] == u
            p = self._pos[at[out.hit]]
            for name in ("rt", "uid", "sec", "line", "src"):
                getattr(out, name)[out.hit] = getattr(self, "_" + name)[p]
        return out

    def held(self) -> tuple[np.ndarray, ...]:
        """Every reference held in memory, sorted by id, as columns (id, rt, uid, sec, line, src): what a
        subclass moves elsewhere."""
        p = self._pos
        return self._tid, self._rt[p], self._uid[p], self._sec[p], self._line[p], self._src[p]

    def forget(self) -> None:
        """Drop the references held in memory (after a subclass stored them elsewhere)."""
        self._empty()

    def _register(self, src: int, u: np.ndarray, idx: np.ndarray, rt, uid, sec, lines) -> None:
        """Add the ids ``u`` (sorted, none known yet), whose first rows are ``idx``."""
        m = len(u)
        if not m:
            return
        a, b = self._n, self._n + m
        for name in ("_rt", "_uid", "_sec", "_line", "_src"):
            setattr(self, name, _grow(getattr(self, name), b))
        self._rt[a:b] = rt[idx]
        self._uid[a:b] = uid[idx]
        self._sec[a:b] = sec[idx]
        self._line[a:b] = lines[idx] if lines is not None else -1
        self._src[a:b] = src
        self._n = b
        ins = np.searchsorted(self._tid, u)
        self._tid = np.insert(self._tid, ins, u)
        self._pos = np.insert(self._pos, ins, np.arange(a, b, dtype=np.int64))

    def _where(self, src: int, line: int, here: int) -> str:
        if src == here:
            return "no line" if line < 0 else f"line {line}"
        name = self.paths[src]
        return name if line < 0 else f"{name}:{line}"


def _seconds(times: np.ndarray) -> np.ndarray:
    """Times to whole seconds (NaN, unknown, becomes a value no real time has)."""
    t = np.floor(times)
    return np.where(np.isfinite(t), t, -(2.0**62)).astype(np.int64)


def _difference(rt: int, uid: int, t: float, ref_rt: int, ref_uid: int, ref_sec: int) -> str:
    def kind(x: int) -> str:
        return "an original" if x == NO_TWEET else f"a retweet of {x}"

    if rt != ref_rt:
        return f"as {kind(ref_rt)}; here it is {kind(rt)}"
    if uid != ref_uid:
        return f"by user {ref_uid}; here by user {uid}"
    return f"at {fmt_time(ref_sec)}; here at {fmt_time(t)}"
