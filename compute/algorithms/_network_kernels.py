"""Hand-written CPU kernels of the network analytics, where the libraries measured in benchmarks/network_cpu.md
lack the operation or do it too slowly: Brandes' dependency accumulation from *given* sources with a per-source
scale (no library takes both), Batagelj-Zaversnik core numbers, triangle counts through each node, and a
depth-limited breadth-first search.

Plain Python over NumPy arrays decorated with :func:`compute._jit.njit`: numba compiles them when installed and
the same source runs uncompiled otherwise. All take a CSR ``(indptr, indices)`` with rows sorted ascending.
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

__all__ = ["bfs_depth", "brandes_block", "core_numbers", "triangles"]


@njit
def brandes_block(indptr, indices, sources, scale):
    """sum over ``sources`` (in order) of ``scale[i]`` times source i's dependency vector (Brandes 2001) on the
    undirected graph ``(indptr, indices)``: float64[n], not yet halved.

    The breadth-first pass scans every edge once and writes each node's successors (neighbours one level
    further) to a buffer; the backward pass then reads only those, ``delta[v] = sigma[v] * sum over successors w
    of (1 + delta[w]) / sigma[w]``, instead of rescanning every neighbour: 256 sources on one thread took 0.48 s
    instead of 0.97 s on the twitter preset at scale 0.002 (benchmarks/results/network_cpu_tw0.002_first_kernel.json
    has the first kernel's run). Path counts are float64, as networkx's are."""
    n = len(indptr) - 1
    acc = np.zeros(n, dtype=np.float64)
    dist = np.full(n, -1, dtype=np.int32)
    sigma = np.zeros(n, dtype=np.float64)
    delta = np.zeros(n, dtype=np.float64)
    order = np.empty(n, dtype=np.int64)
    succ_end = np.empty(n, dtype=np.int64)  # successors of order[j] are succ[succ_end[j-1]:succ_end[j]]
    succ = np.empty(len(indices), dtype=indices.dtype)
    for i in range(len(sources)):
        s = sources[i]
        dist[s] = 0
        sigma[s] = 1.0
        order[0] = s
        head = 0
        tail = 1
        k = 0
        while head < tail:
            v = order[head]
            dv = dist[v] + 1
            sv = sigma[v]
            for e in range(indptr[v], indptr[v + 1]):
                w = indices[e]
                if dist[w] < 0:
                    dist[w] = dv
                    order[tail] = w
                    tail += 1
                if dist[w] == dv:
                    sigma[w] += sv
                    succ[k] = w
                    k += 1
            succ_end[head] = k
            head += 1
        f = scale[i]
        for j in range(tail - 1, -1, -1):
            v = order[j]
            lo = succ_end[j - 1] if j > 0 else 0
            t = 0.0
            for e in range(lo, succ_end[j]):
                w = succ[e]
                t += (1.0 + delta[w]) / sigma[w]
            delta[v] = sigma[v] * t
            if j > 0:
                acc[v] += f * delta[v]
        for j in range(tail):  # reset only what this source touched: O(reached), not O(n), per source
            w = order[j]
            dist[w] = -1
            sigma[w] = 0.0
            delta[w] = 0.0
    return acc


@njit
def core_numbers(indptr, indices):
    """Core number of every node of a simple undirected graph: Batagelj and Zaversnik's O(m) peeling (the
    algorithm networkx.core_number implements; the core decomposition is unique, so the results are equal)."""
    n = len(indptr) - 1
    deg = np.empty(n, dtype=np.int64)
    md = 0
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
        md = max(md, deg[v])
    bin_start = np.zeros(md + 2, dtype=np.int64)
    for v in range(n):
        bin_start[deg[v] + 1] += 1
    for d in range(md + 1):
        bin_start[d + 1] += bin_start[d]
    pos = np.empty(n, dtype=np.int64)
    vert = np.empty(n, dtype=np.int64)
    nxt = bin_start.copy()
    for v in range(n):
        pos[v] = nxt[deg[v]]
        vert[pos[v]] = v
        nxt[deg[v]] += 1
    for i in range(n):
        v = vert[i]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if deg[u] > deg[v]:
                du = deg[u]
                pu = pos[u]
                pw = bin_start[du]
                w = vert[pw]
                if u != w:
                    pos[u] = pw
                    vert[pu] = w
                    pos[w] = pu
                    vert[pw] = u
                bin_start[du] += 1
                deg[u] -= 1
    return deg


@njit
def triangles(indptr, indices):
    """Triangles through each node of a simple undirected graph (int64[n]).

    Edges are oriented from the lower to the higher (degree, index) rank, so every triangle is found once, from
    its lowest-ranked node, and a hub's long list is never scanned from its many neighbours (O(m^1.5))."""
    n = len(indptr) - 1
    deg = np.empty(n, dtype=np.int64)
    for v in range(n):
        deg[v] = indptr[v + 1] - indptr[v]
    fwd_ptr = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        c = 0
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if deg[u] > deg[v] or (deg[u] == deg[v] and u > v):
                c += 1
        fwd_ptr[v + 1] = fwd_ptr[v] + c
    fwd = np.empty(fwd_ptr[n], dtype=np.int64)
    for v in range(n):
        k = fwd_ptr[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            if deg[u] > deg[v] or (deg[u] == deg[v] and u > v):
                fwd[k] = u
                k += 1
    tri = np.zeros(n, dtype=np.int64)
    mark = np.full(n, -1, dtype=np.int64)
    for u in range(n):
        for e in range(fwd_ptr[u], fwd_ptr[u + 1]):
            mark[fwd[e]] = u
        for e in range(fwd_ptr[u], fwd_ptr[u + 1]):
            v = fwd[e]
            for f in range(fwd_ptr[v], fwd_ptr[v + 1]):
                w = fwd[f]
                if mark[w] == u:
                    tri[u] += 1
                    tri[v] += 1
                    tri[w] += 1
    return tri


@njit
def bfs_depth(indptr, indices, start, depth):
    """Hop distance from ``start`` of every node within ``depth`` hops, -1 elsewhere (int64[n])."""
    n = len(indptr) - 1
    dist = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    dist[start] = 0
    queue[0] = start
    head = 0
    tail = 1
    while head < tail:
        v = queue[head]
        head += 1
        if dist[v] >= depth:
            continue
        for e in range(indptr[v], indptr[v + 1]):
            w = indices[e]
            if dist[w] < 0:
                dist[w] = dist[v] + 1
                queue[tail] = w
                tail += 1
    return dist
