"""What bounds one account's PPR iteration on the H100 (issue 15): random 8-byte gathers from L2 against HBM,
and whether cutting the pull CSR into column bands whose slice of the vector stays in the L2 makes a pass faster.

    python3 benchmarks/wtf_l2_probe.py --out $OUT/wtf_l2_probe.jsonl      # appends JSON lines

1. Gathers alone: G random int32 indices streamed (evict-first), each gathering one double from a table of S
   bytes, for S from 2 MB to 256 MB; reports gathers per second and the time of 683M gathers.
2. The real walk (the ``twitter`` preset's follower graph at ``--scale``, the twin's renumbered pull CSR, walk
   ``follows`` and ``followers``): one plain pull (every row's sum of z at its entries, L rows' lanes per row)
   over the whole vector, then the same pull cut in B column bands (B launches, each adding its part into y),
   for B in --bands; and the twin's own fused PPR pass for one account (its time an iteration).
Prints one JSON line per measurement. A probe for the method's numbers (benchmarks/wtf_gpu.md), not a product
path: its kernels use a plain warp sum, not the twin's fixed order.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_SRC = r"""
extern "C" __global__ void gather(const int* __restrict__ idx, long long m, const double* __restrict__ table,
                                  double* __restrict__ out) {
    long long stride = (long long)gridDim.x * blockDim.x;
    double s = 0.0;
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < m; e += stride)
        s += __ldg(table + __ldcs(idx + e));
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// y[r] (+)= sum of z at row r's entries; L lanes per row (L divides 32)
template <int L>
__global__ void pull(const long long* __restrict__ indptr, const int* __restrict__ indices, long long n,
                     const double* __restrict__ z, double* __restrict__ y, int add) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long r = t / L;
    int lane = threadIdx.x % L;
    double s = 0.0;
    if (r < n) {
        long long lo = indptr[r], hi = indptr[r + 1];
#pragma unroll 4
        for (long long e = lo + lane; e < hi; e += L) s += __ldg(z + __ldcs(indices + e));
    }
