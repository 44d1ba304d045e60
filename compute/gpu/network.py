"""Network analytics on the GPU: the twin of :mod:`compute.algorithms.network` (GraphCT's kernels, issue 14).

Every public function has the signature and defaults of the CPU dispatcher of the same name and returns the same
result; the CPU reference stays what the tests compare against (exactly for degrees, components, cores,
conversations and neighbourhoods; to 1e-9 relative for clustering and betweenness). The graph's CSR is uploaded
once per :class:`~compute.graphs.Graph` object and kept on the device between calls, as the forward phase keeps
the follower graph (docs/adding-an-algorithm.md).

* **Components** (weak): hooking with pointer jumping over the edge list. Every hook points a root at a smaller
  node of the same component, so trees only ever grow towards their smallest node, and a round that hooks
  nothing is the fixed point; components are then renumbered like the CPU's (largest first, ties by smallest
  node).
* **Strong components**: iterated trimming (a node with no live in- or out-edge is a component of its own),
  then the colouring method (Orzan): the largest index that reaches a node spreads forward along live edges,
  and each colour's root collects, backwards within its colour, exactly its strong component.
* **Cores**: peeling. ``k`` rises to the smallest live degree; every live node with degree <= k gets core ``k``
  and leaves, decrementing its live neighbours (atomics), until none is left at ``k``.
* **Triangles**: edges oriented from lower to higher (degree, index), so every out-list is at most sqrt(2m)
  long; a warp per oriented edge intersects the two sorted out-lists (lanes binary-search the shorter list's
  elements in the longer one) and credits the triangle to its three corners.
* **Betweenness** (Brandes from many sources): 32 sources per pass, one per lane of a warp, and a warp per
  node, so a node's adjacency is read once for all 32 searches (GraphCT's simultaneous searches). Depths
  (int16), path counts and dependencies live as ``[node][lane]`` rows: a neighbour's row is one coalesced
  read. Forward: a node still unreached in some lane sums the path counts of its neighbours one level up; the
  dependencies are pulled back level by level; each node then adds its lanes' scaled dependencies in a fixed
  order, and sources are taken in ``SOURCE_BLOCK`` blocks in order, so the result is the same from run to run.
"""

from __future__ import annotations

import math
import weakref

import cupy as cp
import numpy as np

from ..graphs import (
    SOURCE_BLOCK,
    Betweenness,
    Clustering,
    Components,
    Conversations,
    Degrees,
    Graph,
    Neighbourhood,
    betweenness_grid,
    betweenness_plan,
    check_depth,
    check_direction,
    check_graph,
    check_node,
    check_samples,
    check_seed,
    check_sources,
    reciprocal,
    subgraph,
    top_overlap,
    undirected,
)
from ._device import module

__all__ = [
    "betweenness",
    "betweenness_partial",
    "betweenness_stability",
    "clustering",
    "components",
    "conversations",
    "core_numbers",
    "degrees",
    "neighbourhood",
    "strong_components",
]

LANES = 32  # sources per betweenness pass: one per lane of a warp
_UNREACHED = -1
_NO_SOURCE = -32768  # the depth of every node in a lane that has no source (the last pass of an odd count)
_MAX_LEVEL = 32000  # int16 depths

