"""Backward phase on the GPU: the twin of :func:`compute.algorithms.backward.backward` (same signature, same policies).

Algorithm (sync-free pull, one thread block per cascade)
-------------------------------------------------------
``I(v) = n_v + sum over in-edges (u, v) of I(u) / outdeg(u)`` is a triangular solve. We *pull*: a warp takes
node ``v``, gathers ``share(u) = I(u) / outdeg(u)`` over ``v``'s in-edges, adds ``n_v`` and publishes
``share(v)``. Pulling makes every sum run in a fixed order (lanes in in-edge order, then a fixed shuffle
tree), so results are identical from run to run with no floating-point atomics at all.

* **Readiness is the value itself.** The share array is poisoned with a signalling-NaN *sentinel* that no
  arithmetic produces; a lane whose source is not ready yet spins on that one 8-byte word (an aligned 8-byte
  store is single-copy atomic, so a reader sees either the sentinel or the final value). No flags, fences or
  in-degree counters.
* **No deadlock.** The warps of a block take the cascade's nodes round-robin in a topological order, and a
  warp only ever waits on earlier positions, which are either done or held by a running warp of the same
  (resident) block. The order costs nothing for the shapes our data has (``SpreadingGraphs.shapes``: index
  order forwards or backwards); other acyclic graphs get an explicit order computed on the host, which also
  finds the cycles, so a cyclic cascade never reaches the kernel (the cycle policy of docs/measure.md then applies, as
  on the CPU).
* **Shares live in shared memory** (latency ~30 cycles instead of ~600 for L2), so a chain of thousands of
  dependent nodes (the deepest RSG graph has a longest path of 3,324 edges) advances quickly. A cascade with
  more nodes than fit keeps the rest in global memory, with the same sentinel protocol.
* **Size classes run concurrently**: three launches (small / medium / large cascades, each sized for its
  shared memory and block width) on three streams, the large class first and the largest cascades first within
  each, so the longest chains start at once and the small graphs fill the gaps. A large cascade runs on a
  cluster of 4 blocks (distributed shared memory), which spreads its gathers over 4 multiprocessors.
* **Nothing slow on the chain**: the lanes are reconverged (``__syncwarp``) before the tail and the shuffle,
  and a share is ``I(v) * (1 / outdeg(v))`` with the reciprocal computed at preparation, not a division.

Preparation (timed separately, like the thesis' CSR build): upload, out-degrees (by binary search where the
sources are in ascending order, else a histogram), and the in-edge lists (CSC), built by one radix sort of
``(dst << 32) | src`` keys (the order within a row depends only on the data) whose row starts are found by binary
search in the sorted keys.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import cupy as cp
import numpy as np

from .._jit import njit
from ..results import BackwardResult, apply_cycle_policy
from ..structures import SpreadingGraphs
from ._device import Timer, log, memory_budget, module, plan_chunks

__all__ = ["PreparedBackward", "backward", "prepare"]

#: signalling NaN with a payload no arithmetic produces: "this share is not computed yet"
SENTINEL_BITS = 0x7FF4DEADBEEFCAFE

_SOURCE = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define SENT 0x7FF4DEADBEEFCAFELL
// a lane that waits this many polls for one share gives up and raises the error flag instead of hanging the
// device (seconds of waiting: only a bug, e.g. an order that is not topological, can get there)
#define MAX_POLLS (1LL << 26)

template <typename Idx, bool WAIT>
__device__ __forceinline__ double wait_share(const Idx u, const int cap, volatile double* vs, volatile double* vg,
                                             int* err)
{
    double s;
    long long polls = 0;
    if (!WAIT) return (int)u < cap ? vs[u] : vg[u];  // timing experiments only: the cost without the chain
    if ((int)u < cap) {
        while (__double_as_longlong(s = vs[u]) == SENT) {
            // (a __nanosleep back-off here was measured slower: 6.8 vs 5.9 ms for the largest RSG graphs)
            if (++polls > MAX_POLLS) { atomicExch(err, 1); return 0.0; }
        }
    } else {
        while (__double_as_longlong(s = vg[u]) == SENT) {
            __nanosleep(64);
            if (++polls > MAX_POLLS) { atomicExch(err, 1); return 0.0; }
        }
    }
    return s;
}

#define PULL_PARAMS \
    const long long* __restrict__ blocks,    /* cascade index per block (cluster), heaviest first */ \
    const long long* __restrict__ node_off,  /* [T+1] */ \
    const signed char* __restrict__ kinds,   /* [T]: 1 ascending index order, 2 descending, 3 explicit */ \
    const int* __restrict__ order,           /* [N] local node per position (kind 3 cascades only) */ \
    const long long* __restrict__ in_ptr,    /* [N+1] in-edges of v: in_src[in_ptr[v]:in_ptr[v+1]] */ \
    const Idx* __restrict__ in_src,          /* [M] local source node of each in-edge */ \
    const double* __restrict__ rdeg,         /* [N] 1 / out-degree (0 for a sink): no division on the chain */ \
    const double* __restrict__ followers,    /* [N] */ \
    double* __restrict__ out,                /* [N] influence */ \
    double* gshare,                          /* [N] shares beyond shared memory (poisoned) */ \
    const int smem_cap,                      /* shares per block held in shared memory */ \
    int* err                                 /* set to 1 if a wait gave up */
#define PULL_ARGS blocks, node_off, kinds, order, in_ptr, in_src, rdeg, followers, out, gshare, smem_cap, err

// One cascade per block (CL == 1) or per cluster of CL blocks on CL multiprocessors (CL > 1). Idx is the
// in-edge source as a *local* node index (uint16 when every cascade of the chunk has <= 65,536 nodes: half
// the bytes of the dominant stream). In a cluster every block keeps a full copy of the shares in its own
// shared memory and a finished node writes its share into all CL copies (distributed shared memory), so the
// random gathers, which shared-memory bank conflicts make the bottleneck, spread over CL multiprocessors.
template <typename Idx, bool WAIT, int CL>
__device__ __forceinline__ void pull_body(PULL_PARAMS)
{
    extern __shared__ double sshare[];
    unsigned rank = 0;
    if (CL > 1) rank = cg::this_cluster().block_rank();
    const long long t = blocks[blockIdx.x / CL];
    const long long lo = node_off[t];
    const int n = (int)(node_off[t + 1] - lo);
    const int kind = kinds[t];
    const int cap = n < smem_cap ? n : smem_cap;
    volatile double* vs = sshare;
    volatile double* vg = gshare + lo;
    for (int i = threadIdx.x; i < cap; i += blockDim.x) vs[i] = __longlong_as_double(SENT);
    if (CL > 1) cg::this_cluster().sync(); else __syncthreads();  // no share may arrive before the poison
    const int lane = threadIdx.x & 31;
    const int nw = (blockDim.x >> 5) * CL;  // warps working on this cascade
    // a node's metadata (its in-edge range, n_v, out-degree) is loaded one node ahead, so those global-memory
    // round trips overlap the previous node's work instead of sitting on the chain of dependent nodes
    int p = (threadIdx.x >> 5) + rank * (blockDim.x >> 5);
    int v = 0;
    long long a = 0, b = 0;
    double own = 0.0, d = 0.0;
    if (p < n) {
        v = kind == 1 ? p : kind == 2 ? n - 1 - p : order[lo + p];
        a = in_ptr[lo + v]; b = in_ptr[lo + v + 1]; own = followers[lo + v]; d = rdeg[lo + v];
    }
    for (; p < n; p += nw) {
        const int pn = p + nw;
        int vn = 0;
        long long an = 0, bn = 0;
        double ownn = 0.0, dn = 0.0;
        if (pn < n) {
            vn = kind == 1 ? pn : kind == 2 ? n - 1 - pn : order[lo + pn];
            an = in_ptr[lo + vn]; bn = in_ptr[lo + vn + 1]; ownn = followers[lo + vn]; dn = rdeg[lo + vn];
        }
        double acc = 0.0;
        // The in-edge stream is latency-bound unless many loads are in flight: 16-byte vector loads (8 uint16 or
        // 4 int indices per lane), UNROLL of them issued before the first use. A scalar head reaches 16-byte
        // alignment and a scalar tail finishes. Each lane adds its elements in a fixed order: deterministic.
        constexpr int VEC = 16 / sizeof(Idx);
        constexpr int UNROLL = 4;
        long long a16 = (a + VEC - 1) / VEC * VEC;
        if (a16 > b) a16 = b;
        const long long b16 = b / VEC * VEC > a16 ? b / VEC * VEC : a16;
        if (a + lane < a16) acc += wait_share<Idx, WAIT>(__ldcs(in_src + a + lane), cap, vs, vg, err);
        const uint4* vp = reinterpret_cast<const uint4*>(in_src + a16);
        const long long nv = (b16 - a16) / VEC;
        for (long long q = lane; q < nv; q += 32 * UNROLL) {
            uint4 r[UNROLL];
            #pragma unroll
            for (int j = 0; j < UNROLL; ++j) if (q + 32 * j < nv) r[j] = __ldcs(vp + q + 32 * j);
            #pragma unroll
            for (int j = 0; j < UNROLL; ++j) {
                if (q + 32 * j < nv) {
                    const Idx* e = reinterpret_cast<const Idx*>(&r[j]);
                    #pragma unroll
                    for (int z = 0; z < VEC; ++z) acc += wait_share<Idx, WAIT>(e[z], cap, vs, vg, err);
                }
            }
        }
        // the lanes spin on different shares and leave their loops at different times: reconverge them before
        // the tail and before the shuffle, or the warp runs the rest divergent (measured: 4.5 -> 2.2 ms on the
        // largest RSG graphs, the same bits)
        __syncwarp();
        if (b16 + lane < b) acc += wait_share<Idx, WAIT>(__ldcs(in_src + b16 + lane), cap, vs, vg, err);
        __syncwarp();
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (CL == 1) {
            if (lane == 0) {
                const double I = own + acc;
                if (d > 0.0) {
                    const double s = I * d;
                    if (v < cap) vs[v] = s; else vg[v] = s;
                }
                out[lo + v] = I;
            }
        } else {
            const double I = __shfl_sync(0xffffffffu, own + acc, 0);
            if (d > 0.0) {
                const double s = I * d;
                if (v < cap) {  // lane r writes block r's copy
                    if (lane < CL) {
                        double* dst = cg::this_cluster().map_shared_rank(sshare, (unsigned)lane);
                        *(volatile double*)(dst + v) = s;
                    }
                } else if (lane == 0) {
                    vg[v] = s;
                }
            }
            if (lane == 0) out[lo + v] = I;
        }
        v = vn; a = an; b = bn; own = ownn; d = dn;
    }
    if (CL > 1) cg::this_cluster().sync();  // keep every copy alive until the last remote write has landed
}

template <typename Idx, bool WAIT>
__global__ void backward_pull(PULL_PARAMS) { pull_body<Idx, WAIT, 1>(PULL_ARGS); }

template <typename Idx, bool WAIT>
__global__ void __cluster_dims__(2, 1, 1) backward_pull2(PULL_PARAMS) { pull_body<Idx, WAIT, 2>(PULL_ARGS); }

template <typename Idx, bool WAIT>
__global__ void __cluster_dims__(4, 1, 1) backward_pull4(PULL_PARAMS) { pull_body<Idx, WAIT, 4>(PULL_ARGS); }

template <typename Idx, bool WAIT>
__global__ void __cluster_dims__(8, 1, 1) backward_pull8(PULL_PARAMS) { pull_body<Idx, WAIT, 8>(PULL_ARGS); }

// local source index of every in-edge: src - (first node of the cascade that owns dst)
template <typename Idx>
__global__ void localize(const unsigned long long* __restrict__ key, const long long m,
                         const int* __restrict__ node_cas, const long long* __restrict__ node_off,
                         Idx* __restrict__ out)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < m; e += stride) {
        const unsigned long long k = key[e];
        const int dst = (int)(k >> 32);
        const int src = (int)(k & 0xFFFFFFFFull);
        out[e] = (Idx)(src - node_off[node_cas[dst]]);
    }
}

// count the elements of x (as 64-bit patterns) equal to the sentinel: unwritten outputs
extern "C" __global__ void count_sentinel(const long long* __restrict__ x, const long long n,
                                          unsigned long long* __restrict__ count)
{
    unsigned long long c = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) c += x[i] == SENT;
    for (int off = 16; off > 0; off >>= 1) c += __shfl_down_sync(0xffffffffu, c, off);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(count, c);
}
"""
_TEMPLATES = (
    "backward_pull<unsigned short, true>",
    "backward_pull<int, true>",
    "backward_pull<unsigned short, false>",
    "backward_pull2<unsigned short, true>",
    "backward_pull2<int, true>",
    "backward_pull2<unsigned short, false>",
    "backward_pull4<unsigned short, true>",
    "backward_pull4<int, true>",
    "backward_pull4<unsigned short, false>",
    "backward_pull8<unsigned short, true>",
    "backward_pull8<int, true>",
    "backward_pull8<unsigned short, false>",
    "localize<unsigned short>",
    "localize<int>",
)


