"""Array helpers shared by the engine and the web application (NumPy and numba, no Django, no CuPy)."""

from __future__ import annotations

import numpy as np

from ._jit import HAVE_NUMBA, njit

__all__ = [
    "argsort_ints",
    "distinct_sorted",
    "lexorder",
    "merge_sorted",
    "sort_ints",
    "sorted_positions",
    "sorted_positions_each",
    "unique",
    "unique_first",
    "unique_inverse",
]


def unique(a, *, overwrite: bool = False) -> np.ndarray:
    """The sorted distinct values of ``a`` (flattened): what ``np.unique(a)`` returns. ``overwrite``: an integer
    array ``a`` of the caller's own may be sorted in place, instead of a sorted copy held beside it.

    Integer and boolean arrays are sorted and masked. Since NumPy 2.3, ``np.unique`` without options finds the
    values with a hash table, and that measured about 50 times slower than a sort on this project's arrays: 2.9 s
    against 0.057 s for 2.3M random int64 keys on the 2-core CI machine, with NumPy 2.4.6 (``benchmarks/web.md``).
    Every other dtype (floats with NaN, strings, objects) goes to ``np.unique``. The sort is :func:`sort_ints`'s."""
    a = np.asarray(a).ravel()
    if a.dtype.kind not in "iub" or a.size < 2:
        return np.unique(a)
    s = sort_ints(a, overwrite=overwrite)
    return s[_run_starts(s)]


def _run_starts(s: np.ndarray) -> np.ndarray:
    """Mask of the first value of each run of equal values in the sorted ``s`` (at least one value)."""
    first = np.empty(s.size, dtype=bool)
    first[0] = True
    np.not_equal(s[1:], s[:-1], out=first[1:])
    return first


def distinct_sorted(s: np.ndarray) -> np.ndarray:
    """The sorted ``s`` with each value once (``s`` itself when no value repeats). Of an array in any order: each
    run of one value squeezed to one, the order kept."""
    if s.size < 2:
        return s
    first = _run_starts(s)
    return s if first.all() else s[first]


def merge_sorted(a: np.ndarray, b: np.ndarray, *, distinct: bool = True) -> np.ndarray:
    """The sorted arrays ``a`` and ``b`` as one sorted array: NumPy's stable sort (a timsort) of their
    concatenation finds the two runs and merges them in one pass. ``distinct``: each value once."""
    out = np.concatenate([a, b])
    out.sort(kind="stable")
    return distinct_sorted(out) if distinct else out


#: from this many values on, ``sort_ints`` sorts an int64 array by radix (numba) rather than by ``np.sort``
_RADIX_MIN = 1 << 16
_DIGIT_BITS = 11  # a pass's digit at most: its 2,048 counters stay in the L1 cache
_NO_POSITIONS = np.zeros(0, np.int64)


def sort_ints(a: np.ndarray, *, overwrite: bool = False, bits: int | None = None) -> np.ndarray:
    """``np.sort(a)`` for an integer array (``a.sort()`` in place, returned, with ``overwrite``). An int64 array of
    ``_RADIX_MIN`` values or more is sorted by a least-significant-digit radix sort over the span of its values
    (their offsets from the smallest), a pass per digit of up to 11 bits: 10M account keys (23 bits) in 0.2 s
    against ``np.sort``'s 0.8 s, 10M keys of 63 bits in 0.29 s against 0.65 s on the 2-core machine
    (``benchmarks/data_layer.md``, 2026-12-04 (third)). ``bits``: the caller knows the values are non-negative
    and below ``2**bits`` (``lexorder``'s packed keys); else the span is measured. It takes one scratch array of
    ``a``'s size beside the result. Without numba, or for another dtype, it is ``np.sort``."""
    span = _radix_span(a, bits)
    if span is None:
        if not overwrite:
            return np.sort(a)
        a.sort()
        return a
    lo, bits = span
    out = a if overwrite else a.copy()
    if lo:
        out -= lo
    _radix_sort(out, np.empty_like(out), _NO_POSITIONS, _NO_POSITIONS, bits, _digit_bits(bits))
    if lo:
        out += lo
    return out


