"""Planning a compute run's batches for N workers (issue 18, part 4).

A run's cascades are grouped into batches that workers take from one queue, one at a time (Celery with
``--prefetch-multiplier=1``, one ``--pool=solo`` worker per GPU). The work of a batch — loading its retweets and
follows, the forward and backward phases, storing the rows — grows linearly with its participants, so the
predicted cost of a batch is its participant count, and the run's wall time is the *makespan* of those costs
over the workers.

With one worker the best plan is the fewest batches (per-batch work repeats for each), which is what
``budget`` gives: batches of at most ``budget`` participants, largest cascades first. With N workers that plan
can leave N − 1 workers idle (a 1M-participant run is one batch), so the planner lowers the batch size to about
``total / (per_worker · N)`` (never below ``min_nodes``), and hands the batches out largest first. Workers that
take the next batch when they finish then run Graham's *longest processing time first* list schedule, whose
makespan is at most the lower bound ``max(total / N, largest cascade)`` plus one batch: with ``per_worker = 4``,
within 25 % of the best possible whenever no single cascade is bigger than a worker's fair share.

Cascades may come in **groups** that a batch should hold whole, with keys in the order the batch's rows are
stored in: the influence measure's batches each rewrite the daily aggregates of every (publisher, day) pair they
touch. With ``groups`` the planner packs whole groups in key order and closes a batch when the next group does
not fit; only a group bigger than a batch is cut, into consecutive batches. Two consecutive batches then hold more
than one batch's target between them, a pair's daily rows are written by one batch, and a batch's rows are one
contiguous range of the aggregates' unique index (publisher first), so that writing them touches about as many
index pages as they fill, however large the index; taken by cascade size, every batch of a 10M-retweet run wrote
its 1M daily rows all over a 951 MB index (``benchmarks/data_layer.md``).

:func:`simulate` replays that schedule for given costs; the tests use it to check the balance with N simulated
workers on heavy-tailed cascade sizes. Pure Python: the web side (``monitor.algorithms.influence``) calls it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping, Sequence

__all__ = ["lower_bound", "plan_batches", "simulate"]


def plan_batches(
    sizes: Mapping[int, int],
    budget: int,
    *,
    workers: int = 1,
    per_worker: int = 4,
    min_nodes: int = 1,
    groups: Mapping[int, Hashable] | None = None,
) -> list[list[int]]:
    """Group the cascades (``sizes``: key -> participants) into batches for ``workers`` workers.

    Each batch holds at most ``budget`` participants (a cascade bigger than that gets a batch of its own);
    with more than one worker the batches are smaller, about ``total / (per_worker * workers)`` participants
    but at least ``min_nodes``, so that every worker has work until near the end. Cascades are taken largest
    first (ties by key) and the batches come out in decreasing size: the order to queue them in.

    ``groups`` (key -> group, every key of ``sizes``; groups comparable with each other, such as tuples of
    numbers) keeps each group's cascades in one batch unless the group alone exceeds a batch's target: groups
    are taken in their order, each group's cascades largest first."""
    if budget < 1:
        raise ValueError(f"budget: at least 1 participant per batch, got {budget}")
    if workers < 1:
        raise ValueError(f"workers: at least 1, got {workers}")
    if per_worker < 1:
        raise ValueError(f"per_worker: at least 1, got {per_worker}")
    total = sum(sizes.values())
    target = budget
    if workers > 1 and total:
        target = min(budget, max(min_nodes, math.ceil(total / (per_worker * workers))))
    order = sorted(sizes, key=lambda k: (-sizes[k], k))
    units = [[key] for key in order] if groups is None else _whole_groups(order, groups)
    batches, loads = _next_fit(units, sizes, target)
    # largest first (stable: equal loads keep the order their cascades came in)
    ranked = sorted(range(len(batches)), key=lambda i: -loads[i])
    return [batches[i] for i in ranked]


def _whole_groups(order: list[int], groups: Mapping[int, Hashable]) -> list[list[int]]:
    """The cascades of each group (largest first, as in ``order``), the groups in their own order."""
    members: dict[Hashable, list[int]] = {}
    for key in order:
        try:
            members.setdefault(groups[key], []).append(key)
        except KeyError:
            raise ValueError(f"groups: cascade {key} has no group") from None
    try:
        return [members[g] for g in sorted(members)]
    except TypeError as exc:
        raise ValueError(f"groups: the groups must be comparable with each other ({exc})") from None


def _next_fit(units: list[list[int]], sizes: Mapping[int, int], target: int) -> tuple[list[list[int]], list[int]]:
    """Next fit over ``units`` (lists of cascades kept together): a batch closes when the next unit does not fit
    in it; a unit bigger than ``target`` starts a batch and is cut into consecutive ones. Returns the batches and
    their loads."""
    batches: list[list[int]] = []
    loads: list[int] = []
    cur: list[int] = []
    used = 0
    for unit in units:
        total = sum(sizes[k] for k in unit)
        for first, key in enumerate(unit):
            n = total if first == 0 else sizes[key]  # a unit that fits goes in whole
            if cur and used + n > target:
                batches.append(cur)
                loads.append(used)
                cur, used = [], 0
            cur.append(key)
            used += sizes[key]
    if cur:
        batches.append(cur)
        loads.append(used)
    return batches, loads


def simulate(costs: Sequence[float], workers: int) -> float:
    """The makespan when ``workers`` workers take the batches (of these ``costs``) in order from one queue,
    each taking the next as soon as it is free."""
    if workers < 1:
        raise ValueError(f"workers: at least 1, got {workers}")
    free = [0.0] * workers
    heapq.heapify(free)
    for c in costs:
        t = heapq.heappop(free)
        heapq.heappush(free, t + float(c))
    return max(free) if costs else 0.0


def lower_bound(sizes: Sequence[float], workers: int) -> float:
    """No schedule of these cascades over ``workers`` workers finishes before this: the total shared evenly,
    or the largest cascade (a cascade is never split)."""
    return max(sum(sizes) / workers, max(sizes, default=0.0))
