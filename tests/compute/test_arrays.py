"""``compute.arrays.unique``: what ``np.unique`` returns, whatever the dtype and shape."""

from __future__ import annotations

import numpy as np
import pytest

from compute.arrays import unique


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
