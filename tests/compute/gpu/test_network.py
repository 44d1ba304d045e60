"""The GPU network kernels beyond the shared test bodies (tests/compute/algorithms/test_network.py runs those on
both backends): bigger random R-MAT graphs, run-to-run determinism, and the resident device copy."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms import network
from compute.graphs import graph_from_edges

A, B, C = 0.55, 0.1, 0.1


def _rmat(scale: int, factor: int, seed: int):
    rng = np.random.default_rng(seed)
    m = factor << scale
    src = np.zeros(m, np.int64)
    dst = np.zeros(m, np.int64)
    for _ in range(scale):
        r = rng.random(m)
        src = (src << 1) | (r >= A + B)
        dst = (dst << 1) | (((r >= A) & (r < A + B)) | (r >= A + B + C))
    return graph_from_edges(src + 10**12, dst + 10**12, ids=np.arange(1 << scale) + 10**12)


def _rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))) if len(b) else 0.0


@pytest.mark.parametrize("seed", [1, 2])
def test_exact_analyses_equal_the_cpu_on_fresh_rmat_graphs(seed):
    g = _rmat(10, 6, seed)
    for name in ("components", "strong_components"):
        cpu, gpu = getattr(network, name)(g, backend="cpu"), getattr(network, name)(g, backend="gpu")
        assert np.array_equal(cpu.labels, gpu.labels) and np.array_equal(cpu.sizes, gpu.sizes), name
    assert np.array_equal(network.core_numbers(g, backend="cpu"), network.core_numbers(g, backend="gpu"))
    c, d = network.degrees(g, backend="cpu"), network.degrees(g, backend="gpu")
    assert np.array_equal(c.in_degree, d.in_degree) and np.array_equal(c.out_degree, d.out_degree)


@pytest.mark.parametrize("seed", [3, 4])
def test_clustering_and_betweenness_agree_with_the_cpu_on_fresh_rmat_graphs(seed):
    g = _rmat(9, 8, seed)
    c, d = network.clustering(g, backend="cpu"), network.clustering(g, backend="gpu")
    assert np.array_equal(c.triangles, d.triangles)
    assert _rel(d.local, c.local) <= 1e-9 and abs(d.transitivity - c.transitivity) <= 1e-12
    for samples in (0, 40):
        c = network.betweenness(g, samples=samples, seed=seed, backend="cpu")
        d = network.betweenness(g, samples=samples, seed=seed, backend="gpu")
        assert np.array_equal(c.sources, d.sources)
        assert _rel(d.values, c.values) <= 1e-9


def test_betweenness_is_bitwise_the_same_from_run_to_run():
    g = _rmat(9, 8, 5)
    a = network.betweenness(g, samples=100, seed=1, backend="gpu").values
    for _ in range(2):
        assert np.array_equal(
            a.view(np.int64), network.betweenness(g, samples=100, seed=1, backend="gpu").values.view(np.int64)
        )


def test_the_graph_is_uploaded_once_per_graph_object():
    from compute.gpu import network as twin

    g = _rmat(8, 4, 6)
    network.degrees(g, backend="gpu")
    first = twin._resident[g]
    network.components(g, backend="gpu")
    assert twin._resident[g] is first


def test_a_neighbourhood_walks_either_direction_like_the_cpu():
    g = _rmat(9, 4, 7)
    hub = int(np.argmax(np.diff(g.indptr)))
    for direction in ("out", "in", "both"):
        c = network.neighbourhood(g, hub, depth=2, direction=direction, backend="cpu")
        d = network.neighbourhood(g, hub, depth=2, direction=direction, backend="gpu")
        assert np.array_equal(c.graph.ids, d.graph.ids) and np.array_equal(c.distance, d.distance), direction