def _fn(name: str):
    return module(_SOURCE, _TEMPLATES).get_function(name)


#: size classes: (largest cascade in nodes, threads per block, blocks per cluster); shared memory is sized to
#: the class. Cascades up to 8,192 nodes get a block each (measured: a cluster made their chains of dependent
#: nodes slower than the gathers it spread); larger ones a cluster of 8 blocks on 8 multiprocessors.
#: blocks per cluster of the large class (benchmarks/gpu.md has the measurements behind the default)
CLUSTER = int(os.environ.get("SPREADWATCH_GPU_BACKWARD_CLUSTER", "4"))
if CLUSTER not in (1, 2, 4, 8):
    raise ValueError(f"SPREADWATCH_GPU_BACKWARD_CLUSTER must be 1, 2, 4 or 8, not {CLUSTER}")
_CLASSES = ((1024, 128, 1), (8192, 1024, 1), (None, 1024, CLUSTER))
#: doubles a block may keep in shared memory (227 KB, the H100's per-block maximum, minus a little)
_SMEM_DOUBLES = 29_000

_streams: list = []


def _class_streams() -> list:
    if not _streams:
        _streams.extend(cp.cuda.Stream(non_blocking=True) for _ in _CLASSES)
    return _streams


@dataclass
class PreparedBackward:
    """One chunk of cascades on the device, ready to launch (``launch`` may be called again and again)."""

    n_nodes: int
    n_edges: int
    node_off: cp.ndarray
    kinds: cp.ndarray
    order: cp.ndarray
    in_ptr: cp.ndarray
    in_src: cp.ndarray
    rdeg: cp.ndarray  # 1 / out-degree, 0 for a sink
    followers: cp.ndarray
    out: cp.ndarray
    gshare: cp.ndarray
    launches: list  # (cascades device array, threads, smem doubles, blocks per cascade)
    launched_nodes: np.ndarray  # host mask of nodes the kernel writes
    idx_type: str  # C type of in_src: "unsigned short" or "int"
    err: cp.ndarray  # int32[1], set by a wait that gave up

    def launch(self, only: int | None = None, wait: bool = True) -> None:
        """Run the kernel (asynchronously, on the current stream's timeline). ``only``: launch just that size
        class; ``wait=False``: do not wait for shares (wrong values; the benchmark's cost-without-the-chain)."""
        targs = f"<{self.idx_type}, {'true' if wait else 'false'}>"
        main = cp.cuda.get_current_stream()
        if len(self.gshare) > 1:
            self.gshare.view(cp.int64).fill(SENTINEL_BITS)
        self.out.view(cp.int64).fill(SENTINEL_BITS)  # poison: every launched node must be written
        start = main.record()
        ends = []
        # the large class first: its cascades hold the longest chains of dependent nodes, so they must start
        # before the small classes fill the multiprocessors (measured: 8.9 -> 6.3 ms on rsg, issue 18)
        classes = list(enumerate(zip(self.launches, _class_streams())))
        for i, ((blocks, threads, smem, cluster), stream) in reversed(classes):
            if not len(blocks) or (only is not None and i != only):
                continue
            stream.wait_event(start)
            k = _fn(("backward_pull" if cluster == 1 else f"backward_pull{cluster}") + targs)
            with stream:
                nbytes = smem * 8
                if nbytes > 48 * 1024 and k.max_dynamic_shared_size_bytes < nbytes:
                    k.max_dynamic_shared_size_bytes = nbytes
                k((len(blocks) * cluster,), (threads,), (blocks, self.node_off, self.kinds, self.order, self.in_ptr,
                                              self.in_src, self.rdeg, self.followers, self.out, self.gshare,
                                              np.int32(smem), self.err), shared_mem=nbytes)  # fmt: skip
                ends.append(stream.record())
        for e in ends:
            main.wait_event(e)

    def check(self) -> None:
        """Raise if a wait gave up or a launched node was left unwritten (both would be kernel bugs)."""
        if int(self.err.get()[0]):
            raise RuntimeError("GPU backward kernel: a share never became ready (the node order is not topological)")
        count = cp.zeros(1, dtype=cp.uint64)
        mask = cp.asarray(self.launched_nodes)
        vals = cp.where(mask, self.out.view(cp.int64), cp.int64(0))
        _fn("count_sentinel")((264,), (256,), (vals, np.int64(len(vals)), count))
        unwritten = int(count.get()[0])
        if unwritten:
            raise RuntimeError(f"GPU backward kernel left {unwritten} influence value(s) unwritten")

    def influence(self) -> np.ndarray:
        return self.out.get()


