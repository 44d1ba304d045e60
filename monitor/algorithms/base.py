"""The contract every algorithm of a compute run implements, and the registry that names them.

A run (:class:`~monitor.models.ComputeRun`) records the name of its algorithm; ``monitor.services.runs`` looks
the algorithm up here and leaves three things to it:

1. **plan**: split the run's work into batches (one task each). The influence measure groups cascades by size;
   a graph-wide analysis may plan one batch per range of sources instead.
2. **compute** one batch: load its input from the database and compute it (load -> compute), on the backend
   the worker resolved. It calls ``stop()`` at its safe points and raises :class:`RunCancelled` when that says
   the run was cancelled; nothing is stored until then.
3. **store** the batch's result: inside the transaction, under the row locks on the run and the batch, that the
   runner holds; rows are replaced, not added, so a batch delivered twice stores its rows once.
4. **finish** the run (optional): once, in the transaction that records its last batch done, e.g. to add up
   the partial results its batches stored (a graph-wide analysis split across workers).

Everything else (statuses, locks, retries, cancelling, counting batches into the run, failures) is the
runner's and the same for every algorithm. Adding an algorithm: a module beside ``influence.py`` with a subclass
of :class:`Algorithm` that registers itself, imported in ``MonitorConfig.ready`` (``monitor/apps.py``); the
``ComputeRun.algorithm`` field reads its choices from the registry, so it needs no migration
(docs/adding-an-algorithm.md). The registry's store is ``monitor.algorithm_registry``, which the models read
without importing this package.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

# the registry's store and its choices() live where the models read them without importing this package (it
# would close an import loop through monitor/models/); migration 0006 names this module's ``choices``: the same one
from ..algorithm_registry import REGISTRY as _REGISTRY
from ..algorithm_registry import choices

if TYPE_CHECKING:
    from ..models import ComputeBatch, ComputeRun

__all__ = [
    "Algorithm",
    "BatchOutcome",
    "PlannedBatch",
    "RunCancelled",
    "Stop",
    "UnknownAlgorithm",
    "choices",
    "get",
    "names",
    "register",
]

# asked at the algorithm's safe points: True once the run was cancelled
Stop = Callable[[], bool]


# set by the runner around one batch: where the batch is, for the collection's progress bar (monitor/progress.py)
_phase_reporter: ContextVar[Callable[[str], None] | None] = ContextVar("spreadwatch_phase_reporter", default=None)


def report_phase(phase: str) -> None:
    """Say which phase of its batch an algorithm is in ("computing", "storing results", "aggregates"), for the
    progress bar; a no-op outside a runner. ``store`` calls it before refreshing aggregates."""
    reporter = _phase_reporter.get()
    if reporter is not None:
        reporter(phase)


class RunCancelled(Exception):
    """Raised inside a computing batch when its run was cancelled: nothing of the batch is stored."""


class UnknownAlgorithm(LookupError):
    """A run names an algorithm that no module registered."""


@dataclass(frozen=True)
class PlannedBatch:
    """One batch as the planner gives it; the runner stores it as a :class:`~monitor.models.ComputeBatch`.

    ``tweet_pks`` are the ``Tweet`` primary keys the batch covers; ``n_cascades`` and ``n_nodes`` say how big
    it is (they add up to the run's totals). A graph-wide analysis leaves ``tweet_pks`` empty and names its
    share of the work in ``params``."""

    tweet_pks: list[int]
    n_cascades: int
    n_nodes: int
    #: the batch's share of a graph-wide run (a range of sources, a block of seeds); stored on the batch
    params: dict = field(default_factory=dict)


@dataclass
class BatchOutcome:
    """What the runner records of any algorithm's batch result; an algorithm's result extends it with its rows."""

    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per step, summed into the run's timings
    n_edges: int = 0
    cpu_fallback: list[int] = field(default_factory=list)  # tweet pks computed on the CPU after a GPU OOM

    def tick(self, key: str, t0: float) -> float:
        """Add the seconds since ``t0`` to the step ``key``; return now, the next step's start."""
        t = time.perf_counter()
        self.timings[key] = self.timings.get(key, 0.0) + (t - t0)
        return t


class Algorithm(ABC):
    """One algorithm a compute run can run: its name (stored in ``ComputeRun.algorithm``), label, planner and
    the load -> compute -> store steps of one batch."""

    name: str
    label: str

    def clean_params(self, params: dict) -> dict:
        """The run's own parameters as ``ComputeRun.params`` stores them, validated and with defaults filled in;
        a ``ValueError`` naming the parameter otherwise. An algorithm that takes none refuses any."""
        if params:
            raise ValueError(f"{self.name} takes no parameters (got {', '.join(sorted(params))})")
        return {}

    @abstractmethod
    def plan(self, *, run: ComputeRun, tweet_pks: list[int]) -> list[PlannedBatch]:
        """The batches of ``run`` (not saved yet) over the workspace's tweets ``tweet_pks``; empty when there
        is nothing to compute."""

    @abstractmethod
    def compute(self, *, run: ComputeRun, batch: ComputeBatch, backend: str, stop: Stop) -> BatchOutcome:
        """Load the batch's input and compute it on ``backend`` (``"cpu"`` or ``"gpu"``); raise
        :class:`RunCancelled` at a safe point once ``stop()`` is true. Writes nothing."""

    @abstractmethod
    def store(self, *, run: ComputeRun, batch: ComputeBatch, result: BatchOutcome) -> None:
        """Replace the batch's rows with ``result`` (inside the runner's transaction and row locks)."""

    def finish(self, *, run: ComputeRun) -> None:  # noqa: B027  (optional: most algorithms have nothing to add)
        """Complete the run from what its batches stored; called exactly once, in the transaction that records
        the run's last batch done, under the run's row lock. Raising fails that batch (and so the run), and the
        transaction stores none of it. Nothing by default."""


def register(algorithm: Algorithm) -> Algorithm:
    """Add ``algorithm`` to the registry under its name (a name may be registered once)."""
    if algorithm.name in _REGISTRY:
        raise ValueError(f"an algorithm named {algorithm.name!r} is registered already")
    _REGISTRY[algorithm.name] = algorithm
    return algorithm


def get(name: str) -> Algorithm:
    """The registered algorithm called ``name``; :class:`UnknownAlgorithm` names the known ones otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownAlgorithm(f"no algorithm is called {name!r} (known: {known})") from None


def names() -> list[str]:
    """The registered algorithms' names, in registration order."""
    return list(_REGISTRY)
