"""``compute.arrays``: ``unique`` returns what ``np.unique`` returns, whatever the dtype and shape;
``sorted_positions`` what ``np.searchsorted`` and an equality test give, through its hash table or not;
``lexorder`` the permutation ``np.lexsort`` gives, packed or not; ``sort_ints`` what ``np.sort`` gives, by radix or
not."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

pytest.importorskip("hypothesis")  # not on the GPU machine (make test-gpu)
from hypothesis import given, settings
from hypothesis import strategies as st

from compute import arrays
from compute.arrays import argsort_ints, lexorder, sort_ints, sorted_positions, unique, unique_first, unique_inverse


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint16, np.int8, np.bool_])
@pytest.mark.parametrize("n", [0, 1, 2, 1000])
def test_it_returns_what_np_unique_returns_for_integers_and_booleans(dtype, n):
    rng = np.random.default_rng(n)
    a = rng.integers(-50 if np.issubdtype(dtype, np.signedinteger) else 0, 60, size=n).astype(dtype)
    got, want = unique(a), np.unique(a)
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_it_flattens_like_np_unique():
    a = np.array([[3, 1, 3], [2, 1, 0]], dtype=np.int64)
    assert unique(a).tolist() == [0, 1, 2, 3]


def test_other_dtypes_go_to_np_unique_with_its_nan_rule():
    f = np.array([2.0, np.nan, 1.0, np.nan, 2.0])
    assert np.array_equal(unique(f), np.unique(f), equal_nan=True) and np.isnan(unique(f)).sum() == 1
    s = np.array(["b", "a", "b"])
    assert unique(s).tolist() == ["a", "b"]


def _searched(keys, want):
    pos = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    return pos, keys[pos] == want


@pytest.mark.parametrize("n_keys", [1, 7, 5000, 300_000])
@pytest.mark.parametrize("repeats", [False, True], ids=["unique keys", "repeated keys"])
def test_sorted_positions_are_searchsorteds_for_found_and_missing_values(n_keys, repeats):
    rng = np.random.default_rng(n_keys)
    keys = np.sort(rng.integers(-(2**62), 2**62, n_keys))
    if repeats:  # the first of a run of equal keys is the one found
        keys = np.sort(np.concatenate([keys, keys[: max(n_keys // 3, 1)], keys[:1]]))
    want = np.concatenate(
        [keys[rng.integers(0, len(keys), 60_000)], rng.integers(-(2**62), 2**62, 500), [keys[0] - 1, keys[-1] + 1]]
    )
    rng.shuffle(want)
    assert len(want) >= arrays._HASH_MIN  # the hash table's path, where numba is there
    pos, found = sorted_positions(keys, want)
    want_pos, want_found = _searched(keys, want)
    assert pos.tolist() == want_pos.tolist() and found.tolist() == want_found.tolist()
    strided = np.stack([want, want], axis=1)[:, 0]  # a column of a 2-D array: not contiguous
    assert sorted_positions(keys, strided)[0].tolist() == want_pos.tolist()


def test_sorted_positions_of_few_values_no_keys_and_other_dtypes():
    keys = np.array([2, 4, 4, 9], np.int64)
    for want in (np.array([4, 1, 10, 9]), np.array([4, 1], np.int32), np.array([[9, 3], [2, 4]])):
        pos, found = sorted_positions(keys, want)
        assert pos.tolist() == _searched(keys, want)[0].tolist()
        assert found.tolist() == _searched(keys, want)[1].tolist()
    pos, found = sorted_positions(np.zeros(0, np.int64), np.array([1, 2]))
    assert pos.tolist() == [0, 0] and found.tolist() == [False, False]


def test_the_hash_table_finds_what_a_search_finds_with_colliding_keys():
    # a small table half full: probe sequences run past other keys
    keys = np.arange(0, 64 * 1024, 1024, dtype=np.int64)
    bits = 7
    slots = np.full(1 << bits, -1, np.int32)
    arrays._hash_build(keys, slots, bits)
    want = np.concatenate([keys[::-1], keys + 1])
    got = arrays._hash_find(keys, slots, bits, want)
    assert got.tolist() == list(range(63, -1, -1)) + [-1] * 64


_KEY = st.sampled_from(
    [
        "small ints",
        "wide ints",
        "negative ints",
        "floats",
        "whole floats",
        "huge whole floats",
        "int8",
        "uint64 high",
        "bools",
    ]
)


def _key(kind: str, n: int, rng) -> np.ndarray:
    if kind == "small ints":
        return rng.integers(0, 4, n)
    if kind == "wide ints":  # with others, too wide to pack with the rows' positions, or at all
        return rng.integers(-(2**61), 2**61, n)
    if kind == "negative ints":
        return rng.integers(-50, -40, n)
    if kind == "floats":
        return rng.choice([-0.0, 0.0, 1.5, -3.25, np.inf, 1e300], n)
    if kind == "whole floats":  # times in epoch seconds, counts: packed by their span, not ranked
        return rng.choice([-0.0, 0.0, -3.0, 1474796800.0, 1474796801.0, 2.0**40], n)
    if kind == "huge whole floats":  # whole, but beyond an int64's offsets: ranked
        return rng.choice([2.0**62, -(2.0**63), 1e300, 5.0], n)
    if kind == "int8":
        return rng.integers(-128, 127, n).astype(np.int8)
    if kind == "uint64 high":
        return (np.uint64(2**63) + rng.integers(0, 5, n).astype(np.uint64)).astype(np.uint64)
    return rng.integers(0, 2, n).astype(bool)


@settings(max_examples=150, deadline=None)
@given(kinds=st.lists(_KEY, min_size=1, max_size=4), n=st.integers(0, 300), seed=st.integers(0, 2**32 - 1))
def test_lexorder_is_lexsorts_permutation(kinds, n, seed):
    rng = np.random.default_rng(seed)
    keys = [_key(kind, n, rng) for kind in kinds]
    assert lexorder(keys).tolist() == np.lexsort(keys).tolist()


@pytest.mark.parametrize("pack_rows", [1 << 20, 777], ids=["in one slice", "in slices"])
def test_lexorder_packs_the_rows_positions_or_sorts_stably_or_leaves_it_to_lexsort(pack_rows, monkeypatch):
    monkeypatch.setattr(arrays, "_PACK_ROWS", pack_rows)
    rng = np.random.default_rng(5)
    n = 100_000
    a, b = rng.integers(0, 1000, n), rng.integers(0, 1000, n)  # ties: the rows' order decides
    wide = rng.integers(0, 2**40, n)
    nan = rng.choice([1.0, np.nan], n)
    spread = rng.choice(np.array([0, 3, 2**49, 2**50 - 1]), n)  # few values far apart: ties, and no room for rows
    rising = np.arange(n) * 3 - 7  # the rows' own order: left to the tie-break
    steps = np.sort(rng.integers(0, 50, n))  # never decreasing, with ties: the same
    falls = steps[::-1].copy()
    epoch = 1.5e9 + rng.integers(0, 2_600_000, n).astype(np.float64)  # whole seconds: 22 bits by their span
    count = rng.integers(0, 10**7, n).astype(np.float64)  # with both spans too wide together: ranked after all
    keys_sets = (
        [b, a],
        [wide, a],
        [spread, b],
        [wide, wide, a],
        [nan, a],
        [rising, b, a],
        [steps, b],
        [falls, b],
        [epoch, a],
        [-count, epoch, a],
        [epoch + 0.5, a],
    )
    for keys in keys_sets:
        assert lexorder(keys).tolist() == np.lexsort(keys).tolist()


def test_sorted_positions_each_builds_the_keys_table_once_and_answers_as_one_call_each(monkeypatch):
    rng = np.random.default_rng(9)
    keys = np.sort(rng.integers(0, 10**12, 50_000))
    wants = [keys[rng.integers(0, len(keys), 40_000)], rng.integers(0, 10**12, 10), keys[::-1].copy()]
    alone = [sorted_positions(keys, w) for w in wants]
    builds = []
    real = arrays._hash_build
    monkeypatch.setattr(arrays, "_hash_build", lambda *a: builds.append(1) or real(*a))
    each = arrays.sorted_positions_each(keys, wants)
    assert [(p.tolist(), f.tolist()) for p, f in each] == [(p.tolist(), f.tolist()) for p, f in alone]
    assert len(builds) == (1 if arrays.HAVE_NUMBA else 0)


def test_lexorder_packs_whole_number_floats_by_their_span_without_ranking_them(monkeypatch):
    rng = np.random.default_rng(3)
    n = 50_000
    epoch = 1.5e9 + rng.integers(0, 2_600_000, n).astype(np.float64)
    account = rng.integers(0, 4_000_000, n)
    ranked = []
    real = np.unique
    monkeypatch.setattr(arrays.np, "unique", lambda *a, **k: ranked.append(1) or real(*a, **k))
    assert lexorder([epoch, account]).tolist() == np.lexsort([epoch, account]).tolist()
    assert ranked == []
    assert lexorder([epoch + 0.25, account]).tolist() == np.lexsort([epoch, account]).tolist()
    assert ranked == [1]  # a fraction: ranked as before


_SPAN = st.sampled_from([0, 1, 7, 8, 11, 12, 23, 33, 62, 63, 64])


@settings(max_examples=120, deadline=None)
@given(span_bits=_SPAN, lo=st.integers(-(2**40), 2**40), n=st.integers(0, 3000), seed=st.integers(0, 2**32 - 1))
def test_sort_ints_sorts_as_np_sort_does_over_any_span(span_bits, lo, n, seed):
    with _radix_from_two_values():
        _sorts_as_np_sort(span_bits, lo, n, seed)


def _sorts_as_np_sort(span_bits: int, lo: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    if span_bits >= 63:  # offsets near or past an int64's: the whole range
        a = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    else:
        a = lo + rng.integers(0, 2**span_bits, n, dtype=np.int64, endpoint=True)
    want = np.sort(a)
    assert sort_ints(a).tolist() == want.tolist()
    own = a.copy()
    assert sort_ints(own, overwrite=True) is own and own.tolist() == want.tolist()
    assert unique(a).tolist() == np.unique(a).tolist()
    assert argsort_ints(a).tolist() == np.argsort(a, kind="stable").tolist()
    for got, want in zip(unique_first(a), np.unique(a, return_index=True), strict=True):
        assert got.tolist() == want.tolist()
    for got, want in zip(unique_inverse(a), np.unique(a, return_inverse=True), strict=True):
        assert got.tolist() == want.tolist()


@contextlib.contextmanager
def _radix_from_two_values():
    """The radix sort from 2 values on (its threshold is 65,536), restored after."""
    before = arrays._RADIX_MIN
    arrays._RADIX_MIN = 2
    try:
        yield
    finally:
        arrays._RADIX_MIN = before


def test_sort_ints_takes_the_radix_sort_from_its_threshold_with_numba(monkeypatch):
    calls = []
    real = arrays._radix_sort
    monkeypatch.setattr(arrays, "_radix_sort", lambda *a: calls.append(a[4:]) or real(*a))
    rng = np.random.default_rng(1)
    big = rng.integers(10**9, 10**9 + 2**23, arrays._RADIX_MIN)
    assert sort_ints(big).tolist() == np.sort(big).tolist()
    assert calls == ([(23, 8)] if arrays.HAVE_NUMBA else [])  # 23 bits: three passes of 8
    packed = rng.integers(0, 2**40, arrays._RADIX_MIN)
    assert sort_ints(packed, bits=40).tolist() == np.sort(packed).tolist()
    assert sort_ints(big[:100]).tolist() == np.sort(big[:100]).tolist()  # below it: np.sort
    assert len(calls) == (2 if arrays.HAVE_NUMBA else 0)


def test_two_sorted_arrays_merge_into_one_sorted_array_each_value_once_unless_asked_to_keep_repeats():
    from compute.arrays import distinct_sorted, merge_sorted

    a, b = np.array([1, 3, 3, 8], np.uint64), np.array([2, 3, 9], np.uint64)
    assert merge_sorted(a, b).tolist() == [1, 2, 3, 8, 9]
    assert merge_sorted(a, b, distinct=False).tolist() == [1, 2, 3, 3, 3, 8, 9]
    same = np.array([4, 5], np.int64)
    assert distinct_sorted(same) is same and distinct_sorted(np.zeros(0, np.int64)).size == 0
