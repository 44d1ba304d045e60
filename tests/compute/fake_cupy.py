"""A NumPy stand-in for the small part of CuPy that :mod:`compute.gpu.influence_max` and its IMGPU traversal
(:mod:`compute.gpu._imgpu`) use, with the twin's CUDA kernels transliterated to Python (one loop over the launch's
threads; atomics are plain updates).

It lets a machine without a GPU run the twin's host-side driver — chunking, frontier segments, hash-table growth,
packing, the greedy loop — and compare it with the CPU reference. It tests the driver and the kernels' logic as
transliterated here, not the CUDA compiler's reading of the source: the GPU suite (tests/compute/gpu/) does that.
"""

from __future__ import annotations

import sys
import types

import numpy as np

M64 = (1 << 64) - 1


class FakeArray(np.ndarray):
    def get(self):
        return np.asarray(self).copy()


def _wrap(x):
    if isinstance(x, np.generic):  # CuPy's reductions give 0-d arrays, not scalars
        x = np.asarray(x)
    return x.view(FakeArray) if isinstance(x, np.ndarray) else x


def _fn(f):
    return lambda *a, **k: _wrap(f(*[np.asarray(x) if isinstance(x, FakeArray) else x for x in a], **k))


def mix64(z: int) -> int:
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def item_key(base: int, i: int) -> int:
    return mix64(base + (i + 1) * 0x9E3779B97F4A7C15)


def is_live(key: int, e: int, thr, uniform: int) -> bool:
    c = mix64(key ^ (((e + 1) * 0xD6E8FEB86659FD93) & M64))
    t = int(thr[0]) if uniform else int(thr[e])
    return (c >> 32) < t


def draw_root(key: int, n: int, cumw, unit: int) -> int:
    u = mix64(key)
    if unit:
        return ((u >> 32) * n) >> 32
    x = float(u >> 11) * 1.1102230246251565e-16 * float(cumw[n - 1])
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if cumw[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return min(lo, n - 1)


def claim(table, mask: int, key: int) -> bool:
    h = mix64(key) & mask
    while True:
        prev = int(table[h])
        if prev == 0:
            table[h] = np.uint64(key)
            return True
        if prev == key:
            return False
        h = (h + 1) & mask


def _threads(grid, block):
    return range(int(grid[0]) * int(block[0]))


def rr_roots(grid, block, args):
    base, start, count, n, cumw, unit, table, mask, frontier = args
    for j in _threads(grid, block):
        if j >= count:
            continue
        root = draw_root(item_key(int(base), int(start) + j), int(n), cumw, int(unit))
        packed = (j << 32) | root
        claim(table, int(mask), packed + 1)
        frontier[j] = packed


def rr_expand(grid, block, args):
    base, start, frontier, size, indptr, indices, thr, uniform, table, mask, nxt, cnt, touched = args
    for t in _threads(grid, block):
        if t >= size:
            continue
        packed = int(frontier[t])
        j, v = packed >> 32, packed & 0xFFFFFFFF
        key = item_key(int(base), int(start) + j)
        a, b = int(indptr[v]), int(indptr[v + 1])
        touched[0] += np.uint64(b - a)
        for e in range(a, b):
            if not is_live(key, e, thr, int(uniform)):
                continue
            np_ = (j << 32) | int(indices[e])
            if claim(table, int(mask), np_ + 1):
                nxt[int(cnt[0])] = np_
                cnt[0] += 1


def rehash(grid, block, args):
    packed, size, table, mask = args
    for t in _threads(grid, block):
        if t < size:
            claim(table, int(mask), int(packed[t]) + 1)


def cover(grid, block, args):
    inv, a, b, indptr, nodes, covered, deg = args
    for t in _threads(grid, block):
        t += int(a)
        if t >= b:
            continue
        s = int(inv[t])
        if covered[s]:
            continue
        covered[s] = 1
        for q in range(int(indptr[s]), int(indptr[s + 1])):
            deg[nodes[q]] -= 1


def mc_seed(grid, block, args):
    seeds, ns, runs, words, seen, w, spread, frontier = args
    for t in _threads(grid, block):
        if t >= ns * runs:
            continue
        r, s = t // int(ns), int(seeds[t % int(ns)])  # i64 in the CUDA: no int32 wrap on r << 32
        seen[r * words + (s >> 5)] |= np.uint32(1 << (s & 31))
        spread[r] += w[s]
        frontier[t] = (r << 32) | s


def mc_expand(grid, block, args):
    base, start, frontier, size, t_indptr, t_indices, t_perm, thr, uniform, words, seen, w, spread, nxt, cnt = args
    for t in _threads(grid, block):
        if t >= size:
            continue
        packed = int(frontier[t])
        r, u = packed >> 32, packed & 0xFFFFFFFF
        key = item_key(int(base), int(start) + r)
        for q in range(int(t_indptr[u]), int(t_indptr[u + 1])):
            f = int(t_indices[q])
            bit = np.uint32(1 << (f & 31))
            at = r * int(words) + (f >> 5)
            if seen[at] & bit:
                continue
            if not is_live(key, int(t_perm[q]), thr, int(uniform)):
                continue
            seen[at] |= bit
            spread[r] += w[f]
            nxt[int(cnt[0])] = (r << 32) | f
            cnt[0] += 1


KERNELS = {f.__name__: f for f in (rr_roots, rr_expand, rehash, cover, mc_seed, mc_expand)}


class RawModule:
    def __init__(self, code: str, options=(), name_expressions=None):
        for name in KERNELS:
            assert f"__global__ void {name}(" in code, f"the CUDA source lost kernel {name}"

    def get_function(self, name: str):
        return KERNELS[name]


def install(monkeypatch) -> types.ModuleType:
    """Put the fake in ``sys.modules['cupy']`` (and a bare ``compute.gpu`` package, so the twin's module loads
    without the real package's other twins) for the duration of a test; return the twin module."""
    import importlib
    from pathlib import Path

    cp = types.ModuleType("cupy")
    for name in ("int32", "int64", "uint8", "uint32", "uint64", "float64"):
        setattr(cp, name, getattr(np, name))
    cp.ndarray = FakeArray
    for name in (
        "asarray", "zeros", "empty", "full", "arange", "cumsum", "concatenate", "sort", "argsort", "bincount",
        "searchsorted", "diff", "max", "unique", "flatnonzero", "argmax", "where", "minimum", "maximum", "expm1",
        "ones",
    ):  # fmt: skip
        setattr(cp, name, _fn(getattr(np, name)))
    cp.bool_ = np.bool_
    cp.inf = np.inf

    cp.RawModule = RawModule
    cp.cuda = types.SimpleNamespace(
        runtime=types.SimpleNamespace(memGetInfo=lambda: (8 << 30, 16 << 30)),
        Device=lambda *a: types.SimpleNamespace(synchronize=lambda: None),
    )
    cp.get_default_memory_pool = lambda: types.SimpleNamespace(free_bytes=lambda: 0)
    monkeypatch.setitem(sys.modules, "cupy", cp)
    pkg = types.ModuleType("compute.gpu")
    pkg.__path__ = [str(Path(__file__).resolve().parents[2] / "compute" / "gpu")]
    monkeypatch.setitem(sys.modules, "compute.gpu", pkg)
    for name in ("compute.gpu._device", "compute.gpu._imgpu", "compute.gpu.influence_max"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module("compute.gpu.influence_max")
