"""Device helpers shared by the GPU kernels: compiled-module cache, memory budget, timing, a CSR's row of each
entry."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import time

import cupy as cp
import numpy as np

log = logging.getLogger("compute.gpu")

#: compile options for every module: Hopper first, but the PTX JIT keeps older cards working
_OPTIONS = ("--std=c++17",)


@functools.cache
def module(source: str, name_expressions: tuple[str, ...] = ()) -> cp.RawModule:
    """The compiled module for ``source`` (memoised; CuPy also caches the binary on disk)."""
    return cp.RawModule(code=source, options=_OPTIONS, name_expressions=name_expressions or None)


def kernel(source: str, name: str) -> cp.RawKernel:
    return module(source).get_function(name)


#: why each capture that :func:`replayable` tried failed (benchmarks report it: a fallback is slower, not wrong)
CAPTURE_FAILURES: list[str] = []


def replayable(launches):
    """``launches`` (a function that only launches kernels, with fixed arguments and no allocation) captured once
    as a CUDA graph: each call of the result replays it on the current stream, one launch instead of one per
    kernel (a loop of small kernels is bound by the launches from Python, ~10-25 us each). Where the runtime
    cannot capture, ``launches`` itself (the failure is logged and kept in :data:`CAPTURE_FAILURES`)."""
    side = cp.cuda.Stream(non_blocking=True)
    try:
        with side:
            side.begin_capture()
            try:
                launches()
            finally:
                graph = side.end_capture()
    except (AttributeError, NotImplementedError, RuntimeError, cp.cuda.runtime.CUDARuntimeError) as e:
        cp.cuda.Device().synchronize()
        if len(CAPTURE_FAILURES) < 100:
            CAPTURE_FAILURES.append(f"{type(e).__name__}: {e}")
            log.warning("CUDA graph capture failed, launching one kernel at a time: %s", e)
        return launches

    def replay() -> None:
        graph.launch(cp.cuda.get_current_stream())

    return replay


def memory_budget() -> int:
    """Bytes a batch may use on the device: ``SPREADWATCH_GPU_MEMORY_BYTES`` if set (tests use it to force
    chunking), else 80% of what is free now plus what CuPy's pool holds unused."""
    env = os.environ.get("SPREADWATCH_GPU_MEMORY_BYTES")
    if env:
        try:
            value = int(float(env))
        except ValueError:
            raise ValueError(f"SPREADWATCH_GPU_MEMORY_BYTES must be a number of bytes, not {env!r}") from None
        if value <= 0:
            raise ValueError(f"SPREADWATCH_GPU_MEMORY_BYTES must be positive, not {env!r}")
        return value
    free, _total = cp.cuda.runtime.memGetInfo()
    pool = cp.get_default_memory_pool()
    return int(0.8 * (free + pool.free_bytes()))


def plan_chunks(cost: np.ndarray, budget: int) -> tuple[list[tuple[int, int]], list[int]]:
    """Split cascades ``0..T-1`` (device bytes ``cost[t]`` each) into contiguous runs under ``budget``.

    Returns ``(chunks, oversized)``: ``oversized`` are the cascades that alone exceed the budget; they are
    left out of every chunk (the caller runs them elsewhere and says so)."""
    chunks: list[tuple[int, int]] = []
    oversized = [int(t) for t in np.flatnonzero(cost > budget)]
    t, n = 0, len(cost)
    csum = np.concatenate(([0], np.cumsum(cost, dtype=np.float64)))
    while t < n:
        if cost[t] > budget:
            t += 1
            continue
        # the longest run from t whose total fits, stopping before an oversized cascade
        end = int(np.searchsorted(csum, csum[t] + budget, side="right")) - 1
        end = max(end, t + 1)
        big = np.flatnonzero(cost[t:end] > budget)
        if len(big):
            end = t + int(big[0])
        chunks.append((t, end))
        t = end
    return chunks, oversized


class Timer:
    """Device-event timing of named regions on the current stream (milliseconds), for the benchmarks."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, cp.cuda.Event, cp.cuda.Event]] = []

    @contextlib.contextmanager
    def region(self, name: str):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        try:
            yield
        finally:
            end.record()
            self.marks.append((name, start, end))

    def result(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for name, a, b in self.marks:
            b.synchronize()
            out[name] = out.get(name, 0.0) + cp.cuda.get_elapsed_time(a, b)
        return out


class Steps:
    """Synchronized wall clock of a function's steps, in ms, added into ``out`` with any facts given (None: nothing
    recorded and no sync, what the product runs): ``step = Steps(out)`` at the start, ``step("name")`` after each
    step."""

    def __init__(self, out: dict | None) -> None:
        self.out = out
        if out is not None:
            cp.cuda.Device().synchronize()  # what the caller launched before is not the first step's
        self.t = time.perf_counter()

    def __call__(self, name: str, **facts) -> None:
        if self.out is None:
            return
        cp.cuda.Device().synchronize()
        now = time.perf_counter()
        self.out[f"{name}_ms"] = self.out.get(f"{name}_ms", 0.0) + 1e3 * (now - self.t)
        self.out.update(facts)
        self.t = now


def set_of(indptr: cp.ndarray, size: int) -> cp.ndarray:
    """The row (set) each of a CSR's first ``size`` entries belongs to (cupy.repeat takes no device array of
    counts)."""
    return cp.searchsorted(indptr[1:], cp.arange(size, dtype=cp.int64), side="right")
