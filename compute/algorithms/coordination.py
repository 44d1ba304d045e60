"""Coordinated accounts: pairs of accounts that retweet the same original tweets, by two fixed methods, and the
clusters their pairs form (docs/coordination.md).

Input: one row per retweet, ``(tweet, account, time)``: the original tweet's id, the retweeting account's id and
the retweet's time in seconds. Only an account's **first** retweet of a tweet counts (the earliest; equal times,
the first row), so a tweet counts at most once for a pair.

* **co-retweet** (``method="co-retweet"``): for accounts a ≠ b, c(a, b) is the number of original tweets both
  retweeted with their first retweets at most ``window`` seconds apart (|t_a − t_b| ≤ window); a pair is an edge
  when c ≥ ``min_count``, weighted c.
* **similarity** (``method="similarity"``, Pacheco et al., ICWSM 2021): the accounts with at least
  ``min_retweets`` original tweets retweeted (each tweet once) are vectors over those tweets; the entry of a tweet
  is its idf, ln(N / df), N the number of such accounts and df how many of them retweeted it. A pair's weight is
  the cosine of its two vectors, an edge when it is at least ``threshold`` (within 1e-12: the cosine of equal
  vectors computed in floating point may fall short of 1 by a few ulps), reported rounded to 12 decimals (so
  that two engines' summation orders give the same weights and the same order of rows). An account whose every tweet was
  retweeted by all N has a zero vector and no edge.

**Clusters** are the connected components of the edges, numbered 1, 2, ... by size (accounts) descending, then by
their smallest member. Ids are compared as strings wherever an order is given: each edge has ``a < b`` as strings
and the edges are sorted by weight descending, then ``a``, then ``b`` (what ``python -m compute coordination``
prints as JSON). Every edge is kept (no top-K cut), so two engines' outputs compare row by row.

Engines: the pairs within the window are found per tweet after sorting its retweets by time (a two-pointer sweep
in numba, one tweet per thread) and counted by sorting their keys; the similarity is one sparse matrix product
(``scipy.sparse``). Both can produce many pairs where many accounts retweet one tweet together:
:func:`coordination_cost` counts them first (the budget of a run). The GPU twin, with this module's signature, is
:mod:`compute.gpu.coordination`.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit, prange
from ..backends import resolve_backend
from ..results import (
    COORDINATION_METHODS,
    COSINE_SLACK,
    DEFAULT_MIN_COUNT,
    DEFAULT_MIN_RETWEETS,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW,
    Coordination,
    check_coordination,
    coordination_edges,
    first_retweets,
    number_clusters,
)

__all__ = [
    "COORDINATION_METHODS",
    "Coordination",
    "coordination",
    "coordination_cost",
    "coordination_cpu",
    "first_retweets",
    "number_clusters",
]

# --------------------------------------------------------------------------------------------------------------
# Dispatchers
# --------------------------------------------------------------------------------------------------------------


def coordination(
    tweet,
    account,
    time,
    *,
    method: str = "co-retweet",
    window: float = DEFAULT_WINDOW,
    min_count: int = DEFAULT_MIN_COUNT,
    min_retweets: int = DEFAULT_MIN_RETWEETS,
    threshold: float = DEFAULT_THRESHOLD,
    backend: str = "auto",
) -> Coordination:
    """The coordinated pairs of the retweets ``(tweet, account, time)`` by ``method`` (module docstring)."""
    if resolve_backend(backend) != "gpu":
        return coordination_cpu(
            tweet, account, time, method=method, window=window, min_count=min_count, min_retweets=min_retweets,
            threshold=threshold,
        )  # fmt: skip
    from ..gpu.coordination import coordination as twin

    return twin(
        tweet, account, time, method=method, window=window, min_count=min_count, min_retweets=min_retweets,
        threshold=threshold, backend="gpu",
    )  # fmt: skip


def coordination_cost(tweet, account, time, *, method: str = "co-retweet", window: float = DEFAULT_WINDOW,
                      min_retweets: int = DEFAULT_MIN_RETWEETS) -> int:  # fmt: skip
    """The pairs the method will count (co-retweet: within the window; similarity: sharing a tweet, Σ df²/2):
    what its time and memory grow with, for a budget to check before a run. Linear time, little memory."""
    check_coordination(method, window, 1, min_retweets, 1.0)
    tw, acc, t, _ = first_retweets(tweet, account, time)
    if method == "co-retweet":
        starts = _group_starts(tw)
        return int(_window_counts(starts, t, float(window)).sum())
    tw, acc = _kept(tw, acc, int(min_retweets))[:2]
    _, df = np.unique(tw, return_counts=True)
    return int((df.astype(np.int64) * (df - 1) // 2).sum())


def coordination_cpu(
    tweet,
    account,
    time,
    *,
    method: str = "co-retweet",
    window: float = DEFAULT_WINDOW,
    min_count: int = DEFAULT_MIN_COUNT,
    min_retweets: int = DEFAULT_MIN_RETWEETS,
    threshold: float = DEFAULT_THRESHOLD,
) -> Coordination:
    """The CPU reference of :func:`coordination`."""
    check_coordination(method, float(window), min_count, min_retweets, float(threshold))
    params = {"window": float(window), "min_count": int(min_count)}
    if method == "similarity":
        params = {"min_retweets": int(min_retweets), "threshold": float(threshold)}
    tw, acc, t, users = first_retweets(tweet, account, time)
    if method == "co-retweet":
        lo, hi, w, n_pairs = _co_retweet(tw, acc, t, float(window), int(min_count))
        n_accounts, n_tweets = len(users), len(np.unique(tw))
    else:
        lo, hi, w, n_pairs, n_accounts, n_tweets = _similarity(tw, acc, int(min_retweets), float(threshold))
    a, b, w, k = coordination_edges(users, lo, hi, w)
    return Coordination(method, a, b, w, k, params, n_accounts, n_tweets, n_pairs, "cpu")


def _group_starts(sorted_keys: np.ndarray) -> np.ndarray:
    """The start of each run of equal keys, and the end: ``len + 1`` offsets."""
    if not len(sorted_keys):
        return np.zeros(1, np.int64)
    cut = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    return np.concatenate([[0], cut, [len(sorted_keys)]]).astype(np.int64)


def _kept(tw: np.ndarray, acc: np.ndarray, min_retweets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first retweets of the accounts with at least ``min_retweets`` tweets retweeted, and those accounts."""
    per = np.bincount(acc)
    keep = per >= min_retweets
    rows = keep[acc]
    return tw[rows], acc[rows], np.flatnonzero(keep)


