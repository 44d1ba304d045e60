"""The GPU twin of the coordinated-accounts methods against the CPU reference on fresh random retweets (the seed
is in the failure message): the same edges in the same order, the same co-retweet counts and clusters, cosines
to 1e-12; and the empty and degenerate inputs."""

from __future__ import annotations

import os

import numpy as np
import pytest

from compute.algorithms.coordination import coordination

cp = pytest.importorskip("cupy")


def retweets(seed: int, n: int = 60_000, accounts: int = 3_000, tweets: int = 400):
    """Retweets with bursts: a third of them by a ring of 40 accounts retweeting tweets within seconds."""
    rng = np.random.default_rng(seed)
    tweet = rng.integers(0, tweets, n) + 10_000
    account = rng.integers(0, accounts, n) + 1
    time = rng.integers(0, 86_400, n).astype(float)
    ring = rng.random(n) < 0.3
    account[ring] = rng.integers(0, 40, ring.sum()) + 900_000
    time[ring] = (tweet[ring] - 10_000) * 200.0 + rng.integers(0, 20, ring.sum())
    # five clones retweet the same 12 tweets, and five near-clones 10 of them: cosines at and near 1
    picked = rng.choice(tweets, 12, replace=False) + 10_000
    clones = [(t, 800_000 + c) for c in range(5) for t in picked]
    clones += [(t, 800_100 + c) for c in range(5) for t in picked[:10]]
    tweet = np.r_[tweet, [t for t, _ in clones]]
    account = np.r_[account, [a for _, a in clones]]
    time = np.r_[time, rng.integers(0, 86_400, len(clones)).astype(float)]
    return tweet, account, time


@pytest.mark.parametrize("method,kw", [
    ("co-retweet", {"window": 60, "min_count": 2}),
    ("co-retweet", {"window": 0, "min_count": 1}),
    ("similarity", {"min_retweets": 10, "threshold": 0.5}),
    ("similarity", {"min_retweets": 3, "threshold": 0.9}),
])  # fmt: skip
def test_the_twin_gives_the_references_edges(method, kw):
    seed = int.from_bytes(os.urandom(4), "little")
    data = retweets(seed)
    cpu = coordination(*data, method=method, backend="cpu", **kw)
    gpu = coordination(*data, method=method, backend="gpu", **kw)
    assert gpu.backend == "gpu" and len(cpu) > 0, f"seed {seed}"
    assert (gpu.accounts, gpu.tweets, gpu.pairs) == (cpu.accounts, cpu.tweets, cpu.pairs), f"seed {seed}"
    if method == "co-retweet":
        assert gpu.rows() == cpu.rows(), f"seed {seed}"
    else:
        assert [(r["a"], r["b"], r["cluster"]) for r in gpu.rows()] == [
            (r["a"], r["b"], r["cluster"]) for r in cpu.rows()
        ], f"seed {seed}"
        np.testing.assert_allclose(gpu.weight, cpu.weight, rtol=0, atol=1e-12, err_msg=f"seed {seed}")


@pytest.mark.parametrize("method", ["co-retweet", "similarity"])
def test_empty_and_tiny_inputs_give_no_edges(method):
    for tweet, account, time in (([], [], []), ([1], [2], [0.0]), ([1, 1], [2, 2], [0.0, 5.0])):
        res = coordination(tweet, account, time, method=method, min_retweets=1, backend="gpu")
        assert res.rows() == [] and len(res.cluster) == 0
