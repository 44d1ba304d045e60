"""The network analytics (compute/algorithms/network.py) through the ``backend`` fixture: the same bodies run
on the GPU twin where one is. Hand-made values, sampled betweenness, the degree summary and the argument checks;
the comparisons with networkx on hand-made and random graphs are in test_network_networkx.py.

Exactness (docs/network.md): degrees, components, cores, conversations and neighbourhoods are equal;
clustering and betweenness within 1e-9 relative."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from compute.algorithms import network as net
from compute.graphs import (
    SOURCE_BLOCK,
    Graph,
    betweenness_sources,
    graph_from_edges,
    undirected,
)

ROOT = Path(__file__).resolve().parents[3]


# a star, a path, two triangles joined by a bridge, isolated nodes with self loops and multi-edges
HAND_MADE = {
    "star": ([0, 0, 0, 0, 0], [1, 2, 3, 4, 5], ()),
    "path": ([1, 2, 3, 4, 5, 6], [2, 3, 4, 5, 6, 7], ()),
    "bridge": ([1, 2, 3, 3, 4, 5, 6], [2, 3, 1, 4, 5, 6, 4], ()),
    "messy": ([1, 1, 1, 2, 2, 3, 3, 5, 5, 8], [2, 2, 1, 1, 3, 3, 1, 5, 6, 8], (9, 10)),
}


def hand_made(name: str) -> Graph:
    src, dst, ids = HAND_MADE[name]
    return graph_from_edges(
        np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), ids=np.asarray(ids, dtype=np.int64)
    )


def test_hand_made_values_are_what_an_analyst_expects(backend):
    g = hand_made("bridge")  # triangles 1-2-3 and 4-5-6 joined by 3-4
    bc = net.betweenness(g, backend=backend).values
    assert bc.tolist() == pytest.approx([0, 0, 6, 6, 0, 0])  # 3 carries {1, 2} x {4, 5, 6}; 4 {5, 6} x {1, 2, 3}
    assert net.core_numbers(g, backend=backend).tolist() == [2] * 6
    cl = net.clustering(g, backend=backend)
    assert cl.local.tolist() == pytest.approx([1, 1, 1 / 3, 1 / 3, 1, 1])
    star = hand_made("star")
    assert net.betweenness(star, backend=backend).values.tolist() == [10, 0, 0, 0, 0, 0]  # C(5, 2) pairs


def test_analyses_on_the_undirected_view_take_either_form(backend):
    g = hand_made("messy")
    u = undirected(g)
    assert net.core_numbers(u, backend=backend).tolist() == net.core_numbers(g, backend=backend).tolist()
    assert np.array_equal(net.betweenness(u, backend=backend).values, net.betweenness(g, backend=backend).values)
    assert np.array_equal(net.clustering(u, backend=backend).local, net.clustering(g, backend=backend).local)


def test_an_empty_graph_gives_empty_results(backend):
    g = graph_from_edges([], [])
    assert net.components(g, backend=backend).sizes.tolist() == []
    assert net.core_numbers(g, backend=backend).tolist() == []
    assert net.betweenness(g, backend=backend).values.tolist() == []
    assert net.clustering(g, backend=backend).transitivity == 0.0
    assert net.conversations(g, backend=backend).nodes_after == 0


# --------------------------------------------------------------------------------------------------------------
# Sampled betweenness
# --------------------------------------------------------------------------------------------------------------


def _two_communities(seed: int = 0, n: int = 60) -> Graph:
    """Two random communities joined by a few bridges, plus small components and isolated nodes."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n // 2, 4 * n)
    b = rng.integers(0, n // 2, 4 * n)
    half = np.r_[a, a + n // 2], np.r_[b, b + n // 2]
    bridges = rng.integers(0, n // 2, 3), rng.integers(n // 2, n, 3)
    small = [n, n + 1, n + 3, n + 4], [n + 1, n + 2, n + 4, n + 5]  # two 3-node paths
    src = np.r_[half[0], bridges[0], small[0]]
    dst = np.r_[half[1], bridges[1], small[1]]
    return graph_from_edges(src, dst, ids=np.arange(n + 9))


def test_sampled_betweenness_is_reproducible_for_a_seed(backend):
    g = _two_communities()
    a = net.betweenness(g, samples=12, seed=5, backend=backend)
    b = net.betweenness(g, samples=12, seed=5, backend=backend)
    c = net.betweenness(g, samples=12, seed=6, backend=backend)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.sources, b.sources)
    assert not np.array_equal(a.sources, c.sources)
    assert not a.exact and a.samples == 12 and a.seed == 5 and len(a.sources) == 12
    assert a.notes


def test_sampled_betweenness_is_unbiased(backend):
    g = _two_communities()
    exact = net.betweenness(g, backend=backend).values
    runs = np.array([net.betweenness(g, samples=8, seed=s, backend=backend).values for s in range(300)])
    mean, se = runs.mean(axis=0), runs.std(axis=0) / np.sqrt(len(runs))
    # every node's mean estimate lies within 4.5 standard errors of the exact value (a biased estimator, one
    # scaled by n / k over the whole graph instead of per component, misses by 16 standard errors at its worst)
    assert np.all(np.abs(mean - exact) <= 4.5 * se + 1e-9)
    assert abs(mean.sum() - exact.sum()) / exact.sum() < 0.03


def test_sampled_betweenness_converges_to_exact_as_samples_grow(backend):
    g = _two_communities()
    exact = net.betweenness(g, backend=backend).values
    errors = []
    for k in (4, 16, 48):
        runs = [net.betweenness(g, samples=k, seed=s, backend=backend).values for s in range(20)]
        errors.append(np.mean([np.abs(r - exact).sum() / exact.sum() for r in runs]))
    assert errors[0] > errors[1] > errors[2]
    full = net.betweenness(g, samples=g.n_nodes, seed=3, backend=backend)
    assert full.exact and np.array_equal(full.values, exact)


def test_per_component_sampling_never_misses_a_component_of_three_or_more(backend):
    g = _two_communities()  # the big component and two 3-node paths, whose middles (n+1, n+4) have betweenness 1
    n = g.n_nodes - 9
    middles = []
    for seed in range(60):
        r = net.betweenness(g, samples=3, seed=seed, backend=backend)
        hit = [np.any((r.sources >= lo) & (r.sources < lo + 3)) for lo in (n, n + 3)]
        assert all(hit) and np.any(r.sources < n)  # one source in each of the three components
        middles.append(r.values[[n + 1, n + 4]])
    # one source of three: an end gives the middle 3 x 1 / 2, the middle itself 0; on average the exact 1
    assert np.mean(middles) == pytest.approx(1.0, abs=0.2)


@pytest.mark.parametrize("samples", [0, 150, 300])
def test_partial_sums_over_blocks_split_two_ways_add_up_bitwise(backend, samples):
    g = _two_communities(n=400)
    whole = net.betweenness(g, samples=samples, seed=1, backend=backend)
    src, scale = betweenness_sources(undirected(g), samples, 1)
    assert np.array_equal(src, whole.sources)
    nblocks = -(-len(src) // SOURCE_BLOCK)
    assert nblocks >= 3
    for cut_block in (1, nblocks - 1):
        cut = cut_block * SOURCE_BLOCK
        first = net.betweenness_partial(g, src[:cut], scale[:cut], backend=backend)
        second = net.betweenness_partial(g, src[cut:], scale[cut:], backend=backend)
        assert np.array_equal(first + second, whole.values)
        assert np.array_equal(second + first, whole.values)


def test_partial_sums_do_not_depend_on_the_thread_count():
    g = _two_communities(n=300)
    src, scale = betweenness_sources(undirected(g), 0, 0)
    one = net.betweenness_partial_cpu(g, src, scale, threads=1)
    four = net.betweenness_partial_cpu(g, src, scale, threads=4)
    assert np.array_equal(one, four)


def test_stability_compares_the_top_sets_of_two_samples(backend):
    g = _two_communities(n=200)
    s = net.betweenness_stability(g, samples=40, seed=0, backend=backend)
    assert set(s) == {"top1", "top5", "samples"} and s["samples"] == 40
    assert 0.0 <= s["top1"] <= 1.0 and 0.0 <= s["top5"] <= 1.0
    assert net.betweenness_stability(g, samples=0, backend=backend) == {"top1": 1.0, "top5": 1.0, "samples": 0}


# --------------------------------------------------------------------------------------------------------------
# Degree summary and argument checks
# --------------------------------------------------------------------------------------------------------------


def test_degree_summary_gives_moments_histogram_and_log_bins():
    s = net.degree_summary(np.array([0, 1, 1, 2, 3, 5, 8]))
    assert s["mean"] == pytest.approx(20 / 7) and s["variance"] == pytest.approx(np.var([0, 1, 1, 2, 3, 5, 8]))
    assert s["max"] == 8
    assert s["histogram"] == [[0, 1], [1, 2], [2, 1], [3, 1], [5, 1], [8, 1]]
    assert s["log_bins"] == [[0, 0, 1], [1, 1, 2], [2, 3, 2], [4, 7, 1], [8, 15, 1]]
    assert net.degree_summary(np.zeros(0, np.int64))["histogram"] == []
    with pytest.raises(ValueError, match="d must"):
        net.degree_summary(np.array([1.5]))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda g: net.degrees("not a graph"), "g must"),
        (lambda g: net.betweenness(g, samples=-1), "samples"),
        (lambda g: net.betweenness(g, samples=2.5), "samples"),
        (lambda g: net.betweenness(g, seed=-3), "seed"),
        (lambda g: net.betweenness_stability(g, samples=True), "samples"),
        (lambda g: net.betweenness_partial(g, np.array([0, 99]), np.ones(2)), "sources"),
        (lambda g: net.betweenness_partial(g, np.array([0, 1]), np.ones(3)), "scale"),
        (lambda g: net.betweenness_partial(g, np.array([0, 1]), np.array([1.0, 0.0])), "scale"),
        (lambda g: net.neighbourhood(g, 99), "node"),
        (lambda g: net.neighbourhood(g, 0, depth=-1), "depth"),
        (lambda g: net.neighbourhood(g, 0, direction="up"), "direction"),
        (lambda g: net.components(g, backend="tpu"), "backend"),
    ],
)
def test_bad_arguments_raise_a_value_error_naming_the_parameter(call, match):
    g = hand_made("path")
    with pytest.raises(ValueError, match=match):
        call(g)


