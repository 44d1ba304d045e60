"""Optional numba: ``njit`` compiles with numba when it is installed and is the identity otherwise.

The kernels are written once, as plain Python over NumPy arrays, so the numba build and the fallback are the
same code: without numba they give the same results, only slower. ``SPREADWATCH_NO_NUMBA=1`` forces the
fallback (the tests use it to prove the two agree).
"""

from __future__ import annotations

import os

__all__ = ["HAVE_NUMBA", "njit", "prange"]

HAVE_NUMBA = False
if os.environ.get("SPREADWATCH_NO_NUMBA", "") not in ("1", "true", "yes"):
    try:
        import numba

        HAVE_NUMBA = True
    except ImportError:  # pragma: no cover - exercised where numba is absent
        pass


def njit(*args, **kwargs):
    """``numba.njit(cache=True, nogil=True, ...)`` or a no-op decorator."""
    if HAVE_NUMBA:
        kwargs.setdefault("cache", True)
        kwargs.setdefault("nogil", True)
        return numba.njit(*args, **kwargs)
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


prange = numba.prange if HAVE_NUMBA else range