_SOURCE = r"""
typedef long long i64;
#define FULL 0xffffffffu

__device__ __forceinline__ int find_root(const int* parent, int x) {
    int p = parent[x];
    while (p != x) { x = p; p = parent[x]; }
    return x;
}

// weak components: hook the larger root under the smaller (a warp per row, lanes over its edges)
#define ROWS_BEGIN \
    int lane = threadIdx.x & 31; \
    i64 warp = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5; \
    i64 warps = ((i64)gridDim.x * blockDim.x) >> 5; \
    for (i64 u = warp; u < n; u += warps) { \
        i64 e0 = indptr[u], e1 = indptr[u + 1];
#define ROWS_END }

extern "C" __global__ void cc_hook(const i64* __restrict__ indptr, const int* __restrict__ indices, i64 n,
                                   int* parent, int* changed) {
    ROWS_BEGIN
        for (i64 e = e0 + lane; e < e1; e += 32) {
            int a = find_root(parent, (int)u);
            int b = find_root(parent, indices[e]);
            if (a != b) {
                atomicMin(&parent[max(a, b)], min(a, b));
                *changed = 1;
            }
        }
    ROWS_END
}

extern "C" __global__ void cc_compress(int* parent, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        parent[i] = find_root(parent, i);
    }
}

// the smallest node of every component (ids: any int in [0, n) per node)
extern "C" __global__ void min_node(const int* __restrict__ ids, int n, int* smallest) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicMin(&smallest[ids[i]], i);
    }
}

// strong components ------------------------------------------------------------------------------------
// live in- and out-degree of every live node
extern "C" __global__ void scc_degrees(const i64* __restrict__ indptr, const int* __restrict__ indices, i64 n,
                                       const unsigned char* __restrict__ alive, int* indeg, int* outdeg) {
    ROWS_BEGIN
        if (!alive[u]) continue;
        int out = 0;
        for (i64 e = e0 + lane; e < e1; e += 32) {
            int v = indices[e];
            if (v != u && alive[v]) { out++; atomicAdd(&indeg[v], 1); }
        }
        for (int off = 16; off; off >>= 1) out += __shfl_down_sync(FULL, out, off);
        if (lane == 0) outdeg[u] = out;
    ROWS_END
}

// the largest colour that reaches a node spreads forward along live edges
extern "C" __global__ void scc_colour(const i64* __restrict__ indptr, const int* __restrict__ indices, i64 n,
                                      const unsigned char* __restrict__ alive, int* colour, int* changed) {
    ROWS_BEGIN
        if (!alive[u]) continue;
        int c = colour[u];
        for (i64 e = e0 + lane; e < e1; e += 32) {
            int v = indices[e];
            if (alive[v] && c > colour[v]) { atomicMax(&colour[v], c); *changed = 1; }
        }
    ROWS_END
}

// each colour's root collects backwards, within its colour, the nodes that reach it: its strong component
extern "C" __global__ void scc_collect(const i64* __restrict__ indptr, const int* __restrict__ indices, i64 n,
                                       const unsigned char* __restrict__ alive, const int* __restrict__ colour,
                                       unsigned char* inside, int* changed) {
    ROWS_BEGIN
        if (!alive[u] || inside[u]) continue;
        bool hit = false;
        for (i64 e = e0 + lane; e < e1; e += 32) {
            int v = indices[e];
            if (inside[v] && colour[v] == colour[u]) hit = true;
        }
        if (__any_sync(FULL, hit) && lane == 0) { inside[u] = 1; *changed = 1; }
    ROWS_END
}

// cores: the live neighbours of the nodes that leave at this k lose one degree each
extern "C" __global__ void core_peel(const i64* __restrict__ indptr, const int* __restrict__ indices,
                                     const int* __restrict__ leaving, int n_leaving,
                                     const unsigned char* __restrict__ alive, int* degree) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    int warps = (gridDim.x * blockDim.x) >> 5;
    for (int k = warp; k < n_leaving; k += warps) {
        int v = leaving[k];
        for (i64 e = indptr[v] + lane; e < indptr[v + 1]; e += 32) {
            int u = indices[e];
            if (alive[u]) atomicSub(&degree[u], 1);
        }
    }
}

// triangles over the oriented graph: a warp per oriented edge (u, v) intersects out(u) and out(v)
__device__ __forceinline__ bool contains(const int* __restrict__ a, i64 lo, i64 hi, int x) {
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        int y = a[mid];
        if (y == x) return true;
        if (y < x) lo = mid + 1; else hi = mid;
    }
    return false;
}

// orientation: keep (u, v) when (deg u, u) < (deg v, v); pass 0 counts per row, pass 1 writes in row order
extern "C" __global__ void orient(const i64* __restrict__ indptr, const int* __restrict__ indices, i64 n,
                                  const i64* __restrict__ out_ptr, int* out_idx, int* out_count, int pass) {
    ROWS_BEGIN
        i64 du = e1 - e0;
        i64 at = pass ? out_ptr[u] : 0;
        int kept = 0;
        for (i64 base = e0; base < e1; base += 32) {
            bool keep = false;
            int v = 0;
            if (base + lane < e1) {
                v = indices[base + lane];
                i64 dv = indptr[v + 1] - indptr[v];
                keep = du < dv || (du == dv && u < v);
            }
            unsigned ballot = __ballot_sync(FULL, keep);
            if (pass && keep) out_idx[at + kept + __popc(ballot & ((1u << lane) - 1))] = v;
            kept += __popc(ballot);
        }
        if (!pass && lane == 0) out_count[u] = kept;
    ROWS_END
}

// a warp per row u of the oriented graph: for each v in out(u), lanes look the shorter list's nodes up in the
// longer one; every triangle (u, v, w) is found once and credited to its three corners
extern "C" __global__ void triangles(const i64* __restrict__ indptr, const int* __restrict__ indices, i64 n,
                                     unsigned long long* tri) {
    ROWS_BEGIN
        unsigned long long at_u = 0;
        for (i64 k = e0; k < e1; ++k) {
            int v = indices[k];
            i64 a0 = e0, a1 = e1, b0 = indptr[v], b1 = indptr[v + 1];
            if (a1 - a0 > b1 - b0) { i64 t = a0; a0 = b0; b0 = t; t = a1; a1 = b1; b1 = t; }
            unsigned long long found = 0;
            for (i64 j = a0 + lane; j < a1; j += 32) {
                int w = indices[j];
                if (contains(indices, b0, b1, w)) { atomicAdd(&tri[w], 1ULL); found++; }
            }
            for (int off = 16; off; off >>= 1) found += __shfl_down_sync(FULL, found, off);
            if (lane == 0 && found) { atomicAdd(&tri[v], found); at_u += found; }
        }
        if (lane == 0 && at_u) atomicAdd(&tri[u], at_u);
    ROWS_END
}

// betweenness: [node][lane] rows, 32 sources per pass ------------------------------------------------------
extern "C" __global__ void bc_init(int n, const int* __restrict__ sources, int n_sources,
                                   short* depth, double* sigma, double* delta) {
    i64 total = (i64)n * 32;
    for (i64 i = blockIdx.x * (i64)blockDim.x + threadIdx.x; i < total; i += (i64)gridDim.x * blockDim.x) {
        int lane = (int)(i & 31);
        depth[i] = lane < n_sources ? -1 : -32768;
        sigma[i] = 0.0;
        delta[i] = 0.0;
    }
}

extern "C" __global__ void bc_seed(const int* __restrict__ sources, int n_sources, short* depth, double* sigma) {
    int lane = threadIdx.x;
    if (lane < n_sources) {
        i64 at = (i64)sources[lane] * 32 + lane;
        depth[at] = 0;
        sigma[at] = 1.0;
    }
}

// level d: a node unreached in a lane sums the path counts of its neighbours at depth d - 1 in that lane
extern "C" __global__ void bc_forward(const i64* __restrict__ indptr, const int* __restrict__ indices, int n,
                                      short* depth, double* sigma, short d, int* more) {
    int lane = threadIdx.x & 31;
    i64 warp = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5;
    i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 v = warp; v < n; v += warps) {
        bool need = depth[v * 32 + lane] == -1;
        if (!__any_sync(FULL, need)) continue;
        double acc = 0.0;
        i64 e0 = indptr[v], e1 = indptr[v + 1];
        for (i64 base = e0; base < e1; base += 32) {
            int mine = base + lane < e1 ? indices[base + lane] : 0;
            int cnt = (int)min((i64)32, e1 - base);
            #pragma unroll 4
            for (int j = 0; j < cnt; ++j) {
                i64 u = __shfl_sync(FULL, mine, j);
                if (need && depth[u * 32 + lane] == d - 1) acc += sigma[u * 32 + lane];
            }
        }
        if (need && acc > 0.0) {
            depth[v * 32 + lane] = d;
            sigma[v * 32 + lane] = acc;
            *more = 1;
        }
    }
}

// level d: a node at depth d pulls the dependencies of its neighbours at depth d + 1
extern "C" __global__ void bc_backward(const i64* __restrict__ indptr, const int* __restrict__ indices, int n,
                                       const short* __restrict__ depth, const double* __restrict__ sigma,
                                       double* delta, short d) {
    int lane = threadIdx.x & 31;
    i64 warp = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5;
    i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 v = warp; v < n; v += warps) {
        bool mine = depth[v * 32 + lane] == d;
        if (!__any_sync(FULL, mine)) continue;
        double acc = 0.0;
        i64 e0 = indptr[v], e1 = indptr[v + 1];
        for (i64 base = e0; base < e1; base += 32) {
            int w_lane = base + lane < e1 ? indices[base + lane] : 0;
            int cnt = (int)min((i64)32, e1 - base);
            #pragma unroll 4
            for (int j = 0; j < cnt; ++j) {
                i64 w = __shfl_sync(FULL, w_lane, j);
                if (mine && depth[w * 32 + lane] == d + 1) acc += (1.0 + delta[w * 32 + lane]) / sigma[w * 32 + lane];
            }
        }
        if (mine) delta[v * 32 + lane] = sigma[v * 32 + lane] * acc;
    }
}

// every node adds its lanes' scaled dependencies (not a source's own), in a fixed order
extern "C" __global__ void bc_accumulate(int n, const short* __restrict__ depth, const double* __restrict__ delta,
                                         const int* __restrict__ sources, const double* __restrict__ scale,
                                         int n_sources, double* out) {
    int lane = threadIdx.x & 31;
    i64 warp = (blockIdx.x * (i64)blockDim.x + threadIdx.x) >> 5;
    i64 warps = ((i64)gridDim.x * blockDim.x) >> 5;
    for (i64 v = warp; v < n; v += warps) {
        double x = 0.0;
        if (lane < n_sources && depth[v * 32 + lane] > 0) x = scale[lane] * delta[v * 32 + lane];
        for (int off = 16; off; off >>= 1) x += __shfl_down_sync(FULL, x, off);
        if (lane == 0) out[v] += x;
    }
}

// neighbourhood: nodes one hop from the frontier get depth d
extern "C" __global__ void bfs_step(const i64* __restrict__ indptr, const int* __restrict__ indices,
                                    const int* __restrict__ frontier, int n_frontier, int* dist, int d) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    int warps = (gridDim.x * blockDim.x) >> 5;
    for (int k = warp; k < n_frontier; k += warps) {
        int v = frontier[k];
        for (i64 e = indptr[v] + lane; e < indptr[v + 1]; e += 32) {
            int u = indices[e];
            if (dist[u] < 0) dist[u] = d;
        }
    }
}

// conversations: edge (u, v) is kept when v -> u exists too (rows sorted)
extern "C" __global__ void reciprocated(const i64* __restrict__ indptr, const int* __restrict__ indices, i64 n,
                                        unsigned char* keep) {
    ROWS_BEGIN
        for (i64 e = e0 + lane; e < e1; e += 32) {
            int v = indices[e];
            keep[e] = v != u && contains(indices, indptr[v], indptr[v + 1], (int)u);
        }
    ROWS_END
}

// the source of every edge (for the transposed adjacency)
extern "C" __global__ void row_ids(const i64* __restrict__ indptr, i64 n, int* out) {
    const int* indices = 0;
    ROWS_BEGIN
        for (i64 e = e0 + lane; e < e1; e += 32) out[e] = (int)u;
    ROWS_END
}
"""

