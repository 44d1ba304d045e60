"""Columnar record tables that the readers produce and the cascade builder consumes.

A reader yields *chunks* (a few hundred thousand records each) so a 5 GB file never sits in memory at once;
:func:`concat_tweets` / :func:`concat_follows` join chunks when the whole input is wanted.

Conventions (the formats they come from: docs/formats.md):

* ids are int64 (Twitter snowflakes fit: they are < 2**63);
* ``retweeted_tweet_id`` is ``-1`` for an original tweet;
* ``created_at`` is float64 epoch seconds (UTC);
* ``followers_count`` is float64, ``NaN`` where the input did not say;
* the optional text columns (``screen_name``, ``text``, ``label``, ``hashtags``, ``urls``) are object arrays of
  ``str`` or ``None``, or ``None`` as a whole when the format has no such column;
* ``hashtags`` and ``urls`` are the tweet's entities, one ``str`` per row: the hashtags lowercased, without
  ``#``, distinct, in order of first appearance, joined by one space; the linked URLs expanded, distinct, in
  order, joined by one space; ``""`` when the tweet has none (:mod:`compute.formats._entities`). A row is
  ``None`` only after concatenating tables of inputs some of which could not say.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

__all__ = ["NO_TWEET", "FollowTable", "TweetTable", "concat_follows", "concat_tweets"]

#: ``retweeted_tweet_id`` of an original tweet.
NO_TWEET = -1

_TWEET_NUMERIC = {
    "tweet_id": np.int64,
    "retweeted_tweet_id": np.int64,
    "user_id": np.int64,
    "created_at": np.float64,
    "followers_count": np.float64,
}
_TWEET_TEXT = ("screen_name", "text", "label", "hashtags", "urls")


@dataclass(eq=False)
class TweetTable:
    """Tweets and retweets, one row each. Row ``i`` came from ``lines[i]`` of its file (1-based), if known."""

    tweet_id: np.ndarray
    retweeted_tweet_id: np.ndarray
    user_id: np.ndarray
    created_at: np.ndarray
    followers_count: np.ndarray
    screen_name: np.ndarray | None = None
    text: np.ndarray | None = None
    label: np.ndarray | None = None
    lines: np.ndarray | None = None
    # after ``lines``, so the positional order of the older columns stays what callers wrote against
    hashtags: np.ndarray | None = None
    urls: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name, dt in _TWEET_NUMERIC.items():
            setattr(self, name, np.ascontiguousarray(np.asarray(getattr(self, name), dtype=dt)))
        n = len(self.tweet_id)
        for name in (*_TWEET_NUMERIC, *_TWEET_TEXT, "lines"):
            a = getattr(self, name)
            if a is not None and len(a) != n:
                raise ValueError(f"TweetTable column {name} has length {len(a)}, expected {n}")
        for name in _TWEET_TEXT:
            a = getattr(self, name)
            if a is not None and not (isinstance(a, np.ndarray) and a.dtype == object):
                setattr(self, name, np.asarray(a, dtype=object))
        if self.lines is not None:
            self.lines = np.asarray(self.lines, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.tweet_id)

    @property
    def is_retweet(self) -> np.ndarray:
        return self.retweeted_tweet_id != NO_TWEET

    @classmethod
    def empty(cls) -> TweetTable:
        z = np.zeros(0)
        return cls(z, z, z, z, z)

    @classmethod
    def from_rows(cls, rows: Iterable[tuple], *, with_text: bool = False) -> TweetTable:
        """From tuples ``(tweet_id, retweeted_tweet_id|None|-1, user_id, created_at, followers_count|None
        [, screen_name, text, label[, hashtags, urls]])`` — handy in tests and small readers."""
        rows = list(rows)
        cols = list(zip(*rows)) if rows else [[] for _ in range(8 if with_text else 5)]

        def num(col, dt, missing):
            return np.array([missing if v is None else v for v in col], dtype=dt)

        t = cls(
            tweet_id=num(cols[0], np.int64, NO_TWEET),
            retweeted_tweet_id=num(cols[1], np.int64, NO_TWEET),
            user_id=num(cols[2], np.int64, 0),
            created_at=num(cols[3], np.float64, np.nan),
            followers_count=num(cols[4], np.float64, np.nan),
        )
        if len(cols) > 5:
            t.screen_name = np.array(cols[5], dtype=object)
        if len(cols) > 6:
            t.text = np.array(cols[6], dtype=object)
        if len(cols) > 7:
            t.label = np.array(cols[7], dtype=object)
        if len(cols) > 8:
            t.hashtags = np.array(cols[8], dtype=object)
        if len(cols) > 9:
            t.urls = np.array(cols[9], dtype=object)
        return t

    def take(self, index) -> TweetTable:
        """Rows at ``index`` (an index array or boolean mask)."""
        kw = {}
        for name in (*_TWEET_NUMERIC, *_TWEET_TEXT, "lines"):
            a = getattr(self, name)
            kw[name] = None if a is None else a[index]
        return TweetTable(**kw)


@dataclass(eq=False)
class FollowTable:
    """Follow edges: ``follower_id`` follows ``followee_id`` (information flows followee -> follower)."""

    follower_id: np.ndarray
    followee_id: np.ndarray

    def __post_init__(self) -> None:
        self.follower_id = np.ascontiguousarray(np.asarray(self.follower_id, dtype=np.int64))
        self.followee_id = np.ascontiguousarray(np.asarray(self.followee_id, dtype=np.int64))
        if self.follower_id.shape != self.followee_id.shape:
            raise ValueError("FollowTable columns differ in length")

    def __len__(self) -> int:
        return len(self.follower_id)

    @classmethod
    def empty(cls) -> FollowTable:
        return cls(np.zeros(0, np.int64), np.zeros(0, np.int64))


def concat_tweets(chunks: Iterable[TweetTable]) -> TweetTable:
    chunks = [c for c in chunks if len(c)]
    if not chunks:
        return TweetTable.empty()
    kw = {}
    for name in (*_TWEET_NUMERIC, *_TWEET_TEXT, "lines"):
        parts = [getattr(c, name) for c in chunks]
        if all(p is None for p in parts):
            kw[name] = None
        elif name in _TWEET_TEXT:
            kw[name] = np.concatenate(
                [np.full(len(c), None, dtype=object) if p is None else p for c, p in zip(chunks, parts)]
            )
        elif name == "lines":
            kw[name] = np.concatenate([np.zeros(len(c), np.int64) if p is None else p for c, p in zip(chunks, parts)])
        else:
            kw[name] = np.concatenate(parts)
    return TweetTable(**kw)


def concat_follows(chunks: Iterable[FollowTable]) -> FollowTable:
    chunks = [c for c in chunks if len(c)]
    if not chunks:
        return FollowTable.empty()
    return FollowTable(np.concatenate([c.follower_id for c in chunks]), np.concatenate([c.followee_id for c in chunks]))
