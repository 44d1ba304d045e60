"""Spreadwatch's influence engine (Lindberg 2020): readers, forward and backward phases, combining,
generators, benchmarks and a CLI (``python -m compute``); and the network analytics of GraphCT over
:class:`Graph` (``compute.graphs``, ``compute.algorithms.network``).

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
    "Graph",
    "SpreadingGraphs",
    "TweetTable",
    "backward",
    "betweenness",
    "build_cascades",
    "clustering",
    "combine",
    "components",
    "conversations",
    "core_numbers",
    "degrees",
    "follower_graph",
    "forward",
    "graph_from_edges",
    "interaction_graph",
    "load_archive",
    "neighbourhood",
    "rank",
    "save_archive",
    "strong_components",
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
    "stream": "algorithms.stream",
    "rank": "pipeline",
    "Graph": "graphs",
    "graph_from_edges": "graphs",
    "follower_graph": "graphs",
    "interaction_graph": "graphs",
    "degrees": "algorithms.network",
    "components": "algorithms.network",
    "strong_components": "algorithms.network",
    "core_numbers": "algorithms.network",
    "clustering": "algorithms.network",
    "betweenness": "algorithms.network",
    "conversations": "algorithms.network",
    "neighbourhood": "algorithms.network",
}


def __getattr__(name: str):
    if name in _LAZY:
        mod = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(mod, name)
    raise AttributeError(f"module 'compute' has no attribute {name!r}")
