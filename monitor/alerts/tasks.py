"""Celery tasks of the alerts (queue ``default``): each takes ids and calls one service.

* ``evaluate_alerts(workspace_id)``: after every compute run; idempotent (alerts are deduplicated).
* ``evaluate_all()``: for beat: queues ``evaluate_alerts`` for every workspace and the webhook retries due.
* ``deliver_webhook(delivery_id)``, which the services queue, is in :mod:`monitor.alerts.webhook_task` (the
  services import it, and this module imports the services).
"""

from __future__ import annotations

from celery import shared_task

from monitor.models import Workspace

from . import services


@shared_task(name="monitor.alerts.tasks.evaluate_alerts", acks_late=True)
def evaluate_alerts(workspace_id: int) -> int:
    return len(services.evaluate_workspace(workspace_id=workspace_id))


@shared_task(name="monitor.alerts.tasks.evaluate_all", acks_late=True)
def evaluate_all() -> int:
    ids = list(Workspace.objects.values_list("pk", flat=True))
    for pk in ids:
        evaluate_alerts.delay(pk)
    services.deliveries_retry_due()
    return len(ids)
