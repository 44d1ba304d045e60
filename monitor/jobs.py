"""Queueing Celery tasks from services: by the task's registered name, once the surrounding transaction commits.

Services never import ``monitor.tasks`` (the tasks import the services: the other way round would be an import
loop); they name the task here instead, and the task is looked up in the Celery app's registry, which
``MonitorConfig.ready`` fills by importing the task modules. ``task.delay`` keeps the app's settings: in eager
mode (no broker: ``make demo``, the tests) the task runs in the calling process when the transaction commits,
and with a broker it is routed to its queue by ``CELERY_TASK_ROUTES`` (ingest, cpu/gpu, default).
"""

from __future__ import annotations

from celery import Task
from django.db import transaction

from .celery import app

__all__ = [
    "COMPUTE_BATCH",
    "DELIVER_WEBHOOK",
    "EVALUATE_ALERTS",
    "INGEST_COLLECTION",
    "enqueue_on_commit",
    "registered_task",
]

INGEST_COLLECTION = "monitor.tasks.ingest_collection"
COMPUTE_BATCH = "monitor.tasks.compute_batch"
EVALUATE_ALERTS = "monitor.alerts.tasks.evaluate_alerts"
DELIVER_WEBHOOK = "monitor.alerts.tasks.deliver_webhook"


def registered_task(name: str) -> Task:
    """The Celery task registered as ``name``; a clear error for a name no task module registered."""
    try:
        return app.tasks[name]
    except KeyError:
        raise LookupError(f"no Celery task is registered as {name!r}: is its module imported at startup?") from None


def enqueue_on_commit(name: str, *args: int) -> None:
    """Queue the task ``name`` with ``args`` (ids) when the current transaction commits (at once outside one)."""
    task = registered_task(name)  # looked up now: a wrong name fails in the caller, not in a commit hook
    # robust: in eager mode (no broker) a failing task must not undo the caller's work; it records its error
    transaction.on_commit(lambda: task.delay(*args), robust=True)