def test_the_kernels_give_the_same_results_without_numba():
    """The pure-Python fallback runs the same kernel source (compute._jit): identical results, bit for bit."""
    script = r"""
import sys
import numpy as np
from compute.algorithms import network as net
from compute.graphs import graph_from_edges
rng = np.random.default_rng(4)
g = graph_from_edges(rng.integers(0, 40, 160), rng.integers(0, 40, 160))
parts = [net.betweenness(g, samples=9, seed=2, backend="cpu").values, net.clustering(g, backend="cpu").local,
         net.core_numbers(g, backend="cpu"), net.components(g, backend="cpu").labels,
         net.conversations(g, backend="cpu").graph.indices, net.neighbourhood(g, 3, depth=2, backend="cpu").distance]
np.save(sys.argv[1], np.concatenate([p.astype(np.float64) for p in parts]))
"""
    outs = []
    for flag in ("1", "0"):
        env = dict(os.environ, SPREADWATCH_NO_NUMBA=flag, PYTHONPATH=str(ROOT))
        path = f"/tmp/network_numba_{flag}_{os.getpid()}.npy"
        res = subprocess.run([sys.executable, "-c", script, path], env=env, cwd=ROOT, capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        outs.append(np.load(path))
        os.unlink(path)
    assert np.array_equal(outs[0], outs[1])


def test_importing_the_network_modules_loads_no_graph_or_gpu_library():
    """(numba itself imports the top of SciPy where both are installed; csgraph is never loaded at import.)"""
    probe = (
        "import sys, compute.graphs, compute.algorithms.network; "
        "print(','.join(sorted(k for k in sys.modules if k.split('.')[0] in {'cupy', 'django', 'networkx', 'igraph', "
        "'networkit'} or k.startswith('scipy.sparse'))))"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-c", probe], env=env, cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""
