"""GPU benchmark of network analytics (issue 14): the GPU twins checked against the CPU reference on a small R-MAT
graph, then timed on a large one (GraphCT's Kwak-sized test: 1.47 billion directed edges, A = 0.55,
B = C = 0.1, D = 0.25). Run in the repository root on the device machine:

    PYTHONUNBUFFERED=1 python3 benchmarks/network_gpu_bench.py --scale 26 --edges 1470000000 --samples 256

The large graph is generated on the device (R-MAT: each edge picks one of four quadrants per bit), its
undirected simple view built there (both directions, self loops dropped, duplicates merged: one radix sort of
``src << 32 | dst`` keys per range of sources), and handed to the twins as a resident graph, so no host copy of
12 GB is made. Prints one JSON line per measurement and a table last.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import cupy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from compute.algorithms import network as cpu
from compute.gpu import network as gpu
from compute.graphs import Graph, graph_from_edges, undirected

A, B, C = 0.55, 0.1, 0.1  # D = 0.25


def rmat_host(scale: int, edges: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    src = np.zeros(edges, np.int64)
    dst = np.zeros(edges, np.int64)
    for _ in range(scale):
        r = rng.random(edges)
        right = (r >= A) & (r < A + B) | (r >= A + B + C)
        down = r >= A + B
        src = (src << 1) | down
        dst = (dst << 1) | right
    return src, dst


def rmat_device(scale: int, edges: int, seed: int, chunk: int = 1 << 26) -> list[cp.ndarray]:
    """``edges`` R-MAT edges over ``2**scale`` nodes, ``[src, dst]`` int32 device arrays, generated in chunks."""
    src = cp.empty(edges, cp.int32)
    dst = cp.empty(edges, cp.int32)
    rs = cp.random.RandomState(seed)
    for a in range(0, edges, chunk):
        b = min(edges, a + chunk)
        s = cp.zeros(b - a, cp.int32)
        d = cp.zeros(b - a, cp.int32)
        for _ in range(scale):
            r = rs.random_sample(b - a, dtype=cp.float32)
            s = (s << 1) | (r >= A + B).astype(cp.int32)
            d = (d << 1) | (((r >= A) & (r < A + B)) | (r >= A + B + C)).astype(cp.int32)
        src[a:b], dst[a:b] = s, d
    return [src, dst]


def undirected_csr_device(n: int, edges: list[cp.ndarray], parts: int = 16):
    """The undirected simple view's CSR (int64 indptr, int32 indices, rows sorted) built on the device from
    ``edges = [src, dst]`` (emptied: the edge list is freed before the final concatenation)."""
    src, dst = edges
    bounds = np.linspace(0, n, parts + 1).astype(np.int64)
    counts = cp.zeros(n, cp.int64)
    cols = []
    for k in range(parts):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        keys = []
        for a, b in ((src, dst), (dst, src)):
            mask = (a >= lo) & (a < hi) & (a != b)
            keys.append((a[mask].astype(cp.int64) << 32) | b[mask].astype(cp.int64))
            del mask
        key = cp.unique(cp.concatenate(keys))  # sorted, duplicates merged
        del keys
        counts += cp.bincount((key >> 32).astype(cp.int32), minlength=n)
        cols.append((key & 0xFFFFFFFF).astype(cp.int32))
        del key
    edges.clear()
    del src, dst
    cp.get_default_memory_pool().free_all_blocks()
    indptr = cp.concatenate([cp.zeros(1, cp.int64), cp.cumsum(counts, dtype=cp.int64)])
    indices = cp.concatenate(cols)
    return indptr, indices


def resident_graph(n: int, indptr: cp.ndarray, indices: cp.ndarray) -> Graph:
    """A Graph whose device copy is these arrays (the host arrays are placeholders of the right length)."""
    g = Graph(
        ids=np.arange(n, dtype=np.int64),
        indptr=np.zeros(n + 1, np.int64),
        indices=np.zeros(0, np.int32),
        directed=False,
    )
    d = gpu._DeviceCSR.__new__(gpu._DeviceCSR)
    d.n, d.m = n, int(indices.size)
    d.indptr, d.indices, d._src, d._transposed = indptr, indices, None, None
    gpu._resident[g] = d
    return g


def timed(fn, *args, **kw):
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    cp.cuda.Device().synchronize()
    return out, time.perf_counter() - t0


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return math.inf
    scale = np.maximum(np.abs(b), 1e-300)
    return float(np.max(np.abs(a - b) / scale)) if len(a) else 0.0


def check(scale: int, factor: int, samples: int, seed: int) -> list[dict]:
    """Every twin against the CPU reference on a small R-MAT graph (directed and undirected analyses)."""
    s, d = rmat_host(scale, factor << scale, seed)
    g = graph_from_edges(s, d, ids=np.arange(1 << scale))
    rows = []

    def row(name, ok, detail, t_cpu, t_gpu):
        rows.append({"check": name, "ok": bool(ok), "detail": detail, "cpu_s": t_cpu, "gpu_s": t_gpu})
        print(json.dumps(rows[-1]), flush=True)

    for name in ("degrees", "components", "strong_components", "core_numbers"):
        c, tc = timed(getattr(cpu, name), g, backend="cpu")
        gg, tg = timed(getattr(gpu, name), g, backend="gpu")
        if name == "degrees":
            ok = np.array_equal(c.in_degree, gg.in_degree) and np.array_equal(c.out_degree, gg.out_degree)
        elif name == "core_numbers":
            ok = np.array_equal(c, gg)
        else:
            ok = np.array_equal(c.labels, gg.labels) and np.array_equal(c.sizes, gg.sizes)
        row(name, ok, "exact", tc, tg)
    c, tc = timed(cpu.clustering, g, backend="cpu")
    gg, tg = timed(gpu.clustering, g, backend="gpu")
    ok = np.array_equal(c.triangles, gg.triangles) and rel_err(gg.local, c.local) <= 1e-9
    row("clustering", ok and abs(c.transitivity - gg.transitivity) <= 1e-9 * abs(c.transitivity), "", tc, tg)
    for k in (0, samples):
        c, tc = timed(cpu.betweenness, g, samples=k, seed=seed, backend="cpu")
        gg, tg = timed(gpu.betweenness, g, samples=k, seed=seed, backend="gpu")
        err = rel_err(gg.values[c.values > 0], c.values[c.values > 0])
        zero = np.array_equal(gg.values[c.values == 0], c.values[c.values == 0])
        row(f"betweenness samples={k}", err <= 1e-9 and zero, f"max rel err {err:.2e}", tc, tg)
    c, tc = timed(cpu.conversations, g, backend="cpu")
    gg, tg = timed(gpu.conversations, g, backend="gpu")
    ok = np.array_equal(c.graph.ids, gg.graph.ids) and np.array_equal(c.graph.indices, gg.graph.indices)
    row("conversations", ok, f"{c.nodes_after} nodes, {c.edges_after} edges", tc, tg)
    hub = int(np.argmax(np.diff(undirected(g).indptr)))
    c, tc = timed(cpu.neighbourhood, g, hub, depth=2, backend="cpu")
    gg, tg = timed(gpu.neighbourhood, g, hub, depth=2, backend="gpu")
    row(
        "neighbourhood",
        np.array_equal(c.graph.ids, gg.graph.ids) and np.array_equal(c.distance, gg.distance),
        "",
        tc,
        tg,
    )
    return rows


def big(scale: int, edges: int, samples: int, seed: int, only: set[str]) -> list[dict]:
    n = 1 << scale
    out = []
    pair, t_gen = timed(rmat_device, scale, edges, seed)
    (indptr, indices), t_csr = timed(undirected_csr_device, n, pair)  # empties pair: the edge list is freed
    cp.get_default_memory_pool().free_all_blocks()
    g = resident_graph(n, indptr, indices)
    m = int(indices.size)
    csr_bytes = indptr.nbytes + indices.nbytes
    info = {"nodes": n, "directed_edges": edges, "undirected_adjacency": m, "csr_gb": csr_bytes / 1e9,
            "generate_s": t_gen, "build_csr_s": t_csr}  # fmt: skip
    print(json.dumps(info), flush=True)
    bw = 3.0e12  # bytes/s, the device copy measured on this machine kind (benchmarks/gpu.md)
    floors = {
        "components": csr_bytes / bw,  # every edge read at least once
        "core_numbers": csr_bytes / bw,
        "clustering": 2 * csr_bytes / bw,  # orientation reads the CSR twice
        "betweenness": samples * csr_bytes / bw,  # every search reads the whole adjacency once
    }
    for name in ("components", "core_numbers", "clustering", "betweenness"):
        if name not in only:
            continue
        fn = getattr(gpu, name)
        kw = {"samples": samples, "seed": seed} if name == "betweenness" else {}
        res, t = timed(fn, g, backend="gpu", **kw)
        pool = cp.get_default_memory_pool().total_bytes()
        r = {"analysis": name, "seconds": t, "floor_s": floors[name], "device_pool_gb": pool / 1e9}
        if name == "components":
            r["components"] = len(res.sizes)
            r["largest"] = int(res.sizes[0])
        if name == "core_numbers":
            r["max_core"] = int(res.max())
        if name == "clustering":
            r["transitivity"] = res.transitivity
        if name == "betweenness":
            r["sources"] = len(res.sources)
            r["top"] = float(res.values.max())
        out.append(r)
        print(json.dumps(r), flush=True)
        cp.get_default_memory_pool().free_all_blocks()
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--scale", type=int, default=26)
    p.add_argument("--edges", type=int, default=1_470_000_000)
    p.add_argument("--samples", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check-scale", type=int, default=11)
    p.add_argument("--only", default="check,components,core_numbers,clustering,betweenness")
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    args = p.parse_args()
    only = set(args.only.split(","))
    dev = cp.cuda.runtime.getDeviceProperties(0)
    print(json.dumps({"device": dev["name"].decode(), "memory_gb": dev["totalGlobalMem"] / 1e9}), flush=True)
    checks = check(args.check_scale, 8, 64, args.seed) if "check" in only else []
    bench = big(args.scale, args.edges, args.samples, args.seed, only)
    Path(args.out, "network_gpu.json").write_text(json.dumps({"checks": checks, "bench": bench}, indent=1))
    print()
    for c in checks:
        print(
            f"{'ok ' if c['ok'] else 'BAD'} {c['check']:28s} cpu {c['cpu_s']:8.3f} s"
            f"  gpu {c['gpu_s']:8.3f} s  {c['detail']}"
        )
    for b in bench:
        print(
            f"{b['analysis']:14s} {b['seconds']:8.2f} s   floor {b['floor_s']:.3f} s"
            f"   pool {b['device_pool_gb']:.1f} GB"
        )


if __name__ == "__main__":
    main()
