"""What the earlier parts of an import in parts stored, kept in memory so that a later part need not ask the tables.

A later part checks the rows it would write against the rows stored before it (``merge._stored_rows``: the rows
staged, then a hash join with the workspace's partition). Into a workspace that had no account before the import,
every stored row on the import's accounts is one an earlier part of this import wrote (the merge lock keeps other
writers out from the first part to the commit), so the import itself knows them:

* the follows: the follower graph's file keeps every part's edges already (``graph_files.ImportedFollows``), and
  answers exactly;
* the follower-count snapshots: :class:`StoredKeys` keeps a 64-bit hash of each snapshot's key (account, time) that
  a part wrote, 8 bytes a snapshot. A hash not among them is a snapshot no earlier part stored; the few that are
  (the snapshots that the parts give again, such as the originals' authors', and any two keys with one hash) are
  checked against the table as before, so the answer is exact.

On the 10M-retweet benchmark's parts these two checks cost 14-27 s of the merge (``benchmarks/data_layer.md``)."""

from __future__ import annotations

import numpy as np

from ...db import pg_timestamptz

__all__ = ["StoredKeys", "snapshot_hashes"]

_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd constant: account keys that differ give products that differ


def snapshot_hashes(account_pk: np.ndarray, observed_at: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each snapshot's key: the account's key and the time as PostgreSQL stores it (microseconds,
    :func:`monitor.db.pg_timestamptz`), so two times the table holds as one give one hash."""
    pk = np.asarray(account_pk, np.int64).astype(np.uint64)
    us = pg_timestamptz(observed_at).astype(np.uint64)
    with np.errstate(over="ignore"):
        return pk * _MIX + us


class StoredKeys:
    """Sorted hashes of the rows each earlier part stored (one array per part): a filter with no false negatives."""

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []

    def add(self, hashes: np.ndarray) -> None:
        if len(hashes):
            self.parts.append(np.sort(np.asarray(hashes, np.uint64)))

    def maybe(self, hashes: np.ndarray) -> np.ndarray:
        """Mask of ``hashes`` that some earlier part stored a row with: only those rows can be stored."""
        hashes = np.asarray(hashes, np.uint64)
        out = np.zeros(len(hashes), bool)
        for part in self.parts:
            pos = np.searchsorted(part, hashes)
            pos[pos == len(part)] = 0
            out |= part[pos] == hashes
        return out

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self.parts)