def prepare(
    graphs: SpreadingGraphs, timer: Timer | None = None, on_device: tuple | None = None
) -> tuple[PreparedBackward, np.ndarray]:
    """Upload one chunk and build its in-edge lists. Returns the prepared chunk and the indices of the
    cascades left out because they contain a cycle (the caller applies the cycle policy to them).

    ``on_device``: ``(node_offsets, edge_src, edge_dst)`` already on the device (int64, int32, int32; the same
    values as ``graphs``' own), as the forward phase leaves them: they are used where they are, not uploaded
    (:mod:`compute.gpu.influence`)."""
    c = graphs.cascades
    n, m = c.n_nodes, graphs.n_edges
    if n >= 2**31 or m >= 2**40:
        raise ValueError(f"a GPU chunk holds at most 2^31-1 nodes; this one has {n:,}")
    sizes = np.diff(c.node_offsets)
    esizes = np.diff(graphs.edge_offsets)
    shapes = graphs.shapes
    # shapes 1/2 say the edge list can be swept in memory order; the *node* order that is topological follows
    # from the edges' direction: when edges point up (src < dst) a node's senders have smaller indices
    first = graphs.edge_offsets[:-1][esizes > 0]
    up = np.ones(len(sizes), dtype=bool)
    up[esizes > 0] = graphs.edge_src[first] < graphs.edge_dst[first]
    kinds = np.where(up, 1, 2).astype(np.int8)
    needs_order = (shapes == 0) & (esizes > 0)
    order = np.zeros(1, dtype=np.int32)
    cyclic = np.zeros(0, dtype=np.int64)
    if needs_order.any():
        order, is_cyclic = _topological_orders(
            c.node_offsets, graphs.edge_offsets, graphs.edge_src, graphs.edge_dst, needs_order
        )
        kinds[needs_order] = 3
        cyclic = np.flatnonzero(is_cyclic)
    launch = (sizes > 0).copy()
    launch[cyclic] = False
    launched_nodes = np.repeat(launch, sizes)
    idx_type = "unsigned short" if m and sizes.max() <= 65_536 else "int"

    timer = timer or Timer()
    with timer.region("upload"):
        if on_device is None:
            node_off = cp.asarray(c.node_offsets)
            src = cp.asarray(graphs.edge_src).astype(cp.int32, copy=False)
            dst = cp.asarray(graphs.edge_dst).astype(cp.int32, copy=False)
        else:
            node_off, src, dst = on_device
            if len(node_off) != c.n_cascades + 1 or len(src) != m or len(dst) != m:
                raise ValueError("prepare: the device arrays do not have the shape of the graphs they stand for")
        followers = cp.asarray(c.followers)
        kinds_d = cp.asarray(kinds)
        order_d = cp.asarray(order)
    with timer.region("prepare"):
        if m > 1 and bool((src[1:] >= src[:-1]).all()):
            # sources in ascending order (the forward phase's output, Algorithm 10 graphs): a node's out-degree
            # is the length of its run, found by binary search. A histogram's atomics all hit one counter per
            # run here (issue 18: 49 ms of rsg's preparation)
            outdeg = cp.diff(cp.searchsorted(src, cp.arange(n + 1, dtype=src.dtype))).astype(cp.float64)
        else:
            outdeg = cp.bincount(src, minlength=n).astype(cp.float64) if m else cp.zeros(n, cp.float64)
        rdeg = cp.where(outdeg > 0, 1.0 / cp.maximum(outdeg, 1.0), 0.0)
        del outdeg
        in_ptr = cp.zeros(n + 1, dtype=cp.int64)
        if m:
            # the order inside a row depends only on the data (sources ascending): deterministic sums
            key = (dst.astype(cp.uint64) << 32) | src.astype(cp.uint32).astype(cp.uint64)
            del dst
            key = cp.sort(key)
            # row v of the in-edges starts at the first key >= v << 32: no second histogram
            in_ptr = cp.searchsorted(key, cp.arange(n + 1, dtype=cp.uint64) << cp.uint64(32)).astype(cp.int64)
            node_cas = (cp.searchsorted(node_off, cp.arange(n), side="right") - 1).astype(cp.int32)
            in_src = cp.empty(m, dtype=cp.uint16 if idx_type == "unsigned short" else cp.int32)
            _fn(f"localize<{idx_type}>")((min(8192, (m + 255) // 256),), (256,), (key, np.int64(m), node_cas,
                                                                                  node_off, in_src))  # fmt: skip
            del key, node_cas
        else:
            in_src = cp.zeros(1, dtype=cp.int32)
        del src
    launches = []
    prev = 0
    idx = np.flatnonzero(launch)
    for cap_n, threads, cluster in _CLASSES:
        sel = idx[(sizes[idx] > prev) & ((sizes[idx] <= cap_n) if cap_n else True)]
        sel = sel[np.argsort(-(esizes[sel] + sizes[sel]), kind="stable")]  # heaviest first
        smem = int(min(sizes[sel].max(), _SMEM_DOUBLES)) if len(sel) else 0
        launches.append((cp.asarray(sel.astype(np.int64)), threads, smem, cluster))
        prev = cap_n or prev
    big = sizes > _SMEM_DOUBLES
    gshare = cp.empty(n if big.any() else 1, dtype=cp.float64)
    prepared = PreparedBackward(
        n, m, node_off, kinds_d, order_d, in_ptr, in_src, rdeg, followers,
        cp.empty(max(n, 1), dtype=cp.float64), gshare, launches, launched_nodes, idx_type, cp.zeros(1, cp.int32),
    )  # fmt: skip
    return prepared, cyclic


def backward(graphs: SpreadingGraphs, *, backend: str = "auto", threads: int | None = None) -> BackwardResult:
    """Influence of every participant, on the GPU: the twin of :func:`compute.algorithms.backward.backward`,
    with its signature (``threads`` is accepted and ignored; ``backend`` must not ask for the CPU).

    Inputs larger than the device are processed in chunks of cascades; a cascade that alone does not fit is
    left undone and named in ``result.deferred`` — the dispatcher runs it on the CPU reference."""
    if backend not in ("gpu", "auto"):
        raise ValueError(
            f"compute.gpu.backward runs on the GPU; backend={backend!r} belongs to compute.algorithms.backward"
        )
    c = graphs.cascades
    influence = np.empty(c.n_nodes, dtype=np.float64)
    result = BackwardResult(influence)
    if c.n_cascades == 0:
        return result
    cost = device_bytes(np.diff(c.node_offsets), np.diff(graphs.edge_offsets))
    chunks, oversized = plan_chunks(cost, memory_budget())
    cyclic: list[np.ndarray] = []
    todo = list(reversed(chunks))
    while todo:
        a, b = todo.pop()
        sub = graphs if (a, b) == (0, c.n_cascades) else graphs.subset(np.arange(a, b))
        try:
            prepared, cyc = prepare(sub)
            prepared.launch()
            prepared.check()
            vals = prepared.influence()
            del prepared
        except cp.cuda.memory.OutOfMemoryError:
            cp.get_default_memory_pool().free_all_blocks()
            if b - a == 1:
                oversized.append(a)
            else:
                mid = (a + b) // 2
                log.info("GPU memory ran out on cascades %d:%d; splitting the chunk in two", a, b)
                todo += [(mid, b), (a, mid)]
            continue
        lo, hi = c.node_offsets[a], c.node_offsets[b]
        influence[lo:hi] = vals[: hi - lo]
        cyclic.append(cyc + a)
    cyc_all = np.concatenate(cyclic) if cyclic else np.zeros(0, np.int64)
    if oversized:
        result.deferred = np.sort(np.asarray(oversized, dtype=np.int64))
    if len(cyc_all):
        apply_cycle_policy(graphs, np.sort(cyc_all), result, solve=backward)
    return result


def device_bytes(sizes: np.ndarray, esizes: np.ndarray) -> np.ndarray:
    """Peak device bytes per cascade during :func:`prepare` and the launch (measured layout: per edge src,
    dst, the 8-byte sort key and the sort's 8-byte buffer, in_src; per node offsets, followers, out, share,
    degrees), with headroom for the sort's temporary storage."""
    return 40 * esizes.astype(np.float64) + 64 * sizes.astype(np.float64) + 64


@njit
def _topological_orders(node_offsets, edge_offsets, src, dst, which):
    """Kahn's order (local node per position) of every cascade in ``which``, and whether a cycle is left."""
    n_total = node_offsets[-1]
    order = np.zeros(max(n_total, 1), dtype=np.int32)
    cyclic = np.zeros(len(which), dtype=np.bool_)
    max_n = 1
    max_m = 1
    for t in range(len(which)):
        if which[t]:
            max_n = max(max_n, node_offsets[t + 1] - node_offsets[t])
            max_m = max(max_m, edge_offsets[t + 1] - edge_offsets[t])
    indeg = np.zeros(max_n, dtype=np.int64)
    start = np.zeros(max_n + 1, dtype=np.int64)
    adj = np.empty(max_m, dtype=np.int64)
    for t in range(len(which)):
        if not which[t]:
            continue
        lo = node_offsets[t]
        n = node_offsets[t + 1] - lo
        a = edge_offsets[t]
        b = edge_offsets[t + 1]
        for i in range(n + 1):
            start[i] = 0
        for i in range(n):
            indeg[i] = 0
        for e in range(a, b):
            start[src[e] - lo + 1] += 1
            indeg[dst[e] - lo] += 1
        for i in range(n):
            start[i + 1] += start[i]
        for e in range(a, b):  # counting sort by source; start[s] ends one row further
            s = src[e] - lo
            adj[start[s]] = dst[e] - lo
            start[s] += 1
        for i in range(n, 0, -1):
            start[i] = start[i - 1]
        start[0] = 0
        tail = 0
        for i in range(n):
            if indeg[i] == 0:
                order[lo + tail] = i
                tail += 1
        head = 0
        while head < tail:
            u = order[lo + head]
            head += 1
            for k in range(start[u], start[u + 1]):
                w = adj[k]
                indeg[w] -= 1
                if indeg[w] == 0:
                    order[lo + tail] = w
                    tail += 1
        cyclic[t] = tail < n
    return order, cyclic
