"""The upload-wide duplicate check of an import merged in parts: the references of the parts already merged
wait in files of the import's working folder, not in memory.

:class:`~compute.formats.SeenTweets` keeps the first row of every tweet id an upload has given so far (about
52 bytes each, in NumPy), so that a later row with the same id but another author, time or retweeted tweet is
a bad record naming the first one's file and line. That grows with the upload; an import in parts
(:mod:`.stager`) calls :meth:`SpilledSeenTweets.spill` after each part, which writes what memory holds into a
*run*: the part's ids, sorted, in one file, and their references in another, the same order. Memory keeps one id
in every :data:`FENCE` of each run (its first), so a later chunk finds the block of a run that may hold an id
and reads only that block. The check and its messages are the same (``tests/.../ingest/test_parts.py``).

Most ids a chunk brings are new (every retweet has its own), so a fixed 32 MB Bloom filter of the spilled ids
(two hashes over 2**28 bits: about 2 % false positives at 20M ids) answers "not there" without reading a block:
at 10M retweets a few percent of the ids are looked for in the runs.

The runs were a temporary table with a unique index before: moving each part's references into it took about
2 s a part of 1.5M ids (the index outgrew the session's few MB of temporary buffers), and the spills and lookups
of a synthetic 10M-retweet upload 11.6-13.3 s against 3.3-3.5 s with files (``benchmarks/seen_spill_bench.py``,
``benchmarks/data_layer.md``). Memory still holds the part being read; what a run costs it is its fence (an
id in 1,024: 8 bytes per 1,024 references) and the blocks a chunk reads, freed after the chunk.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from compute.formats._dups import Known, SeenTweets

__all__ = ["FENCE", "SpilledSeenTweets"]

_FILTER_BITS = 28  # 2**28 bits = 32 MB, whatever the upload's size
_MULTIPLIERS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))
#: references per block of a run: memory keeps each block's first id, a lookup reads the block (8 KB of ids)
FENCE = 1024
# a run's references, in the order of its ids (the ids in a file of their own, searched by block)
_REFS = np.dtype([("rt", "<i8"), ("uid", "<i8"), ("sec", "<i8"), ("line", "<i8"), ("src", "<i4")])


def _slot(ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Byte and bit of each id in the filter, by hash ``k`` (multiplicative: the top bits of id × an odd)."""
    h = (ids.astype(np.uint64) * _MULTIPLIERS[k]) >> np.uint64(64 - _FILTER_BITS)
    return h >> np.uint64(3), (h & np.uint64(7)).astype(np.uint8)


class _Run(NamedTuple):
    """One spilled part: ``n`` sorted ids in ``ids`` (int64), their references in ``refs`` (:data:`_REFS`), and
    the first id of each block of :data:`FENCE`."""

    ids: Path
    refs: Path
    n: int
    fence: np.ndarray


class SpilledSeenTweets(SeenTweets):
    """A :class:`SeenTweets` whose older references live in files of ``folder`` (the import's working folder,
    removed with it)."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = Path(folder)
        self.runs: list[_Run] = []
        self.spilled = 0
        self.bits: np.ndarray | None = None  # the Bloom filter of the spilled ids
        self.asked = 0  # ids looked for in the runs (the filter's positives)
        self.seconds = 0.0  # spent writing the runs and looking in them, for the import's timings

    def spill(self) -> None:
        """Write the references held in memory as a run (after a part's merge) and forget them."""
        held = self.held()
        n = len(held[0])
        if not n:
            return
        t = time.perf_counter()
        self.folder.mkdir(parents=True, exist_ok=True)
        k = len(self.runs)
        ids, refs = self.folder / f"seen-{k}.ids", self.folder / f"seen-{k}.refs"
        np.ascontiguousarray(held[0], dtype="<i8").tofile(ids)
        rows = np.empty(n, _REFS)
        for name, col in zip(_REFS.names, held[1:], strict=True):
            rows[name] = col
        rows.tofile(refs)
        self.runs.append(_Run(ids, refs, n, held[0][::FENCE].copy()))
        if self.bits is None:
            self.bits = np.zeros(1 << (_FILTER_BITS - 3), np.uint8)
        for h in range(len(_MULTIPLIERS)):
            byte, bit = _slot(held[0], h)
            np.bitwise_or.at(self.bits, byte, np.left_shift(np.uint8(1), bit))
        self.spilled += n
        self.forget()
        self.seconds += time.perf_counter() - t

    def _known(self, u: np.ndarray) -> Known:
        out = super()._known(u)
        if not self.runs:
            return out
        t = time.perf_counter()
        ask = np.flatnonzero(~out.hit)
        for k in range(len(_MULTIPLIERS)):  # only the ids the filter may hold: every hash's bit set
            byte, bit = _slot(u[ask], k)
            ask = ask[(self.bits[byte] >> bit) & 1 == 1]
        self.asked += len(ask)
        for run in self.runs:
            if not len(ask):
                break
            at, pos = _find(run, u[ask])
            if not len(at):
                continue
            found = ask[at]
            refs = np.array(np.memmap(run.refs, dtype=_REFS, mode="r", shape=(run.n,))[pos])  # the map let go
            out.hit[found] = True
            for name in _REFS.names:
                getattr(out, name)[found] = refs[name]
            ask = np.delete(ask, at)  # an id is in one run at most (a known id is not registered again)
        self.seconds += time.perf_counter() - t
        return out

    def drop(self) -> None:
        """Remove the runs' files (the import's folder goes too, when the import ends)."""
        for run in self.runs:
            run.ids.unlink(missing_ok=True)
            run.refs.unlink(missing_ok=True)
        self.runs = []


def _find(run: _Run, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of the sorted ids ``q`` the run holds: their places in ``q`` and their rows in the run. Only the
    blocks that may hold them are read (each id's block: the last whose first id is not above it)."""
    block = np.searchsorted(run.fence, q, side="right") - 1
    inside = block >= 0
    if not inside.any():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    blocks = np.unique(block[inside])
    rows = (blocks[:, None] * FENCE + np.arange(FENCE)).ravel()
    rows = rows[rows < run.n]  # ascending, so the ids read are sorted too
    ids = np.array(np.memmap(run.ids, dtype="<i8", mode="r", shape=(run.n,))[rows])
    at = np.minimum(np.searchsorted(ids, q), len(ids) - 1)
    hit = ids[at] == q
    return np.flatnonzero(hit), rows[at[hit]]
