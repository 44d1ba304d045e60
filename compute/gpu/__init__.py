"""GPU twins of the forward and backward phases, in CuPy (benchmarks/gpu.md has what they measure).

Importing this package imports CuPy, so it exists only where CuPy does; :mod:`compute.backends` imports it
lazily and ``backend="auto"`` uses it when CuPy also sees a device. The public functions have the CPU
references' names and signatures; the CPU versions stay the reference the tests compare against.

* :func:`backward` — sync-free pull over the in-edges, one thread block per cascade, readiness carried by a
  sentinel in the share array itself (``backward.py`` explains).
* :func:`forward` — candidate edges by load-balanced membership tests (GALE's cheaper side per retweeter),
  then reachability from the publisher by a few edge-parallel sweeps (``forward.py`` explains).

Kernels are CUDA C source strings beside their wrappers, compiled on first use and cached (:mod:`._device`).
"""

from __future__ import annotations

import cupy  # noqa: F401  (this package exists only where CuPy imports)

from .backward import backward
from .forward import forward

__all__ = ["backward", "forward"]
