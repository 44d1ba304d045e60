"""Array helpers shared by the engine and the web application (NumPy and numba, no Django, no CuPy)."""

from __future__ import annotations

import numpy as np

from ._jit import HAVE_NUMBA, njit

__all__ = ["lexorder", "sorted_positions", "sorted_positions_each", "unique"]


def unique(a, *, overwrite: bool = False) -> np.ndarray:
    """The sorted distinct values of ``a`` (flattened): what ``np.unique(a)`` returns. ``overwrite``: an integer
    array ``a`` of the caller's own may be sorted in place, instead of a sorted copy held beside it.

    Integer and boolean arrays are sorted and masked. Since NumPy 2.3, ``np.unique`` without options finds the
    values with a hash table, and that measured about 50 times slower than a sort on this project's arrays: 2.9 s
    against 0.057 s for 2.3M random int64 keys on the 2-core CI machine, with NumPy 2.4.6 (``benchmarks/web.md``).
    Every other dtype (floats with NaN, strings, objects) goes to ``np.unique``."""
    a = np.asarray(a).ravel()
    if a.dtype.kind not in "iub" or a.size < 2:
        return np.unique(a)
    if overwrite:
        a.sort()
        s = a
    else:
        s = np.sort(a)
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


#: below this many values ``sorted_positions`` searches: the hash table is not worth building
_HASH_MIN = 20_000
_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)


def sorted_positions(keys: np.ndarray, want) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``want`` is in the sorted int64 ``keys``, and whether it is there: the position is
    ``np.searchsorted(keys, want)`` held to the last key (so that ``keys[pos]`` can always be read), the mask
    ``keys[pos] == want``. With repeated keys it is the first of them, as ``searchsorted`` gives.

    Many values are found through a hash table of the keys (open addressing, linear probing, a table of at
    least twice as many slots as keys): one or two reads each instead of a binary search's twenty, most of them
    cache misses when ``want`` is in no order. 2.3M follows' accounts among 430,000: 0.04 s against 0.59 s for
    ``searchsorted`` on a 2-core host (``benchmarks/merge_steps_bench.py``). A value not among the
    keys gets the position ``searchsorted`` gives it, read for those values alone. Without numba
    (``compute._jit``) it is ``searchsorted`` throughout."""
    return sorted_positions_each(keys, [want])[0]


def sorted_positions_each(keys: np.ndarray, wants) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`sorted_positions` of each array of ``wants`` in the same ``keys``, their hash table built once."""
    keys = np.asarray(keys)
    wants = [np.asarray(w) for w in wants]
    if not len(keys):
        return [(np.zeros(w.shape, np.int64), np.zeros(w.shape, bool)) for w in wants]
    out: list = [None] * len(wants)
    hashed = [
        i for i, w in enumerate(wants)
        if HAVE_NUMBA and len(w) >= _HASH_MIN and keys.dtype == np.int64 and w.dtype == np.int64 and w.ndim == 1
    ]  # fmt: skip
    for i, w in enumerate(wants):
        if i not in hashed:
            pos = np.minimum(np.searchsorted(keys, w), len(keys) - 1)
            out[i] = (pos, keys[pos] == w)
    if hashed:
        keys = np.ascontiguousarray(keys)  # the layout the kernels are compiled for
        bits = max(int(np.ceil(np.log2(2 * len(keys)))), 4)
        slots = np.full(1 << bits, -1, np.int32 if len(keys) < 2**31 else np.int64)
        _hash_build(keys, slots, bits)
        for i in hashed:
            w = np.ascontiguousarray(wants[i])
            pos = _hash_find(keys, slots, bits, w)
            found = pos >= 0
            if not found.all():
                missing = np.flatnonzero(~found)
                pos[missing] = np.minimum(np.searchsorted(keys, w[missing]), len(keys) - 1)
            out[i] = (pos, found)
    return out


@njit
def _hash_build(keys, slots, bits):
    """Fill ``slots`` (``2**bits`` of them, all -1) with the positions of ``keys``; a repeated key's later
    positions lie further along its probe sequence than its first, so the first is found."""
    mask = (1 << bits) - 1
    for i in range(len(keys)):
        j = np.int64((np.uint64(keys[i]) * _FIBONACCI) >> np.uint64(64 - bits))
        while slots[j] >= 0:
            j = (j + 1) & mask
        slots[j] = i


