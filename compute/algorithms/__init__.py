"""Every algorithm of the engine, one module each: its CPU reference and its one public dispatcher.

``compute/algorithms/<name>.py`` holds the reference (NumPy/numba: the values every other engine is checked
against) and the public function ``<name>(..., backend="auto"|"cpu"|"gpu")``; ``compute/gpu/<name>.py``
holds the CuPy twin with the same name and signature, which never dispatches (docs/adding-an-algorithm.md,
docs/adding-an-algorithm.md). The influence measure is three of them, run in order (the first two also as one):

* :func:`forward` — each cascade's spreading graph from the follower graph and the retweet times;
* :func:`backward` — every participant's influence along its spreading graph;
* :func:`influence` — both phases in one call (what a compute batch runs: on the GPU the spreading graph stays
  on the device between them);
* :func:`combine` — influence combined over tweets, per publisher and per time bucket (CPU only: a reduction
  over the results, cheap next to the two phases).

An algorithm may also be a family of analyses over one graph, one dispatcher each: ``network`` (GraphCT:
:func:`degrees`, :func:`components`, :func:`strong_components`, :func:`core_numbers`, :func:`clustering`,
:func:`betweenness`, :func:`betweenness_partial`, :func:`betweenness_stability`, :func:`conversations`,
:func:`neighbourhood`; docs/network.md), ``wtf`` (who amplifies whom: :func:`wtf`, built on
:func:`personalized_pagerank` and :func:`money`; docs/wtf.md) and ``influence_max`` (IMGPU/IMM:
:func:`influence_max`, :func:`rr_sets`, :func:`select_seeds`, :func:`imm_sample_size`,
:func:`evaluate_spread`; docs/influence_max.md). ``stream`` (issue 17, CRGP) is the forward phase applied
incrementally: :func:`stream` returns a stateful engine fed with micro-batches (docs/stream.md).

Public names load lazily, so importing the package imports no kernel module.
"""

from __future__ import annotations

import importlib

#: every algorithm module of compute/algorithms/ (its GPU twin, where one exists, is compute/gpu/<name>.py)
ALGORITHMS = ("forward", "backward", "influence", "combine", "network", "wtf", "influence_max", "stream")

#: public function -> the algorithm module defining it: a one-step algorithm defines the function of its own
#: name; a family of analyses (``network``) defines one dispatcher per analysis
FUNCTIONS = {
    "forward": "forward",
    "backward": "backward",
    "influence": "influence",
    "combine": "combine",
    "wtf": "wtf",
    "personalized_pagerank": "wtf",
    "money": "wtf",
    **{
        name: "network"
        for name in (
            "degrees",
            "components",
            "strong_components",
            "core_numbers",
            "clustering",
            "betweenness",
            "betweenness_partial",
            "betweenness_stability",
            "conversations",
            "neighbourhood",
        )
    },
    # not ``influence_max`` or ``stream`` themselves: those names are the modules
    # (``from compute.algorithms import influence_max``)
    **{name: "influence_max" for name in ("rr_sets", "select_seeds", "imm_sample_size", "evaluate_spread")},
}

__all__ = ["ALGORITHMS", "FUNCTIONS", *FUNCTIONS]


def __getattr__(name: str):
    if name in FUNCTIONS:
        return getattr(importlib.import_module(f".{FUNCTIONS[name]}", __name__), name)
    raise AttributeError(f"module 'compute.algorithms' has no attribute {name!r}")
