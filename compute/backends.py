"""Choosing the compute backend: ``"auto"`` (GPU when CuPy sees one, else CPU), ``"cpu"`` or ``"gpu"``; naming
the device a computation ran on; telling a GPU out-of-memory error from other errors and freeing the memory
pool after one.

CuPy is imported lazily, and only here and in ``compute.gpu``: this module imports without it (the web app and
CPU workers never load CuPy; ``monitor/`` asks this module instead).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys

__all__ = [
    "BACKENDS",
    "BackendUnavailable",
    "device_name",
    "free_device_memory",
    "gpu_available",
    "gpu_package_installed",
    "is_device_oom",
    "resolve_backend",
]

BACKENDS = ("auto", "cpu", "gpu")


class BackendUnavailable(RuntimeError):
    """``backend="gpu"`` was asked for where no usable GPU is."""


@functools.cache
def _gpu_probe() -> str | None:
    """``None`` when a GPU is usable, else the reason it is not (cached: CUDA init is slow)."""
    if os.environ.get("SPREADWATCH_DISABLE_GPU", "") in ("1", "true", "yes"):
        return "disabled by SPREADWATCH_DISABLE_GPU"
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CUDA library that fails to load
        return f"CuPy is not importable ({type(exc).__name__}: {exc})"
    try:
        import cupy

        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"CuPy sees no CUDA device ({type(exc).__name__}: {exc})"
    return None if n > 0 else "CuPy sees no CUDA device"


def gpu_package_installed() -> bool:
    """Whether CuPy is installed: found, not imported (importing it loads CUDA), so a check can ask cheaply."""
    return importlib.util.find_spec("cupy") is not None


def gpu_available() -> bool:
    return _gpu_probe() is None


def gpu_unavailable_reason() -> str | None:
    return _gpu_probe()


def resolve_backend(backend: str) -> str:
    """Map ``auto`` to ``gpu``/``cpu``; raise a clear error for an unknown name or an absent GPU."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if backend == "auto":
        return "gpu" if gpu_available() and _gpu_impl_present() else "cpu"
    if backend == "gpu":
        reason = _gpu_probe()
        if reason:
            raise BackendUnavailable(f"backend='gpu' was requested but {reason}")
        if not _gpu_impl_present():
            raise BackendUnavailable("backend='gpu' was requested but this build has no GPU kernels (compute.gpu)")
    return backend


def _gpu_impl_present() -> bool:
    try:
        import compute.gpu  # noqa: F401
    except ImportError:
        return False
    return True


def _physical_gpu(visible: int) -> str:
    """The machine's number of the ``visible``-th GPU this process sees: a worker pinned with
    ``CUDA_VISIBLE_DEVICES=1`` computes on its device 0, which is the machine's GPU 1 (the run page and the
    scale-out benchmark tell the workers apart by it)."""
    ids = [p.strip() for p in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if p.strip()]
    return ids[visible] if visible < len(ids) else str(visible)


def device_name(backend: str) -> str:
    """What a batch computed on ``backend`` (``"cpu"`` or ``"gpu"``) ran on, for a run's record."""
    if backend == "gpu":
        try:
            import cupy

            dev = cupy.cuda.Device()
            name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"]
            return f"GPU {_physical_gpu(dev.id)}: {name.decode() if isinstance(name, bytes) else name}"
        except Exception as exc:  # pragma: no cover - depends on the machine
            return f"GPU ({exc.__class__.__name__})"
    from compute._jit import HAVE_NUMBA

    return f"CPU ({os.cpu_count()} cores{', numba' if HAVE_NUMBA else ', NumPy only'})"


def is_device_oom(exc: BaseException) -> bool:
    """Whether ``exc`` says the GPU ran out of memory: CuPy's ``OutOfMemoryError``, or a CUDA allocation failure
    reported by the runtime or driver API."""
    cupy = sys.modules.get("cupy")  # not imported here: an error raised by CuPy means it is loaded already
    if cupy is not None and isinstance(exc, cupy.cuda.memory.OutOfMemoryError):
        return True
    text = str(exc)
    return "cudaErrorMemoryAllocation" in text or "CUDA_ERROR_OUT_OF_MEMORY" in text


def free_device_memory() -> None:
    """Give CuPy's cached device blocks back (after an out-of-memory error); a no-op where CuPy is not loaded."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()