def _radix_span(a: np.ndarray, bits: int | None) -> tuple[int, int] | None:
    """For the radix sorts: the offset to subtract from ``a``'s values and the bits of what is left, or None where
    NumPy's sort is taken (no numba, another dtype, fewer than ``_RADIX_MIN`` values, offsets over an int64)."""
    if not HAVE_NUMBA or a.dtype != np.int64 or a.ndim != 1 or len(a) < _RADIX_MIN:
        return None
    if bits is not None:
        return 0, bits
    lo, hi = int(a.min()), int(a.max())
    return None if hi - lo >= 2**63 else (lo, (hi - lo).bit_length())


def _digit_bits(bits: int) -> int:
    """A pass's digit: ``bits`` in as few passes of at most ``_DIGIT_BITS`` as can be, shared evenly."""
    return -(-bits // -(-bits // _DIGIT_BITS)) if bits else 1


@njit
def _radix_sort(v, scratch, pos, pos_scratch, bits, digit):
    """Sort the non-negative int64 ``v`` (below ``2**bits``) in place, ``digit`` bits a pass; stable passes, each
    counting its digits, then moving every value to its digit's next slot. ``pos`` (empty: none), moved along,
    ends as the stable sorting permutation of the ``pos`` given."""
    n = v.size
    carry = pos.size > 0
    mask = (1 << digit) - 1
    count = np.zeros(mask + 2, np.int64)
    src, dst, psrc, pdst = v, scratch, pos, pos_scratch
    moved = False
    shift = 0
    while shift < bits:
        if _digit_starts(src, shift, mask, count):
            for i in range(n):
                d = (src[i] >> shift) & mask
                at = count[d]
                dst[at] = src[i]
                if carry:
                    pdst[at] = psrc[i]
                count[d] = at + 1
            src, dst, psrc, pdst = dst, src, pdst, psrc
            moved = not moved
        shift += digit
    if moved:
        v[:] = src
        if carry:
            pos[:] = psrc


@njit
def _digit_starts(src, shift, mask, count) -> bool:
    """A radix pass's first step: ``count[d]`` becomes where the values of digit ``d`` (``(v >> shift) & mask``)
    start in the pass's output; False when every value has the same digit (the pass would move nothing)."""
    count[:] = 0
    for i in range(src.size):
        count[((src[i] >> shift) & mask) + 1] += 1
    if count.max() == src.size:
        return False
    for b in range(mask + 1):
        count[b + 1] += count[b]
    return True


def argsort_ints(a: np.ndarray, *, bits: int | None = None) -> np.ndarray:
    """``np.argsort(a, kind="stable")`` for an integer array: an int64 array of ``_RADIX_MIN`` values or more by a
    stable radix sort that carries each value's position along (``sort_ints``'s passes; 10M values of 62 bits in
    about half ``np.argsort``'s time), else NumPy's. ``bits`` as for :func:`sort_ints`. It holds the values' offsets,
    the positions and a scratch array of each beside ``a``."""
    span = _radix_span(a, bits)
    if span is None:
        return np.argsort(a, kind="stable")
    lo, bits = span
    order = np.arange(len(a), dtype=np.int64)
    v = a - lo if lo else a.copy()
    _radix_sort(v, np.empty_like(v), order, np.empty_like(order), bits, _digit_bits(bits))
    return order


def unique_first(a) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, return_index=True)`` for a 1-d integer array: the sorted distinct values and the position of
    each one's first occurrence, by one :func:`lexorder` (packed, and sorted by radix where large) instead of
    NumPy's stable argsort."""
    a = np.asarray(a)
    if a.ndim != 1 or a.dtype.kind not in "iu" or a.size < 2:
        return np.unique(a, return_index=True)
    order, s, first = _runs(a)
    return s[first], order[first]


