"""Shared result helpers of compute/results.py: a top list ranks only what can reach it, and gets the same
accounts, scores and order as ranking every candidate (ties by rank key broken by node, excluded accounts
among the best)."""

from __future__ import annotations

import numpy as np
import pytest

from compute.results import _Excluded, _ranked, _top

pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st


def every_candidate_ranked(nodes, scores, excluded, top):
    keep = (scores > 0) & ~np.isin(nodes, excluded)
    nodes, scores = nodes[keep], scores[keep]
    take = _ranked(nodes, scores)[:top]
    return nodes[take], scores[take]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(300, 20_000),
    st.integers(1, 40),
    st.integers(0, 300),
    st.sampled_from([1, 3, 6]),
)
def test_a_top_list_ranks_only_what_can_reach_it_and_equals_ranking_everything(seed, n, top, n_excluded, digits):
    rng = np.random.default_rng(seed)
    nodes = np.sort(rng.choice(10 * n, n, replace=False)).astype(np.int64)
    scores = np.round(rng.random(n) ** 6, digits)  # rounded: ties by the thousand
    scores[rng.random(n) < 0.2] = 0.0
    # values equal in exact arithmetic that differ in their last bits, as the engines' sums do
    scores *= 1.0 + rng.integers(-3, 4, n) * 2.0**-50
    best = nodes[np.argsort(-scores, kind="stable")[: n_excluded // 2]]
    excluded = np.r_[best, rng.choice(nodes, n_excluded - len(best))]  # half of them among the best
    got = _top(nodes, scores, excluded, top, lambda v: np.zeros(len(v)))
    want = every_candidate_ranked(nodes, scores, excluded, top)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_the_filter_keeps_the_scores_just_under_the_threshold_that_rank_as_equal():
    nodes = np.arange(2_000, dtype=np.int64)
    scores = np.r_[np.linspace(1.0, 0.8, 100), np.zeros(10), np.linspace(0.5, 1e-6, 1_890)]
    # ten accounts that rank as equal (0.75 once rounded to 40 bits), their raw values rising with the node, so
    # the ties go to the lowest nodes, whose raw values are below the 105th largest
    scores[100:110] = 0.75 * (1.0 - np.arange(10, 0, -1) * 2.0**-46)
    got = _top(nodes, scores, np.zeros(0, dtype=np.int64), 105, lambda v: np.zeros(len(v)))
    want = every_candidate_ranked(nodes, scores, np.zeros(0, dtype=np.int64), 105)
    assert np.array_equal(want[0][100:], np.arange(100, 105))
    assert np.array_equal(got[0], want[0])


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1), st.integers(5_000, 40_000), st.integers(1, 40), st.floats(0.05, 0.99), st.integers(0, 39)
)
def test_a_hub_whose_best_are_mostly_excluded_gets_the_list_of_ranking_everything(seed, n, top, share, spared):
    # a hub's row excludes thousands of its best-scored accounts (a share of the best, but for a few spared among
    # them, and some others): the first cut near the top has too few accounts left, so the excluded are left out
    # first and the cut made again; the list is still ranking everything's
    rng = np.random.default_rng(seed)
    nodes = np.sort(rng.choice(10 * n, n, replace=False)).astype(np.int64)
    scores = np.round(rng.random(n) ** 4, 4)
    scores[rng.random(n) < 0.1] = 0.0
    scores *= 1.0 + rng.integers(-3, 4, n) * 2.0**-50
    best = nodes[np.argsort(-scores, kind="stable")[: int(share * n)]]
    best = np.delete(best, rng.choice(len(best), min(spared % top, len(best)), replace=False))
    excluded = np.r_[best, rng.choice(10 * n, 500)]  # and some accounts that are not candidates at all
    got = _top(nodes, scores, excluded, top, lambda v: np.zeros(len(v)))
    want = every_candidate_ranked(nodes, scores, excluded, top)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_membership_is_the_same_by_search_and_by_table():
    rng = np.random.default_rng(7)
    for size in (0, 1, 100, _Excluded.TABLE_FROM - 1, _Excluded.TABLE_FROM, 50_000):
        excluded = rng.integers(0, 100_000, size)
        asked = rng.integers(0, 200_000, 5_000)
        assert np.array_equal(_Excluded(excluded)(asked), np.isin(asked, excluded)), size
