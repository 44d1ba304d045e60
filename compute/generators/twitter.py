"""The ``twitter`` preset: a Twitter-like follower graph plus retweet cascades spread over it.

At scale 1 it matches CRGP's ``bigger4`` collection (Meyer 2017, Table 3 and §5): 3,177,361 users,
341,698,525 follow edges, 99,561 cascades and 3,683,332 retweets. ``scale`` multiplies all four (so the mean
degree, ~107.5, and the mean cascade size, ~37, stay put).

**Follower graph** (Chung–Lu style, sampled in the friends direction). Every user gets an out-degree (how
many users they follow) from a lognormal (sigma 1.25, capped); each of those follows picks its followee with
probability proportional to a Zipf weight ``1 / (rank + 200)`` over a random ranking of the users, which
gives a power-law follower distribution with exponent ~2 and a top account followed by ~5% of all users.
Inverse-CDF sampling of the Zipf weights is closed-form, so a follow costs one uniform, one ``exp`` and one
lookup. Rows are generated in chunks (each with its own seeded stream, two threads), sorted as int64 keys
``follower << bits | followee``, and deduplicated; self-follows are dropped. The out-degrees are scaled so that
the *expected* number of distinct follows (computed in closed form, :func:`_expected_kept`) hits the target,
which lands within 0.1% at every scale. The friends CSR comes out of the chunks directly;
the followers CSR (needed for spreading, and handed to :class:`FollowerGraph` so ``graph.followers()`` is
free) is one more int64 sort.

**Cascades.** Publishers are drawn proportionally to their follower count. Cascade sizes (retweets) follow a
Pareto law (``P(S >= s) = (s / 4) ** -1.05``, stratified so the total is stable, capped at 60,000 or
``U / 50`` at small scales) rescaled to the target total; bigger accounts tend to get the bigger cascades
(rank correlation through a noisy ``log followers`` key). Each cascade then grows one retweet at a time:
with probability 5% the retweeter is an *orphan* (a random user who found the tweet by search, timed after a
random participant, never used as a parent); otherwise a parent is chosen (the publisher with probability
50%, else a uniformly chosen non-orphan participant) and a random follower of the parent retweets
``1 + floor(min(lognormal(median 5 min, sigma 2), 7 days))`` seconds after the parent. Already active users,
followerless parents and the publisher itself are rejected and redrawn; each cascade has a fixed budget of
draws, so a cascade that cannot grow further ends smaller (rare; at scale 1 none does). Hence every non-orphan
retweeter follows an earlier participant and retweeted strictly later.

Random numbers are all drawn with NumPy up front; the spreading loop (:func:`_spread`) only consumes them,
so the numba build and the pure-Python fallback produce identical output.

**Tweets.** Originals are published over 30 days from 2020-06-01 UTC (integer epoch seconds, like Twitter's
``created_at``). Rows are sorted by time (a collection stream); ids are snowflakes whose timestamp bits decode
to the row's time. ``followers_count`` is the user's follower count in the generated graph.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import _jit
from ..arrays import unique
from ..structures import FollowerGraph
from ..tables import NO_TWEET, TweetTable
from ._common import ProgressFn, make_progress, random_user_ids, scaled_counts, snowflake_ids, stream

__all__ = [
    "BIGGER4",
    "twitter_collection",
    "follower_graph",
]

#: CRGP's ``bigger4`` (Meyer 2017): the targets at scale 1.
BIGGER4 = {"users": 3_177_361, "follow_edges": 341_698_525, "cascades": 99_561, "retweets": 3_683_332}

_ZIPF_OFFSET = 200.0  # weight of rank r is 1 / (r + offset): caps the top account at ~5% of users
_OUT_SIGMA = 1.25  # lognormal spread of out-degrees (median ~ mean / 2.2)
_OUT_CAP = 30_000  # most-following account
_CHUNK_DRAWS = 1 << 20  # follows per chunk: 8 MB temporaries stay in malloc's heap instead of fresh mmaps

_SIZE_MIN = 4.0  # Pareto scale of cascade sizes
_SIZE_TAIL = 1.05  # Pareto tail index: P(S >= s) = (s / 4) ** -1.05
_SIZE_CAP = 60_000  # CRGP's largest single cascade ("biggest") has 60,451 retweets
_SIZE_NOISE = 1.5  # noise on log(followers) when ranking publishers against sizes
_ORPHAN = 0.05
_PUBLISHER_PREFERENCE = 0.5
_DELAY_MEDIAN = 300.0
_DELAY_SIGMA = 2.0
_DELAY_CAP = 7 * 86_400.0  # one hop never waits more than a week (the lognormal's far tail reached months)
_ATTEMPTS_PER_RETWEET = 3  # draw budget per cascade: 8 + 3 * size attempts of 4 uniforms
_START = 1_590_969_600  # 2020-06-01T00:00:00Z
_SPAN = 30 * 86_400


_U53 = 1 << 53  # uniforms are drawn as 53-bit integers k (u = k / 2**53 exactly)


def _zipf_thresholds(n: int) -> np.ndarray:
    """int64[n+1]: rank r is drawn iff ``T[r] <= k < T[r+1]``, with T[r] = round(2**53 * CDF(r)) and
    CDF(r) = log(1 + r / offset) / log(1 + n / offset) (weight of rank r ∝ 1/(r + offset), continuous)."""
    c = math.log((n + _ZIPF_OFFSET) / _ZIPF_OFFSET)
    t = np.rint(np.log1p(np.arange(n + 1, dtype=np.float64) / _ZIPF_OFFSET) / c * _U53).astype(np.int64)
    t[0], t[-1] = 0, _U53
    return np.maximum.accumulate(t)


def _zipf_rank(k: np.ndarray, n: int, thresholds: np.ndarray) -> np.ndarray:
    """Rank in [0, n) for 53-bit draws ``k``: the ``r`` with ``thresholds[r] <= k < thresholds[r+1]``.

    The closed-form inverse CDF (one ``exp``) gives the rank directly unless the draw sits within 1e-6 of a
    rank boundary; those few (~2 per million) are settled by integer comparison with the thresholds. Why
    not just floor the ``exp``: a last-bit difference between two machines' ``exp`` would move a draw that
    sits within an ulp of a boundary; with 341M draws over ranks up to 3.2M (ulp ~1e-10) the odds are ~1% per
    full graph. With the thresholds, the result depends on float maths only where a draw equals a threshold
    exactly (chance 2**-53 per draw).
    """
    c = math.log((n + _ZIPF_OFFSET) / _ZIPF_OFFSET)
    x = k.astype(np.float64)
    x *= c / _U53
    np.exp(x, out=x)
    x *= _ZIPF_OFFSET
    x -= _ZIPF_OFFSET
    r = x.astype(np.int64)
    x -= r  # fractional part; exp's error (< 1e-9 here) can only matter right next to a boundary
    near = np.flatnonzero(np.abs(x - 0.5) > 0.5 - 1e-6)
    np.clip(r, 0, n - 1, out=r)
    if len(near):
        rr, kk = r[near], k[near]
        rr += kk >= thresholds[rr + 1]
        rr -= kk < thresholds[rr]
        r[near] = rr
    return r


def _zipf_probabilities(n: int) -> np.ndarray:
    """Probability of each rank under :func:`_zipf_rank`."""
    return np.diff(_zipf_thresholds(n)) / float(_U53)


def _expected_kept(degree: np.ndarray, n: int) -> float:
    """Expected distinct followees over all users when user ``i`` makes ``degree[i]`` Zipf draws.

    A followee of probability q is hit at least once in d draws with probability ~ 1 - exp(-d q). That is
    summed exactly over the top ranks (where duplicates happen) and to first order over the rest; users are
    grouped by rounded degree so the cost is (#distinct degrees x top ranks), not U x U.
    """
    q = _zipf_probabilities(n)
    top = q[: min(n, 2048)]
    rest_sq = float(np.sum(q[len(top) :] ** 2))
    rest = 1.0 - float(top.sum())
    dv, cnt = np.unique(np.rint(degree), return_counts=True)
    total = 0.0
    for a in range(0, len(dv), 512):
        d = dv[a : a + 512]
        hit_top = (-np.expm1(-np.outer(d, top))).sum(axis=1)
        hit_rest = np.maximum(d * rest - 0.5 * d * (d - 1.0) * rest_sq, 0.0)
        total += float(np.dot(cnt[a : a + 512], hit_top + hit_rest))
    return total


def _friends_chunk(
    seed: int,
    chunk: int,
    r0: int,
    r1: int,
    out_degree: np.ndarray,
    user_of_rank: np.ndarray,
    thresholds: np.ndarray,
    n: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Follows of users ``r0..r1-1``: (kept followee indices int32, kept count per user)."""
    rng = stream(seed, "twitter", 1, chunk)
    deg = out_degree[r0:r1]
    src = np.repeat(np.arange(r0, r1, dtype=np.int64), deg)
    dst = user_of_rank[_zipf_rank(rng.integers(0, _U53, len(src), dtype=np.int64), n, thresholds)]
    bits = max(int(n - 1).bit_length(), 1)
    key = src << bits
    key |= dst
    key.sort()  # rows never straddle chunks, so per-chunk order is global order
    keep = np.ones(len(key), dtype=bool)
    np.not_equal(key[1:], key[:-1], out=keep[1:])
    src = key >> bits
    key &= (1 << bits) - 1  # now the followee
    keep &= src != key
    counts = np.bincount(src[keep] - r0, minlength=r1 - r0)
    return key[keep].astype(np.int32), counts


def follower_graph(
    *, scale: float = 1.0, seed: int = 0, progress: ProgressFn | bool | None = None
) -> tuple[FollowerGraph, np.ndarray]:
    """The preset's follower graph and its in-degrees (follower counts, int64[U])."""
    report = make_progress(progress)
    if not scale > 0 or not math.isfinite(scale):
        raise ValueError(f"scale must be a positive finite number, not {scale}")
    n = max(round(BIGGER4["users"] * scale), 2)
    target = round(BIGGER4["follow_edges"] * scale)
    rng = stream(seed, "twitter", 0)
    user_ids = random_user_ids(n, rng)
    user_of_rank = rng.permutation(n).astype(np.int64)  # who is most followed is unrelated to id order
    # out-degrees: lognormal weights scaled so that the *kept* follows (after duplicates) hit the target;
    # randomised rounding keeps the sum unbiased
    w = rng.lognormal(0.0, _OUT_SIGMA, size=n)
    cap = min(_OUT_CAP, n - 1)
    lam = target / w.sum()
    for _ in range(4):  # fixed point: kept(lam) is concave and close to linear, 3-4 steps reach < 0.1%
        lam *= target / _expected_kept(np.minimum(w * lam, cap), n)
    w *= lam
    np.minimum(w, cap, out=w)
    out_degree = np.minimum(np.floor(w + rng.random(n)).astype(np.int64), cap)
    del w

    # chunks of whole rows holding ~_CHUNK_DRAWS draws each
    cum = np.cumsum(out_degree)
    bounds = np.searchsorted(cum, np.arange(_CHUNK_DRAWS, int(cum[-1]), _CHUNK_DRAWS), side="left") + 1
    bounds = unique(np.concatenate([[0], bounds, [n]]))
    chunks = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
    results: list[tuple[np.ndarray, np.ndarray] | None] = [None] * len(chunks)
    thresholds = _zipf_thresholds(n)
    report("twitter: follow edges", 0.0)
    with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as ex:
        futs = [
            ex.submit(_friends_chunk, seed, i, r0, r1, out_degree, user_of_rank, thresholds, n)
            for i, (r0, r1) in enumerate(chunks)
        ]
        for i, f in enumerate(futs):
            results[i] = f.result()
            report("twitter: follow edges", (i + 1) / len(futs))
    counts = np.concatenate([r[1] for r in results])  # type: ignore[index]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    for i, (r0, r1) in enumerate(chunks):
        indices[indptr[r0] : indptr[r1]] = results[i][0]  # type: ignore[index]
        results[i] = None  # free as we go
    del results

    report("twitter: followers index", 0.0)
    fol_indptr, fol_indices = _transpose(indptr, indices, n)
    report("twitter: followers index", 1.0)
    graph = FollowerGraph(user_ids, indptr, indices, followers_csr=(fol_indptr, fol_indices))
    return graph, np.diff(fol_indptr)


def _transpose(indptr: np.ndarray, indices: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Followers CSR (row j = users following j, sorted) from the friends CSR: one sort of int64 keys
    ``followee << bits | follower`` (a numba counting sort was tried: its random writes are slower)."""
    e = len(indices)
    bits = max(int(n - 1).bit_length(), 1)
    key = np.empty(e, dtype=np.int64)
    step = 1 << 22
    r0 = 0
    while r0 < n:  # blocks of whole rows, so the follower of each edge is a small np.repeat
        r1 = int(min(np.searchsorted(indptr, indptr[r0] + step, side="right"), n))
        r1 = max(r1, r0 + 1)
        a, b = int(indptr[r0]), int(indptr[r1])
        k = key[a:b]
        k[:] = indices[a:b]
        k <<= bits
        k |= np.repeat(np.arange(r0, r1, dtype=np.int64), np.diff(indptr[r0 : r1 + 1]))
        r0 = r1
    key.sort()
    # row j starts at the first key >= j << bits
    fol_indptr = np.searchsorted(key, np.arange(n + 1, dtype=np.int64) << bits).astype(np.int64)
    out = np.empty(e, dtype=np.int32)
    mask = (1 << bits) - 1
    for a in range(0, e, step):
        b = min(a + step, e)
        k = key[a:b]
        k &= mask
        out[a:b] = k  # masking in place is cheaper than a casting ufunc into int32
    return fol_indptr, out


def _spread(
    fol_indptr,
    fol_indices,
    n_users,
    publishers,
    sizes,
    t0,
    uni,
    uni_off,
    delays,
    out_off,
    orphan_p,
    pub_pref,
    marks,
    elig,
    elig_time,
    out_user,
    out_time,
    out_count,
):
    """Grow every cascade (see the module docstring). Consumes 4 uniforms per attempt; writes retweeter ``k``
    of cascade ``c`` to slot ``out_off[c] + k``. Plain Python over arrays, compiled by numba when present."""
    for c in range(len(publishers)):
        p = publishers[c]
        mark = c + 1
        marks[p] = mark
        elig[0] = p
        elig_time[0] = t0[c]
        n_el = 1
        base = out_off[c]
        s = sizes[c]
        k = 0
        a = uni_off[c]
        a_end = uni_off[c + 1]
        while k < s and a + 4 <= a_end:
            u0 = uni[a]
            u1 = uni[a + 1]
            u2 = uni[a + 2]
            u3 = uni[a + 3]
            a += 4
            if u0 < orphan_p:
                v = int(u1 * n_users)
                if marks[v] == mark:
                    continue
                j = int(u2 * (k + 1))  # anchor the time on any participant so far
                tp = t0[c] if j == 0 else out_time[base + j - 1]
                marks[v] = mark
                t = tp + delays[base + k]
            else:
                j = 0 if u1 < pub_pref else int(u2 * n_el)
                u = elig[j]
                lo = fol_indptr[u]
                deg = fol_indptr[u + 1] - lo
                if deg == 0:
                    continue
                v = fol_indices[lo + int(u3 * deg)]
                if marks[v] == mark:
                    continue
                marks[v] = mark
                t = elig_time[j] + delays[base + k]
                elig[n_el] = v
                elig_time[n_el] = t
                n_el += 1
            out_user[base + k] = v
            out_time[base + k] = t
            k += 1
        out_count[c] = k


_spread_jit = _jit.njit(_spread)


def _cascade_sizes(c: int, total: int, cap: int, rng: np.random.Generator) -> np.ndarray:
    """``c`` heavy-tailed sizes (>= 1, <= cap) summing exactly to ``total`` (when ``c <= total <= c * cap``)."""
    u = (rng.permutation(c) + rng.random(c)) / c  # stratified: the sum barely moves between seeds
    raw = np.minimum(_SIZE_MIN * (1.0 - u) ** (-1.0 / _SIZE_TAIL), cap)
    exact = raw * (total / raw.sum())
    sizes = np.clip(np.floor(exact).astype(np.int64), 1, cap)
    # hand out (or take back) the rounding difference one retweet at a time, largest remainders first
    diff = total - int(sizes.sum())
    frac = exact - np.floor(exact)
    while diff != 0:
        if diff > 0:
            cand = np.flatnonzero(sizes < cap)
            pick = cand[np.argsort(-frac[cand], kind="stable")[:diff]]
            sizes[pick] += 1
        else:
            cand = np.flatnonzero(sizes > 1)
            pick = cand[np.argsort(frac[cand], kind="stable")[:-diff]]
            sizes[pick] -= 1
        if len(pick) == 0:
            break
        diff = total - int(sizes.sum())
        frac[:] = 0.0
    return sizes


def twitter_collection(
    *, scale: float = 1.0, seed: int = 0, progress: ProgressFn | bool | None = None
) -> tuple[TweetTable, FollowerGraph]:
    """The ``twitter`` preset: ``(tweets, follower graph)``; see the module docstring for the model."""
    report = make_progress(progress)
    graph, indeg = follower_graph(scale=scale, seed=seed, progress=report)
    n = graph.n_users
    fol_indptr, fol_indices = graph.followers()
    n_casc = scaled_counts([BIGGER4["cascades"]], ["all"], scale)[0]
    if n_casc < 1:
        raise ValueError(f"scale={scale} leaves no cascade in preset 'twitter'")
    cap = int(min(_SIZE_CAP, max(20, n // 50)))
    total = int(min(max(round(BIGGER4["retweets"] * scale), n_casc), n_casc * cap))

    report("twitter: cascades", 0.0)
    rng = stream(seed, "twitter", 2)
    cum = np.cumsum(indeg, dtype=np.float64)
    publishers = np.searchsorted(cum, rng.random(n_casc) * cum[-1], side="right").astype(np.int64)
    np.minimum(publishers, n - 1, out=publishers)
    sizes_sorted = np.sort(_cascade_sizes(n_casc, total, cap, rng))
    # bigger accounts tend to get bigger cascades: rank a noisy log(followers) against the sorted sizes
    score = np.log1p(indeg[publishers]) + rng.normal(0.0, _SIZE_NOISE, n_casc)
    sizes = np.empty(n_casc, dtype=np.int64)
    sizes[np.argsort(score, kind="stable")] = sizes_sorted
    # sizes can't exceed the users available besides the publisher
    np.minimum(sizes, n - 1, out=sizes)
    t0 = (_START + rng.integers(0, _SPAN, n_casc)).astype(np.float64)

    budget = 4 * (8 + _ATTEMPTS_PER_RETWEET * sizes)
    uni_off = np.zeros(n_casc + 1, dtype=np.int64)
    np.cumsum(budget, out=uni_off[1:])
    uni = rng.random(int(uni_off[-1]))
    out_off = np.zeros(n_casc + 1, dtype=np.int64)
    np.cumsum(sizes, out=out_off[1:])
    delays = rng.lognormal(math.log(_DELAY_MEDIAN), _DELAY_SIGMA, int(out_off[-1]))
    np.minimum(delays, _DELAY_CAP, out=delays)
    delays = 1.0 + np.floor(delays)
    marks = np.zeros(n, dtype=np.int64)
    cap_el = int(sizes.max()) + 1
    elig = np.zeros(cap_el, dtype=np.int64)
    elig_time = np.zeros(cap_el, dtype=np.float64)
    out_user = np.full(int(out_off[-1]), -1, dtype=np.int64)
    out_time = np.zeros(int(out_off[-1]), dtype=np.float64)
    out_count = np.zeros(n_casc, dtype=np.int64)
    spread = _spread_jit if _jit.HAVE_NUMBA else _spread  # looked up per call so tests can force Python
    spread(
        fol_indptr,
        fol_indices,
        n,
        publishers,
        sizes,
        t0,
        uni,
        uni_off,
        delays,
        out_off,
        _ORPHAN,
        _PUBLISHER_PREFERENCE,
        marks,
        elig,
        elig_time,
        out_user,
        out_time,
        out_count,
    )
    del uni, marks
    report("twitter: cascades", 0.8)

    # rows: originals then retweets, each retweet knowing its cascade
    slot = np.arange(int(out_off[-1]), dtype=np.int64)
    filled = slot - np.repeat(out_off[:-1], sizes) < np.repeat(out_count, sizes)
    rt_cascade = np.repeat(np.arange(n_casc, dtype=np.int64), sizes)[filled]
    rt_user = out_user[filled]
    rt_time = out_time[filled]
    users = np.concatenate([publishers, rt_user])
    times = np.concatenate([t0, rt_time])
    cascade = np.concatenate([np.arange(n_casc, dtype=np.int64), rt_cascade])
    is_rt = np.concatenate([np.zeros(n_casc, dtype=bool), np.ones(len(rt_user), dtype=bool)])
    # created_at has whole seconds; the id's millisecond bits get a random offset within the second
    ms = times.astype(np.int64) * 1000 + rng.integers(0, 1000, len(times))
    ids = snowflake_ids(ms, rng)
    order = np.argsort(ms, kind="stable")  # the collection arrives in time order
    orig_id = ids[:n_casc]
    tweets = TweetTable(
        tweet_id=ids[order],
        retweeted_tweet_id=np.where(is_rt, orig_id[cascade], NO_TWEET)[order],
        user_id=graph.user_ids[users[order]],
        created_at=times[order],
        followers_count=indeg[users[order]].astype(np.float64),
    )
    report("twitter: cascades", 1.0)
    return tweets, graph
