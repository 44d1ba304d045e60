"""The upload's rows as named NumPy columns, from the staging area to the merge and back from the database.

Each table's rows travel as one ``NamedTuple`` of equal-length arrays (``rows.user_id``, not ``tw[2]``), so a
filter is one ``take`` and a ``copy_out`` result is unpacked straight into the tuple that names its columns.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from compute.arrays import sorted_positions, sorted_positions_each

__all__ = [
    "AccountKeys",
    "EdgeRows",
    "FollowRows",
    "StoredTweets",
    "TweetKeys",
    "TweetRows",
    "cat",
    "first_of_runs",
    "lookup",
]


def cat(parts: list[np.ndarray], dtype) -> np.ndarray:
    """``parts`` as one array of ``dtype`` (empty when there are none)."""
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def lookup(keys: np.ndarray, values: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` of ``want`` in the sorted ``keys``; second result: found or not."""
    if not len(keys):
        return np.zeros(len(want), np.int64), np.zeros(len(want), bool)
    pos, found = sorted_positions(keys, want)
    return values[pos], found


def in_sorted(sorted_keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mask of ``values`` found in ``sorted_keys``."""
    return lookup(sorted_keys, sorted_keys, values)[1]


def first_of_runs(*sorted_keys: np.ndarray) -> np.ndarray:
    """Mask of the first row of each run of equal keys (rows already sorted by those keys)."""
    n = len(sorted_keys[0])
    first = np.ones(n, bool)
    if n > 1:
        same = np.ones(n - 1, bool)
        for k in sorted_keys:
            same &= k[1:] == k[:-1]
        first[1:] = ~same
    return first


class TweetRows(NamedTuple):
    """Staged tweet rows, originals and retweets alike, in upload order (Twitter ids, not primary keys)."""

    tweet_id: np.ndarray  # 0: a retweet whose own id is unknown (trees, TUDataset)
    retweeted_id: np.ndarray  # NO_TWEET for an original
    user_id: np.ndarray
    created_at: np.ndarray  # epoch seconds
    followers: np.ndarray  # the author's follower count at that time; NaN: not known

    DTYPES = (np.int64, np.int64, np.int64, np.float64, np.float64)

    def take(self, rows: np.ndarray) -> TweetRows:
        """The rows at ``rows`` (indices or a mask), every column alike."""
        return TweetRows(*(col[rows] for col in self))


class FollowRows(NamedTuple):
    """Follow edges: Twitter user ids when staged, account primary keys in the merge."""

    follower: np.ndarray
    followee: np.ndarray

    def take(self, rows: np.ndarray) -> FollowRows:
        return FollowRows(*(col[rows] for col in self))


class EdgeRows(NamedTuple):
    """Given spreading edges (TUDataset, spreading-graph archives): Twitter ids when staged, keys in the merge."""

    tweet: np.ndarray  # the cascade's original
    src: np.ndarray  # the user the tweet spread from
    dst: np.ndarray  # the user it spread to


class AccountKeys(NamedTuple):
    """The workspace's accounts the upload names, sorted by Twitter id, as read back from the database."""

    twitter_id: np.ndarray
    pk: np.ndarray
    old: np.ndarray = np.zeros(0, np.int64)  # the keys that existed before the merge, sorted

    def of(self, user_ids: np.ndarray) -> np.ndarray:
        """Primary keys of ``user_ids`` (every one of them is stored by the accounts step)."""
        return lookup(self.twitter_id, self.pk, user_ids)[0]

    def of_each(self, *user_ids: np.ndarray) -> list[np.ndarray]:
        """:meth:`of` of each array, the keys' lookup table built once."""
        if not len(self.twitter_id):
            return [np.zeros(len(u), np.int64) for u in user_ids]
        return [self.pk[pos] for pos, _ in sorted_positions_each(self.twitter_id, user_ids)]

    def merged(self, other: AccountKeys) -> AccountKeys:
        """These keys and ``other``'s (no Twitter id in common, each sorted) as one sorted set: ``other`` placed
        among these instead of both sorted again, 18 bytes a key held meanwhile instead of 40 (at the 10M benchmark
        the import keeps 5M accounts' keys: its peak memory is near its 2 GB goal)."""
        n = len(self.twitter_id) + len(other.twitter_id)
        at = np.searchsorted(self.twitter_id, other.twitter_id) + np.arange(len(other.twitter_id))
        from_self = np.ones(n, bool)
        from_self[at] = False
        tw, pk = np.empty(n, np.int64), np.empty(n, np.int64)
        tw[at], pk[at] = other.twitter_id, other.pk
        tw[from_self], pk[from_self] = self.twitter_id, self.pk
        return AccountKeys(tw, pk)


class TweetKeys(NamedTuple):
    """The workspace's tweets the upload names (as originals or as retweeted), sorted by tweet id."""

    tweet_id: np.ndarray
    pk: np.ndarray
    author_pk: np.ndarray


class StoredTweets(NamedTuple):
    """Tweets already stored that the upload names again, sorted by tweet id, for the conflict check."""

    tweet_id: np.ndarray
    author_id: np.ndarray  # the author's Twitter id
    created_at: np.ndarray  # epoch seconds
