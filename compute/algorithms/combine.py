"""Combining influence over many tweets (thesis §2.3.5; docs/measure.md), overall, per publisher, per time bucket.

With I_t(v) = 0 when v is not in C_t, over a group of T tweets:

* ``total``         Σ_t I_t(v)
* ``mean``          Σ_t I_t(v) / T          (T: the group's tweets)
* ``participation`` Σ_t I_t(v) / T_v        (T_v: the group's tweets v took part in)

The thesis prints ``participation`` with a double sum that would give every co-participant the same value;
we implement the per-user average above (docs/measure.md). Groups are the whole input, each publisher, each time
bucket of the tweet's own time (UTC day, ISO week starting Monday, calendar month), or publisher × bucket.
Cascades rejected by the backward phase (NaN influence) are left out of every group, T included.

The result is a tidy table: one row per (group, user), sorted by group, then by the chosen aggregate
descending, then by user id, with every aggregate as a column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import unique
from ..structures import Cascades

__all__ = ["AGGREGATES", "BUCKETS", "Ranking", "bucket_start", "combine"]

AGGREGATES = ("total", "mean", "participation")
BUCKETS = ("day", "week", "month")


@dataclass(eq=False)
class Ranking:
    """Tidy table of combined influence. Group columns are ``None`` when not grouped by them."""

    aggregate: str
    unit: str
    user_id: np.ndarray  # int64
    total: np.ndarray  # float64
    mean: np.ndarray
    participation: np.ndarray
    cascades: np.ndarray  # int64 T_v
    group_tweets: np.ndarray  # int64 T of the row's group
    publisher_id: np.ndarray | None = None  # int64
    bucket: np.ndarray | None = None  # datetime64[s], start of the bucket (UTC)
    bucket_kind: str | None = None

    def __len__(self) -> int:
        return len(self.user_id)

    @property
    def score(self) -> np.ndarray:
        return getattr(self, self.aggregate)

    def top(self, n: int) -> Ranking:
        """The first ``n`` rows of every group (``n <= 0``: all)."""
        if n <= 0 or not len(self):
            return self
        key = self._group_key()
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
        rank = np.arange(len(self)) - np.repeat(starts, np.diff(np.r_[starts, len(self)]))
        return self.take(rank < n)

    def take(self, index) -> Ranking:
        kw = {k: (v[index] if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()}
        return Ranking(**kw)

    def _group_key(self) -> np.ndarray:
        parts = []
        if self.publisher_id is not None:
            parts.append(self.publisher_id)
        if self.bucket is not None:
            parts.append(self.bucket.astype(np.int64))
        if not parts:
            return np.zeros(len(self), np.int64)
        if len(parts) == 1:
            return parts[0]
        # dense ids of (publisher, bucket) pairs, in row order (rows are already grouped)
        change = np.r_[True, (parts[0][1:] != parts[0][:-1]) | (parts[1][1:] != parts[1][:-1])]
        return np.cumsum(change)

    def rows(self) -> list[dict]:
        """Rows as dicts (user ids as strings: JavaScript cannot hold a 64-bit id)."""
        out = []
        for i in range(len(self)):
            r: dict = {}
            if self.publisher_id is not None:
                r["publisher_id"] = str(int(self.publisher_id[i]))
            if self.bucket is not None:
                r["bucket"] = str(self.bucket[i].astype("datetime64[D]"))
            r.update(
                user_id=str(int(self.user_id[i])),
                influence=float(self.score[i]),
                cascades=int(self.cascades[i]),
                total=float(self.total[i]),
                mean=float(self.mean[i]),
                participation=float(self.participation[i]),
            )
            out.append(r)
        return out


def bucket_start(times: np.ndarray, kind: str) -> np.ndarray:
    """Start of the UTC day / ISO week (Monday) / month holding each epoch-seconds time (datetime64[s])."""
    if kind not in BUCKETS:
        raise ValueError(f"bucket must be one of {', '.join(BUCKETS)}, not {kind!r}")
    s = np.floor(np.asarray(times, dtype=np.float64)).astype("datetime64[s]")
    if kind == "day":
        return s.astype("datetime64[D]").astype("datetime64[s]")
    if kind == "month":
        return s.astype("datetime64[M]").astype("datetime64[s]")
    days = s.astype("datetime64[D]").astype(np.int64)
    monday = days - (days + 3) % 7  # 1970-01-01 was a Thursday
    return monday.astype("datetime64[D]").astype("datetime64[s]")


def combine(
    cascades: Cascades,
    influence: np.ndarray,
    *,
    aggregate: str = "total",
    by_publisher: bool = False,
    bucket: str | None = None,
    publisher: int | None = None,
) -> Ranking:
    """Combine per-cascade influence into a ranking.

    ``publisher`` keeps only the cascades of that publisher's user id. ``influence`` is float64[N] from the
    backward phase.
    """
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}, not {aggregate!r}")
    influence = np.asarray(influence, dtype=np.float64)
    if len(influence) != cascades.n_nodes:
        raise ValueError(f"influence has {len(influence)} values for {cascades.n_nodes} nodes")
    t_of_node = cascades.cascade_of_node()
    pub_user = cascades.user_ids[cascades.publisher]
    ok_casc = np.ones(cascades.n_cascades, dtype=bool)
    # a rejected cascade has NaN influence everywhere
    bad_nodes = np.isnan(influence)
    if bad_nodes.any():
        ok_casc[unique(t_of_node[bad_nodes])] = False
    if publisher is not None:
        ok_casc &= pub_user == publisher

    group_parts: list[np.ndarray] = []
    if by_publisher:
        group_parts.append(pub_user)
    bstart = None
    if bucket is not None:
        if cascades.times is None:
            raise ValueError("time buckets need tweet times; these cascades carry none")
        bstart = bucket_start(cascades.times[cascades.publisher], bucket)
        group_parts.append(bstart.astype(np.int64))
    # group id per cascade (dense), then T per group
    if group_parts:
        keys = np.stack(group_parts, axis=1)
        _, gid = np.unique(keys, axis=0, return_inverse=True)
        gid = gid.ravel().astype(np.int64)
    else:
        gid = np.zeros(cascades.n_cascades, dtype=np.int64)
    n_groups = int(gid.max()) + 1 if len(gid) else 0
    group_T = np.bincount(gid[ok_casc], minlength=n_groups)

    node_ok = ok_casc[t_of_node]
    g_node = gid[t_of_node][node_ok]
    u_node = cascades.user_ids[node_ok]
    v_node = influence[node_ok]
    # sum per (group, user); a user appears at most once per cascade, so counting rows counts cascades
    order = np.lexsort((u_node, g_node))
    g_node, u_node, v_node = g_node[order], u_node[order], v_node[order]
    first = np.r_[True, (g_node[1:] != g_node[:-1]) | (u_node[1:] != u_node[:-1])] if len(g_node) else np.zeros(0, bool)
    starts = np.flatnonzero(first)
    total = np.add.reduceat(v_node, starts) if len(starts) else np.zeros(0)
    count = np.diff(np.r_[starts, len(g_node)]).astype(np.int64)
    g = g_node[starts]
    users = u_node[starts]
    T = group_T[g]
    mean = total / T
    participation = total / count
    score = {"total": total, "mean": mean, "participation": participation}[aggregate]
    order = np.lexsort((users, -score, g))
    # group-level columns, looked up through any cascade of the group
    first_casc = np.full(n_groups, -1, dtype=np.int64)
    first_casc[gid[::-1]] = np.arange(cascades.n_cascades)[::-1]
    rk = Ranking(
        aggregate=aggregate,
        unit=cascades.unit,
        user_id=users[order],
        total=total[order],
        mean=mean[order],
        participation=participation[order],
        cascades=count[order],
        group_tweets=T[order].astype(np.int64),
        publisher_id=pub_user[first_casc[g[order]]] if by_publisher else None,
        bucket=bstart[first_casc[g[order]]] if bstart is not None else None,
        bucket_kind=bucket,
    )
    return rk
