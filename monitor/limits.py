"""The limits a workspace's runs are held to: its own where an admin set them, the deployment's defaults otherwise
(``SPREADWATCH_BUDGET_RUN_SECONDS``, ``SPREADWATCH_BUDGET_RUN_MEMORY_MB``, ``SPREADWATCH_MAX_RUNS_IN_FLIGHT``).

A module of its own, beside the models: the runner (memory ceiling), the planner's RR-set cap, the run pages and the
health page read them, while ``monitor.services.budgets`` (the estimate and the check) needs the algorithms, which
must not import the services back.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from .models import Workspace

__all__ = ["MB", "Limits", "workspace_limits"]

MB = 1024**2


@dataclass(frozen=True)
class Limits:
    """What one run of a workspace may cost: estimated worker seconds, estimated peak bytes of one batch (also the
    ceiling a batch is held to while it runs), and how many of its runs may be queued to workers at once."""

    run_seconds: int
    run_memory_bytes: int
    runs_in_flight: int

    @property
    def run_memory_mb(self) -> int:
        return self.run_memory_bytes // MB


def workspace_limits(workspace: Workspace) -> Limits:
    """``workspace``'s limits: its own where an admin set them, the deployment's defaults otherwise."""

    def pick(own: int | None, default: int) -> int:
        return int(own) if own else int(default)

    return Limits(
        run_seconds=pick(workspace.budget_run_seconds, settings.SPREADWATCH_BUDGET_RUN_SECONDS),
        run_memory_bytes=pick(workspace.budget_run_memory_mb, settings.SPREADWATCH_BUDGET_RUN_MEMORY_MB) * MB,
        runs_in_flight=max(1, pick(workspace.max_runs_in_flight, settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT)),
    )
