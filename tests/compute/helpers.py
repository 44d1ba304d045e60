"""Small builders shared by the compute tests (kept free of compute.formats so the engine's tests do not
depend on the readers)."""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path

import numpy as np

from compute.build import build_cascades
from compute.structures import Cascades, FollowerGraph, SpreadingGraphs
from compute.tables import TweetTable

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "thesis_example"


def worked_example() -> tuple[Cascades, FollowerGraph, dict]:
    rows = []
    with open(EXAMPLE / "tweets.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            t = datetime.fromisoformat(r["created_at"].replace("Z", "+00:00")).timestamp()
            rt = int(r["retweeted_tweet_id"]) if r["retweeted_tweet_id"] else None
            rows.append((int(r["tweet_id"]), rt, int(r["user_id"]), t, float(r["followers_count"])))
    with open(EXAMPLE / "follows.csv", newline="") as fh:
        fl = list(csv.DictReader(fh))
    graph = FollowerGraph.from_edges([int(x["follower_id"]) for x in fl], [int(x["followee_id"]) for x in fl])
    cascades, _ = build_cascades(TweetTable.from_rows(rows))
    expected = json.loads((EXAMPLE / "expected.json").read_text())
    return cascades, graph, expected


def edge_sets(g: SpreadingGraphs) -> dict[int, set[tuple[int, int]]]:
    """Spreading edges per tweet id as sets of (user id of src, user id of dst)."""
    c = g.cascades
    out = {}
    for t in range(g.n_cascades):
        s, d = g.edges_of(t)
        out[int(c.tweet_ids[t])] = {(int(c.user_ids[a]), int(c.user_ids[b])) for a, b in zip(s, d)}
    return out


def influence_by_tweet(c: Cascades, influence: np.ndarray) -> dict[int, dict[int, float]]:
    out = {}
    for t in range(c.n_cascades):
        lo, hi = c.node_offsets[t], c.node_offsets[t + 1]
        out[int(c.tweet_ids[t])] = {int(u): float(v) for u, v in zip(c.user_ids[lo:hi], influence[lo:hi])}
    return out


def one_cascade(
    publisher: int,
    retweets: list[tuple[int, float]],
    followers: dict[int, float] | None = None,
    tweet_id: int = 1,
    t0: float = 0.0,
) -> Cascades:
    """A single cascade: ``retweets`` as (user, time)."""
    followers = followers or {}
    rows = [(tweet_id, None, publisher, t0, followers.get(publisher, 1.0))]
    rows += [(0, tweet_id, u, t, followers.get(u, 1.0)) for u, t in retweets]
    c, _ = build_cascades(TweetTable.from_rows(rows))
    return c


def follows(*pairs: tuple[int, int]) -> FollowerGraph:
    """``follows((a, b), ...)``: a follows b."""
    if not pairs:
        return FollowerGraph.from_edges([], [])
    a, b = zip(*pairs)
    return FollowerGraph.from_edges(a, b)


def given_graphs(cascades: list[tuple[list[int], list[tuple[int, int]], int]], times=None) -> SpreadingGraphs:
    """Spreading graphs given directly: per cascade (followers per local node, local edges (src, dst),
    local publisher). ``times``: per cascade list of times or None."""
    node_off, edge_off = [0], [0]
    fol, src, dst, pub, tms = [], [], [], [], []
    for k, (f, edges, p) in enumerate(cascades):
        base = node_off[-1]
        fol += f
        src += [base + s for s, _ in edges]
        dst += [base + d for _, d in edges]
        pub.append(base + p)
        if times is not None:
            tms += times[k]
        node_off.append(base + len(f))
        edge_off.append(edge_off[-1] + len(edges))
    n = node_off[-1]
    c = Cascades(
        node_off,
        np.arange(100, 100 + n),
        np.array(fol, float),
        pub,
        np.arange(len(cascades)) + 1000,
        times=None if times is None else np.array(tms, float),
    )
    return SpreadingGraphs(c, edge_off, np.array(src, np.int64), np.array(dst, np.int64))


def shuffled_within_cascades(cascades: Cascades, seed: int = 0) -> Cascades:
    """The same cascades with the nodes of each shuffled (the publisher moves too): input out of time order."""
    rng = np.random.default_rng(seed)
    bounds = zip(cascades.node_offsets[:-1], cascades.node_offsets[1:])
    perm = np.concatenate([lo + rng.permutation(hi - lo) for lo, hi in bounds])
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))
    return Cascades(
        cascades.node_offsets, cascades.user_ids[perm], cascades.followers[perm], inv[cascades.publisher],
        cascades.tweet_ids, times=cascades.times[perm],
    )  # fmt: skip
