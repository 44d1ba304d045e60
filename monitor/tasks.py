"""Celery tasks: each takes ids, fetches, and calls one service. All are idempotent, so ``acks_late`` is safe
(a task redelivered after a worker died redoes the same work and writes the same rows once)."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task(name="monitor.tasks.ingest_collection", acks_late=True)
def ingest_collection(collection_id: int) -> str:
    c = services.collection_ingest(collection_id=collection_id)
    return c.status


@shared_task(name="monitor.tasks.compute_batch", acks_late=True)
def compute_batch(batch_id: int) -> str:
    b = services.compute_batch_run(batch_id=batch_id)
    return b.status
