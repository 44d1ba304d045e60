"""The GPU pass over both phases beyond the shared test bodies: it reads the forward phase's edges where they
are on the device, gives bitwise what the two GPU phases give apart, and falls back to them, then to the CPU,
when memory is short."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward
from compute.algorithms.influence import influence
from compute.build import build_cascades
from compute.generators import twitter_collection

from ..helpers import edge_sets, shuffled_within_cascades


def _collection(seed: int, scale: float = 0.002):
    tweets, graph = twitter_collection(scale=scale, seed=seed)
    cascades, _ = build_cascades(tweets)
    return cascades, graph


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("orphans", ["strict", "attach"])
def test_it_keeps_the_edges_on_the_device_and_gives_the_two_phases_numbers_bitwise(monkeypatch, orphans):
    import compute.gpu.influence as twin

    seen = []
    real = twin.prepare

    def spy(graphs, timer=None, on_device=None):
        seen.append(on_device is not None)
        return real(graphs, timer, on_device=on_device)

    monkeypatch.setattr(twin, "prepare", spy)
    cascades, graph = _collection(1)
    res = influence(cascades, graph, orphans=orphans, backend="gpu")
    assert seen == [True]  # one pass, prepared from the forward phase's device arrays
    graphs = forward(cascades, graph, orphans=orphans, backend="gpu")
    assert np.array_equal(res.graphs.edge_offsets, graphs.edge_offsets)
    assert np.array_equal(res.graphs.edge_src, graphs.edge_src) and np.array_equal(res.graphs.edge_dst, graphs.edge_dst)
    assert np.array_equal(_bits(res.influence), _bits(backward(graphs, backend="gpu").influence))
    cpu = influence(cascades, graph, orphans=orphans, backend="cpu")
    assert edge_sets(res.graphs) == edge_sets(cpu.graphs)
    np.testing.assert_allclose(res.influence, cpu.influence, rtol=1e-12)


def test_it_orders_nodes_on_the_host_when_the_input_is_not_in_time_order():
    cascades, graph = _collection(3, scale=0.001)
    shuffled = shuffled_within_cascades(cascades, seed=0)
    gpu = influence(shuffled, graph, backend="gpu")
    cpu = influence(shuffled, graph, backend="cpu")
    assert edge_sets(gpu.graphs) == edge_sets(cpu.graphs)
    np.testing.assert_allclose(gpu.influence, cpu.influence, rtol=1e-12)


def test_it_runs_the_phases_apart_when_the_batch_does_not_fit_at_once(monkeypatch):
    cascades, graph = _collection(4, scale=0.001)
    whole = influence(cascades, graph, backend="gpu")
    graph_bytes = graph.user_ids.nbytes + graph.friends_indptr.nbytes + 4 * graph.n_edges
    # room for the graph and a few cascades at a time: the forward twin chunks, the backward twin uploads
    monkeypatch.setenv("SPREADWATCH_GPU_MEMORY_BYTES", str(int(graph_bytes / 0.7) + 200_000))
    chunked = influence(cascades, graph, backend="gpu")
    assert edge_sets(chunked.graphs) == edge_sets(whole.graphs)
    np.testing.assert_allclose(chunked.influence, whole.influence, rtol=1e-12)


def test_it_runs_everything_on_the_cpu_when_the_graph_does_not_fit(monkeypatch, caplog):
    cascades, graph = _collection(5, scale=0.001)
    monkeypatch.setenv("SPREADWATCH_GPU_MEMORY_BYTES", "1000")
    res = influence(cascades, graph, backend="gpu")
    cpu = influence(cascades, graph, backend="cpu")
    assert edge_sets(res.graphs) == edge_sets(cpu.graphs)
    np.testing.assert_allclose(res.influence, cpu.influence, rtol=1e-12)
    assert "could not hold" in caplog.text