_BLOCK = 256


def _fn(name: str):
    return module(_SOURCE).get_function(name)


def _grid(items: int, per_block: int = _BLOCK) -> int:
    return max(1, min(65535 * 8, math.ceil(max(items, 1) / per_block)))


def _warps_grid(items: int) -> int:
    return _grid(items * 32)


class _DeviceCSR:
    """A graph's CSR on the device: ``indptr`` int64, ``indices`` int32, and each edge's source (edge lists)."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray) -> None:
        self.n = len(indptr) - 1
        self.m = int(indptr[-1]) if len(indptr) else 0
        if self.n >= 2**31 - 1:
            raise ValueError(f"the GPU network kernels support < 2^31 nodes; the graph has {self.n:,}")
        self.indptr = cp.asarray(indptr, dtype=cp.int64)
        self.indices = cp.asarray(indices).astype(cp.int32, copy=False)
        self._src: cp.ndarray | None = None
        self._transposed: _DeviceCSR | None = None

    @property
    def src(self) -> cp.ndarray:
        """The source of every edge (int32, m entries): built on first use, for the transposed adjacency."""
        if self._src is None:
            self._src = cp.empty(self.m, dtype=cp.int32)
            if self.m:
                _fn("row_ids")((_warps_grid(self.n),), (_BLOCK,), (self.indptr, np.int64(self.n), self._src))
        return self._src

    @property
    def rows(self) -> tuple:
        """The kernel arguments of a warp-per-row launch, and its grid."""
        return (self.indptr, self.indices, np.int64(self.n))

    @property
    def row_grid(self) -> tuple[int]:
        return (_warps_grid(self.n),)

    @property
    def degree(self) -> cp.ndarray:
        return cp.diff(self.indptr).astype(cp.int64)

    def transposed(self) -> _DeviceCSR:
        """The in-adjacency (rows sorted): for walks against the edges' direction."""
        if self._transposed is None:
            order = cp.lexsort(cp.stack([self.src, self.indices]))  # by target, then source
            counts = cp.bincount(self.indices, minlength=self.n)
            indptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(counts, dtype=cp.int64)])
            t = _DeviceCSR.__new__(_DeviceCSR)
            t.n, t.m = self.n, self.m
            t.indptr, t.indices = indptr, self.src[order]
            t._src, t._transposed = None, self
            self._transposed = t
        return self._transposed