#pragma unroll
    for (int off = L / 2; off >= 1; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (r < n && lane == 0) y[r] = add ? y[r] + s : s;
}
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=2.0)
    p.add_argument("--bands", default="1,2,3,4,6,8")
    p.add_argument("--lanes", default="32,8,4")
    p.add_argument("--out")
    args = p.parse_args(argv)

    import cupy as cp

    def emit(rec):
        line = json.dumps(rec)
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as out:
                out.write(line + "\n")

    names = ["pull<32>", "pull<16>", "pull<8>", "pull<4>"]
    mod = cp.RawModule(code=_SRC, options=("-std=c++17",), name_expressions=names)
    gather = mod.get_function("gather")

    from compute.gpu.bench import _median_events

    def timed(fn):
        """Best of 5 (seconds), timed with device events."""
        return min(_median_events(fn, 5))

    name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
    emit({"case": "device", "name": name.decode() if isinstance(name, bytes) else name})

    # 1. gathers alone
    m = 683_000_000
    sink = cp.empty(132 * 8 * 256, dtype=cp.float64)
    for mb in (0.0625, 0.125, 0.25, 2, 4, 8, 12, 16, 20, 24, 32, 40, 51, 64, 128, 256):
        n = int(mb * 2**20) // 8
        table = cp.ones(n, dtype=cp.float64)
        idx = cp.random.randint(0, n, m, dtype=cp.int32)
        s = timed(lambda idx=idx, table=table: gather((132 * 8,), (256,), (idx, np.int64(m), table, sink)))
        emit({"case": "gather", "table_mb": mb, "gathers": m, "s": s, "gathers_per_s": m / s,
              "sector_bytes_per_s": 32 * m / s})  # fmt: skip
        del idx, table
    cp.get_default_memory_pool().free_all_blocks()

    # 2. the real walk
    from compute.generators.twitter import follower_graph as generate
    from compute.gpu import wtf as twin
    from compute.graphs import follower_graph

    t = time.perf_counter()
    fg, _ = generate(scale=args.scale, seed=0)
    g = follower_graph(fg)
    del fg
    emit({"case": "graph", "users": g.n_nodes, "follows": g.n_edges, "generate_s": time.perf_counter() - t})
    dg = twin.device_graph(g)
    rng = np.random.default_rng(0)
    for direction in ("follows", "followers"):
        walk = dg.walk(direction)
        n = walk.n
        z = cp.random.random(n) * walk.inv_out
        y = cp.empty(n, dtype=cp.float64)
        ref = None
        row_of = cp.repeat(cp.arange(n, dtype=cp.int32), cp.diff(walk.indptr).astype(cp.int64))
        for bands in [int(b) for b in args.bands.split(",")]:
            width = (n + bands - 1) // bands
            parts = []
            if bands == 1:
                parts.append((walk.indptr, walk.indices))
            else:
                band_of = walk.indices // width
                for b in range(bands):
                    mask = band_of == b
                    ip = cp.zeros(n + 1, dtype=cp.int64)
                    ip[1:] = cp.cumsum(cp.bincount(row_of[mask], minlength=n))
                    parts.append((ip, walk.indices[mask]))
                    del mask
                del band_of
            for lanes in [int(x) for x in args.lanes.split(",")]:
                k = mod.get_function(f"pull<{lanes}>")
                grid = ((n * lanes + 255) // 256,)

                def run(k=k, grid=grid, parts=parts, n=n, z=z, y=y):
                    for b, (ip, ix) in enumerate(parts):
                        k(grid, (256,), (ip, ix, np.int64(n), z, y, np.int32(b > 0)))

                s = timed(run)
                if ref is None:
                    ref = y.copy()
                err = float(cp.max(cp.abs(y - ref) / cp.maximum(cp.abs(ref), 1e-300)).get())
                emit({"case": "pull", "direction": direction, "bands": bands, "lanes_per_row": lanes, "s": s,
                      "band_mb": width * 8 / 2**20, "max_rel_diff": err})  # fmt: skip
            del parts
            cp.get_default_memory_pool().free_all_blocks()
        del row_of
        # how many gathers go to the most gathered accounts (the walk's numbering puts them first), and how many
        # gathers of a nonzero value each of the first iterations from one seed makes (the k-hop frontier)
        total = len(walk.indices)
        share = {str(top): float((walk.indices < top).sum().get()) / total for top in (8192, 16384, 32768, 65536)}
        out_deg = cp.where(walk.inv_out > 0, cp.rint(1.0 / cp.where(walk.inv_out > 0, walk.inv_out, 1.0)), 0.0)
        frontiers = []
        for seed in rng.integers(0, g.n_nodes, 3):
            reached = cp.zeros(n, dtype=cp.bool_)
            reached[int(walk.rank[int(seed)].get())] = True
            steps = []
            for _ in range(5):
                steps.append(float(out_deg[reached].sum().get()))  # gathers of nonzero values next iteration
                row_nz = cp.zeros(n, dtype=cp.int32)
                hit = reached[walk.indices].astype(cp.int32)
                rows = cp.repeat(cp.arange(n, dtype=cp.int64), cp.diff(walk.indptr))
                row_nz = cp.bincount(rows, weights=hit, minlength=n) > 0
                del hit, rows
                reached |= row_nz
            frontiers.append(steps)
        emit({"case": "locality", "direction": direction, "gathers": total, "share_of_gathers_to_top": share,
              "nonzero_gathers_per_iteration": frontiers})  # fmt: skip
        # the twin's fused pass, one account: median of 3 seeds
        times = []
        for seed in rng.integers(0, g.n_nodes, 3):
            cp.cuda.Device().synchronize()
            t = time.perf_counter()
            _, it, _, _ = twin._ppr_block(dg, direction, np.array([seed]), 0.85, 1e-10, 100)
            times.append((time.perf_counter() - t) / int(it[0]))
        emit({"case": "twin_ppr", "direction": direction, "s_per_iteration": float(np.median(times))})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
