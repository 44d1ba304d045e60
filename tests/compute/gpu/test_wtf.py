"""The GPU twin of WTF against the CPU reference on fresh random graphs (each run draws new ones; the seed is in
the failure message): values to 1e-9 relative, the same lists, bitwise equal batches and reruns, and row sums
that write every row (the memory pool is poisoned with NaN first)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from compute.algorithms.wtf import BATCH, personalized_pagerank, wtf
from compute.graphs import graph_from_edges

cp = pytest.importorskip("cupy")


def fresh_seed() -> int:
    return int.from_bytes(os.urandom(4), "little")


def graph_with_long_rows(seed: int, n: int = 20_000, m: int = 200_000):
    """A random graph plus a celebrity followed by 12,000 accounts and an account following 9,000 (rows longer
    than the twin's chunk of 4,096 in both directions), dangling and isolated accounts."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    fans = rng.choice(n, min(12_000, n - 1), replace=False)
    followed = rng.choice(n, min(9_000, n - 1), replace=False)
    src = np.r_[src, fans, np.full(len(followed), 7)]
    dst = np.r_[dst, np.full(len(fans), 3), followed]
    ids = np.arange(n + 50) * 3 + 10  # 50 isolated accounts
    return graph_from_edges(ids[src], ids[dst], ids=ids), rng


def poison_pool() -> None:
    """Fill the pool's free memory with NaN so an output entry that a kernel forgets to write shows."""
    cp.get_default_memory_pool().free_all_blocks()
    free, _ = cp.cuda.runtime.memGetInfo()
    junk = cp.full(int(free * 0.5) // 8, cp.nan)
    del junk


def rel_err(got, want) -> float:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return np.inf
    return float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300))) if got.size else 0.0


@pytest.mark.parametrize("direction", ["follows", "followers"])
def test_ppr_matches_the_cpu_on_fresh_random_graphs(direction):
    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed)
    seeds = np.r_[3, 7, rng.integers(0, g.n_nodes, 5)]
    poison_pool()
    gpu = personalized_pagerank(g, seeds, direction=direction, backend="gpu")
    cpu = personalized_pagerank(g, seeds, direction=direction, backend="cpu")
    assert not np.isnan(gpu.values).any(), seed
    big = cpu.values > 1e-300
    assert rel_err(gpu.values[big], cpu.values[big]) <= 1e-9, seed
    assert np.all(gpu.values[~big] <= 1e-290), seed
    assert gpu.iterations.tolist() == cpu.iterations.tolist(), seed
    assert gpu.converged.tolist() == cpu.converged.tolist(), seed


@pytest.mark.parametrize("direction", ["follows", "followers"])
def test_wtf_matches_the_cpu_on_fresh_random_graphs(direction):
    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed)
    seeds = np.r_[3, 7, rng.integers(0, g.n_nodes, 6)]
    poison_pool()
    gpu = wtf(g, seeds, direction=direction, circle=300, top=25, backend="gpu")
    cpu = wtf(g, seeds, direction=direction, circle=300, top=25, backend="cpu")
    for a, b in zip(cpu, gpu):
        assert (a.iterations, a.converged, a.money_iterations, a.money_converged) == (
            b.iterations,
            b.converged,
            b.money_iterations,
            b.money_converged,
        ), seed
        assert b.circle.tolist() == a.circle.tolist(), seed
        assert b.relevance.tolist() == a.relevance.tolist(), seed
        assert b.similarity.tolist() == a.similarity.tolist(), seed
        for field in ("circle_ppr", "relevance_score", "relevance_ppr", "similarity_score", "similarity_ppr"):
            assert rel_err(getattr(b, field), getattr(a, field)) <= 1e-9, (seed, field)


def test_a_batch_gives_the_bits_of_one_seed_at_a_time_on_the_gpu():
    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed, n=5_000, m=60_000)
    seeds = rng.integers(0, g.n_nodes, BATCH + 5)
    seeds[:2] = [3, 7]
    batch = wtf(g, seeds, circle=100, top=10, backend="gpu")
    pr = personalized_pagerank(g, seeds[:9], backend="gpu")
    for j in (0, 1, 2, BATCH - 1, BATCH, BATCH + 4):
        one = wtf(g, [seeds[j]], circle=100, top=10, backend="gpu")[0]
        for field in one.__dataclass_fields__:
            assert np.array_equal(getattr(batch[j], field), getattr(one, field)), (seed, j, field)
    for j in range(9):
        alone = personalized_pagerank(g, [seeds[j]], backend="gpu")
        assert np.array_equal(alone.values[0], pr.values[j]), (seed, j)


def test_it_gives_the_same_bits_from_run_to_run():
    g, rng = graph_with_long_rows(fresh_seed())
    seeds = rng.integers(0, g.n_nodes, 3)
    a = personalized_pagerank(g, seeds, direction="followers", backend="gpu").values
    for _ in range(2):
        poison_pool()
        b = personalized_pagerank(g, seeds, direction="followers", backend="gpu").values
        assert np.array_equal(a.view(np.int64), b.view(np.int64))


def test_the_row_sums_write_every_row_at_every_width():
    from scipy.sparse import csr_array

    from compute.gpu.wtf import _Csr, _pull

    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed, n=6_000, m=20_000)  # rows of 5,999 and 6,000+: chunked
    ref_matrix = csr_array((np.ones(g.n_edges), g.indices, g.indptr), shape=(g.n_nodes, g.n_nodes))
    csr = _Csr(cp.asarray(g.indptr), cp.asarray(g.indices))
    for k in (1, 2, 4, 8, 16, 32, 64):
        y = rng.random((g.n_nodes, k)) * 10.0 ** rng.integers(-5, 5, (g.n_nodes, k))
        poison_pool()
        got = _pull(csr, cp.asarray(y)).get()
        assert not np.isnan(got).any(), (seed, k)
        assert rel_err(got[got != 0], (ref_matrix @ y)[got != 0]) <= 1e-12, (seed, k)
        assert np.array_equal(got == 0, (ref_matrix @ y) == 0), (seed, k)


def test_the_twin_refuses_the_cpu_backend():
    from compute.gpu import wtf as twin

    g, _ = graph_with_long_rows(1, n=100, m=300)
    with pytest.raises(ValueError, match="backend 'gpu'"):
        twin.wtf(g, [0], backend="cpu")


def test_the_l2_modes_change_no_bit(monkeypatch):
    """The PPR pass's cache policies (compute.gpu.wtf._L2_MODE) only steer the L2: every mode gives the same bits,
    with a hot region that cuts the gathered vector in two."""
    from compute.gpu import wtf as twin

    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed, n=8_000, m=90_000)
    seeds = np.r_[3, 7, rng.integers(0, g.n_nodes, 3)]
    monkeypatch.setattr(twin, "_HOT_BYTES", 8 * 2_000 * 8)  # 2,000 hot rows at width 8, the rest evict-first
    runs = []
    for mode in (0, 1, 2):
        monkeypatch.setattr(twin, "_L2_MODE", mode)
        poison_pool()
        runs.append(personalized_pagerank(g, seeds, direction="followers", backend="gpu"))
    for other in runs[1:]:
        assert np.array_equal(other.values.view(np.int64), runs[0].values.view(np.int64)), seed
        assert other.iterations.tolist() == runs[0].iterations.tolist(), seed