_resident: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _device(g: Graph) -> _DeviceCSR:
    """The device copy of ``g`` (uploaded once per Graph object, kept while the object lives)."""
    d = _resident.get(g)
    if d is None:
        d = _DeviceCSR(g.indptr, g.indices)
        _resident[g] = d
    return d


def _check_backend(g: Graph, backend: str) -> None:
    check_graph(g)
    if backend not in ("gpu", "auto"):
        raise ValueError(
            f"compute.gpu.network runs on the GPU; backend={backend!r} belongs to compute.algorithms.network"
        )


def _renumber(ids: cp.ndarray) -> Components:
    """Components from any per-node id in [0, n): numbered by size (largest first), ties by smallest node."""
    n = len(ids)
    if n == 0:
        return Components(labels=np.zeros(0, np.int64), sizes=np.zeros(0, np.int64))
    sizes = cp.bincount(ids, minlength=n)
    smallest = cp.full(n, n, dtype=cp.int32)
    _fn("min_node")((_grid(n),), (_BLOCK,), (ids, np.int32(n), smallest))
    present = cp.flatnonzero(sizes)
    order = cp.lexsort(cp.stack([smallest[present], -sizes[present]]))  # size descending, then smallest node
    number = cp.empty(n, dtype=cp.int64)
    number[present[order]] = cp.arange(len(present), dtype=cp.int64)
    return Components(labels=number[ids].get(), sizes=sizes[present[order]].get().astype(np.int64))


