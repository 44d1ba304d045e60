"""The GPU twin's host-side driver, run without a GPU on a NumPy stand-in for CuPy whose kernels transliterate
the twin's CUDA (tests/compute/fake_cupy.py): it must give the CPU reference's RR sets, picks and Monte-Carlo runs,
through chunking, frontier segments and hash-table growth. The real kernels are checked on a GPU by
tests/compute/gpu/test_influence_max.py."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import compute.algorithms.influence_max as im
from compute.graphs import graph_from_edges

from ..fake_cupy import install


@pytest.fixture
def twin(monkeypatch):
    return install(monkeypatch)


@pytest.fixture
def imgpu(twin):
    """The twin's IMGPU traversal (compute/gpu/_imgpu.py), as loaded with the twin on the stand-in."""
    return importlib.import_module("compute.gpu._imgpu")


def model_for(seed: int, p, weighted: bool = False, n: int = 120, m: int = 700):
    rng = np.random.default_rng(seed)
    follower = rng.integers(0, n, m)
    followee = np.minimum((rng.pareto(1.2, m) * 5).astype(np.int64), n - 1)
    keep = follower != followee
    g = graph_from_edges(follower[keep] + 7, followee[keep] + 7)
    if isinstance(p, str) and p == "edges":
        p = rng.uniform(0.0, 0.4, g.n_edges)
    weights = rng.integers(0, 9, g.n_nodes).astype(float) if weighted else None
    return im.ic_model(g, p=p, weights=weights)


@pytest.mark.parametrize("p,weighted", [(0.1, False), ("wc", False), ("edges", True), (0.5, False)])
def test_the_twins_rr_sets_are_the_cpus(twin, monkeypatch, p, weighted):
    monkeypatch.setattr(twin, "CHUNK_SETS", 300)  # several chunks
    monkeypatch.setattr(twin, "SEGMENT_EDGES", 40)  # several segments per level
    model = model_for(1, p, weighted)
    cpu = im.rr_sets_cpu(model, seed=4, start=17, stop=1000)
    gpu = twin.rr_sets(model, seed=4, start=17, stop=1000)
    assert np.array_equal(gpu.indptr, cpu.indptr) and np.array_equal(gpu.nodes, cpu.nodes)
    assert gpu.edges_touched == cpu.edges_touched and gpu.nodes.dtype == np.int32


def test_the_twins_greedy_imm_and_baselines_are_the_cpus(twin):
    model = model_for(2, 0.15, n=80, m=400)
    rr = im.rr_sets_cpu(model, seed=1, start=0, stop=1500)
    a = im.select_seeds_cpu(model, rr, k=12)
    b = twin.select_seeds(model, rr, k=12)
    assert a.nodes.tolist() == b.nodes.tolist() and np.array_equal(a.covered, b.covered)
    cpu = im.influence_max_cpu(model, k=4, eps=0.5, seed=3)
    gpu = twin.influence_max(model, k=4, eps=0.5, seed=3)
    assert gpu.nodes.tolist() == cpu.nodes.tolist() and np.array_equal(gpu.gains, cpu.gains)
    assert gpu.rr_sets == cpu.rr_sets and gpu.backend == "gpu"
    with pytest.raises(ValueError, match="backend"):
        twin.rr_sets(model, stop=3, backend="cpu")


def test_the_twins_baseline_gains_are_the_cpus(twin, monkeypatch):
    monkeypatch.setattr(im, "BASELINE_RR_SETS", 800)
    monkeypatch.setattr(twin, "BASELINE_RR_SETS", 800)
    model = model_for(3, 0.2, n=80, m=400)
    for method in ("degree", "random"):
        cpu = im.influence_max_cpu(model, k=5, method=method, seed=2)
        gpu = twin.influence_max(model, k=5, method=method, seed=2)
        assert gpu.nodes.tolist() == cpu.nodes.tolist() and np.array_equal(gpu.gains, cpu.gains)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_twins_evaluator_runs_the_cpus_cascades(twin, monkeypatch, weighted):
    monkeypatch.setattr(twin, "SEGMENT_EDGES", 30)
    monkeypatch.setenv("SPREADWATCH_GPU_MEMORY_BYTES", str(4 * 100))  # a few runs per chunk
    model = model_for(4, 0.2, weighted, n=100, m=500)
    seeds = np.array([0, 3, 50])
    a = im.evaluate_spread_cpu(model, seeds, runs=60, seed=5)
    b = twin.evaluate_spread(model, seeds, runs=60, seed=5)
    assert b.mean == pytest.approx(a.mean, rel=1e-12) and b.std == pytest.approx(a.std, rel=1e-9)


def test_the_twins_paired_comparison_is_the_cpus(twin, monkeypatch):
    monkeypatch.setattr(twin, "SEGMENT_EDGES", 30)
    model = model_for(5, 0.2, True, n=100, m=500)
    sets = [np.array([0, 3, 50]), np.array([3, 0, 50]), np.array([1, 2])]
    a = im.compare_spreads_cpu(model, sets, runs=80, seed=6)
    b = twin.compare_spreads(model, sets, runs=80, seed=6)
    assert np.allclose(b.diff, a.diff, rtol=1e-12, atol=1e-12) and b.diff[0, 1] == 0.0
    assert [e.mean for e in b.estimates] == pytest.approx([e.mean for e in a.estimates], rel=1e-12)


