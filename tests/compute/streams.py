"""The stream tests' replay of a collection as a stream and their batch reference, shared by the CPU tests
(algorithms/test_stream.py) and the GPU twin's (gpu/test_stream.py); kept free of the test extras (hypothesis)
so the GPU tests run on a machine with only the engine's dependencies (``make test-gpu``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward
from compute.algorithms.stream import stream
from compute.build import build_cascades
from compute.streaming import StreamBatch, cut, replay_order
from compute.tables import NO_TWEET, TweetTable

from .helpers import edge_sets

DATA = Path(__file__).resolve().parents[1] / "data"


def replay(tweets, graph, *, lateness=0.0, seed=0, batch=7, backend="cpu", orphans="strict", **kw):
    """Replay ``tweets`` as a stream; returns (engine, updates)."""
    eng = stream(graph, orphans=orphans, backend=backend, hold_seconds=kw.pop("hold_seconds", np.inf), **kw)
    order = replay_order(tweets.created_at, lateness, seed)
    b = cut(len(order), batch, seed, random=True)
    ups = [eng.push(StreamBatch.from_tweets(tweets, order[b[i] : b[i + 1]])) for i in range(len(b) - 1)]
    ups.append(eng.flush())
    return eng, ups


def batch_reference(tweets, graph, orphans="strict"):
    c, _ = build_cascades(tweets)
    return forward(c, graph, orphans=orphans, backend="cpu")


def assert_same_as_batch(eng, tweets, graph, orphans="strict"):
    want = batch_reference(tweets, graph, orphans)
    got = eng.graphs()
    assert np.array_equal(got.cascades.tweet_ids, want.cascades.tweet_ids)
    assert np.array_equal(got.cascades.node_offsets, want.cascades.node_offsets)
    assert np.array_equal(got.cascades.user_ids, want.cascades.user_ids)
    assert np.array_equal(got.cascades.times, want.cascades.times)
    assert edge_sets(got) == edge_sets(want)
    np.testing.assert_allclose(
        backward(got, backend="cpu").influence, backward(want, backend="cpu").influence, rtol=1e-12, atol=0
    )
    return got, want


def table(originals, retweets, counts=None) -> TweetTable:
    """originals: (tweet id, user, time); retweets: (original id, user, time)."""
    rows = [(t, NO_TWEET, u, tm) for t, u, tm in originals]
    rows += [(10_000 + i, o, u, tm) for i, (o, u, tm) in enumerate(retweets)]
    n = len(rows)
    fol = np.full(n, np.nan) if counts is None else np.asarray(counts, dtype=float)
    return TweetTable(
        tweet_id=[r[0] for r in rows], retweeted_tweet_id=[r[1] for r in rows], user_id=[r[2] for r in rows],
        created_at=[r[3] for r in rows], followers_count=fol,
    )  # fmt: skip