def _weak_ids(d: _DeviceCSR) -> cp.ndarray:
    parent = cp.arange(d.n, dtype=cp.int32)
    changed = cp.zeros(1, dtype=cp.int32)
    hook, compress = _fn("cc_hook"), _fn("cc_compress")
    while True:
        changed.fill(0)
        hook(d.row_grid, (_BLOCK,), (*d.rows, parent, changed))
        compress((_grid(d.n),), (_BLOCK,), (parent, np.int32(d.n)))
        if not int(changed.get()[0]):
            return parent


def degrees(g: Graph, *, backend: str = "auto") -> Degrees:
    _check_backend(g, backend)
    d = _device(g)
    return Degrees(in_degree=cp.bincount(d.indices, minlength=d.n).astype(cp.int64).get(), out_degree=d.degree.get())


def components(g: Graph, *, backend: str = "auto") -> Components:
    _check_backend(g, backend)
    return _renumber(_weak_ids(_device(g)))


def strong_components(g: Graph, *, backend: str = "auto") -> Components:
    _check_backend(g, backend)
    d = _device(g)
    n = d.n
    comp = cp.full(n, -1, dtype=cp.int32)
    alive = cp.ones(n, dtype=cp.uint8)
    changed = cp.zeros(1, dtype=cp.int32)
    args = (*d.rows, alive)
    while True:
        # trimming: a live node with no live in- or out-edge is a strong component of its own
        while True:
            indeg = cp.zeros(n, cp.int32)
            outdeg = cp.zeros(n, cp.int32)
            _fn("scc_degrees")(d.row_grid, (_BLOCK,), (*args, indeg, outdeg))
            lone = cp.flatnonzero(alive.astype(cp.bool_) & ((indeg == 0) | (outdeg == 0)))
            if not len(lone):
                break
            comp[lone] = lone.astype(cp.int32)
            alive[lone] = 0
        live = cp.flatnonzero(alive)
        if not len(live):
            break
        colour = cp.where(alive.astype(cp.bool_), cp.arange(n, dtype=cp.int32), -1).astype(cp.int32)
        while True:
            changed.fill(0)
            _fn("scc_colour")(d.row_grid, (_BLOCK,), (*args, colour, changed))
            if not int(changed.get()[0]):
                break
        inside = (alive.astype(cp.bool_) & (colour == cp.arange(n, dtype=cp.int32))).astype(cp.uint8)
        while True:
            changed.fill(0)
            _fn("scc_collect")(d.row_grid, (_BLOCK,), (*args, colour, inside, changed))
            if not int(changed.get()[0]):
                break
        done = cp.flatnonzero(inside)
        comp[done] = colour[done]
        alive[done] = 0
    return _renumber(comp)


