"""Issue 44, the GPU side of ``wtf_tail_probe.py`` (a probe, not a product method): the GPU twin's FORA with its
walks cut after ``L`` visits, the cut walks' mass spread as the global PageRank, on the 683M-follow graph.

    python3 benchmarks/wtf_tail_probe_gpu.py --scale 2.0 --random 48 --top-degree 16 \
        --runs 1.6e7,1.6e7:4:0,1.6e7:4:4,1.6e7:4:8,1.6e7:2:4,3.2e7:4:8,3.2e7:2:8 --out $OUT/wtf_tail_probe_gpu.json

``--runs``: comma-separated ``W`` (the twin's FORA as it is, ``W`` walks per unit of residual), ``W:L`` or
``W:L:0`` (walks cut after ``L`` visits, the mass cut added as the global PageRank: biased), ``W:L:q`` (after
``L`` visits one walk in ``q`` goes on, ``q`` times heavier, and the PageRank term adds the mass cut less the mass
that went on, zero in expectation: unbiased, the PageRank a control variate; ``q`` >= 2).

The product's code is unchanged: the probe compiles the twin's kernels (``compute.gpu.wtf_push._SOURCE``) with one
more, a copy of ``local_walks`` with the cap (its totals summed per block in shared memory, then once per block in
global memory), and has the twin's ``local_block`` launch it in place of ``local_walks`` for the runs with a cap.
The global PageRank (uniform restart, 80 power iterations on the walk's CSR, accounts without an edge restarting
uniformly) is computed once per direction on the device.

Per seed (alone, width 1, as an account page asks): the estimate in the walk CSR's node order, and its top
``--circle`` - 1 (less the seed) scored against the exact method's (``tol`` 1e-10; an account is right when its
exact PPR is at least the exact 999th non-seed value); the walks' kernel time and the walks launched
(``local_block``'s synchronized steps); with ``--lists``, the top ``--top`` relevance and similarity lists of the
twin's Money on the estimate's circle (``_recommend_block``, as the product computes them) against the exact
method's, as the share of the exact list held. One JSON line per (direction, seed kind, run).
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

# the twin's walk kernel with a cap on the visits: a walk that would go on after CUT_AFTER visits stops and adds
# its weight (fixed point, V_ONE units) to the total instead (one seed at a time: width 1)
_CUT = r"""
__device__ u64 cut_total[2];  // [0]: the mass cut; [1]: the mass that went on (weighted), width 1