@njit
def _hash_find(keys, slots, bits, want):
    """The position of each of ``want`` in ``keys`` through ``slots`` (``_hash_build``), -1 where it is not."""
    mask = (1 << bits) - 1
    out = np.empty(len(want), np.int64)
    for q in range(len(want)):
        w = want[q]
        j = np.int64((np.uint64(w) * _FIBONACCI) >> np.uint64(64 - bits))
        found = -1
        while slots[j] >= 0:
            if keys[slots[j]] == w:
                found = slots[j]
                break
            j = (j + 1) & mask
        out[q] = found
    return out


#: rows ``lexorder`` packs at a time
_PACK_ROWS = 1 << 20


def lexorder(keys) -> np.ndarray:
    """``np.lexsort(keys)``: the permutation that sorts by the last key, then the one before it, and so on, rows
    whose keys are all equal in their order.

    ``np.lexsort`` sorts key by key with a stable merge sort; where the keys fit one 64-bit integer together (each
    integer key by its offset from its smallest value, each floating-point key by its rank among its distinct
    values), that integer is sorted once instead, with the row's position in its lowest bits where those fit too
    (every value distinct: NumPy's plain sort, vectorised, is then exact). 2.3M follows by (follower, followee):
    0.05 s against 0.74 s (``benchmarks/merge_steps_bench.py``). Otherwise, or for another dtype, it is
    ``np.lexsort``."""
    keys = [np.asarray(k) for k in keys]
    n = len(keys[0]) if keys else 0
    if n < 2 or any(k.ndim != 1 or k.dtype.kind not in "iubf" for k in keys):
        return np.lexsort(keys) if keys else np.zeros(0, np.int64)
    # a least significant key that never decreases along the rows (their own positions, say) orders ties as
    # their positions do: left to the sort's tie-break, it takes no bits
    while len(keys) > 1 and bool(np.all(keys[0][1:] >= keys[0][:-1])):
        keys = keys[1:]
    # each key's bits: an integer key's span, a float key's number of distinct values (its ranks kept)
    spans: list[tuple[int, int, np.ndarray | None]] = []  # (its smallest value, its bits, its ranks)
    for k in keys:
        if k.dtype.kind == "f":
            if np.isnan(k).any():
                return np.lexsort(keys)
            ranks = np.unique(k, return_inverse=True)[1].ravel()
            spans.append((0, max(int(ranks.max()), 1).bit_length(), ranks))
        else:
            lo, hi = int(k.min()), int(k.max())
            if hi - lo + 1 > 2**62:
                return np.lexsort(keys)
            spans.append((lo, max(hi - lo, 1).bit_length(), None))
    bits = sum(b for _, b, _ in spans)
    at = max(n - 1, 1).bit_length()  # the row's position, below the keys
    with_rows = bits + at <= 63
    if with_rows:
        packed, shift = np.arange(n, dtype=np.int64), at
    elif bits <= 63:
        packed, shift = np.zeros(n, np.int64), 0
    else:
        return np.lexsort(keys)
    # a slice at a time through one scratch buffer: at 10M retweets the follows' 14M rows are 112 MB an array, and
    # whole-array temporaries would take the import's peak memory up by as much each
    part = np.empty(min(n, _PACK_ROWS), np.int64)
    for start in range(0, n, _PACK_ROWS):
        stop = min(n, start + _PACK_ROWS)
        p, into, at_bit = part[: stop - start], packed[start:stop], shift
        for k, (lo, b, ranks) in zip(keys, spans, strict=True):
            if ranks is not None:
                p[:] = ranks[start:stop]
            elif k.dtype == np.uint64:  # its offsets fit an int64, its values may not
                np.subtract(k[start:stop], np.uint64(lo), out=p, casting="unsafe")
            else:
                p[:] = k[start:stop]
                p -= lo
            if at_bit:
                p <<= at_bit
            into |= p
            at_bit += b
    del part
    if with_rows:
        packed.sort()
        packed &= np.int64((1 << at) - 1)
        return packed
    return np.argsort(packed, kind="stable")