def core_numbers(g: Graph, *, backend: str = "auto") -> np.ndarray:
    _check_backend(g, backend)
    d = _device(undirected(g))
    n = d.n
    degree = d.degree.astype(cp.int32)
    core = cp.full(n, -1, dtype=cp.int64)
    alive = cp.ones(n, dtype=cp.uint8)
    peel = _fn("core_peel")
    k, left = 0, n
    while left:
        live = alive.astype(cp.bool_)
        k = max(k, int(cp.where(live, degree, np.iinfo(np.int32).max).min()))
        while True:
            leaving = cp.flatnonzero(live & (degree <= k)).astype(cp.int32)
            if not len(leaving):
                break
            core[leaving] = k
            alive[leaving] = 0
            live[leaving] = False
            left -= len(leaving)
            peel(
                (_warps_grid(len(leaving)),),
                (_BLOCK,),
                (d.indptr, d.indices, leaving, np.int32(len(leaving)), alive, degree),
            )
    return core.get()


def clustering(g: Graph, *, backend: str = "auto") -> Clustering:
    _check_backend(g, backend)
    d = _device(undirected(g))
    deg = d.degree
    # orient every edge from the lower to the higher (degree, index): out-lists of at most sqrt(2m), rows sorted
    counts = cp.zeros(d.n, dtype=cp.int32)
    orient = _fn("orient")
    orient(d.row_grid, (_BLOCK,), (*d.rows, cp.zeros(1, cp.int64), cp.zeros(1, cp.int32), counts, np.int32(0)))
    o_ptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(counts, dtype=cp.int64)])
    o_idx = cp.empty(max(int(o_ptr[-1]), 1), dtype=cp.int32)
    orient(d.row_grid, (_BLOCK,), (*d.rows, o_ptr, o_idx, counts, np.int32(1)))
    tri = cp.zeros(d.n, dtype=cp.uint64)
    _fn("triangles")(d.row_grid, (_BLOCK,), (o_ptr, o_idx, np.int64(d.n), tri))
    del o_idx
    t = tri.astype(cp.int64)
    pairs = deg * (deg - 1)
    local = cp.where(t > 0, (2 * t).astype(cp.float64) / cp.maximum(pairs, 1).astype(cp.float64), 0.0)
    total_t, total_pairs = int((2 * t).sum()), int(pairs.sum())
    transitivity = 0.0 if total_t == 0 else total_t / total_pairs
    return Clustering(local=local.get(), triangles=t.get(), transitivity=transitivity)


def _bc_pass(d: _DeviceCSR, sources: np.ndarray, scale: np.ndarray, buffers, out: cp.ndarray) -> None:
    """Add the scaled dependencies of up to 32 sources (one per lane) to ``out``."""
    depth, sigma, delta = buffers
    k = len(sources)
    src = cp.zeros(LANES, dtype=cp.int32)
    src[:k] = cp.asarray(sources, dtype=cp.int32)
    sc = cp.zeros(LANES, dtype=cp.float64)
    sc[:k] = cp.asarray(scale, dtype=cp.float64)
    n = np.int32(d.n)
    _fn("bc_init")((_grid(d.n * LANES),), (_BLOCK,), (n, src, np.int32(k), depth, sigma, delta))
    _fn("bc_seed")((1,), (LANES,), (src, np.int32(k), depth, sigma))
    more = cp.zeros(1, dtype=cp.int32)
    grid = (_warps_grid(d.n),)
    level = 0
    while True:
        if level + 1 >= _MAX_LEVEL:
            raise ValueError(f"the GPU betweenness supports shortest paths of < {_MAX_LEVEL} hops")
        more.fill(0)
        _fn("bc_forward")(grid, (_BLOCK,), (d.indptr, d.indices, n, depth, sigma, np.int16(level + 1), more))
        if not int(more.get()[0]):
            break
        level += 1
    for lv in range(level - 1, -1, -1):
        _fn("bc_backward")(grid, (_BLOCK,), (d.indptr, d.indices, n, depth, sigma, delta, np.int16(lv)))
    _fn("bc_accumulate")(grid, (_BLOCK,), (n, depth, delta, src, sc, np.int32(k), out))


