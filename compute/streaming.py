"""The streaming engine's state, shared by the CPU reference (``compute/algorithms/stream.py``) and the GPU twin
(``compute/gpu/stream.py``): micro-batches in, influence edges out, by CRGP's rule (docs/stream.md).

This module holds what both engines do the same way, on the host:

* :class:`StreamBatch` — one micro-batch: originals, retweets and new follows, as parallel arrays of ids;
* :class:`StreamUpdate` — what one micro-batch changed (the edges it built, the cascades it rebuilt in full,
  what it held, released and expired, counters);
* :class:`StreamEngine` — the stateful engine: the cascade index (tweet id -> slot), the held retweets (waiting
  for their original, bounded by count and by stream time), the new follows (users outside the follower graph
  get dense indices after it; follows new to the graph are kept as a sorted delta beside the CSR), and the
  snapshot as :class:`~compute.structures.SpreadingGraphs` in the batch builder's node order.

Per-cascade participants, times, reachability and edges live in a *core*: numba arrays on the CPU, device
arrays on the GPU. Both cores implement the same steps (see :class:`StreamCore`), so a micro-batch means the
same thing on either backend:

1. follows are applied first (they count for every retweet processed from this batch on);
2. originals open their cascades (the first arrival of a tweet id wins; a repeat is counted);
3. held retweets and the batch's retweets are placed: unknown original -> held; self-retweet and a repeat of
   a (cascade, user) pair are counted (a repeat with an earlier time moves the participant to that time,
   as the batch builder keeps the earliest);
4. a cascade is *dirty* when a participant arrived (or moved) strictly before the latest time the cascade
   had before this batch — the late and out-of-order case; every participant of a dirty cascade is rebuilt;
5. the rebuilt participants ("work") get their candidate edges ``(v, u)``: ``u`` a participant of the same
   cascade, ``v`` follows ``u``, ``time(u) < time(v)`` (ties: no edge); reachability from the publisher is
   then settled among the work participants (everything else is final: it is earlier than all of them, or in
   a cascade that is not rebuilt), and the edges to reached participants are kept — the forward phase's
   ``strict`` policy; under ``attach`` a work participant without candidates gets ``(v, publisher)``.

So after the last batch (and a :meth:`StreamEngine.flush`), the edges equal the batch forward phase's on the
same participants — whatever the arrival order and the cuts — when every follow was known before the
retweets it concerns, or after :meth:`StreamEngine.recompute_follows` (or ``follows="recompute"``).
"""

from __future__ import annotations

import time as _time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from .arrays import unique
from .structures import ORPHAN_POLICIES, Cascades, FollowerGraph, SpreadingGraphs

__all__ = [
    "FOLLOW_POLICIES",
    "StreamBatch",
    "StreamCore",
    "StreamEngine",
    "StreamUpdate",
    "check_stream_args",
    "cut",
    "replay_order",
]

#: what new follows do to cascades already built: ``forward`` — nothing (they apply to retweets processed
#: after them, as in CRGP); ``recompute`` — every cascade where the follower took part after the followee is
#: rebuilt in the same micro-batch, so the state always equals the batch forward phase on the current graph
FOLLOW_POLICIES = ("forward", "recompute")

_I64 = np.int64
_F64 = np.float64


def _arr(a, dtype) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=dtype).ravel())


def check_stream_args(graph, orphans, follows, hold_seconds, hold_max) -> None:
    """The arguments both engines take, checked the same way (clear ``ValueError`` naming the parameter)."""
    if not isinstance(graph, FollowerGraph):
        raise ValueError(f"graph must be a FollowerGraph, not {type(graph).__name__}")
    if graph.n_users >= 2**31 - 1:
        raise ValueError(f"the stream engine supports < 2^31 users; the graph has {graph.n_users:,}")
    if orphans not in ORPHAN_POLICIES:
        raise ValueError(f"orphans must be one of {', '.join(ORPHAN_POLICIES)}, not {orphans!r}")
    if follows not in FOLLOW_POLICIES:
        raise ValueError(f"follows must be one of {', '.join(FOLLOW_POLICIES)}, not {follows!r}")
    if not (hold_seconds >= 0):  # NaN too
        raise ValueError(f"hold_seconds must be >= 0 (inf: no time limit), not {hold_seconds!r}")
    if int(hold_max) != hold_max or hold_max < 0:
        raise ValueError(f"hold_max must be a whole number >= 0, not {hold_max!r}")


