"""The algorithms a compute run can run, one module each, behind one contract (:mod:`.base`).

``get(name)`` gives the algorithm a run names (``ComputeRun.algorithm``); ``choices()`` the names and labels
the model field offers. The modules register themselves when imported, and ``MonitorConfig.ready`` imports
them; this package does not (every algorithm module imports the models). The registry they fill is
``monitor.algorithm_registry``, where ``monitor.models`` reads its choices without importing this package.
"""

from __future__ import annotations

from .base import *  # noqa: F403  (the contract and the registry are this package's public names)
from .base import __all__  # noqa: F401
