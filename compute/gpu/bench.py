"""GPU timings for ``python -m compute bench --backend gpu`` (METHOD.md: device events, warm-up, median).

The phase's *kernel time* is what the thesis reported (no host<->device copies, data already laid out on the
device); the upload, the preparation (in-edge lists for the backward phase, the participant tables for the
forward phase) and the end-to-end call with copies are timed too and reported beside it.
"""

from __future__ import annotations

import statistics
import time

import cupy as cp
import numpy as np

from ..structures import Cascades, FollowerGraph, SpreadingGraphs
from ._device import Timer


def _device_info() -> dict:
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return {
        "device": name,
        "device_memory_bytes": int(props["totalGlobalMem"]),
        "sms": int(props["multiProcessorCount"]),
    }


def _median_events(fn, repeat: int) -> list[float]:
    """Seconds per call of ``fn`` (which only enqueues work), timed with device events."""
    out = []
    for _ in range(repeat):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
    return out


def bench_backward(graphs: SpreadingGraphs, repeat: int) -> tuple[list[float], dict]:
    from .backward import backward, prepare

    pool = cp.get_default_memory_pool()
    pool.free_all_blocks()
    warm, _ = prepare(graphs)  # the first call pays cudaMalloc for the pool; time the second, as a worker sees
    del warm
    timer = Timer()
    t0 = time.perf_counter()
    prepared, cyclic = prepare(graphs, timer)
    cp.cuda.Device().synchronize()
    prep_wall = time.perf_counter() - t0
    parts = timer.result()
    prepared.launch()  # warm-up: compiles the kernel
    cp.cuda.Device().synchronize()
    times = _median_events(prepared.launch, max(20, repeat))
    prepared.check()  # raises if a wait gave up or a value was left unwritten
    per_class = {}
    for i, (blocks, threads, _smem, cluster) in enumerate(prepared.launches):
        if len(blocks):
            ts = _median_events(lambda i=i, p=prepared: p.launch(only=i), 10)
            per_class[f"class{i}_cascades{len(blocks)}_threads{threads}x{cluster}_ms"] = statistics.median(ts) * 1e3
            if prepared.idx_type == "unsigned short":  # the same launch without waiting: streaming cost alone
                ts = _median_events(lambda i=i, p=prepared: p.launch(only=i, wait=False), 10)
                per_class[f"class{i}_nowait_ms"] = statistics.median(ts) * 1e3
    prepared.launch()
    device_bytes = pool.total_bytes()
    t0 = time.perf_counter()
    got = prepared.influence()
    download = time.perf_counter() - t0
    idx_type = prepared.idx_type
    del prepared
    e2e = []
    for _ in range(3):
        t0 = time.perf_counter()
        res = backward(graphs, backend="gpu")
        e2e.append(time.perf_counter() - t0)
    same = bool(np.array_equal(got.view(np.int64), res.influence.view(np.int64), equal_nan=False)) if not len(
        cyclic) else None  # fmt: skip
    extra = {
        **_device_info(),
        "kernel_median_s": statistics.median(times),
        "upload_s": parts.get("upload", 0) / 1e3,
        "prepare_s": parts.get("prepare", 0) / 1e3,
        "prepare_wall_s": prep_wall,
        "download_s": download,
        "end_to_end_median_s": statistics.median(e2e),
        "device_pool_bytes": int(device_bytes),
        "per_class_ms": per_class,
        "index_type": idx_type,
        "bitwise_repeatable": same,
    }
    return times, extra


def bench_forward(cascades: Cascades, graph: FollowerGraph, orphans: str, repeat: int) -> tuple[list[float], dict]:
    from .forward import DeviceGraph, ForwardRun, _graphs, forward

    pool = cp.get_default_memory_pool()
    _graphs.clear()
    pool.free_all_blocks()
    t0 = time.perf_counter()
    dg = DeviceGraph(graph)
    cp.cuda.Device().synchronize()
    graph_upload_wall = time.perf_counter() - t0
    timer = Timer()
    run = ForwardRun(cascades, dg, orphans, timer)
    run.run()  # warm-up: compiles the kernels
    cp.cuda.Device().synchronize()
    phases: dict[str, list[float]] = {}

    def once():
        t = Timer()
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        out = run.run(t)
        b.record()
        b.synchronize()
        for k, v in t.result().items():
            phases.setdefault(k, []).append(v / 1e3)
        return cp.cuda.get_elapsed_time(a, b) / 1e3, out

    times = []
    for _ in range(max(20, repeat)):
        s, out = once()
        times.append(s)
    device_bytes = pool.total_bytes()
    src, dst, counts = out
    t0 = time.perf_counter()
    sg = run.to_graphs(src, dst, counts, orphans)
    download = time.perf_counter() - t0
    e2e = []
    _graphs[graph] = dg  # the end-to-end call reuses the resident graph, as a worker does
    for _ in range(3):
        t0 = time.perf_counter()
        forward(cascades, graph, orphans=orphans, backend="gpu")
        e2e.append(time.perf_counter() - t0)
    extra = {
        **_device_info(),
        "kernel_median_s": statistics.median(times),
        "graph_upload_s": dg.timings.get("graph_upload", 0) / 1e3,
        "graph_upload_wall_s": graph_upload_wall,
        "graph_device_bytes": dg.nbytes,
        "upload_s": timer.result().get("upload", 0) / 1e3,
        "download_s": download,
        "end_to_end_median_s": statistics.median(e2e),
        "device_pool_bytes": int(device_bytes),
        "candidates": run.n_candidates,
        "reach_sweeps": getattr(run, "sweeps", 0),
        "spreading_edges_gpu": sg.n_edges,
    }
    for k, v in phases.items():
        extra[f"{k}_median_s"] = statistics.median(v)
    return times, extra
