"""The GPU twin of influence maximisation against the CPU reference: the same RR sets bit for bit (fresh random
graphs, uniform, weighted-cascade and per-edge probabilities, node weights), the same greedy picks, the same IMM
seed set for a fixed seed, the evaluator's spreads and paired differences, and IMGPU's traversal (the same
seeds from the same snapshots, exact and sketched)."""

from __future__ import annotations

import numpy as np
import pytest

import compute.algorithms.influence_max as im
from compute.graphs import graph_from_edges


def fresh_model(seed: int, n: int, m: int, p, weighted: bool = False):
    rng = np.random.default_rng(seed)
    follower = rng.integers(0, n, m)
    followee = np.minimum((rng.pareto(1.2, m) * 6).astype(np.int64), n - 1)
    keep = follower != followee
    g = graph_from_edges(follower[keep] * 3 + 11, followee[keep] * 3 + 11)
    if isinstance(p, str) and p == "edges":
        p = rng.uniform(0.0, 0.3, g.n_edges)
    weights = rng.integers(0, 20, g.n_nodes).astype(float) if weighted else None
    return im.ic_model(g, p=p, weights=weights)


CASES = [
    ("uniform", 0.05, False),
    ("uniform-high", 0.3, False),
    ("wc", "wc", False),
    ("per-edge-weighted", "edges", True),
]


@pytest.mark.parametrize("name,p,weighted", CASES)
def test_rr_sets_are_the_cpus_bit_for_bit(name, p, weighted):
    seed = int(np.random.default_rng().integers(1 << 30))  # fresh inputs every run
    model = fresh_model(seed, 3000, 20000, p, weighted)
    for start, stop in ((0, 40000), (12345, 20000)):
        cpu = im.rr_sets(model, seed=seed, start=start, stop=stop, backend="cpu")
        gpu = im.rr_sets(model, seed=seed, start=start, stop=stop, backend="gpu")
        assert np.array_equal(gpu.indptr, cpu.indptr), (name, seed)
        assert np.array_equal(gpu.nodes, cpu.nodes), (name, seed)
        assert gpu.edges_touched == cpu.edges_touched


def test_rr_sets_cross_chunks_and_table_growth(monkeypatch):
    import compute.gpu.influence_max as twin

    monkeypatch.setattr(twin, "CHUNK_SETS", 1000)
    monkeypatch.setattr(twin, "SEGMENT_EDGES", 64)
    model = fresh_model(7, 2000, 30000, 0.4)  # big sets: the hash table must grow
    cpu = im.rr_sets(model, seed=3, start=0, stop=5000, backend="cpu")
    gpu = im.rr_sets(model, seed=3, start=0, stop=5000, backend="gpu")
    assert np.array_equal(gpu.indptr, cpu.indptr) and np.array_equal(gpu.nodes, cpu.nodes)


@pytest.mark.parametrize("name,p,weighted", CASES)
def test_greedy_and_imm_pick_the_cpus_seeds(name, p, weighted):
    seed = int(np.random.default_rng().integers(1 << 30))
    model = fresh_model(seed, 5000, 30000, p, weighted)
    rr = im.rr_sets(model, seed=seed, start=0, stop=50000, backend="cpu")
    a = im.select_seeds(model, rr, k=20, backend="cpu")
    b = im.select_seeds(model, rr, k=20, backend="gpu")
    assert a.nodes.tolist() == b.nodes.tolist() and np.array_equal(a.covered, b.covered), (name, seed)
    cpu = im.influence_max(model, k=10, eps=0.3, seed=seed, backend="cpu")
    gpu = im.influence_max(model, k=10, eps=0.3, seed=seed, backend="gpu")
    assert gpu.backend == "gpu"
    assert gpu.nodes.tolist() == cpu.nodes.tolist() and np.allclose(gpu.gains, cpu.gains, rtol=1e-12)
    assert (gpu.rr_sets, gpu.sampling_rr_sets) == (cpu.rr_sets, cpu.sampling_rr_sets)


