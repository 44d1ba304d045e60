"""Spreadwatch's influence engine (Lindberg 2020): readers, forward and backward phases, combining,
generators, benchmarks and a CLI (``python -m compute``).

This package never imports Django or Celery, and needs only NumPy at import time; numba (CPU speed),
msgspec (reader speed) and CuPy (GPU backend) are used when present. Public names load lazily, so
``import compute`` is cheap.
"""

from __future__ import annotations

import importlib

__all__ = [
    "Cascades",
    "FollowTable",
    "FollowerGraph",
    "SpreadingGraphs",
    "TweetTable",
    "backward",
    "build_cascades",
    "combine",
    "forward",
    "load_archive",
    "rank",
    "save_archive",
]

_LAZY = {
    "Cascades": "structures",
    "FollowerGraph": "structures",
    "SpreadingGraphs": "structures",
    "save_archive": "structures",
    "load_archive": "structures",
    "TweetTable": "tables",
    "FollowTable": "tables",
    "build_cascades": "build",
    "forward": "algorithms.forward",
    "backward": "algorithms.backward",
    "combine": "algorithms.combine",
    "rank": "pipeline",
}


def __getattr__(name: str):
    if name in _LAZY:
        mod = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(mod, name)
    raise AttributeError(f"module 'compute' has no attribute {name!r}")
