"""The GPU backward phase beyond the shared test bodies: bigger random inputs, run-to-run determinism, chunking
and the CPU fallback for a cascade the device cannot hold."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from compute.algorithms.backward import backward
from compute.generators import random_spreading_graphs

from ..helpers import given_graphs


def _rel_err(got: np.ndarray, want: np.ndarray) -> float:
    """Largest per-element relative error (NaN where either side is NaN counts as a mismatch unless both are)."""
    both_nan = np.isnan(got) & np.isnan(want)
    if np.any(np.isnan(got) != np.isnan(want)):
        return np.inf
    g, w = got[~both_nan], want[~both_nan]
    return float(np.max(np.abs(g - w) / np.maximum(np.abs(w), 1e-300))) if len(w) else 0.0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_it_matches_the_cpu_on_fresh_random_rsg_graphs(seed):
    g = random_spreading_graphs("rsg", scale=0.002, seed=seed)
    cpu = backward(g, backend="cpu").influence
    gpu = backward(g, backend="gpu").influence
    assert _rel_err(gpu, cpu) <= 1e-12


@pytest.mark.parametrize("seed", [4, 5])
def test_it_matches_the_cpu_on_fresh_seibert_cascades(seed):
    g = random_spreading_graphs("seibert", scale=0.5, seed=seed)
    assert _rel_err(backward(g, backend="gpu").influence, backward(g, backend="cpu").influence) <= 1e-12


def test_it_gives_bitwise_identical_results_from_run_to_run():
    g = random_spreading_graphs("rsg", scale=0.003, seed=11)
    a = backward(g, backend="gpu").influence
    for _ in range(3):
        assert np.array_equal(a.view(np.int64), backward(g, backend="gpu").influence.view(np.int64))


def test_it_handles_a_graph_larger_than_shared_memory():
    # one Algorithm 10 graph of 30.5K nodes: shares beyond the 29K that fit in shared memory go to global memory
    from compute.generators.rsg import generate_n_dags

    g = generate_n_dags(1, 30_500, 30_500, 0.0005, seed=3)
    assert g.cascades.sizes.max() == 30_500
    assert _rel_err(backward(g, backend="gpu").influence, backward(g, backend="cpu").influence) <= 1e-12


def test_it_processes_inputs_in_chunks_when_memory_is_short(monkeypatch):
    from compute.gpu.backward import device_bytes  # imports CuPy: only where the GPU tests run

    g = random_spreading_graphs("rsg", scale=0.002, seed=5)
    whole = backward(g, backend="gpu").influence
    biggest = int(device_bytes(g.cascades.sizes, np.diff(g.edge_offsets)).max())
    monkeypatch.setenv("SPREADWATCH_GPU_MEMORY_BYTES", str(biggest * 3))
    chunked = backward(g, backend="gpu")
    assert not len(chunked.cpu_fallback)
    assert np.array_equal(chunked.influence.view(np.int64), whole.view(np.int64))


def test_it_runs_a_cascade_too_big_for_the_device_on_the_cpu_and_says_so(monkeypatch, caplog):
    from compute.gpu.backward import device_bytes

    g = random_spreading_graphs("rsg", scale=0.002, seed=6)
    sizes = device_bytes(g.cascades.sizes, np.diff(g.edge_offsets))
    big = int(np.argmax(sizes))
    monkeypatch.setenv("SPREADWATCH_GPU_MEMORY_BYTES", str(int(np.sort(sizes)[-2]) + 1))
    with caplog.at_level(logging.WARNING, logger="compute.gpu"):
        res = backward(g, backend="gpu")
    assert res.cpu_fallback.tolist() == [big]
    assert "do not fit on the GPU" in caplog.text
    assert any("too large for the GPU" in line for line in res.lines())
    assert _rel_err(res.influence, backward(g, backend="cpu").influence) <= 1e-12


def test_it_orders_given_graphs_on_the_host_and_applies_the_cycle_policy():
    # a DAG in no sweep shape, a cyclic cascade with times and a plain chain, in one batch
    sg = given_graphs(
        [
            ([1, 2, 3, 4], [(0, 2), (2, 1), (0, 1), (1, 3), (2, 3)], 3),
            ([5, 6, 7], [(0, 1), (1, 2), (2, 0), (1, 0)], 0),
            ([1, 1], [(1, 0)], 0),
        ],
        times=[[4, 2, 3, 0], [0, 1, 2], [0, 1]],
    )
    cpu, gpu = backward(sg, backend="cpu"), backward(sg, backend="gpu")
    assert gpu.cyclic.tolist() == cpu.cyclic.tolist() == [1]
    assert gpu.dropped_edges == cpu.dropped_edges
    assert _rel_err(gpu.influence, cpu.influence) <= 1e-12
