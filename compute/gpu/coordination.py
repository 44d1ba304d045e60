"""Coordinated accounts on the GPU: the twin of :mod:`compute.algorithms.coordination`, with its signature and
result (docs/coordination.md); the CPU reference is what the tests compare against (the same edges; the same
co-retweet counts, cosines to 1e-12).

* **First retweets**: one sort of the retweets by (tweet, account, time) on the device; the first row of each
  (tweet, account) run is kept, then the rows are sorted by (tweet, time, account).
* **co-retweet**: a thread per tweet sweeps its retweets in time order with two pointers, once to count the
  pairs within the window (an exclusive scan gives each tweet its place) and once to write them as keys
  ``low * accounts + high``; sorting the keys counts each pair's tweets.
* **similarity**: the idf-weighted account x tweet matrix in CSR (``cupyx.scipy.sparse``), its rows normalised,
  one product with its transpose; the upper triangle's entries at or above the threshold are the edges.

The edges (a few per account at most, where the methods' parameters are sensible) come back to the host, where
:func:`compute.results.coordination_edges` orders them and numbers the clusters as on the CPU.
"""

from __future__ import annotations

import cupy as cp
import numpy as np

from ..results import (
    COSINE_SLACK,
    DEFAULT_MIN_COUNT,
    DEFAULT_MIN_RETWEETS,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW,
    Coordination,
    check_coordination,
    check_retweets,
    coordination_edges,
)
from ._device import module

__all__ = ["coordination"]

_SOURCE = r"""
extern "C" __global__ void window_counts(const long long* starts, const double* t, double window, long long n,
                                         long long* out) {
    long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n) return;
    long long s = starts[g], e = starts[g + 1], hi = s, c = 0;
    for (long long i = s; i < e; ++i) {
        if (hi < i + 1) hi = i + 1;
        while (hi < e && t[hi] - t[i] <= window) ++hi;
        c += hi - i - 1;
    }
    out[g] = c;
}

extern "C" __global__ void window_pairs(const long long* starts, const long long* offsets, const long long* acc,
                                        const double* t, double window, long long n, long long n_users,
                                        long long* keys) {
    long long g = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= n) return;
    long long s = starts[g], e = starts[g + 1], hi = s, k = offsets[g];
    for (long long i = s; i < e; ++i) {
        if (hi < i + 1) hi = i + 1;
        while (hi < e && t[hi] - t[i] <= window) ++hi;
        for (long long j = i + 1; j < hi; ++j) {
            long long x = acc[i], y = acc[j];
            if (x > y) { long long z = x; x = y; y = z; }
            keys[k++] = x * n_users + y;
        }
    }
}
"""

_THREADS = 256


def _kernel(name: str):
    return module(_SOURCE).get_function(name)


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
    """The GPU twin of :func:`compute.algorithms.coordination.coordination`."""
    check_coordination(method, float(window), min_count, min_retweets, float(threshold))
    tweet, account, time = check_retweets(tweet, account, time)
    users_d, inverse = cp.unique(cp.asarray(account), return_inverse=True)
    users = cp.asnumpy(users_d)
    tw, acc, t = _first_retweets(cp.asarray(tweet), inverse.ravel().astype(cp.int64), cp.asarray(time))
    if method == "co-retweet":
        params = {"window": float(window), "min_count": int(min_count)}
        lo, hi, w, n_pairs = _co_retweet(tw, acc, t, float(window), int(min_count), len(users))
        n_accounts, n_tweets = len(users), int(cp.unique(tw).size) if len(tw) else 0
    else:
        params = {"min_retweets": int(min_retweets), "threshold": float(threshold)}
        lo, hi, w, n_pairs, n_accounts, n_tweets = _similarity(tw, acc, int(min_retweets), float(threshold))
    a, b, w, k = coordination_edges(users, cp.asnumpy(lo), cp.asnumpy(hi), cp.asnumpy(w))
    return Coordination(method, a, b, w, k, params, n_accounts, n_tweets, n_pairs, "gpu")


def _first_retweets(tw, acc, t):
    if not len(tw):
        return tw, acc, t
    order = cp.lexsort(cp.stack([t, acc, tw]))
    tw, acc, t = tw[order], acc[order], t[order]
    first = cp.ones(len(tw), bool)
    first[1:] = (tw[1:] != tw[:-1]) | (acc[1:] != acc[:-1])
    tw, acc, t = tw[first], acc[first], t[first]
    order = cp.lexsort(cp.stack([acc, t, tw]))
    return tw[order], acc[order], t[order]


def _starts(sorted_keys):
    if not len(sorted_keys):
        return cp.zeros(1, cp.int64)
    cut = cp.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    return cp.concatenate([cp.zeros(1, cp.int64), cut.astype(cp.int64), cp.asarray([len(sorted_keys)], cp.int64)])


def _co_retweet(tw, acc, t, window: float, min_count: int, n_users: int):
    empty = cp.zeros(0, cp.int64)
    starts = _starts(tw)
    n = len(starts) - 1
    if n <= 0:
        return empty, empty, cp.zeros(0), 0
    blocks = (n + _THREADS - 1) // _THREADS
    counts = cp.empty(n, cp.int64)
    _kernel("window_counts")((blocks,), (_THREADS,), (starts, t, np.float64(window), np.int64(n), counts))
    offsets = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(counts)])
    total = int(offsets[-1])
    if not total:
        return empty, empty, cp.zeros(0), 0
    keys = cp.empty(total, cp.int64)
    args = (starts, offsets, acc, t, np.float64(window), np.int64(n), np.int64(max(n_users, 1)), keys)
    _kernel("window_pairs")((blocks,), (_THREADS,), args)
    keys = cp.sort(keys)
    head = _starts(keys)
    c = cp.diff(head)
    uniq = keys[head[:-1]]
    hit = c >= min_count
    uniq, c = uniq[hit], c[hit]
    m = max(n_users, 1)
    return uniq // m, uniq % m, c.astype(cp.float64), total


def _similarity(tw, acc, min_retweets: int, threshold: float):
    from cupyx.scipy import sparse

    empty = cp.zeros(0, cp.int64)
    if not len(tw):
        return empty, empty, cp.zeros(0), 0, 0, 0
    per = cp.bincount(acc)
    keep = per >= min_retweets
    rows = keep[acc]
    tw, acc = tw[rows], acc[rows]
    kept = cp.flatnonzero(keep)
    n = int(kept.size)
    tweets, col = cp.unique(tw, return_inverse=True)
    col = col.ravel()
    if n < 2:
        return empty, empty, cp.zeros(0), 0, n, int(tweets.size)
    row = cp.searchsorted(kept, acc)
    df = cp.bincount(col)
    idf = cp.log(n / df.astype(cp.float64))
    x = sparse.csr_matrix((idf[col], (row, col)), shape=(n, int(tweets.size)))
    norm = cp.sqrt(cp.asarray(x.multiply(x).sum(axis=1)).ravel())
    live = norm > 0
    inv = cp.where(live, 1.0 / cp.where(live, norm, 1.0), 0.0)
    xn = sparse.csr_matrix(sparse.diags(inv) @ x)
    s = sparse.triu(xn @ xn.T, k=1).tocoo()
    hit = s.data >= threshold - COSINE_SLACK
    n_pairs = int((df * (df - 1) // 2).sum())
    return kept[s.row[hit]], kept[s.col[hit]], cp.minimum(s.data[hit], 1.0), n_pairs, n, int(tweets.size)
