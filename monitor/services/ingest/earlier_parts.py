"""What the earlier parts of an import in parts stored, kept in memory so that a later part need not ask the tables.

A later part checks the rows it would write against the rows stored before it (``merge._stored_rows``: the rows
staged, then a hash join that reads the workspace's whole partition, unindexed until the last part). Into a
workspace that had no account before the import, every stored row on the import's accounts is one an earlier
part of this import wrote (the merge lock keeps other writers out from the first part to the commit), so the
import itself knows them:

* the follows: the follower graph's file keeps every part's edges already (``graph_files.ImportedFollows``), and
  answers exactly;
* the retweets and the follower-count snapshots: :class:`StoredKeys` keeps a 64-bit hash of the key ((tweet,
  retweeter); (account, time)) of each row a part wrote, 8 bytes a row. A row whose hash is not among them is one
  no earlier part stored. One whose hash is (a row given again; two keys with one hash, about one chance in
  2**64 / 7M per row at the 10M benchmark's last part) is checked against the table as before, so the answer is
  exact. The snapshots given again are mostly the originals' authors' (a v1.1 retweet embeds its original, so
  every part gives them again): :class:`KeptSnapshots` keeps those rows whole (key and count, 32 bytes a row, a
  few hundred thousand), so the table is asked only for what it does not hold.

The hashes are dropped once the last part has used them: its follows and the follower graph's file do not carry
them. With parts of 3M rows (``SPREADWATCH_IMPORT_PART_ROWS``) the 10M benchmark's import stays under its
compute's peak memory with them. There the follows', snapshots' and retweets' checks took 31-33 s of the merge
against the tables (parts of 4M), 2.7 s in memory (parts of 3M; ``benchmarks/data_layer.md``, 2026-12-02 (fifth))."""

from __future__ import annotations

import numpy as np

from compute.arrays import merge_sorted

from ...db import pg_timestamptz

__all__ = ["EarlierSnapshots", "KeptSnapshots", "StoredKeys", "pair_hashes", "snapshot_key"]

_U = np.uint64


