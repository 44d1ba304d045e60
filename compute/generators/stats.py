"""Summary statistics of generated (or any) data, in the shape of the thesis' Table 7.1 / 7.3 and CRGP's Table 3.

Both functions are cheap (a few NumPy passes), so ``generate`` always returns them and the benchmarks can
print them next to their timings.
"""

from __future__ import annotations

import numpy as np

from ..arrays import unique
from ..structures import FollowerGraph, SpreadingGraphs
from ..tables import TweetTable

__all__ = ["graph_stats", "collection_stats", "RSG_TARGETS", "SEIBERT_TARGETS", "BIGGER4_TARGETS"]

#: Thesis Table 7.1 (RSG column) with the class counts of Table 7.3; N is the exact 2,894,554 of §7.2.5.
RSG_TARGETS = {
    "T": 15_435,
    "N": 2_894_554,
    "M": 450_000_000,
    "U": 29_700,
    "avg_n": 187,
    "median_n": 74,
    "max_n": 29_700,
    "avg_m": 29_200,
    "median_m": 262,
    "max_m": 39_800_000,
    "empty": 170,
    "small": 5_250,
    "medium": 9_845,
    "large": 170,
}

#: Thesis Table 7.1 (Seibert column) with Table 7.3; N is the exact 48,575 of §7.2.5.
SEIBERT_TARGETS = {
    "T": 3_140,
    "N": 48_575,
    "M": 46_000,
    "U": 14_000,
    "avg_n": 16,
    "median_n": 12,
    "max_n": 49,
    "avg_m": 15,
    "median_m": 10,
    "max_m": 120,
    "empty": 764,
    "small": 1_870,
    "medium": 506,
    "large": 0,
}

#: CRGP ``bigger4`` (Meyer 2017, Table 3 and §5).
BIGGER4_TARGETS = {"users": 3_177_361, "follow_edges": 341_698_525, "cascades": 99_561, "retweets": 3_683_332}


def _num(x) -> int | float:
    """Plain Python numbers, so the dict serialises to JSON as is."""
    x = x.item() if hasattr(x, "item") else x
    return int(x) if float(x).is_integer() else float(x)


def graph_stats(graphs: SpreadingGraphs) -> dict:
    """Table 7.1 / 7.3 statistics of a set of spreading graphs.

    Keys: ``T`` graphs, ``N`` nodes, ``M`` edges, ``U`` distinct user ids, ``avg_n``/``median_n``/``max_n``,
    ``avg_m``/``median_m``/``max_m`` (per graph), and the thesis' size classes ``empty`` (n <= 1),
    ``small`` (1 < n <= 32), ``medium`` (32 < n <= 1024), ``large`` (n > 1024).
    """
    n = graphs.cascades.sizes
    m = np.diff(graphs.edge_offsets)
    t = len(n)

    def agg(a, f):
        return _num(f(a)) if t else 0

    return {
        "T": t,
        "N": _num(graphs.n_nodes),
        "M": _num(graphs.n_edges),
        "U": _num(len(unique(graphs.cascades.user_ids))),
        "avg_n": agg(n, np.mean),
        "median_n": agg(n, np.median),
        "max_n": agg(n, np.max),
        "avg_m": agg(m, np.mean),
        "median_m": agg(m, np.median),
        "max_m": agg(m, np.max),
        "empty": _num(np.count_nonzero(n <= 1)),
        "small": _num(np.count_nonzero((n > 1) & (n <= 32))),
        "medium": _num(np.count_nonzero((n > 32) & (n <= 1024))),
        "large": _num(np.count_nonzero(n > 1024)),
    }


def _dist(prefix: str, a: np.ndarray) -> dict:
    if len(a) == 0:
        return {f"{prefix}_avg": 0, f"{prefix}_median": 0, f"{prefix}_max": 0}
    return {f"{prefix}_avg": _num(a.mean()), f"{prefix}_median": _num(np.median(a)), f"{prefix}_max": _num(a.max())}


def collection_stats(tweets: TweetTable, graph: FollowerGraph) -> dict:
    """CRGP-style statistics of a tweet collection and its follower graph.

    Keys: ``users`` and ``follow_edges`` (the graph), ``cascades`` (original tweets), ``retweets``,
    ``participants`` (distinct authors and retweeters), ``cascade_size_avg``/``_median``/``_max`` (retweets
    per original, 0 for an original nobody retweeted), ``followers_avg``/``_median``/``_max`` (in-degree) and
    ``friends_avg``/``_median``/``_max`` (out-degree) over the graph's users, ``first_time``/``last_time``
    (epoch seconds).
    """
    rt = tweets.is_retweet
    originals = np.sort(tweets.tweet_id[~rt])
    sizes = np.zeros(len(originals), dtype=np.int64)
    if len(originals):
        pos = np.searchsorted(originals, tweets.retweeted_tweet_id[rt])
        pos = np.minimum(pos, len(originals) - 1)
        found = originals[pos] == tweets.retweeted_tweet_id[rt]
        sizes = np.bincount(pos[found], minlength=len(originals))
    friends = np.diff(graph.friends_indptr)
    followers = np.zeros(graph.n_users, dtype=np.int64)
    step = 1 << 24  # chunks: bincount would first copy all 341M int32 indices to int64
    for a in range(0, graph.n_edges, step):
        followers += np.bincount(graph.friends_indices[a : a + step], minlength=graph.n_users)
    times = tweets.created_at[np.isfinite(tweets.created_at)]
    return {
        "users": _num(graph.n_users),
        "follow_edges": _num(graph.n_edges),
        "cascades": _num(len(originals)),
        "retweets": _num(np.count_nonzero(rt)),
        "participants": _num(len(unique(tweets.user_id))),
        **_dist("cascade_size", sizes),
        **_dist("followers", followers),
        **_dist("friends", friends),
        "first_time": _num(times.min()) if len(times) else None,
        "last_time": _num(times.max()) if len(times) else None,
    }
