"""Every algorithm of the engine, one module each: its CPU reference and its one public dispatcher.

``compute/algorithms/<name>.py`` holds the reference (NumPy/numba: the values every other engine is checked
against) and the public function ``<name>(..., backend="auto"|"cpu"|"gpu")``; ``compute/gpu/<name>.py``
holds the CuPy twin with the same name and signature, which never dispatches (DESIGN §6,
docs/adding-an-algorithm.md). The influence measure is three of them, run in order:

* :func:`forward` — each cascade's spreading graph from the follower graph and the retweet times;
* :func:`backward` — every participant's influence along its spreading graph;
* :func:`combine` — influence combined over tweets, per publisher and per time bucket (CPU only: a reduction
  over the results, cheap next to the two phases).

Public names load lazily, so importing the package imports no kernel module.
"""

from __future__ import annotations

import importlib

__all__ = ["ALGORITHMS", "backward", "combine", "forward"]

#: name -> module of every algorithm; the module defines the public function of the same name
ALGORITHMS = ("forward", "backward", "combine")


def __getattr__(name: str):
    if name in ALGORITHMS:
        return getattr(importlib.import_module(f".{name}", __name__), name)
    raise AttributeError(f"module 'compute.algorithms' has no attribute {name!r}")