@dataclass(eq=False)
class StreamBatch:
    """One micro-batch. Ids are int64 (Twitter ids), times float64 epoch seconds, follower counts float64
    (NaN: unknown). Retweets name the *original's* tweet id; a follow says ``follow_src`` follows
    ``follow_dst``."""

    retweet_tweet: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    retweet_user: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    retweet_time: np.ndarray = field(default_factory=lambda: np.zeros(0, _F64))
    retweet_followers: np.ndarray | None = None
    original_tweet: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    original_user: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    original_time: np.ndarray = field(default_factory=lambda: np.zeros(0, _F64))
    original_followers: np.ndarray | None = None
    follow_src: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    follow_dst: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))

    def __post_init__(self) -> None:
        for kind in ("retweet", "original"):
            tw = _arr(getattr(self, f"{kind}_tweet"), _I64)
            us = _arr(getattr(self, f"{kind}_user"), _I64)
            tm = _arr(getattr(self, f"{kind}_time"), _F64)
            fo = getattr(self, f"{kind}_followers")
            fo = np.full(len(tw), np.nan) if fo is None else _arr(fo, _F64)
            for name, a in (("user", us), ("time", tm), ("followers", fo)):
                if len(a) != len(tw):
                    raise ValueError(f"{kind}_{name} has length {len(a)}, expected {len(tw)} ({kind}_tweet's)")
            if len(tw) and tw.min() < 0:
                raise ValueError(f"{kind}_tweet[{int(np.argmin(tw))}] is negative: tweet ids are >= 0")
            setattr(self, f"{kind}_tweet", tw)
            setattr(self, f"{kind}_user", us)
            setattr(self, f"{kind}_time", tm)
            setattr(self, f"{kind}_followers", fo)
        self.follow_src = _arr(self.follow_src, _I64)
        self.follow_dst = _arr(self.follow_dst, _I64)
        if len(self.follow_src) != len(self.follow_dst):
            raise ValueError(f"follow_dst has length {len(self.follow_dst)}, expected {len(self.follow_src)}")

    @property
    def n_retweets(self) -> int:
        return len(self.retweet_tweet)

    @classmethod
    def from_tweets(cls, tweets, rows=None, follows=None) -> StreamBatch:
        """The rows ``rows`` (default all) of a :class:`~compute.tables.TweetTable` as a batch, in their order;
        ``follows``: optional ``(follower_ids, followee_ids)``."""
        from .tables import NO_TWEET

        rows = np.arange(len(tweets)) if rows is None else np.asarray(rows, dtype=np.int64)
        rt = tweets.retweeted_tweet_id[rows] != NO_TWEET
        r, o = rows[rt], rows[~rt]
        fs, fd = (None, None) if follows is None else follows
        return cls(
            retweet_tweet=tweets.retweeted_tweet_id[r], retweet_user=tweets.user_id[r],
            retweet_time=tweets.created_at[r], retweet_followers=tweets.followers_count[r],
            original_tweet=tweets.tweet_id[o], original_user=tweets.user_id[o],
            original_time=tweets.created_at[o], original_followers=tweets.followers_count[o],
            follow_src=fs if fs is not None else np.zeros(0, _I64),
            follow_dst=fd if fd is not None else np.zeros(0, _I64),
        )  # fmt: skip


