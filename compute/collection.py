"""The collection archive: tweets plus the follower graph in one ``.npz`` (what ``generate twitter`` writes).

CSV would be the obvious interchange, but a ``bigger4``-sized follower graph is 341.7M edges: about 6 GB of
text that takes minutes to parse, against 1.4 GB of int32 that ``np.load`` maps in a second. Layout:

=====================  ==========  ===========================================================
key                    dtype       meaning
=====================  ==========  ===========================================================
``kind``               str         ``"collection"`` (tells it apart from a spreading-graph archive)
``tweet_id``           int64[R]    tweet id (originals and retweets)
``retweeted_tweet_id`` int64[R]    the original's id, ``-1`` for an original
``user_id``            int64[R]    author / retweeter
``created_at``         float64[R]  epoch seconds (UTC)
``followers_count``    float64[R]  author's follower count at that time, NaN if unknown
``graph_user_ids``     int64[U]    dense user index -> Twitter user id (strictly increasing)
``friends_indptr``     int64[U+1]  CSR row offsets: row i = users that user i follows
``friends_indices``    int32[E]    CSR column indices (dense user indices), sorted per row
``labels_tweet_id``    int64[L]    optional truth labels: tweet id ...
``labels_label``       str[L]      ... and its label
=====================  ==========  ===========================================================
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .structures import FollowerGraph
from .tables import TweetTable

__all__ = ["COLLECTION_KEYS", "is_collection_archive", "load_collection", "save_collection"]

COLLECTION_KEYS = (
    "tweet_id",
    "retweeted_tweet_id",
    "user_id",
    "created_at",
    "followers_count",
    "graph_user_ids",
    "friends_indptr",
    "friends_indices",
)


def is_collection_archive(keys) -> bool:
    return "kind" in keys and all(k in keys for k in COLLECTION_KEYS)


def save_collection(
    path: str | os.PathLike,
    tweets: TweetTable,
    graph: FollowerGraph,
    labels: dict[int, str] | None = None,
) -> None:
    arrays = {
        "kind": np.array("collection"),
        "tweet_id": tweets.tweet_id,
        "retweeted_tweet_id": tweets.retweeted_tweet_id,
        "user_id": tweets.user_id,
        "created_at": tweets.created_at,
        "followers_count": tweets.followers_count,
        "graph_user_ids": graph.user_ids,
        "friends_indptr": graph.friends_indptr,
        "friends_indices": graph.friends_indices,
    }
    if labels:
        arrays["labels_tweet_id"] = np.fromiter(labels.keys(), dtype=np.int64, count=len(labels))
        arrays["labels_label"] = np.array(list(labels.values()), dtype=np.str_)
    with open(Path(path), "wb") as fh:
        np.savez(fh, **arrays)


def load_collection(path: str | os.PathLike) -> tuple[TweetTable, FollowerGraph, dict[int, str]]:
    path = Path(path)
    with np.load(path, allow_pickle=False) as z:
        missing = [k for k in COLLECTION_KEYS if k not in z.files]
        if "kind" not in z.files or str(z["kind"]) != "collection" or missing:
            raise ValueError(f"{path}: not a collection archive (missing {', '.join(missing) or 'kind'})")
        tweets = TweetTable(
            tweet_id=z["tweet_id"],
            retweeted_tweet_id=z["retweeted_tweet_id"],
            user_id=z["user_id"],
            created_at=z["created_at"],
            followers_count=z["followers_count"],
        )
        try:
            graph = FollowerGraph(z["graph_user_ids"], z["friends_indptr"], z["friends_indices"])
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        labels = {}
        if "labels_tweet_id" in z.files:
            labels = dict(zip(z["labels_tweet_id"].tolist(), z["labels_label"].tolist()))
    return tweets, graph, labels