def unique_inverse(a) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(a, return_inverse=True)`` for a 1-d integer array: the sorted distinct values and, for each
    element, the position of its value among them; by one :func:`lexorder` as :func:`unique_first`."""
    a = np.asarray(a)
    if a.ndim != 1 or a.dtype.kind not in "iu" or a.size < 2:
        return np.unique(a, return_inverse=True)
    order, s, first = _runs(a)
    inverse = np.empty(s.size, np.int64)
    inverse[order] = np.cumsum(first) - 1
    return s[first], inverse


def _runs(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``a``'s stable sorting permutation, ``a`` sorted by it, and the mask of each run's first value."""
    order = lexorder([a])
    s = a[order]
    return order, s, _run_starts(s)


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


def _spans(keys: list[np.ndarray], *, whole_floats: bool) -> list[tuple[int, int, np.ndarray | None]] | None:
    """For :func:`lexorder`, each key's ``(smallest value, bits, values to pack instead of the key or None)``; None
    where a key cannot be packed (a NaN, a span over 2**62)."""
    spans: list[tuple[int, int, np.ndarray | None]] = []
    for k in keys:
        values = None
        if k.dtype.kind == "f":
            if np.isnan(k).any():
                return None
            if whole_floats and np.abs(k).max() < 2.0**62 and np.array_equal(values := k.astype(np.int64), k):
                k = values
            else:
                ranks = np.unique(k, return_inverse=True)[1].ravel()
                spans.append((0, max(int(ranks.max()), 1).bit_length(), ranks))
                continue
        lo, hi = int(k.min()), int(k.max())
        if hi - lo + 1 > 2**62:
            return None
        spans.append((lo, max(hi - lo, 1).bit_length(), values))
    return spans


def lexorder(keys) -> np.ndarray:
    """``np.lexsort(keys)``: the permutation that sorts by the last key, then the one before it, and so on, rows
    whose keys are all equal in their order.

    ``np.lexsort`` sorts key by key with a stable merge sort; where the keys fit one 64-bit integer together (each
    integer key, and each floating-point key of whole numbers, by its offset from its smallest value, any other
    floating-point key by its rank among its distinct values), that integer is sorted once instead, with the row's
    position in its lowest bits where those fit too (every value distinct: a plain sort, :func:`sort_ints`'s radix
    sort for many rows, is then exact). 2.3M follows by (follower, followee): 0.05 s against 0.74 s
    (``benchmarks/merge_steps_bench.py``). Otherwise, or for another dtype, it is ``np.lexsort``."""
    keys = [np.asarray(k) for k in keys]
    n = len(keys[0]) if keys else 0
    if n < 2 or any(k.ndim != 1 or k.dtype.kind not in "iubf" for k in keys):
        return np.lexsort(keys) if keys else np.zeros(0, np.int64)
    # a least significant key that never decreases along the rows (their own positions, say) orders ties as
    # their positions do: left to the sort's tie-break, it takes no bits
    while len(keys) > 1 and bool(np.all(keys[0][1:] >= keys[0][:-1])):
        keys = keys[1:]
    # each key's bits: an integer key's span; a float key's span too where every value is a whole number (times in
    # epoch seconds, counts), else, or where the spans do not fit together, its number of distinct values (its
    # ranks kept: ``np.unique`` sorts the key once more, 5.9 s of a 10M import's follower-count snapshots)
    spans = _spans(keys, whole_floats=True)
    if spans is not None and sum(b for _, b, _ in spans) > 63 and any(k.dtype.kind == "f" for k in keys):
        spans = _spans(keys, whole_floats=False)
    if spans is None:
        return np.lexsort(keys)
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
        for k, (lo, b, values) in zip(keys, spans, strict=True):
            if values is not None:  # a float key's ranks (``lo`` 0) or whole values
                p[:] = values[start:stop]
                p -= lo
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
        sort_ints(packed, overwrite=True, bits=bits + at)
        packed &= np.int64((1 << at) - 1)
        return packed
    return argsort_ints(packed, bits=bits)