def pair_hashes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each pair of 64-bit integers (SplitMix64's finaliser over ``a * odd + b``: keys a bit
    apart give unrelated hashes), computed in place: 16 bytes a pair while it runs, 8 after."""
    x = np.asarray(a, np.int64).astype(_U)
    tmp = np.empty_like(x)
    with np.errstate(over="ignore"):
        x *= _U(0x9E3779B97F4A7C15)
        x += np.asarray(b, np.int64).view(_U)
        for shift, mul in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
            np.right_shift(x, _U(shift), out=tmp)
            x ^= tmp
            if mul is not None:
                x *= _U(mul)
    return x


class StoredKeys:
    """Sorted hashes of the rows the earlier parts stored: a filter with no false negatives. A part's hashes are one
    sorted run, merged with the run before it while that one is at most twice its size: O(log parts) runs to ask,
    not one per part (a lookup per part and earlier part is quadratic in the parts; the follows' kept keys,
    ``monitor.kept_follows``, cost the ``bigger4``-sized upload 896 s that way)."""

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []

    def add(self, hashes: np.ndarray) -> None:
        """Keep a part's ``hashes`` (sorted in place: the array is the caller's no more)."""
        if len(hashes):
            hashes = np.asarray(hashes, _U)
            hashes.sort()
            self.parts.append(hashes)
            while len(self.parts) > 1 and len(self.parts[-2]) <= 2 * len(self.parts[-1]):
                last = self.parts.pop()
                self.parts[-1] = merge_sorted(self.parts[-1], last, distinct=False)

    def maybe(self, hashes: np.ndarray) -> np.ndarray:
        """Mask of ``hashes`` that some earlier part stored a row with: only those rows can be stored. The hashes
        are looked up in their sorted order: in the order given, each binary search's reads miss the cache (3.4M
        hashes among 3.4M: 1.8 s, against 0.4 s sorted first)."""
        hashes = np.asarray(hashes, _U)
        out = np.zeros(len(hashes), bool)
        if not self.parts or not len(hashes):
            return out
        order = np.argsort(hashes)
        ordered = hashes[order]
        found = np.zeros(len(hashes), bool)
        for part in self.parts:
            pos = np.searchsorted(part, ordered)
            pos[pos == len(part)] = 0
            found |= part[pos] == ordered
        out[order] = found
        return out

    def clear(self) -> None:
        self.parts.clear()

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.parts)


class KeptSnapshots:
    """Whole snapshot rows an earlier part stored (account key, time in PostgreSQL's microseconds, count), by
    their hash: :meth:`find` answers for a row given again without the table."""

    def __init__(self) -> None:
        z = np.zeros(0, np.int64)
        self.hash, self.account, self.us, self.count = np.zeros(0, _U), z, z, z

    def add(self, hashes: np.ndarray, account: np.ndarray, us: np.ndarray, count: np.ndarray) -> None:
        if not len(hashes):
            return
        h = np.concatenate([self.hash, hashes])
        order = np.argsort(h, kind="stable")
        self.hash = h[order]
        self.account = np.concatenate([self.account, account])[order]
        self.us = np.concatenate([self.us, us])[order]
        self.count = np.concatenate([self.count, count])[order]

    def find(self, hashes: np.ndarray, account: np.ndarray, us: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions and a found mask of the rows (account, us) kept here (a hash kept for another key: not
        found)."""
        if not len(self.hash):
            return np.zeros(len(hashes), np.int64), np.zeros(len(hashes), bool)
        pos = np.searchsorted(self.hash, hashes)
        pos[pos == len(self.hash)] = 0
        found = (self.hash[pos] == hashes) & (self.account[pos] == account) & (self.us[pos] == us)
        return pos, found

    def raise_counts(self, pos: np.ndarray, count: np.ndarray) -> None:
        np.maximum.at(self.count, pos, count)

    def clear(self) -> None:
        self.__init__()


def snapshot_key(account_pk: np.ndarray, observed_at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A snapshot's time as PostgreSQL stores it (microseconds, :func:`monitor.db.pg_timestamptz`: two times the
    table holds as one are one here) and the hash of its key."""
    us = pg_timestamptz(observed_at)
    return us, pair_hashes(account_pk, us)


class EarlierSnapshots:
    """The follower-count snapshots the earlier parts stored: every one's hash, the originals' whole."""

    def __init__(self) -> None:
        self.hashes, self.kept = StoredKeys(), KeptSnapshots()

    def check(
        self, account: np.ndarray, observed_at: np.ndarray, count: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Of a later part's snapshots (account keys, epoch seconds, counts): the masks of those to ask the table
        about (a hash kept without its row), of those stored (found whole), and of those stored whose count is
        raised (the kept count raised with it)."""
        us, hashes = snapshot_key(account, observed_at)
        ask = self.hashes.maybe(hashes)
        stored, raised = np.zeros(len(ask), bool), np.zeros(len(ask), bool)
        at = np.flatnonzero(ask)
        pos, kept = self.kept.find(hashes[at], account[at], us[at])
        at, pos = at[kept], pos[kept]
        stored[at] = True
        up = count[at] > self.kept.count[pos]
        self.kept.raise_counts(pos[up], count[at][up])
        raised[at[up]] = True
        ask[at] = False
        return ask, stored, raised

    def add(self, account: np.ndarray, observed_at: np.ndarray, count: np.ndarray, original: np.ndarray) -> None:
        """A part's new snapshots; ``original``: those of an original's row, kept whole."""
        us, hashes = snapshot_key(account, observed_at)
        self.kept.add(hashes[original], account[original], us[original], count[original])
        del us
        self.hashes.add(hashes)

    def clear(self) -> None:
        self.hashes.clear()
        self.kept.clear()
