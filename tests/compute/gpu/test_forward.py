"""The GPU forward phase beyond the shared test bodies: generated Twitter-like collections against the CPU
(edges equal as sets per cascade), cascades stored out of time order, chunking, and Twitter16 end to end."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward
from compute.build import build_cascades
from compute.generators import twitter_collection

from ..helpers import edge_sets, shuffled_within_cascades


def _collection(seed: int, scale: float = 0.002):
    tweets, graph = twitter_collection(scale=scale, seed=seed)
    cascades, _ = build_cascades(tweets)
    return cascades, graph


@pytest.mark.parametrize("orphans", ["strict", "attach"])
@pytest.mark.parametrize("seed", [1, 2])
def test_it_finds_the_cpu_edges_on_fresh_twitter_like_collections(seed, orphans):
    cascades, graph = _collection(seed)
    cpu = forward(cascades, graph, orphans=orphans, backend="cpu")
    gpu = forward(cascades, graph, orphans=orphans, backend="gpu")
    assert gpu.n_edges == cpu.n_edges > 0
    assert edge_sets(gpu) == edge_sets(cpu)
    # our output keeps the sweep shape, so the backward phase needs no queue on either backend
    assert np.all(gpu.shapes[np.diff(gpu.edge_offsets) > 0] == 2)
    want = backward(cpu, backend="cpu").influence
    got = backward(gpu, backend="gpu").influence
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_it_sorts_participants_by_time_when_the_input_is_not_in_order():
    cascades, graph = _collection(3, scale=0.001)
    shuffled = shuffled_within_cascades(cascades, seed=0)
    for orphans in ("strict", "attach"):
        cpu = forward(shuffled, graph, orphans=orphans, backend="cpu")
        gpu = forward(shuffled, graph, orphans=orphans, backend="gpu")
        assert edge_sets(gpu) == edge_sets(cpu)


def test_it_processes_cascades_in_chunks_when_memory_is_short(monkeypatch):
    cascades, graph = _collection(4, scale=0.001)
    whole = forward(cascades, graph, backend="gpu")
    graph_bytes = graph.user_ids.nbytes + graph.friends_indptr.nbytes + 4 * graph.n_edges
    monkeypatch.setenv("SPREADWATCH_GPU_MEMORY_BYTES", str(int(graph_bytes / 0.7) + 200_000))
    chunked = forward(cascades, graph, backend="gpu")
    assert np.array_equal(chunked.edge_offsets, whole.edge_offsets)
    assert edge_sets(chunked) == edge_sets(whole)


def test_it_ranks_the_twitter16_sample_like_the_cpu():
    from compute.pipeline import graphs_from_inputs

    from ..formats.conftest import TWITTER16

    cpu_g, *_ = graphs_from_inputs([TWITTER16], backend="cpu")
    gpu_g, *_ = graphs_from_inputs([TWITTER16], backend="gpu")
    assert edge_sets(gpu_g) == edge_sets(cpu_g)
    cpu, gpu = backward(cpu_g, backend="cpu"), backward(gpu_g, backend="gpu")
    assert gpu.cyclic.tolist() == cpu.cyclic.tolist()
    np.testing.assert_allclose(gpu.influence, cpu.influence, rtol=1e-12)