@pytest.mark.parametrize("p,weighted", [(0.1, False), (0.3, False), ("wc", False), ("edges", True)])
def test_the_twins_imgpu_traversal_picks_the_cpus_seeds(twin, p, weighted):
    model = model_for(6, p, weighted)  # integer weights: every reach is an exact sum on both engines
    nodes, gains, notes = im.imgpu_cpu(model, k=6, snapshots=15, seed=3)
    res = twin.influence_max(model, k=6, method="imgpu", snapshots=15, seed=3)
    assert res.nodes.tolist() == nodes.tolist() and np.array_equal(res.gains, gains)
    assert res.notes == notes and res.backend == "gpu" and res.snapshots == 15


def test_the_twins_imgpu_sketches_the_same_snapshots_as_the_cpu(twin, imgpu, monkeypatch):
    monkeypatch.setattr(im, "EXACT_ENTRIES", 40)
    monkeypatch.setattr(imgpu, "EXACT_ENTRIES", 40)
    model = model_for(7, 0.35)
    nodes, gains, notes = im.imgpu_cpu(model, k=5, snapshots=12, seed=2)
    res = twin.influence_max(model, k=5, method="imgpu", snapshots=12, seed=2)
    assert "sketches in 0" not in notes[0] and res.notes == notes
    assert res.nodes.tolist() == nodes.tolist() and np.allclose(res.gains, gains, rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_twins_strong_components_are_scipys_named_by_their_smallest_node(imgpu, seed):
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(seed)
    size, m = 300, 420 + 60 * seed  # around one edge per node: cycles, chains and many trivial components
    a, b = rng.integers(0, size, m), rng.integers(0, size, m)
    label = np.asarray(imgpu._scc_min_labels(size, a.astype(np.int64), b.astype(np.int64)))
    nc, ref = connected_components(csr_array((np.ones(m), (a, b)), shape=(size, size)), connection="strong")
    canon = im.canonical_labels(ref.astype(np.int64), nc)
    assert nc < size - 20  # some components have several nodes
    smallest = np.full(nc, size)
    np.minimum.at(smallest, canon, np.arange(size))
    assert np.array_equal(label, smallest[canon])


def test_a_node_between_two_cycles_is_its_own_component(imgpu):
    # 3 is reached from the cycle {2, 4} (so it carries label 2 after propagation) and reaches the cycle {0, 1}
    a = np.array([0, 1, 2, 4, 4, 3], dtype=np.int64)
    b = np.array([1, 0, 4, 2, 3, 0], dtype=np.int64)
    assert np.asarray(imgpu._scc_min_labels(5, a, b)).tolist() == [0, 0, 2, 3, 2]


def test_the_twins_imgpu_sweeps_snapshots_in_groups_that_fit_its_memory(twin, monkeypatch):
    monkeypatch.setenv("SPREADWATCH_GPU_MEMORY_BYTES", str(48 * 300))  # room for ~300 list entries a group
    model = model_for(8, 0.3)
    nodes, gains, notes = im.imgpu_cpu(model, k=5, snapshots=10, seed=1)
    res = twin.influence_max(model, k=5, method="imgpu", snapshots=10, seed=1)
    assert res.nodes.tolist() == nodes.tolist() and np.array_equal(res.gains, gains) and res.notes == notes


def test_the_twins_cap_on_rr_sets_and_its_stop_between_chunks_are_the_cpus(twin, monkeypatch):
    monkeypatch.setattr(twin, "CHUNK_SETS", 300)
    model = model_for(3, 0.1)
    with pytest.raises(im.RRSetLimitExceeded, match=r"IMM with k=500 and eps=1e-09 needs .* RR sets in round 1"):
        twin.imm_sample_size(model, k=500, eps=1e-9, seed=1, max_sets=10**6)
    cpu = im.imm_sample_size_cpu(model, k=4, eps=0.5, seed=3)
    assert cpu.sampling_rr_sets > 600
    calls = []
    gpu = twin.imm_sample_size(model, k=4, eps=0.5, seed=3, stop=lambda: calls.append(1))
    assert (gpu.theta, gpu.sampling_rr_sets, gpu.sampling_entries, gpu.lower_bound) == (
        cpu.theta, cpu.sampling_rr_sets, cpu.sampling_entries, cpu.lower_bound,
    )  # fmt: skip
    assert len(calls) >= cpu.sampling_rr_sets // 300 - cpu.rounds - 1  # between the device's chunks
    with pytest.raises(im.RRSetLimitExceeded, match=r"k=4 and eps=0.5 needs .* RR sets for node selection"):
        twin.influence_max(model, k=4, eps=0.5, seed=3, max_sets=cpu.theta - 1)