@dataclass(eq=False)
class StreamUpdate:
    """What one micro-batch did.

    ``edge_tweet``/``edge_src``/``edge_dst``: every edge built in this batch (tweet id of the cascade, the
    retweeter ``v`` and the earlier participant ``u`` it follows, as user ids: ``u`` receives ``v``'s share).
    They are the edges of the batch's new participants plus *all* edges of the cascades in ``recomputed``,
    whose earlier edges a consumer must drop first (late, out-of-order or re-timed participants; follows under
    ``recompute``). ``touched``: tweet ids whose edge sets or participants changed (their backward phase and
    aggregates are stale). ``expired_*``: held retweets given up on (original never came within
    ``hold_seconds`` of stream time, or more than ``hold_max`` waiting, oldest first) — reported, not kept.
    """

    n_retweets: int = 0
    n_originals: int = 0
    n_follows: int = 0
    accepted: int = 0
    duplicates: int = 0
    self_retweets: int = 0
    duplicate_originals: int = 0
    missing_times: int = 0
    released: int = 0
    held: int = 0
    n_work: int = 0
    edge_tweet: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    edge_src: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    edge_dst: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    recomputed: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    touched: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    expired_tweet: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    expired_user: np.ndarray = field(default_factory=lambda: np.zeros(0, _I64))
    expired_time: np.ndarray = field(default_factory=lambda: np.zeros(0, _F64))
    seconds: float = 0.0
    #: wall seconds of the steps (``follows``, ``originals``, ``place``, ``build``); on the GPU each step ends
    #: with a copy to the host, so they add up to ``seconds`` less the bookkeeping between them
    timings: dict = field(default_factory=dict)

    @property
    def n_edges(self) -> int:
        return len(self.edge_src)

    def summary(self) -> dict:
        """Counters as plain numbers (for logs and JSON)."""
        return {
            "retweets": self.n_retweets, "originals": self.n_originals, "follows": self.n_follows,
            "accepted": self.accepted, "duplicates": self.duplicates, "self_retweets": self.self_retweets,
            "duplicate_originals": self.duplicate_originals, "missing_times": self.missing_times,
            "released": self.released, "held": self.held, "expired": len(self.expired_tweet),
            "edges": self.n_edges, "recomputed": len(self.recomputed), "touched": len(self.touched),
            "work": self.n_work, "seconds": self.seconds,
        }  # fmt: skip


class StreamCore(ABC):
    """Per-cascade state of one backend. The engine calls, per micro-batch, in this order:
    :meth:`set_graph_delta` (when follows changed), :meth:`open_cascades`, :meth:`mark_follow_dirty` (under
    ``follows="recompute"``), :meth:`place` then :meth:`build`. Arrays in and out are host NumPy arrays."""

    @abstractmethod
    def set_graph_delta(self, delta: np.ndarray, extra_ids: np.ndarray, extra_dense: np.ndarray,
                        extra_uid_by_dense: np.ndarray) -> None:  # fmt: skip
        ...

    @abstractmethod
    def open_cascades(self, tweet: np.ndarray, user: np.ndarray, time: np.ndarray, followers: np.ndarray,
                      index_tweet: np.ndarray, index_slot: np.ndarray) -> None:  # fmt: skip
        """New cascades (slots ``n_slots...``) with their publishers; ``index_*``: the sorted tweet-id index."""

    @abstractmethod
    def mark_dirty(self, slots: np.ndarray) -> None: ...

    @abstractmethod
    def mark_follow_dirty(self, follower_ids: np.ndarray, followee_ids: np.ndarray) -> None: ...

    @abstractmethod
    def place(self, tweet, user, time, followers) -> tuple[np.ndarray, dict]:
        """Place retweets: returns (bool mask of those whose original is unknown, counters)."""

    @abstractmethod
    def build(self, collect: bool) -> dict:
        """Rebuild the work participants' edges; returns counters and (when ``collect``) the edges and the
        recomputed/touched slots as tweet ids."""

    @abstractmethod
    def snapshot(self) -> tuple[np.ndarray, ...]:
        """(slot_tweet, node_slot, node_user, node_time, node_followers, node_is_pub, edge_src, edge_dst):
        live participants and live edges (edge ends as indices into the node arrays)."""