# --------------------------------------------------------------------------------------------------------------
# co-retweet
# --------------------------------------------------------------------------------------------------------------


@njit(cache=True, parallel=True)
def _window_counts(starts, t, window):  # pragma: no cover - numba
    """Per tweet, the pairs of its retweets (sorted by time) at most ``window`` apart."""
    n = len(starts) - 1
    out = np.zeros(n, np.int64)
    for g in prange(n):
        s, e = starts[g], starts[g + 1]
        hi = s
        c = 0
        for i in range(s, e):
            if hi < i + 1:
                hi = i + 1
            while hi < e and t[hi] - t[i] <= window:
                hi += 1
            c += hi - i - 1
        out[g] = c
    return out


@njit(cache=True, parallel=True)
def _window_pairs(starts, offsets, acc, t, window, n_users):  # pragma: no cover - numba
    """The pairs :func:`_window_counts` counted, as keys ``low * n_users + high`` of account indices."""
    n = len(starts) - 1
    keys = np.empty(offsets[n], np.int64)
    for g in prange(n):
        s, e = starts[g], starts[g + 1]
        k = offsets[g]
        hi = s
        for i in range(s, e):
            if hi < i + 1:
                hi = i + 1
            while hi < e and t[hi] - t[i] <= window:
                hi += 1
            for j in range(i + 1, hi):
                x, y = acc[i], acc[j]
                if x > y:
                    x, y = y, x
                keys[k] = x * n_users + y
                k += 1
    return keys


def _co_retweet(tw, acc, t, window: float, min_count: int):
    starts = _group_starts(tw)
    counts = _window_counts(starts, t, window)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    n_users = int(acc.max()) + 1 if len(acc) else 1
    keys = _window_pairs(starts, offsets, acc, t, window, n_users)
    uniq, c = np.unique(keys, return_counts=True)
    hit = c >= min_count
    uniq, c = uniq[hit], c[hit]
    return uniq // n_users, uniq % n_users, c.astype(np.float64), len(keys)


# --------------------------------------------------------------------------------------------------------------
# similarity
# --------------------------------------------------------------------------------------------------------------


def _similarity(tw, acc, min_retweets: int, threshold: float):
    from scipy.sparse import csr_matrix, triu

    tw, acc, kept = _kept(tw, acc, min_retweets)
    n = len(kept)
    if n < 2:
        return (np.zeros(0, np.int64),) * 2 + (np.zeros(0), 0, n, len(np.unique(tw)))
    row = np.searchsorted(kept, acc)
    tweets, col = np.unique(tw, return_inverse=True)
    df = np.bincount(col)
    idf = np.log(n / df)
    x = csr_matrix((idf[col], (row, col)), shape=(n, len(tweets)))
    norm = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    live = norm > 0
    inv = np.where(live, 1.0 / np.where(live, norm, 1.0), 0.0)
    xn = csr_matrix(x.multiply(inv[:, None]))
    s = triu(xn @ xn.T, k=1).tocoo()
    hit = s.data >= threshold - COSINE_SLACK
    n_pairs = int((df.astype(np.int64) * (df - 1) // 2).sum())
    return kept[s.row[hit]], kept[s.col[hit]], np.minimum(s.data[hit], 1.0), n_pairs, n, len(tweets)
