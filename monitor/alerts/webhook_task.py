"""The Celery task that makes one webhook delivery attempt (queue ``default``).

It lives apart from :mod:`monitor.alerts.tasks` because the services queue it (``evaluate_rule``,
``deliveries_retry_due``) while the other tasks call the services: in one module they made an import loop
(services -> tasks -> services). Its registered name is still ``monitor.alerts.tasks.deliver_webhook``, so the
routes in settings and the messages already queued under that name keep working.

* ``deliver_webhook(delivery_id)``: one attempt; a sent delivery is never re-sent; on failure it retries
  itself with exponential backoff (30 s × 2^(attempt-1), 6 attempts in all). In eager mode (no broker) a
  failed attempt is left pending and ``evaluate_all``'s sweep retries it when due.
"""

from __future__ import annotations

from celery import shared_task

from . import delivery
from .models import WebhookDelivery


@shared_task(name="monitor.alerts.tasks.deliver_webhook", bind=True, acks_late=True, max_retries=delivery.MAX_ATTEMPTS)
def deliver_webhook(self, delivery_id: int) -> str:
    d, attempted = delivery.attempt(delivery_id)
    if attempted and d.status == WebhookDelivery.Status.PENDING and not self.request.is_eager:
        raise self.retry(countdown=delivery.retry_delay(d.attempts))
    return d.status