@pytest.mark.parametrize("method", ["degree", "random"])
def test_baselines_get_the_cpus_gains(method):
    model = fresh_model(9, 4000, 25000, 0.05)
    cpu = im.influence_max(model, k=10, method=method, seed=2, backend="cpu")
    gpu = im.influence_max(model, k=10, method=method, seed=2, backend="gpu")
    assert gpu.nodes.tolist() == cpu.nodes.tolist() and np.allclose(gpu.gains, cpu.gains, rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_evaluator_gives_the_cpus_runs(weighted):
    seed = int(np.random.default_rng().integers(1 << 30))
    model = fresh_model(seed, 3000, 20000, 0.1, weighted)
    seeds = np.array([0, 1, 2, 50, 400])
    a = im.evaluate_spread(model, seeds, runs=3000, seed=seed, backend="cpu")
    b = im.evaluate_spread(model, seeds, runs=3000, seed=seed, backend="gpu")
    assert b.mean == pytest.approx(a.mean, rel=1e-12) and b.std == pytest.approx(a.std, rel=1e-9)


def test_the_paired_comparison_gives_the_cpus_differences():
    seed = int(np.random.default_rng().integers(1 << 30))
    model = fresh_model(seed, 3000, 20000, 0.1)
    sets = [np.array([0, 1, 2, 50]), np.array([0, 1, 2]), np.array([7, 400])]
    a = im.compare_spreads(model, sets, runs=2000, seed=seed, backend="cpu")
    b = im.compare_spreads(model, sets, runs=2000, seed=seed, backend="gpu")
    assert np.array_equal(b.diff, a.diff) and np.array_equal(b.diff_low, a.diff_low)
    assert b.diff[1, 0] < 0 and b.diff_high[1, 0] <= 0


def test_the_evaluator_chunks_runs_to_its_memory_budget(monkeypatch):
    monkeypatch.setenv("SPREADWATCH_GPU_MEMORY_BYTES", str(64 * 1024))
    model = fresh_model(5, 3000, 20000, 0.1)
    a = im.evaluate_spread(model, np.array([0, 1]), runs=700, seed=4, backend="cpu")
    b = im.evaluate_spread(model, np.array([0, 1]), runs=700, seed=4, backend="gpu")
    assert b.mean == a.mean and b.std == pytest.approx(a.std, rel=1e-12)


@pytest.mark.parametrize("name,p,weighted", CASES)
def test_imgpu_traversal_picks_the_cpus_seeds(name, p, weighted):
    seed = int(np.random.default_rng().integers(1 << 30))
    model = fresh_model(seed, 1500, 9000, p, weighted)  # integer weights: exact sums on both engines
    cpu = im.influence_max(model, k=8, method="imgpu", snapshots=30, seed=seed, backend="cpu")
    gpu = im.influence_max(model, k=8, method="imgpu", snapshots=30, seed=seed, backend="gpu")
    assert gpu.backend == "gpu" and gpu.notes == cpu.notes, seed
    assert gpu.nodes.tolist() == cpu.nodes.tolist() and np.array_equal(gpu.gains, cpu.gains), seed


def test_imgpu_sketches_the_snapshots_the_cpu_sketches(monkeypatch):
    import compute.gpu._imgpu as imgpu

    monkeypatch.setattr(im, "EXACT_ENTRIES", 300)
    monkeypatch.setattr(imgpu, "EXACT_ENTRIES", 300)
    model = fresh_model(9, 1500, 9000, 0.3)
    cpu = im.influence_max(model, k=6, method="imgpu", snapshots=12, seed=4, backend="cpu")
    gpu = im.influence_max(model, k=6, method="imgpu", snapshots=12, seed=4, backend="gpu")
    assert "sketches in 0" not in cpu.notes[0] and gpu.notes == cpu.notes
    assert gpu.nodes.tolist() == cpu.nodes.tolist() and np.allclose(gpu.gains, cpu.gains, rtol=1e-9)


def test_imgpu_strong_components_are_scipys():
    import cupy as cp
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import connected_components

    import compute.gpu._imgpu as imgpu

    rng = np.random.default_rng()
    size, m = 20000, 30000
    a, b = rng.integers(0, size, m), rng.integers(0, size, m)
    label = imgpu._scc_min_labels(size, cp.asarray(a), cp.asarray(b)).get()
    nc, ref = connected_components(csr_array((np.ones(m), (a, b)), shape=(size, size)), connection="strong")
    canon = im.canonical_labels(ref.astype(np.int64), nc)
    smallest = np.full(nc, size)
    np.minimum.at(smallest, canon, np.arange(size))
    assert np.array_equal(label, smallest[canon])


def test_the_twin_keeps_the_cpus_cap_on_rr_sets_and_asks_stop_between_chunks(monkeypatch):
    import compute.gpu.influence_max as twin

    model = fresh_model(9, 2000, 12000, 0.05)
    with pytest.raises(im.RRSetLimitExceeded, match=r"IMM with k=500 and eps=1e-09 needs .* RR sets in round 1"):
        im.imm_sample_size(model, k=500, eps=1e-9, seed=1, backend="gpu", max_sets=10**6)
    cpu = im.imm_sample_size(model, k=5, eps=0.3, seed=2, backend="cpu")
    monkeypatch.setattr(twin, "CHUNK_SETS", 1000)
    calls = []
    gpu = im.imm_sample_size(model, k=5, eps=0.3, seed=2, backend="gpu", stop=lambda: calls.append(1))
    assert (gpu.theta, gpu.sampling_rr_sets, gpu.sampling_entries, gpu.lower_bound) == (
        cpu.theta, cpu.sampling_rr_sets, cpu.sampling_entries, cpu.lower_bound,
    )  # fmt: skip
    assert len(calls) >= cpu.sampling_rr_sets // 1000 - cpu.rounds - 1  # between the device's chunks
    with pytest.raises(im.RRSetLimitExceeded, match=r"k=5 and eps=0.3 needs .* RR sets for node selection"):
        im.influence_max(model, k=5, eps=0.3, seed=2, backend="gpu", max_sets=cpu.theta - 1)

    class Enough(Exception):
        pass

    def stop():
        raise Enough()

    with pytest.raises(Enough):  # the stop between the device's chunks ends the run
        im.influence_max(model, k=5, eps=0.3, seed=2, backend="gpu", stop=stop)
    rounds = []
    im.influence_max(model, k=3, method="imgpu", snapshots=4, seed=2, backend="gpu", stop=lambda: rounds.append(1))
    assert len(rounds) == 3  # before each round
