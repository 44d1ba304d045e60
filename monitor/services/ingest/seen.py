"""The upload-wide duplicate check of an import merged in parts: the references of the parts already merged
wait in a temporary table, not in memory.

:class:`~compute.formats.SeenTweets` keeps the first row of every tweet id an upload has given so far (about
52 bytes each, in NumPy), so that a later row with the same id but another author, time or retweeted tweet is
a bad record naming the first one's file and line. That grows with the upload; an import in parts
(:mod:`.stager`) calls :meth:`DatabaseSeenTweets.spill` after each part, which moves what memory holds into a
temporary table keyed by the id, and a later chunk asks that table for the ids memory does not know (one
staged join per chunk). The check and its messages are the same (``tests/.../ingest/test_parts.py``).

Most ids a chunk brings are new (every retweet has its own), so a fixed 32 MB Bloom filter of the spilled ids
(two hashes over 2**28 bits: about 2 % false positives at 20M ids) answers "not there" without asking: at 10M
retweets the table is asked for a few percent of the ids instead of all of them.
"""

from __future__ import annotations

import time

import numpy as np

from compute.formats._dups import Known, SeenTweets

from ...db import copy_in, copy_out, create_temp, dialect, empty_table, temp_table_name

__all__ = ["DatabaseSeenTweets"]

_FILTER_BITS = 28  # 2**28 bits = 32 MB, whatever the upload's size
_MULTIPLIERS = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F))


def _slot(ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Byte and bit of each id in the filter, by hash ``k`` (multiplicative: the top bits of id × an odd)."""
    h = (ids.astype(np.uint64) * _MULTIPLIERS[k]) >> np.uint64(64 - _FILTER_BITS)
    return h >> np.uint64(3), (h & np.uint64(7)).astype(np.uint8)


_COLS = [("tid", "bigint"), ("rt", "bigint"), ("uid", "bigint"), ("sec", "bigint"), ("line", "bigint"), ("src", "int")]


class DatabaseSeenTweets(SeenTweets):
    """A :class:`SeenTweets` whose older references live in a temporary table of the import's connection."""

    def __init__(self, cursor) -> None:
        super().__init__()
        self.cur = cursor
        self.table: str | None = None
        self.ask: str | None = None
        self.spilled = 0
        self.bits: np.ndarray | None = None  # the Bloom filter of the spilled ids
        self.asked = 0  # ids the table was asked for (the filter's positives)
        self.seconds = 0.0  # spent moving and asking, for the import's timings

    def spill(self) -> None:
        """Move the references held in memory to the table (after a part's merge)."""
        held = self.held()
        if not len(held[0]):
            return
        t = time.perf_counter()
        if self.table is None:
            self.table = temp_table_name("seen")
            create_temp(self.cur, self.table, _COLS)
            self.cur.execute(f"CREATE UNIQUE INDEX {self.table}_tid ON {self.table} (tid)")
        copy_in(self.cur, self.table, _COLS, list(held))
        if self.bits is None:
            self.bits = np.zeros(1 << (_FILTER_BITS - 3), np.uint8)
        for k in range(len(_MULTIPLIERS)):
            byte, bit = _slot(held[0], k)
            np.bitwise_or.at(self.bits, byte, np.left_shift(np.uint8(1), bit))
        if dialect().postgres:
            self.cur.execute(f"ANALYZE {self.table}")
        self.spilled += len(held[0])
        self.forget()
        self.seconds += time.perf_counter() - t

    def _known(self, u: np.ndarray) -> Known:
        out = super()._known(u)
        if self.table is None:
            return out
        t = time.perf_counter()
        ask = np.flatnonzero(~out.hit)
        for k in range(len(_MULTIPLIERS)):  # only the ids the filter may hold: every hash's bit set
            byte, bit = _slot(u[ask], k)
            ask = ask[(self.bits[byte] >> bit) & 1 == 1]
        self.asked += len(ask)
        if not len(ask):
            self.seconds += time.perf_counter() - t
            return out
        stage = self._ask_table()
        copy_in(self.cur, stage, [("tid", "bigint")], [u[ask]])
        if dialect().postgres:
            self.cur.execute(f"ANALYZE {stage}")
        found = copy_out(
            self.cur,
            f"SELECT t.tid, t.rt, t.uid, t.sec, t.line, t.src FROM {stage} s JOIN {self.table} t ON t.tid = s.tid"
            " ORDER BY t.tid",
            [],
            _COLS,
        )
        at = ask[np.searchsorted(u[ask], found[0])]  # u is sorted: each found id's place in it
        out.hit[at] = True
        for col, vals in zip(out[1:], found[1:]):
            col[at] = vals
        self.seconds += time.perf_counter() - t
        return out

    def _ask_table(self) -> str:
        """The one table of the ids a chunk asks about, emptied (one table, not one per chunk: PostgreSQL holds
        a lock on each table a transaction creates until it ends)."""
        if self.ask is None:
            self.ask = temp_table_name("seenask")
            create_temp(self.cur, self.ask, [("tid", "bigint")])
        else:
            empty_table(self.cur, self.ask)
        return self.ask

    def drop(self) -> None:
        for t in (self.table, self.ask):
            if t is not None:
                self.cur.execute(f"DROP TABLE IF EXISTS {t}")
        self.table = self.ask = None
