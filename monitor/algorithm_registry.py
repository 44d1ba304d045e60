"""The registry of the algorithms a compute run can run: name -> the registered algorithm. It is the one list of
them: ``monitor.algorithms.base`` fills it (``register``) and reads it (``get``, ``names``), and the run model's
``ComputeRun.algorithm`` field offers its names and labels (:func:`choices`).

A module of its own that imports nothing: the models read their choices here, while the algorithm modules import
the models and ``monitor.algorithms.base`` names them for its annotations, so the models reading the registry
there tied ten modules (``monitor/models/`` and the algorithms' base) into one import loop.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REGISTRY", "choices"]

#: name -> the registered algorithm (a ``monitor.algorithms.base.Algorithm``; here only its name and label are
#: read), in registration order
REGISTRY: dict[str, Any] = {}


def choices() -> list[tuple[str, str]]:
    """``(name, label)`` pairs of the registered algorithms, for a model field's or a form's choices; a callable,
    so that the field reads them when it validates (adding an algorithm needs no migration of that field)."""
    return [(a.name, a.label) for a in REGISTRY.values()]