class StreamEngine:
    """A stateful stream of micro-batches (build one with :func:`compute.algorithms.stream.stream`).

    ``push(batch)`` applies one :class:`StreamBatch` and returns a :class:`StreamUpdate`; ``flush()`` gives up
    on every held retweet (end of stream); ``graphs()`` is the state as spreading graphs in
    :func:`~compute.build.build_cascades`' node order (cascades by tweet id; the publisher, then retweeters by
    time and user id), ready for the backward phase."""

    def __init__(self, graph: FollowerGraph, core: StreamCore, *, orphans: str, follows: str,
                 hold_seconds: float, hold_max: int, backend: str) -> None:  # fmt: skip
        self.graph = graph
        self.core = core
        self.orphans = orphans
        self.follows = follows
        self.hold_seconds = float(hold_seconds)
        self.hold_max = int(hold_max)
        self.backend = backend
        self.clock = -np.inf  # stream time: the latest event time seen
        # cascade index: tweet id -> slot (sorted arrays, merged when originals arrive)
        self._idx_tweet = np.zeros(0, _I64)
        self._idx_slot = np.zeros(0, _I64)
        self.n_cascades = 0
        # held retweets (original unknown): tweet, user, time, followers
        self._held = (np.zeros(0, _I64), np.zeros(0, _I64), np.zeros(0, _F64), np.zeros(0, _F64))
        # follows new to the graph: sorted keys (follower_dense << 32 | followee_dense); users outside the graph
        # get dense indices U, U+1, ...
        self._delta = np.zeros(0, _I64)
        self._extra: dict[int, int] = {}
        self._extra_uid_by_dense = np.zeros(0, _I64)
        self.totals: dict[str, int] = {}

    # -- state ------------------------------------------------------------------------------------------------
    @property
    def n_held(self) -> int:
        return len(self._held[0])

    def held(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The retweets waiting for their original: (original tweet id, user id, time)."""
        return self._held[0].copy(), self._held[1].copy(), self._held[2].copy()

    @property
    def n_new_follows(self) -> int:
        return len(self._delta)

    # -- one micro-batch --------------------------------------------------------------------------------------
    def push(self, batch: StreamBatch | None = None, *, collect: bool = True, **arrays) -> StreamUpdate:
        """Apply one micro-batch (a :class:`StreamBatch`, or its fields as keyword arrays). ``collect=False``
        skips gathering the batch's edges to the host (benchmarks of the engine alone)."""
        if batch is None:
            batch = StreamBatch(**arrays)
        elif arrays:
            raise ValueError("pass a StreamBatch or its arrays, not both")
        t0 = _time.perf_counter()
        up = StreamUpdate(n_retweets=batch.n_retweets, n_originals=len(batch.original_tweet),
                          n_follows=len(batch.follow_src))  # fmt: skip
        times = [a for a in (batch.retweet_time, batch.original_time) if len(a)]
        if times:
            with np.errstate(invalid="ignore"):
                m = max(float(np.nanmax(a)) if not np.isnan(a).all() else -np.inf for a in times)
            self.clock = max(self.clock, m)
        # 1. follows
        tick = _time.perf_counter()
        if len(batch.follow_src):
            fs, fd = self._apply_follows(batch.follow_src, batch.follow_dst)
            if self.follows == "recompute" and len(fs):
                self.core.mark_follow_dirty(fs, fd)
        tick = _lap(up, "follows", tick)
        # 2. originals
        ok = ~np.isnan(batch.original_time)
        up.missing_times += int(np.count_nonzero(~ok))
        if len(batch.original_tweet):
            self._open(batch, ok, up)
        tick = _lap(up, "originals", tick)
        # 3. retweets: the held ones first, then the batch's
        ok = ~np.isnan(batch.retweet_time)
        up.missing_times += int(np.count_nonzero(~ok))
        tw, us, tm, fo = batch.retweet_tweet, batch.retweet_user, batch.retweet_time, batch.retweet_followers
        if not ok.all():
            tw, us, tm, fo = tw[ok], us[ok], tm[ok], fo[ok]
        n_held_before = self.n_held
        if n_held_before:
            h = self._held
            tw, us, tm, fo = (np.concatenate([h[0], tw]), np.concatenate([h[1], us]), np.concatenate([h[2], tm]),
                              np.concatenate([h[3], fo]))  # fmt: skip
        if len(tw):
            unknown, counts = self.core.place(tw, us, tm, fo)
            for k, v in counts.items():
                setattr(up, k, getattr(up, k) + v)
            up.released = int(n_held_before - np.count_nonzero(unknown[:n_held_before]))
            if unknown.any():
                self._held = (tw[unknown], us[unknown], tm[unknown], fo[unknown])
            else:
                self._held = (np.zeros(0, _I64), np.zeros(0, _I64), np.zeros(0, _F64), np.zeros(0, _F64))
        self._expire(up, final=False)
        up.held = self.n_held
        tick = _lap(up, "place", tick)
        # 4-5. edges
        built = self.core.build(collect)
        _lap(up, "build", tick)
        for k in ("edge_tweet", "edge_src", "edge_dst", "recomputed", "touched"):
            if k in built:
                setattr(up, k, built[k])
        up.n_work = int(built.get("n_work", 0))
        up.seconds = _time.perf_counter() - t0
        for k, v in up.summary().items():
            if k not in ("seconds", "held"):
                self.totals[k] = self.totals.get(k, 0) + v
        return up

    def flush(self) -> StreamUpdate:
        """End of stream: every held retweet expires (reported in the update)."""
        up = StreamUpdate()
        self._expire(up, final=True)
        up.held = self.n_held
        self.totals["expired"] = self.totals.get("expired", 0) + len(up.expired_tweet)
        return up

    def recompute(self, tweet_ids) -> StreamUpdate:
        """Rebuild the named cascades in full (unknown ids are ignored)."""
        slots = self._slots_of(np.asarray(tweet_ids, dtype=_I64))
        self.core.mark_dirty(slots[slots >= 0])
        return self.push(StreamBatch())

    def recompute_follows(self, follower_ids, followee_ids) -> StreamUpdate:
        """Rebuild every cascade in which ``follower_ids[k]`` took part after ``followee_ids[k]``: after
        follows that arrived under ``follows="forward"``, this brings those cascades to what the batch forward
        phase gives on the current graph."""
        fs = np.asarray(follower_ids, dtype=_I64).ravel()
        fd = np.asarray(followee_ids, dtype=_I64).ravel()
        if len(fs) != len(fd):
            raise ValueError(f"followee_ids has length {len(fd)}, expected {len(fs)}")
        if len(fs):
            self.core.mark_follow_dirty(fs, fd)
        return self.push(StreamBatch())

    # -- snapshot ---------------------------------------------------------------------------------------------
    def graphs(self) -> SpreadingGraphs:
        """Every cascade with its current edges, in the batch builder's node order (see the class docs);
        follower counts: a participant's own count, else the same user's latest known count among the
        participants, else 0; every n_v = 1 (unit ``retweeters``) when no count is known at all."""
        slot_tweet, nslot, nuser, ntime, nfol, npub, esrc, edst = self.core.snapshot()
        order_s = np.argsort(slot_tweet, kind="stable")
        rank_s = np.empty_like(order_s)
        rank_s[order_s] = np.arange(len(order_s))
        cas = rank_s[nslot]
        # publisher first (key 0), then time, then user id
        order = np.lexsort((nuser, ntime, ~npub.astype(bool), cas))
        pos = np.empty_like(order)
        pos[order] = np.arange(len(order))
        t = len(slot_tweet)
        sizes = np.bincount(cas, minlength=t)
        node_off = np.zeros(t + 1, _I64)
        np.cumsum(sizes, out=node_off[1:])
        fol = nfol[order].copy()
        unit = "followers"
        if np.isnan(fol).all():
            fol[:] = 1.0
            unit = "retweeters"
        elif np.isnan(fol).any():
            fol = _fill_counts(nuser[order], ntime[order], fol)
        cascades = Cascades(
            node_offsets=node_off, user_ids=nuser[order], followers=fol, publisher=node_off[:-1].copy(),
            tweet_ids=slot_tweet[order_s], times=ntime[order], unit=unit,
        )  # fmt: skip
        s, d = pos[esrc], pos[edst]
        key = np.lexsort((d, s))
        s, d = s[key], d[key]
        ecas = cas[order][s] if len(s) else np.zeros(0, _I64)
        eoff = np.zeros(t + 1, _I64)
        np.cumsum(np.bincount(ecas, minlength=t), out=eoff[1:])
        idx = np.int32 if cascades.n_nodes < 2**31 else np.int64
        return SpreadingGraphs(cascades, eoff, s.astype(idx), d.astype(idx), orphans=self.orphans)

    # -- helpers ----------------------------------------------------------------------------------------------
    def _slots_of(self, tweet_ids: np.ndarray) -> np.ndarray:
        if not len(self._idx_tweet):
            return np.full(len(tweet_ids), -1, _I64)
        p = np.minimum(np.searchsorted(self._idx_tweet, tweet_ids), len(self._idx_tweet) - 1)
        return np.where(self._idx_tweet[p] == tweet_ids, self._idx_slot[p], -1)

    def _open(self, batch: StreamBatch, ok: np.ndarray, up: StreamUpdate) -> None:
        tw, us, tm, fo = batch.original_tweet[ok], batch.original_user[ok], batch.original_time[ok], \
            batch.original_followers[ok]  # fmt: skip
        # first arrival wins: within the batch (stable unique) and against the index
        _, first = np.unique(tw, return_index=True)
        first.sort()
        new = first[self._slots_of(tw[first]) < 0]
        up.duplicate_originals += int(len(tw) - len(new))
        if not len(new):
            return
        tw, us, tm, fo = tw[new], us[new], tm[new], fo[new]
        slots = np.arange(self.n_cascades, self.n_cascades + len(tw), dtype=_I64)
        self.n_cascades += len(tw)
        # merge into the sorted index: one pass over it (a sort per micro-batch cost ~2 ms at 100K cascades)
        o = np.argsort(tw, kind="stable")
        at = np.searchsorted(self._idx_tweet, tw[o])
        self._idx_tweet = np.insert(self._idx_tweet, at, tw[o])
        self._idx_slot = np.insert(self._idx_slot, at, slots[o])
        self.core.open_cascades(tw, us, tm, fo, self._idx_tweet, self._idx_slot)

    def _apply_follows(self, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Add follows new to the graph; returns the ones that were new (as user ids)."""
        g = self.graph
        keep = src != dst
        src, dst = src[keep], dst[keep]
        a, b = self._dense(src, add=True), self._dense(dst, add=True)
        u = g.n_users
        # already in the graph's CSR?
        in_base = np.zeros(len(a), dtype=bool)
        base = (a < u) & (b < u)
        if base.any():
            ia, ib = a[base], b[base]
            lo, hi = g.friends_indptr[ia], g.friends_indptr[ia + 1]
            hit = np.zeros(len(ia), dtype=bool)
            for k in range(len(ia)):  # follows are few per batch: a search per follow
                row = g.friends_indices[lo[k] : hi[k]]
                p = np.searchsorted(row, ib[k])
                hit[k] = p < len(row) and row[p] == ib[k]
            in_base[np.flatnonzero(base)] = hit
        key = (a.astype(_I64) << 32) | b.astype(_I64)
        key = key[~in_base]
        fresh = np.setdiff1d(key, self._delta)
        if not len(fresh):
            return np.zeros(0, _I64), np.zeros(0, _I64)
        self._delta = np.union1d(self._delta, fresh)
        extra_ids = np.array(sorted(self._extra), dtype=_I64)
        extra_dense = np.array([self._extra[int(x)] for x in extra_ids], dtype=_I64)
        self.core.set_graph_delta(self._delta, extra_ids, extra_dense, self._extra_uid_by_dense)
        fa, fb = fresh >> 32, fresh & 0xFFFFFFFF
        return self._uid(fa), self._uid(fb)

    def _dense(self, ids: np.ndarray, add: bool) -> np.ndarray:
        d = self.graph.index_of(ids)
        for k in np.flatnonzero(d < 0):
            x = int(ids[k])
            if x not in self._extra:
                if not add:
                    continue
                self._extra[x] = self.graph.n_users + len(self._extra)
                self._extra_uid_by_dense = np.append(self._extra_uid_by_dense, x)
            d[k] = self._extra[x]
        if self.graph.n_users + len(self._extra) >= 2**31 - 1:
            raise ValueError("the stream engine supports < 2^31 users")
        return d

    def _uid(self, dense: np.ndarray) -> np.ndarray:
        u = self.graph.n_users
        out = np.empty(len(dense), _I64)
        base = dense < u
        out[base] = self.graph.user_ids[dense[base]]
        out[~base] = self._extra_uid_by_dense[dense[~base] - u]
        return out

    def _expire(self, up: StreamUpdate, final: bool) -> None:
        tw, us, tm, fo = self._held
        if not len(tw):
            return
        if final:
            gone = np.ones(len(tw), dtype=bool)
        else:
            gone = (self.clock - tm) > self.hold_seconds
            left = np.flatnonzero(~gone)
            if len(left) > self.hold_max:  # too many waiting: the oldest go first
                o = left[np.argsort(tm[left], kind="stable")]
                gone[o[: len(left) - self.hold_max]] = True
        if gone.any():
            o = np.flatnonzero(gone)
            o = o[np.argsort(tm[o], kind="stable")]
            up.expired_tweet = np.concatenate([up.expired_tweet, tw[o]])
            up.expired_user = np.concatenate([up.expired_user, us[o]])
            up.expired_time = np.concatenate([up.expired_time, tm[o]])
            k = ~gone
            self._held = (tw[k], us[k], tm[k], fo[k])


def _lap(up: StreamUpdate, name: str, tick: float) -> float:
    now = _time.perf_counter()
    up.timings[name] = now - tick
    return now


def _fill_counts(users: np.ndarray, times: np.ndarray, fol: np.ndarray) -> np.ndarray:
    """NaN counts: the same user's latest known count among the participants, else 0."""
    known = ~np.isnan(fol)
    ku, kt, kf = users[known], times[known], fol[known]
    o = np.lexsort((kt, ku))
    ku, kf = ku[o], kf[o]
    last = np.ones(len(ku), dtype=bool)
    last[:-1] = ku[1:] != ku[:-1]
    ku, kf = ku[last], kf[last]
    miss = np.flatnonzero(~known)
    p = np.minimum(np.searchsorted(ku, users[miss]), max(len(ku) - 1, 0))
    hit = ku[p] == users[miss]
    out = fol.copy()
    out[miss] = np.where(hit, kf[p], 0.0)
    return out


def replay_order(times: np.ndarray, lateness: float, seed: int | None) -> np.ndarray:
    """An arrival order for rows with ``times``: each row is delayed by a uniform amount in ``[0, lateness]``
    seconds and the rows arrive by delayed time (ties by row) — a stream whose events are out of order by at
    most ``lateness``. NaN times arrive first."""
    t = np.nan_to_num(np.asarray(times, dtype=_F64), nan=-np.inf)
    if lateness > 0:
        rng = np.random.default_rng(seed)
        t = t + rng.uniform(0.0, lateness, len(t))
    return np.lexsort((np.arange(len(t)), t))


def cut(n: int, batch: int, seed: int | None = None, random: bool = False) -> np.ndarray:
    """Boundaries ``0 = b0 < b1 < ... = n`` of micro-batches of ``batch`` rows (``random``: sizes uniform in
    ``1..2*batch-1``, the same mean)."""
    if batch < 1:
        raise ValueError(f"batch must be >= 1, not {batch}")
    if not random:
        return unique(np.r_[np.arange(0, n, batch), n])
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 2 * batch, size=n // batch + 2)
    b = np.r_[0, np.cumsum(sizes)]
    return unique(np.minimum(np.r_[b[b < n], n], n))
