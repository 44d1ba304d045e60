"""The GPU twin of the local methods (push, FORA and plain walks) against the exact method and the CPU reference,
on fresh random graphs (the seed is in the failure message): the push's residual is the exact L1 distance to the
converged PPR, it never overshoots and stops within the same bound as the reference; FORA spends the residual and
lands near the converged PPR, as do plain walks from the seed; a seed's estimate is bitwise the same alone, in a
batch and from run to run; with a tiny epsilon the lists are the exact method's."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.wtf import personalized_pagerank, wtf
from compute.graphs import graph_from_edges

from ..fora_bounds import residual_spent_bound
from .test_wtf import fresh_seed, graph_with_long_rows

cp = pytest.importorskip("cupy")


def exact(g, seeds, direction):
    return personalized_pagerank(g, seeds, direction=direction, tol=1e-14, max_iter=1000, backend="cpu")


@pytest.mark.parametrize("direction", ["follows", "followers"])
@pytest.mark.parametrize("epsilon", [1e-4, 1e-6, 1e-8])
def test_the_push_residual_is_the_l1_distance_to_the_converged_ppr_and_it_never_overshoots(direction, epsilon):
    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed, n=3_000, m=30_000)
    seeds = np.r_[rng.integers(0, g.n_nodes, 5), 3, 7]  # the celebrity and the account following 9,000
    x = exact(g, seeds, direction).values
    pu = personalized_pagerank(g, seeds, direction=direction, method="push", epsilon=epsilon, backend="gpu")
    ref = personalized_pagerank(g, seeds, direction=direction, method="push", epsilon=epsilon, backend="cpu")
    assert pu.converged.all(), seed
    assert np.all(pu.values <= x + 1e-12), seed
    np.testing.assert_allclose(np.abs(x - pu.values).sum(axis=1), pu.delta, rtol=1e-6, atol=1e-11, err_msg=str(seed))
    assert np.all(pu.iterations <= 1 / (0.15 * epsilon) + 1), seed
    # the same stopping rule as the reference's queue: every residual at most epsilon times its out-degree, so
    # the L1 distance is bounded by epsilon times the edges (plus the dangling accounts) for both
    bound = epsilon * (g.n_edges + g.n_nodes)
    assert np.all(pu.delta <= bound) and np.all(ref.delta <= bound), seed


def test_an_account_with_nowhere_to_go_keeps_all_its_mass_on_the_gpu():
    g = graph_from_edges(np.array([1]), np.array([2]), ids=np.array([1, 2, 3]))
    pu = personalized_pagerank(g, np.array([2]), direction="follows", method="push", epsilon=1e-9, backend="gpu")
    assert pu.values[0, 2] == pytest.approx(1.0, abs=1e-8) and pu.values[0, :2].sum() == 0.0
    assert pu.delta[0] == pytest.approx(1.0 - pu.values[0, 2], abs=1e-12)


@pytest.mark.parametrize("direction", ["follows", "followers"])
def test_fora_spends_the_residual_and_lands_near_the_converged_ppr_on_the_gpu(direction):
    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed, n=2_000, m=16_000)
    seeds = np.r_[rng.integers(0, g.n_nodes, 3), 3]
    x = exact(g, seeds, direction).values
    push = personalized_pagerank(g, seeds, direction=direction, method="push", epsilon=1e-3, backend="gpu")
    fora = personalized_pagerank(g, seeds, direction=direction, method="fora", epsilon=1e-3, walks=2e5, backend="gpu")
    assert np.all(np.abs(fora.values.sum(axis=1) - 1.0) < residual_spent_bound(push.delta, 2e5)), seed
    np.testing.assert_array_equal(fora.delta, push.delta)  # delta: what the push left for the walks
    assert np.all(np.abs(x - fora.values).sum(axis=1) < 0.25 * push.delta), seed
    ref = personalized_pagerank(g, seeds, direction=direction, method="fora", epsilon=1e-3, walks=2e5, backend="cpu")
    # the reference's error is of the same size: the same estimator, other random streams
    gpu_err, cpu_err = np.abs(x - fora.values).sum(axis=1), np.abs(x - ref.values).sum(axis=1)
    assert np.all(gpu_err < 3 * cpu_err + 1e-3) and np.all(cpu_err < 3 * gpu_err + 1e-3), seed


@pytest.mark.parametrize("direction", ["follows", "followers"])
def test_plain_walks_start_at_the_seed_and_land_near_the_converged_ppr_on_the_gpu(direction):
    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed, n=2_000, m=16_000)
    seeds = np.r_[rng.integers(0, g.n_nodes, 3), 3]
    x = exact(g, seeds, direction).values
    kw = {"direction": direction, "method": "walks", "walks": 2e5}
    gpu = personalized_pagerank(g, seeds, backend="gpu", **kw)
    cpu = personalized_pagerank(g, seeds, backend="cpu", **kw)
    assert np.all(gpu.iterations == 0) and np.all(gpu.delta == 1.0), seed  # no push: the seed's unit was walked
    assert np.all(np.abs(gpu.values.sum(axis=1) - 1.0) < 0.02), seed
    gpu_err, cpu_err = np.abs(x - gpu.values).sum(axis=1), np.abs(x - cpu.values).sum(axis=1)
    assert np.all(gpu_err < 0.1), seed
    assert np.all(gpu_err < 3 * cpu_err + 1e-3) and np.all(cpu_err < 3 * gpu_err + 1e-3), seed


@pytest.mark.parametrize("method", ["push", "fora", "walks"])
def test_a_seeds_local_estimate_is_bitwise_the_same_alone_in_a_batch_and_run_after_run(method):
    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed, n=2_000, m=16_000)
    seeds = np.r_[rng.integers(0, g.n_nodes, 5), 3]
    kw = {"direction": "followers", "method": method, "epsilon": 1e-5, "walks": 1e4, "backend": "gpu"}
    together = personalized_pagerank(g, seeds, **kw)
    again = personalized_pagerank(g, seeds, **kw)
    assert np.array_equal(together.values, again.values), seed
    for j, s in enumerate(seeds.tolist()):
        alone = personalized_pagerank(g, [s], **kw)
        assert np.array_equal(alone.values[0], together.values[j]), (seed, s)
        assert alone.iterations[0] == together.iterations[j], (seed, s)


@pytest.mark.parametrize("direction", ["follows", "followers"])
def test_with_a_tiny_epsilon_the_gpu_push_gives_the_exact_methods_circle_and_lists(direction):
    seed = fresh_seed()
    g, rng = graph_with_long_rows(seed, n=1_500, m=15_000)
    seeds = rng.integers(0, g.n_nodes, 4)
    a = wtf(g, seeds, direction=direction, circle=50, top=10, backend="cpu")
    b = wtf(g, seeds, direction=direction, circle=50, top=10, backend="gpu", method="push", epsilon=1e-12)
    for x, y in zip(a, b):
        ja, jb = x.to_json(g.ids), y.to_json(g.ids)
        assert {r["user_id"] for r in ja["circle"]} == {r["user_id"] for r in jb["circle"]}, seed
        for key in ("relevance", "similarity"):
            assert [r["user_id"] for r in ja[key]] == [r["user_id"] for r in jb[key]], (seed, key)


def test_the_twin_refuses_bad_local_arguments_by_name():
    g, _ = graph_with_long_rows(1, n=100, m=300)
    with pytest.raises(ValueError, match="epsilon must be a number between 0 and 1"):
        wtf(g, [0], method="push", epsilon=0, backend="gpu")
    with pytest.raises(ValueError, match="walks must be a number from 1 to 1e9"):
        wtf(g, [0], method="fora", walks=0.5, backend="gpu")
