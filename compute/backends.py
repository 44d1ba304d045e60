"""Choosing the compute backend: ``"auto"`` (GPU when CuPy sees one, else CPU), ``"cpu"`` or ``"gpu"``."""

from __future__ import annotations

import functools
import os

__all__ = ["BACKENDS", "BackendUnavailable", "gpu_available", "resolve_backend"]

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
