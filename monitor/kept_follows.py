"""The follow edges an import has merged so far, kept in memory: to answer a later part's "did an earlier part
store this edge?" without the table, and to write the follower graph's next version (``graph_files``).

An edge is kept as one unsigned 64-bit key, ``(follower - lo) << 32 | (followee - lo)`` (8 bytes a follow), in
sorted runs without duplicates. A part's keys are one run; a run is merged with the one before it (same ``lo``)
while that one is at most twice its size, so an import of P parts holds O(log P) runs and each key is merged
O(log P) times (two sorted runs merged by NumPy's stable sort, a timsort: one linear pass; the largest merge holds
the keys and half of them once more for a moment). A lookup is one binary search per run, and is asked only for
the edges whose follower some earlier part gave follows for: a follows file grouped by follower, as exports and
crawls write them, repeats a follower only across a part's boundary.

Before this, each part's ends were kept as two arrays and every later part rebuilt every earlier part's keys to
ask them: work quadratic in the parts. The ``bigger4``-sized upload (341.7M follows, 114 parts) spent 896 s of its
1,263 s merge there (``benchmarks/data_layer.md``, 2026-12-06 (sixth)).

``lo`` is 0 while the pks are below 2**32; a part whose pks lie further up gets the ``lo`` of the run before it
when they fit that window, else one of its own (its runs are then not merged with the earlier ones). A part whose
pks span 2**32 or more is kept as two int64 arrays (:attr:`KeptFollows.exact` false: lookups answer None and the
caller asks the table). Nothing here imports Django."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from compute.arrays import argsort_ints, distinct_sorted, merge_sorted, sort_ints, sorted_positions, unique

__all__ = ["KeptFollows"]

_U = np.uint64
_SPAN = 1 << 32
_LOW = np.uint64(_SPAN - 1)
_STEP = 1 << 20  # keys a chunk when a graph is built from the runs: each temporary 8 MB


class KeptFollows:
    """See the module. :meth:`add` a part's edges (account pks), :meth:`stored` asks which edges were added,
    :meth:`pop_ends` hands every kept edge back (as int64 pks) and forgets them."""

    def __init__(self) -> None:
        self.runs: list[list] = []  # [lo, sorted unique uint64 keys]
        self.wide: list[tuple[np.ndarray, np.ndarray]] = []  # parts whose pks span 2**32 or more: int64 ends
        self.followers = np.zeros(0, np.int64)  # sorted, unique: every follower of a kept edge

    @property
    def exact(self) -> bool:
        """Whether :meth:`stored` can answer (no part kept as wide pks)."""
        return not self.wide

    def __len__(self) -> int:
        return sum(len(r[1]) for r in self.runs) + sum(len(f) for f, _ in self.wide)

    def add(self, follower: np.ndarray, followee: np.ndarray) -> None:
        fr, fe = np.asarray(follower, np.int64), np.asarray(followee, np.int64)
        if not len(fr):
            return
        lo_pk, hi_pk = int(min(fr.min(), fe.min())), int(max(fr.max(), fe.max()))
        if hi_pk - lo_pk >= _SPAN:
            self.wide.append((fr.copy(), fe.copy()))
            return
        self.followers = merge_sorted(self.followers, unique(fr))
        lo = self._window(lo_pk, hi_pk)
        keys = (fr - lo).astype(_U)
        keys <<= _U(32)
        keys |= (fe - lo).astype(_U)
        if len(keys) > 1 and not (keys[1:] >= keys[:-1]).all():  # the merge hands them sorted, mostly
            keys = sort_ints(keys, overwrite=True)
        self.runs.append([lo, distinct_sorted(keys)])
        while len(self.runs) > 1 and self.runs[-2][0] == lo and len(self.runs[-2][1]) <= 2 * len(self.runs[-1][1]):
            last = self.runs.pop()
            self.runs[-1][1] = merge_sorted(self.runs[-1][1], last[1])

    def _window(self, lo_pk: int, hi_pk: int) -> int:
        """The ``lo`` of a part whose pks lie in [lo_pk, hi_pk]: the last run's where they fit it, else 0 where
        they are below 2**32, else one that leaves room on both sides."""
        if self.runs:
            lo = self.runs[-1][0]
            if lo <= lo_pk and hi_pk < lo + _SPAN:
                return lo
        if hi_pk < _SPAN:
            return 0
        return max(0, lo_pk - (_SPAN - 1 - (hi_pk - lo_pk)) // 2)  # the slack split: later pks may lie either side

    def stored(self, follower: np.ndarray, followee: np.ndarray) -> np.ndarray | None:
        """Mask of the edges (account pks) an earlier :meth:`add` kept; None where a part was kept wide. Only the
        edges whose follower is among the kept ones' are looked up, a million at a time, sorted first (binary
        searches in key order stay in the cache)."""
        if not self.exact:
            return None
        fr, fe = np.asarray(follower, np.int64), np.asarray(followee, np.int64)
        found = np.zeros(len(fr), bool)
        ask = np.flatnonzero(sorted_positions(self.followers, fr)[1])
        for a in range(0, len(ask), 1 << 20):
            at = ask[a : a + (1 << 20)]
            f, e = fr[at], fe[at]
            hit = np.zeros(len(at), bool)
            for lo, keys in self.runs:
                inside = np.flatnonzero(~hit & (f >= lo) & (e >= lo) & (f - lo < _SPAN) & (e - lo < _SPAN))
                if not len(inside) or not len(keys):
                    continue
                want = (f[inside] - lo).astype(_U)
                want <<= _U(32)
                want |= (e[inside] - lo).astype(_U)
                order = argsort_ints(want)  # searched in key order: the binary searches stay in the cache
                hit[inside[order[sorted_positions(keys, want[order])[1]]]] = True
            found[at] = hit
        return found

    def pop_csr(self, max_span: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Every kept edge as a follower graph in CSR over account pks (ids ascending, each row's followees sorted,
        no duplicates, no self-follows: ``graph_files.Csr``'s arrays), and forgets them; None, keeping them, unless
        every run shares one window whose offsets stay below ``max_span`` (default: four times the edges, at least
        2**24). The runs are read range by range (:func:`_csr_of_runs`): about 8 bytes a follow for the keys and 4
        for the followees' positions, where building it from the two ends took about 40 (the ``bigger4``-sized
        import's peak, 14.6 GB at 341.7M follows, ``benchmarks/data_layer.md``)."""
        if not self.exact or not self.runs or len({lo for lo, _ in self.runs}) != 1:
            return None
        n = len(self)
        span = 1 + max(_max_offset(keys) for _, keys in self.runs if len(keys))
        if span > (max_span if max_span is not None else max(4 * n, 1 << 24)):
            return None
        lo = self.runs[0][0]
        runs = [keys for _, keys in self.runs if len(keys)]
        self.runs, self.followers = [], np.zeros(0, np.int64)
        return _csr_of_runs(runs, lo, span)

    def pop_ends(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every kept edge as (follower pks, followee pks), int64, run by run; each run forgotten once handed out."""
        runs, wide = self.runs, self.wide
        self.runs, self.wide, self.followers = [], [], np.zeros(0, np.int64)
        while runs:
            lo, keys = runs.pop(0)
            fr = (keys >> _U(32)).astype(np.int64)
            keys &= _LOW
            fe = keys.astype(np.int64)
            del keys
            if lo:
                fr += lo
                fe += lo
            yield fr, fe
        while wide:
            yield wide.pop(0)


def _max_offset(keys: np.ndarray) -> int:
    """The largest follower or followee offset of sorted keys (the followees' read in chunks: no temporary of the
    keys' length)."""
    return max(int(keys[-1] >> _U(32)), *(int((keys[a : a + _STEP] & _LOW).max()) for a in range(0, len(keys), _STEP)))


def _csr_of_runs(runs: list[np.ndarray], lo: int, span: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, indptr, indices) of the edges of sorted runs of unique keys whose pk offsets from ``lo`` are below
    ``span``: duplicates across runs and self-follows dropped (a self-follow's account stays a node, as the graph
    built from the ends keeps it). A pk's position is read from a table over the offsets; the rows are made range
    of followers by range, each range's keys taken from every run by two binary searches and merged there, so the
    runs are never merged whole: the keys (8 bytes a follow) and the followees' positions (4) are all it holds."""
    step = _STEP
    present = np.zeros(span, bool)
    for keys in runs:
        for a in range(0, len(keys), step):
            chunk = keys[a : a + step]
            present[(chunk >> _U(32)).astype(np.int64)] = True
            present[(chunk & _LOW).astype(np.int64)] = True
    offsets = np.flatnonzero(present)
    del present
    wide = len(offsets) >= 2**31
    position = np.zeros(span, np.int64 if wide else np.int32)
    position[offsets] = np.arange(len(offsets), dtype=position.dtype)
    row_size = np.zeros(len(offsets), np.int64)
    indices = np.empty(sum(len(r) for r in runs), position.dtype)
    at = 0
    biggest = max(runs, key=len)
    # ranges of followers of about ``step`` keys of all the runs each, cut where the largest run has its share of
    # them (a follower's row whole in one range; the runs are each spread over every follower)
    every = max(1, step * len(biggest) // max(len(indices), 1))
    cuts = unique(biggest[every::every] >> _U(32)).astype(np.int64) if len(biggest) > every else np.zeros(0, np.int64)
    starts = np.concatenate([[0], cuts]).astype(_U) << _U(32)
    for i, a in enumerate(starts):
        b = starts[i + 1] if i + 1 < len(starts) else None  # the last range: to the runs' ends
        parts = [r[np.searchsorted(r, a) : None if b is None else np.searchsorted(r, b)] for r in runs]
        keys = np.concatenate(parts) if len(parts) > 1 else parts[0]
        if len(parts) > 1:
            keys = distinct_sorted(sort_ints(keys, overwrite=True))
        src, dst = (keys >> _U(32)).astype(np.int64), (keys & _LOW).astype(np.int64)
        keep = src != dst
        if not keep.all():
            src, dst = src[keep], dst[keep]
        rows = position[src]  # ascending: the keys are sorted by follower
        if len(rows):
            first = np.flatnonzero(np.concatenate([[True], rows[1:] != rows[:-1]]))
            row_size[rows[first]] = np.diff(np.append(first, len(rows)))
        indices[at : at + len(dst)] = position[dst]
        at += len(dst)
    indptr = np.zeros(len(offsets) + 1, np.int64)
    np.cumsum(row_size, out=indptr[1:])
    return offsets + lo, indptr, indices[:at] if at < len(indices) else indices
