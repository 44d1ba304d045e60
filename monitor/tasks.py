"""Celery tasks: each takes ids, fetches, and calls one service. All are idempotent, so ``acks_late`` is safe
(a task redelivered after a worker died redoes the same work and writes the same rows once).

Three beat tasks keep work moving without a human: ``requeue_stalled`` (work whose worker died), ``send_outbox``
(tasks the broker refused while it was away) and ``stream_sweep_waiting`` (stream retweets whose original came
by an upload, or never came); two keep reads fast: ``read_cache_prune`` and ``search_pairs_refresh``.

A task that loses its database connection (PostgreSQL restarted, a failover) is retried with backoff: its
transaction rolled back, so the retry starts from what is committed. Four minutes of retries; a longer
outage leaves a batch marked running, and the run can then be cancelled and retried (docs/reliability.md).
"""

from __future__ import annotations

from celery import shared_task

from . import jobs, services
from .services import recovery
from .services.runs import DB_LOST

RETRY_ON_DB_LOST = {
    "autoretry_for": DB_LOST,
    "retry_backoff": 2,  # 2, 4, 8, 16, 32, 60, 60, 60 s: four minutes in all
    "retry_backoff_max": 60,
    "retry_jitter": False,  # jitter could spend all eight retries in the first seconds of an outage
    "max_retries": 8,
}


def after_error(task) -> bool:
    """Whether this delivery is the task's own retry (after an error it raised: a lost database), not the broker
    handing back a message whose worker never ended it (Redis marks those ``redelivered``). Only a delivery of the
    second kind that finds its work still marked running counts towards a poison message (services.runs)."""
    req = task.request
    return bool(req.retries) and not (req.delivery_info or {}).get("redelivered")


@shared_task(name=jobs.INGEST_COLLECTION, acks_late=True, bind=True, **RETRY_ON_DB_LOST)
def ingest_collection(self, collection_id: int) -> str:
    c = services.collection_ingest(collection_id=collection_id, after_error=after_error(self))
    return c.status


@shared_task(name=jobs.COMPUTE_BATCH, acks_late=True, bind=True, **RETRY_ON_DB_LOST)
def compute_batch(self, batch_id: int) -> str:
    b = services.compute_batch_run(batch_id=batch_id, after_error=after_error(self))
    return b.status


@shared_task(name="monitor.tasks.requeue_stalled", acks_late=True)
def requeue_stalled() -> dict:
    """Beat: queue again the batches and imports whose worker stopped beating its heartbeat."""
    return recovery.stalled_requeue()


@shared_task(name="monitor.tasks.stream_sweep_waiting", acks_late=True)
def stream_sweep_waiting() -> dict:
    """Beat: apply the stream's waiting retweets whose original is stored now; dead-letter those past their wait."""
    from .services.stream.apply import sweep_waiting_all

    return sweep_waiting_all()


@shared_task(name="monitor.tasks.read_cache_prune", acks_late=True)
def read_cache_prune() -> dict:
    """Beat: drop the read cache's entries of superseded data versions (what bounds its memory)."""
    from .services.warmup import read_cache_prune as prune

    return prune()


@shared_task(name="monitor.tasks.send_outbox", acks_late=True)
def send_outbox() -> dict:
    """Beat: send the tasks the broker refused earlier (``monitor.jobs``)."""
    return jobs.send_outbox()


@shared_task(name="monitor.tasks.search_pairs_refresh", acks_late=True)
def search_pairs_refresh() -> dict:
    """Beat: build or switch the pairs index of every workspace whose data changed (``services.search_pairs``: the
    phrase search of a large workspace)."""
    return services.search_pairs_refresh()
