"""The GPU stream engine against the CPU reference: fresh random inputs each run, the same update after every
micro-batch (edges as sets, rebuilt and touched cascades, counters), batch boundaries irrelevant, follows
mid-stream, and the Twitter16 sample equal to batch."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.stream import stream
from compute.generators import twitter_collection
from compute.streaming import StreamBatch, cut, replay_order
from compute.structures import FollowerGraph

from ..helpers import edge_sets
from ..streams import DATA, assert_same_as_batch, replay, table

COUNTERS = ("accepted", "duplicates", "self_retweets", "duplicate_originals", "missing_times", "released", "held",
            "n_work")  # fmt: skip


def _edges(u):
    return set(zip(u.edge_tweet.tolist(), u.edge_src.tolist(), u.edge_dst.tolist()))


def _lockstep(tweets, graph, *, lateness, seed, batch, orphans="strict", follows=None, start=None, policy="forward"):
    """Run both engines over the same micro-batches and compare every update."""
    engines = [stream(start or graph, orphans=orphans, follows=policy, backend=b, hold_seconds=np.inf)
               for b in ("cpu", "gpu")]  # fmt: skip
    order = replay_order(tweets.created_at, lateness, seed)
    b = cut(len(order), batch, seed, random=True)
    rng = np.random.default_rng(seed)
    at = None if follows is None else rng.integers(0, len(b) - 1, size=len(follows[0]))
    for i in range(len(b) - 1):
        f = None if at is None else (follows[0][at == i], follows[1][at == i])
        ups = [e.push(StreamBatch.from_tweets(tweets, order[b[i] : b[i + 1]], follows=f)) for e in engines]
        cpu, gpu = ups
        assert _edges(gpu) == _edges(cpu), f"batch {i}"
        assert sorted(gpu.recomputed.tolist()) == sorted(cpu.recomputed.tolist())
        assert sorted(gpu.touched.tolist()) == sorted(cpu.touched.tolist())
        for k in COUNTERS:
            assert getattr(gpu, k) == getattr(cpu, k), k
    for e in engines:
        e.flush()
    cpu_g, gpu_g = (e.graphs() for e in engines)
    assert edge_sets(gpu_g) == edge_sets(cpu_g)
    assert np.array_equal(gpu_g.cascades.user_ids, cpu_g.cascades.user_ids)
    np.testing.assert_array_equal(gpu_g.cascades.followers, cpu_g.cascades.followers)
    return engines


@pytest.mark.parametrize("orphans", ["strict", "attach"])
def test_it_gives_the_cpu_update_after_every_micro_batch_on_fresh_twitter_like_streams(orphans):
    seed = int(np.random.default_rng().integers(0, 2**31))  # fresh each run; printed on failure
    tweets, graph = twitter_collection(scale=0.002, seed=seed % 1000)
    for lateness, batch in ((0.0, 997), (300.0, 250), (7200.0, 3000)):
        engines = _lockstep(tweets, graph, lateness=lateness, seed=seed, batch=batch, orphans=orphans)
    assert_same_as_batch(engines[1], tweets, graph, orphans)


def test_batch_boundaries_do_not_change_the_gpu_result():
    tweets, graph = twitter_collection(scale=0.001, seed=11)
    finals = []
    for batch in (1, 64, 5000, 10**6):
        eng, _ = replay(tweets, graph, lateness=600.0, seed=batch, batch=batch, backend="gpu")
        finals.append(edge_sets(eng.graphs()))
    assert all(f == finals[0] for f in finals)
    assert_same_as_batch(eng, tweets, graph)


def test_small_random_streams_with_ties_repeats_unknown_users_and_follows_mid_stream_match_the_cpu():
    rng = np.random.default_rng()
    for trial in range(25):
        n_users = int(rng.integers(3, 30))
        m = int(rng.integers(0, 4 * n_users))
        src, dst = rng.integers(0, n_users, m), rng.integers(0, n_users, m)
        graph = FollowerGraph.from_edges(src, dst, user_ids=np.arange(n_users))
        n_casc = int(rng.integers(1, 6))
        originals = [(100 + c, int(rng.integers(0, n_users)), float(rng.integers(0, 5))) for c in range(n_casc)]
        k = int(rng.integers(0, 80))
        # user n_users + 5 is in no graph (its key is -1 - uid); tweet 999 never comes
        users = np.r_[np.arange(n_users), n_users + 5]
        rts = [(int(rng.choice([100 + c for c in range(n_casc)] + [999])), int(rng.choice(users)),
                float(rng.integers(0, 15))) for _ in range(k)]  # fmt: skip
        tweets = table(originals, rts)
        # half of the follows known at the start (over the first users only), the rest mid-stream
        g_src, g_dst = graph.to_edges()
        h = len(g_src) // 2
        start = FollowerGraph.from_edges(g_src[:h], g_dst[:h], user_ids=[0])
        later = (g_src[h:], g_dst[h:])
        policy = "recompute" if trial % 2 else "forward"
        late, size = float(rng.integers(0, 6)), int(rng.integers(1, 9))
        engines = _lockstep(tweets, graph, lateness=late, seed=trial, batch=size, follows=later, start=start,
                            policy=policy)  # fmt: skip
        if policy == "recompute":
            assert_same_as_batch(engines[1], tweets, graph)


def test_the_twitter16_sample_replayed_on_the_gpu_equals_batch():
    from compute.formats import read_many

    res = read_many([DATA / "twitter16"])
    f = res.follows
    graph = FollowerGraph.from_edges(f.follower_id, f.followee_id)
    eng, ups = replay(res.tweets, graph, lateness=86400.0, seed=3, batch=300, backend="gpu")
    assert sum(len(u.recomputed) for u in ups) > 0
    assert_same_as_batch(eng, res.tweets, graph)
