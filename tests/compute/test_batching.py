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


def batches_of_each_group(plan: list[list[int]], groups: dict[int, int]) -> dict[int, set[int]]:
    seen: dict[int, set[int]] = {}
    for i, b in enumerate(plan):
        for k in b:
            seen.setdefault(groups[k], set()).add(i)
    return seen


def test_grouped_cascades_stay_in_one_batch_where_plain_size_order_spreads_them():
    # 40 groups (publisher, day pairs) of 25 cascades each, sizes shuffled across groups
    rng = np.random.default_rng(3)
    sizes = {k: int(v) for k, v in enumerate(rng.integers(1, 100, 1_000))}
    groups = {k: k % 40 for k in sizes}
    budget = sum(sizes.values()) // 8
    plain = batches_of_each_group(plan_batches(sizes, budget), groups)
    assert min(len(b) for b in plain.values()) > 1  # size order alone puts every group in several batches
    plan = plan_batches(sizes, budget, groups=groups)
    assert sorted(k for b in plan for k in b) == sorted(sizes)
    assert all(len(b) == 1 for b in batches_of_each_group(plan, groups).values())
    loads = [sum(sizes[k] for k in b) for b in plan]
    assert max(loads) <= budget and loads == sorted(loads, reverse=True)
    # each batch's groups are a contiguous range of the group keys: its rows one range of the aggregates' index
    for b in plan:
        keys = sorted({groups[k] for k in b})
        assert keys == list(range(keys[0], keys[-1] + 1))


def test_a_group_bigger_than_a_batch_is_cut_into_consecutive_batches_and_the_others_stay_whole():
    sizes = {k: 10 for k in range(100)}  # group 0: 60 cascades (600), groups 1-4: 10 each (100)
    groups = {k: 0 if k < 60 else 1 + (k - 60) // 10 for k in sizes}
    plan = plan_batches(sizes, 250, groups=groups)
    seen = batches_of_each_group(plan, groups)
    assert len(seen[0]) == 3  # 600 participants over batches of at most 250
    assert all(len(seen[g]) == 1 for g in range(1, 5))
    assert all(sum(sizes[k] for k in b) <= 250 for b in plan)


@settings(max_examples=60, deadline=None)
@given(
    cascades=st.lists(st.tuples(st.integers(1, 500), st.integers(0, 30)), min_size=1, max_size=300),
    workers=st.integers(1, 8),
    budget=st.integers(500, 20_000),
)
def test_grouped_plans_keep_every_group_that_fits_whole_and_batches_at_least_half_full(cascades, workers, budget):
    sizes = {k: n for k, (n, _) in enumerate(cascades)}
    groups = {k: g for k, (_, g) in enumerate(cascades)}
    plan = plan_batches(sizes, budget, workers=workers, groups=groups)
    assert sorted(k for b in plan for k in b) == sorted(sizes)
    total = sum(sizes.values())
    target = budget if workers == 1 else min(budget, max(1, -(-total // (4 * workers))))
    group_totals = {g: sum(n for k, n in sizes.items() if groups[k] == g) for g in set(groups.values())}
    for g, where in batches_of_each_group(plan, groups).items():
        if group_totals[g] <= target:
            assert len(where) == 1, f"group {g} ({group_totals[g]} <= {target}) in batches {sorted(where)}"
    loads = [sum(sizes[k] for k in b) for b in plan]
    assert all(load <= target or len(b) == 1 for load, b in zip(loads, plan, strict=True))
    # next fit: any two batches hold more than one target between them, so there are at most 2 x total/target + 1
    assert len(plan) <= 2 * total / target + 1


def test_it_refuses_nonsense():
    with pytest.raises(ValueError, match="budget"):
        plan_batches({1: 1}, 0)
    with pytest.raises(ValueError, match="workers"):
        plan_batches({1: 1}, 10, workers=0)
    with pytest.raises(ValueError, match="workers"):
        simulate([1.0], 0)
    with pytest.raises(ValueError, match="cascade 2 has no group"):
        plan_batches({1: 1, 2: 1}, 10, groups={1: "a"})
    with pytest.raises(ValueError, match="groups must be comparable"):
        plan_batches({1: 1, 2: 1}, 10, groups={1: "a", 2: 3})
