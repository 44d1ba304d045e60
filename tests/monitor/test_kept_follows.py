"""The follow edges an import keeps in memory (``monitor.kept_follows``): exact answers however many parts, runs
merged as they come, every edge handed back once."""

from __future__ import annotations

import numpy as np
import pytest

from monitor.kept_follows import KeptFollows


def _edges(rng, n, lo, hi):
    return rng.integers(lo, hi, n), rng.integers(lo, hi, n)


def test_a_later_part_is_told_exactly_which_of_its_follows_earlier_parts_kept_across_many_parts():
    """Forty parts, each kept as a run, merged into a few: the answer for every edge asked is whether some part
    gave it, whatever the followers repeated and the order asked in."""
    rng = np.random.default_rng(11)
    kept = KeptFollows()
    given: set[tuple[int, int]] = set()
    for _ in range(40):
        fr, fe = _edges(rng, 300, 1, 400)
        kept.add(fr, fe)
        given |= set(zip(fr.tolist(), fe.tolist()))
    assert len(kept.runs) <= 8  # merged as they came: O(log parts) runs, not one per part
    asked = _edges(rng, 20_000, 0, 420)
    found = kept.stored(*asked)
    expected = [(a, b) in given for a, b in zip(*(x.tolist() for x in asked))]
    assert found.tolist() == expected and 0 < sum(expected) < len(expected)


def test_only_the_follows_of_followers_an_earlier_part_gave_are_looked_up(monkeypatch):
    """A follows file grouped by follower repeats a follower only across a part's boundary: the edges of
    followers no earlier part gave are answered 'not kept' without a search in the runs."""
    kept = KeptFollows()
    kept.add(np.array([5, 5, 6]), np.array([1, 2, 3]))
    searched = []
    real = np.searchsorted
    monkeypatch.setattr(
        np, "searchsorted", lambda a, v, *args, **kw: (searched.append(len(v)), real(a, v, *args, **kw))[1]
    )
    found = kept.stored(np.array([6, 7, 8, 9]), np.array([3, 1, 2, 4]))
    assert found.tolist() == [True, False, False, False]
    assert sum(searched) <= 1 + 4  # the followers' filter (4 asked), then one edge in the one run


def test_the_follows_kept_in_separate_windows_answer_and_come_back_as_given():
    """Pks far apart (above 2**32) are kept in windows of their own, answered exactly; a part spanning 2**32 or
    more is kept as pks, and then nothing is answered (the table is asked). Every edge comes back (an edge of two
    parts kept in different windows twice: the graph's build drops duplicates)."""
    rng = np.random.default_rng(3)
    kept = KeptFollows()
    parts = [_edges(rng, 200, 10, 90), _edges(rng, 200, 2**40, 2**40 + 80), _edges(rng, 200, 20, 70)]
    for fr, fe in parts:
        kept.add(fr, fe)
    given = {(a, b) for fr, fe in parts for a, b in zip(fr.tolist(), fe.tolist())}
    asked = (np.concatenate([parts[1][0], parts[0][0], [2**40 + 5]]), np.concatenate([parts[1][1], parts[0][1], [10]]))
    assert kept.stored(*asked).tolist() == [(a, b) in given for a, b in zip(*(x.tolist() for x in asked))]
    kept.add(np.array([1, 2**33]), np.array([2**33, 1]))
    assert not kept.exact and kept.stored(*asked) is None
    back = [(a, b) for fr, fe in kept.pop_ends() for a, b in zip(fr.tolist(), fe.tolist())]
    assert set(back) == given | {(1, 2**33), (2**33, 1)}
    assert len(kept) == 0 and list(kept.pop_ends()) == []


@pytest.mark.parametrize("n_parts", [1, 2, 7])
def test_a_run_merged_with_the_one_before_keeps_each_edge_once(n_parts):
    kept = KeptFollows()
    for _ in range(n_parts):
        kept.add(np.array([3, 3, 4, 3]), np.array([9, 8, 9, 9]))  # a duplicate within and across parts
    assert len(kept) == 3
    assert sorted(zip(*(x.tolist() for x in next(kept.pop_ends())))) == [(3, 8), (3, 9), (4, 9)]


def test_the_graph_built_from_the_kept_follows_is_the_one_built_from_their_ends():
    """The CSR a first import writes from its kept keys equals the one built from the edges' two ends (the general
    path): the same ids, rows and followees, self-follows and duplicates dropped (an account seen only in its own
    self-follow is a node without follows in both)."""
    from monitor.graph_files import csr_from_edges

    rng = np.random.default_rng(5)
    kept, parts = KeptFollows(), []
    for _ in range(9):
        fr, fe = _edges(rng, 500, 1_000, 1_300)
        parts.append((fr, fe))
        kept.add(fr, fe)
    kept.add(np.array([5, 1_001]), np.array([5, 1_002]))  # account 5 follows only itself
    parts.append((np.array([5, 1_001]), np.array([5, 1_002])))
    expected = csr_from_edges(*(np.concatenate(c) for c in zip(*parts)))
    got = kept.pop_csr()
    assert got is not None and len(kept) == 0
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got, expected, strict=True))


def test_follows_in_two_windows_or_too_sparse_are_left_for_the_general_build():
    kept = KeptFollows()
    kept.add(np.array([1, 2]), np.array([2, 1]))
    kept.add(np.array([2**40, 2**40 + 1]), np.array([2**40 + 1, 2**40]))
    assert kept.pop_csr() is None and len(kept) == 4  # two windows: kept as they were
    sparse = KeptFollows()
    sparse.add(np.array([1, 3_000_000]), np.array([3_000_000, 1]))
    assert sparse.pop_csr(max_span=1_000_000) is None and len(sparse) == 2


def test_the_graph_is_built_range_by_range_from_several_runs_as_from_the_ends(monkeypatch):
    """Runs that were not merged (sizes apart), an edge in two of them, a self-follow, and ranges of followers
    much smaller than the runs: the same CSR as the general path's."""
    import monitor.kept_follows as kf
    from monitor.graph_files import csr_from_edges

    monkeypatch.setattr(kf, "_STEP", 64)
    rng = np.random.default_rng(9)
    kept, parts = KeptFollows(), []
    for n in (4_000, 1_000, 200, 30):
        fr, fe = _edges(rng, n, 10, 400)
        parts.append((fr, fe))
        kept.add(fr, fe)
    parts.append((np.array([11, 12]), np.array([11, parts[0][1][0]])))
    kept.add(*parts[-1])
    assert len(kept.runs) >= 3
    expected = csr_from_edges(*(np.concatenate(c) for c in zip(*parts)))
    got = kept.pop_csr()
    assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(got, expected, strict=True))
