"""Planning a run's batches for N workers: the balance of the schedule the workers run, checked by simulating
N workers on heavy-tailed cascade sizes (issue 18, part 4)."""

from __future__ import annotations

import numpy as np
import pytest

from compute.batching import lower_bound, plan_batches, simulate

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st


def heavy_tailed(n: int, seed: int) -> dict[int, int]:
    """Cascade sizes like real ones: most tiny, a few huge (Pareto, shape 1.2)."""
    rng = np.random.default_rng(seed)
    return {k: int(v) for k, v in enumerate(np.ceil(rng.pareto(1.2, n) * 10).astype(np.int64) + 1)}


def makespan(sizes: dict[int, int], plan: list[list[int]], workers: int) -> float:
    return simulate([sum(sizes[k] for k in b) for b in plan], workers)


def test_one_worker_keeps_the_fewest_batches_under_the_budget():
    sizes = {1: 5, 2: 50, 3: 7, 4: 3, 5: 120}
    assert plan_batches(sizes, 60) == [[5], [2, 3], [1, 4]]
    assert plan_batches(sizes, 1_000) == [[5, 2, 3, 1, 4]]


def test_every_cascade_is_planned_exactly_once_and_batches_come_largest_first():
    sizes = heavy_tailed(5_000, seed=1)
    plan = plan_batches(sizes, 1_000_000, workers=4)
    keys = [k for b in plan for k in b]
    assert sorted(keys) == sorted(sizes)
    loads = [sum(sizes[k] for k in b) for b in plan]
    assert loads == sorted(loads, reverse=True)


@pytest.mark.parametrize("workers", [2, 3, 4, 8])
def test_n_workers_finish_within_a_quarter_of_the_lower_bound(workers):
    sizes = heavy_tailed(20_000, seed=workers)
    # the largest cascade must not dominate for the bound to be about balance: cap it below a fair share
    total = sum(sizes.values())
    sizes = {k: min(v, total // (8 * workers)) for k, v in sizes.items()}
    plan = plan_batches(sizes, 1_000_000, workers=workers)
    best = lower_bound(list(sizes.values()), workers)
    assert makespan(sizes, plan, workers) <= 1.25 * best + 1
    # today's single-worker plan (one batch under the budget) leaves every other worker idle
    one = plan_batches(sizes, 1_000_000)
    assert len(one) == 1 and makespan(sizes, one, workers) == sum(sizes.values())


def test_a_giant_cascade_sets_the_pace_and_the_rest_fit_beside_it():
    sizes = {0: 10_000} | {k: 10 for k in range(1, 1_001)}  # 10,000 of 20,000 participants in one cascade
    plan = plan_batches(sizes, 1_000_000, workers=4, min_nodes=100)
    assert plan[0] == [0]  # queued first
    assert makespan(sizes, plan, 4) == lower_bound(list(sizes.values()), 4) == 10_000


def test_small_runs_keep_batches_of_at_least_min_nodes():
    sizes = {k: 10 for k in range(100)}  # 1,000 participants
    plan = plan_batches(sizes, 1_000_000, workers=8, min_nodes=500)
    assert [sum(sizes[k] for k in b) for b in plan] == [500, 500]


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 5_000), min_size=1, max_size=300),
    workers=st.integers(1, 8),
    budget=st.integers(1, 50_000),
)
def test_the_schedule_is_never_worse_than_the_bound_plus_one_batch(sizes, workers, budget):
    sizes = dict(enumerate(sizes))
    plan = plan_batches(sizes, budget, workers=workers)
    loads = [sum(sizes[k] for k in b) for b in plan]
    assert all(load <= budget or len(b) == 1 for load, b in zip(loads, plan, strict=True))
    # list scheduling: every worker is busy until the last batch starts
    assert simulate(loads, workers) <= sum(loads) / workers + max(loads)


def test_it_refuses_nonsense():
    with pytest.raises(ValueError, match="budget"):
        plan_batches({1: 1}, 0)
    with pytest.raises(ValueError, match="workers"):
        plan_batches({1: 1}, 10, workers=0)
    with pytest.raises(ValueError, match="workers"):
        simulate([1.0], 0)