extern "C" __global__ void local_walks_cut(const long long* ptr, const int* idx, const long long* entries,
                                           const u64* residual, const long long* ends, long long n_entries,
                                           long long n_walks, int width, const long long* seeds, double damping,
                                           u64* visits) {
    // the cut mass summed per thread, then per block in shared memory, then one global addition per block (one
    // address for every walk's addition serialized them: the first form of this probe, slower than no cut)
    __shared__ u64 block_cut, block_on;
    if (threadIdx.x == 0) block_cut = block_on = 0;
    __syncthreads();
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    u64 cut = 0, on = 0;
    if (t < n_walks) {
        long long lo = 0, hi = n_entries - 1;
        while (lo < hi) {
            long long mid = (lo + hi) >> 1;
            if (ends[mid] > t) hi = mid; else lo = mid + 1;
        }
        long long first = lo ? ends[lo - 1] : 0;
        long long count = ends[lo] - first;
        long long e = entries[lo];
        long long u = e / width;
        int j = (int)(e % width);
        long long s = seeds[j];
        u64 weight = (u64)((1.0 - damping) * ((double)residual[lo] / R_ONE) / (double)count * V_ONE);
        u64 state = mix((u64)s * 0x9e3779b97f4a7c15ULL ^ mix((u64)u + 0x632be59bd9b4e019ULL) ^ (u64)(t - first));
        unsigned int go = (unsigned int)(damping * 4294967296.0);
        if (t == first) atomicAdd(&visits[e], weight * (u64)count);
        long long v = u;
        int seen = 1;
        while (true) {
            state += 0x9e3779b97f4a7c15ULL;
            u64 x = mix(state);
            if ((unsigned int)(x >> 32) >= go) break;
            if (seen == CUT_AFTER) {
                cut = weight;
                // Russian roulette (ON_EVERY > 0): one walk in ON_EVERY goes on, ON_EVERY times heavier; the
                // PageRank term then adds (cut - on): zero in expectation, so the estimate is unbiased
                if (ON_EVERY == 0 || (unsigned int)(mix(state ^ 0xd1b54a32d192ed03ULL) & 0xffffffffULL) >=
                                         (unsigned int)(4294967296.0 / (ON_EVERY > 0 ? ON_EVERY : 1))) break;
                weight *= (u64)(ON_EVERY > 0 ? ON_EVERY : 1);
                on = weight;
            }
            long long a = ptr[v], deg = ptr[v + 1] - a;
            v = deg ? (long long)idx[a + (long long)(((x & 0xffffffffULL) * (u64)deg) >> 32)] : s;
            atomicAdd(&visits[v * width + j], weight);
            seen++;
        }
    }
    if (cut) atomicAdd(&block_cut, cut);
    if (on) atomicAdd(&block_on, on);
    __syncthreads();
    if (threadIdx.x == 0 && block_cut) atomicAdd(&cut_total[0], block_cut);  // width 1: one column
    if (threadIdx.x == 0 && block_on) atomicAdd(&cut_total[1], block_on);
}
"""


def global_pagerank(cp, indptr, indices, damping: float, iterations: int = 80):
    """PageRank with a uniform restart over the walk's CSR, on the device (float64, node order)."""
    from compute.gpu._device import set_of

    n = len(indptr) - 1
    deg = cp.diff(indptr)
    rows = set_of(indptr, len(indices))
    x = cp.full(n, 1.0 / n)
    for _ in range(iterations):
        w = cp.where(deg > 0, x / cp.maximum(deg, 1), 0.0)
        y = damping * cp.bincount(indices, weights=w[rows], minlength=n)
        y += (1.0 - damping) / n + damping * float(x[deg == 0].sum()) / n
        x = y
    return x


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=2.0)
    p.add_argument("--random", type=int, default=48)
    p.add_argument("--top-degree", type=int, default=16)
    p.add_argument("--runs", default="1.6e7,8e6,1.6e7:4,1.6e7:8")
    p.add_argument("--epsilon", type=float, default=1e-6)
    p.add_argument("--circle", type=int, default=1000)
    p.add_argument("--top", type=int, default=20)
    p.add_argument(
        "--lists",
        action="store_true",
        help="also score the top --top relevance and similarity lists (the twin's Money on the estimate's circle)",
    )
    p.add_argument("--out", metavar="JSON", help="also write the rows here")
    args = p.parse_args(argv)
    import cupy as cp
    from _setup import json_lines, twitter_graph

    from compute.gpu import wtf as twin
    from compute.gpu import wtf_push
    from compute.gpu._device import module
    from compute.results import RANK_SLACK

    runs = [
        (float(w), int(c[0]) if c else None, int(c[1]) if len(c) > 1 else 0)
        for w, *c in (r.split(":") for r in args.runs.split(","))
    ]
    plain = wtf_push._kernel
    cut_modules = {
        (c, q): module(wtf_push._SOURCE + f"\n#define CUT_AFTER {c}\n#define ON_EVERY {q}\n" + _CUT)
        for _, c, q in runs
        if c
    }

    rows, emit = json_lines()
    name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
    emit({"case": "device", "name": name.decode() if isinstance(name, bytes) else name})
    g = twitter_graph(args.scale, 0, emit)
    dg = twin.device_graph(g)
    rng = np.random.default_rng(1)
    d, want = 0.85, args.circle - 1
    for direction in ("follows", "followers"):
        csr = dg.out_csr(direction)
        deg = csr.degree.get()
        t = time.perf_counter()
        pagerank = global_pagerank(cp, csr.indptr, csr.indices, d)
        cp.cuda.Device().synchronize()
        emit({"case": "pagerank", "direction": direction, "s": time.perf_counter() - t,
              "sum": float(pagerank.sum())})  # fmt: skip
        walk = dg.walk(direction)
        picked = {
            "random": rng.choice(np.flatnonzero(deg > 0), size=args.random, replace=False),
            "top-degree": np.argsort(-deg, kind="stable")[: args.top_degree],
        }
        for kind, seeds in picked.items():
            acc = {r: {"circle": [], "walks_ms": [], "walks": [], "relevance": [], "similarity": []} for r in runs}
            for lo in range(0, len(seeds), 64):
                block = np.asarray(seeds[lo : lo + 64], dtype=np.int64)
                exact_est = twin._estimate(dg, direction, block, d, 1e-10, 100, None, 1e-7)
                x = exact_est[0]
                if args.lists:
                    recs = twin._recommend_block(
                        g, dg, direction, block, exact_est, args.circle, args.top, 0.15, 1e-10, 100
                    )
                    exact_lists = [rec.to_json(g.ids) for rec in recs]
                for j, seed in enumerate(block.tolist()):
                    exact = x[walk.rank, j]
                    col = exact.copy()
                    col[seed] = -1.0
                    kth = float(cp.partition(col, len(col) - want)[len(col) - want].get())
                    del col
                    for r in runs:
                        walks, cut_after, on_every = r
                        if cut_after:
                            mod = cut_modules[cut_after, on_every]
                            cut_total = cp.ndarray((2,), dtype=cp.uint64, memptr=mod.get_global("cut_total"))
                            cut_total[:] = 0
                            wtf_push._kernel = lambda n, mod=mod: mod.get_function(
                                "local_walks_cut" if n == "local_walks" else n
                            )
                        steps: dict = {}
                        try:
                            est, _, _ = wtf_push.local_block(
                                csr.indptr, csr.indices, np.array([seed]), 1, damping=d, epsilon=args.epsilon,
                                walks=walks, steps=steps,
                            )  # fmt: skip
                        finally:
                            wtf_push._kernel = plain
                        est = est[:, 0]
                        if cut_after:
                            cut, on = (float(v) for v in cut_total.get())
                            est = est + (cut - on) / wtf_push._V_ONE / (1.0 - d) * pagerank
                        if args.lists:  # the lists as an account page computes them, from this estimate
                            one = np.array([seed], dtype=np.int64)
                            local_est = (cp.maximum(est, 0.0).reshape(-1, 1), cp.asarray(one), None,
                                         np.zeros(1, dtype=np.int64), np.ones(1, dtype=bool), np.zeros(1))  # fmt: skip
                            (rec,) = twin._recommend_block(g, dg, direction, one, local_est, args.circle, args.top,
                                                           0.15, 1e-10, 100)  # fmt: skip
                            got_lists = rec.to_json(g.ids)
                            for key in ("relevance", "similarity"):
                                want_ids = {e["user_id"] for e in exact_lists[j][key]}
                                have = {e["user_id"] for e in got_lists[key]}
                                acc[r][key].append(len(want_ids & have) / len(want_ids) if want_ids else 1.0)
                        est[seed] = -np.inf
                        got = cp.argpartition(-est, want)[:want]
                        acc[r]["circle"].append(float((exact[got] >= kth * (1.0 - RANK_SLACK)).mean().get()))
                        acc[r]["walks_ms"].append(steps.get("walks_ms", 0.0))
                        acc[r]["walks"].append(steps.get("walks", 0))
                del x
            for r in runs:
                c = np.array(acc[r]["circle"])
                emit({
                    "case": "tail_probe_gpu", "direction": direction, "seeds": kind, "n": len(seeds),
                    "walks_per_unit": r[0], "cut_after": r[1], "on_every": r[2],
                    "walks_median": float(np.median(acc[r]["walks"])),
                    "walks_ms_median": float(np.median(acc[r]["walks_ms"])),
                    "circle_min_p5_median": [round(float(v), 4) for v in (c.min(), np.percentile(c, 5), np.median(c))],
                    "circle": acc[r]["circle"],
                    **{
                        f"{key}_min_p5_median": [round(float(v), 3) for v in (min(a), np.percentile(a, 5),
                                                                              np.median(a))]
                        for key in ("relevance", "similarity")
                        if (a := acc[r][key])
                    },
                })  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
