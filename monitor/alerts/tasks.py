"""Celery tasks of the alerts (queue ``default``): each takes ids and calls one service.

* ``evaluate_alerts(workspace_id)``: after every compute run; idempotent (alerts are deduplicated).
* ``evaluate_all()``: for beat: queues ``evaluate_alerts`` for every workspace and the webhook retries due.
* ``deliver_webhook(delivery_id)``: one attempt; a sent delivery is never re-sent; on failure it retries
  itself with exponential backoff (30 s × 2^(attempt-1), 6 attempts in all). When its receiving host already
  has ``SPREADWATCH_WEBHOOK_PER_HOST`` deliveries under way it makes no attempt and sends itself again a few
  seconds later (a new message: it is not a failed attempt), freeing its worker for other hosts' webhooks. In
  eager mode (no broker) a failed attempt is left pending and ``evaluate_all``'s sweep retries it when due.
  The services queue it by name (:mod:`monitor.jobs`), so they never import this module.
"""

from __future__ import annotations

from celery import shared_task

from monitor.models import Workspace

from . import delivery, services
from .models import WebhookDelivery


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


@shared_task(name="monitor.alerts.tasks.deliver_webhook", bind=True, acks_late=True, max_retries=delivery.MAX_ATTEMPTS)
def deliver_webhook(self, delivery_id: int) -> str:
    d, outcome = delivery.attempt_in_turn(delivery_id)
    if outcome == "busy":
        if not self.request.is_eager:
            # a new message, not a retry: waiting for a busy host is no failed attempt (and no Celery retry count)
            deliver_webhook.apply_async((delivery_id,), countdown=delivery.busy_delay())
        return "busy"
    if outcome == "attempted" and d.status == WebhookDelivery.Status.PENDING and not self.request.is_eager:
        raise self.retry(countdown=delivery.retry_delay(d.attempts))
    return d.status