def betweenness_partial(g: Graph, sources: np.ndarray, scale: np.ndarray, *, backend: str = "auto") -> np.ndarray:
    _check_backend(g, backend)
    u = undirected(g)
    sources, scale = check_sources(u, sources, scale)
    d = _device(u)
    total = cp.zeros(d.n, dtype=cp.float64)
    if not len(sources):
        return total.get()
    # each block's vector is rounded to the graph's grid (compute.graphs.betweenness_grid), as on the CPU: then
    # adding blocks is exact, and any grouping of whole blocks over workers gives the same bits
    grid = cp.asarray(betweenness_grid(u, components(u, backend="gpu")))
    buffers = (
        cp.empty(d.n * LANES, dtype=cp.int16),
        cp.empty(d.n * LANES, dtype=cp.float64),
        cp.empty(d.n * LANES, dtype=cp.float64),
    )
    block = cp.zeros(d.n, dtype=cp.float64)
    for b0 in range(0, len(sources), SOURCE_BLOCK):
        block.fill(0.0)
        for p0 in range(b0, min(b0 + SOURCE_BLOCK, len(sources)), LANES):
            p1 = min(p0 + LANES, b0 + SOURCE_BLOCK, len(sources))
            _bc_pass(d, sources[p0:p1], scale[p0:p1], buffers, block)
        # every unordered pair was counted from both of its ends: networkx's normalized=False halves undirected values
        block *= 0.5
        total += cp.rint(block / grid) * grid
    del buffers
    return total.get()


def betweenness(g: Graph, *, samples: int = 0, seed: int = 0, backend: str = "auto") -> Betweenness:
    _check_backend(g, backend)
    check_samples(samples)
    check_seed(seed)
    u = undirected(g)
    exact = samples == 0 or samples >= u.n_nodes  # then the plan needs no components
    plan = betweenness_plan(u, samples, seed, None if exact else components(u, backend="gpu"))
    values = betweenness_partial(u, plan.sources, plan.scale, backend="gpu")
    return Betweenness(values, plan.sources, plan.exact, samples, seed, plan.notes)


def betweenness_stability(g: Graph, *, samples: int, seed: int = 0, backend: str = "auto") -> dict:
    _check_backend(g, backend)
    a = betweenness(g, samples=samples, seed=seed, backend="gpu").values
    b = betweenness(g, samples=samples, seed=seed + 1, backend="gpu").values
    return {"top1": top_overlap(a, b, 1.0), "top5": top_overlap(a, b, 5.0), "samples": samples}


def conversations(g: Graph, *, backend: str = "auto") -> Conversations:
    _check_backend(g, backend)
    d = _device(g)
    keep = cp.zeros(max(d.m, 1), dtype=cp.uint8)
    _fn("reciprocated")(d.row_grid, (_BLOCK,), (*d.rows, keep))
    touched = cp.zeros(d.n, dtype=cp.bool_)
    touched[d.src[keep[: d.m].astype(cp.bool_)]] = True
    nodes = cp.flatnonzero(touched).get()
    conv = subgraph(reciprocal(g), nodes)
    return Conversations(
        graph=conv,
        nodes_before=g.n_nodes,
        edges_before=g.n_edges,
        nodes_after=conv.n_nodes,
        edges_after=conv.n_edges,
        components=components(conv, backend="gpu"),
    )


def neighbourhood(
    g: Graph, node: int, *, depth: int = 1, direction: str = "both", backend: str = "auto"
) -> Neighbourhood:
    _check_backend(g, backend)
    check_node(g, node)
    check_depth(depth)
    check_direction(direction)
    d = _device(g)
    walks = {"out": [d], "in": [d.transposed()], "both": [d, d.transposed()]}[direction]
    dist = cp.full(d.n, -1, dtype=cp.int32)
    dist[int(node)] = 0
    step = _fn("bfs_step")
    for level in range(1, depth + 1):
        frontier = cp.flatnonzero(dist == level - 1).astype(cp.int32)
        if not len(frontier):
            break
        for w in walks:
            step(
                (_warps_grid(len(frontier)),), (_BLOCK,),
                (w.indptr, w.indices, frontier, np.int32(len(frontier)), dist, np.int32(level)),
            )  # fmt: skip
    nodes = cp.flatnonzero(dist >= 0)
    sub = subgraph(g, nodes.get())
    return Neighbourhood(graph=sub, distance=dist[nodes].astype(cp.int64).get())
