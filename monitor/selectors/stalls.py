"""Stalled work, for the run and collection pages: running batches and imports whose worker has not beaten its
heartbeat for a while (``monitor.services.recovery`` queues them again after ``SPREADWATCH_STALL_SECONDS``)."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db.models import OuterRef, QuerySet, Subquery
from django.utils import timezone

from ..models import Collection, ComputeBatch, Lease

__all__ = ["stalled_work"]


def _lease_field(kind: str, field: str):
    return Subquery(Lease.objects.filter(kind=kind, object_id=OuterRef("pk")).values(field)[:1])


def stalled_work(
    *,
    batches: QuerySet[ComputeBatch] | None = None,
    collection: Collection | None = None,
    now: dt.datetime | None = None,
) -> list[dict]:
    """For the run and collection pages: each running batch (of ``batches``) or the importing ``collection``
    whose heartbeat is older than half the stall time, as dicts (what, holder, age_s, attempts)."""
    now = now or timezone.now()
    stall = float(settings.SPREADWATCH_STALL_SECONDS)
    late = now - dt.timedelta(seconds=stall / 2)
    out = []
    limits = {"stall_s": int(stall), "max_attempts": int(settings.SPREADWATCH_STALL_MAX_ATTEMPTS)}
    if batches is not None:
        rows = (
            batches.filter(status=ComputeBatch.Status.RUNNING)
            .annotate(beat=_lease_field(Lease.Kind.BATCH, "beat_at"), holder=_lease_field(Lease.Kind.BATCH, "holder"))
            .values("index", "beat", "holder", "started_at", "attempts")
        )
        for r in rows:
            since = r["beat"] or r["started_at"]
            if since is not None and since < late:
                out.append(
                    {
                        "what": f"batch {r['index']}",
                        "holder": r["holder"] or "",
                        "age_s": int((now - since).total_seconds()),
                        "attempts": r["attempts"],
                        **limits,
                    }
                )
    if collection is not None and collection.status == Collection.Status.INGESTING:
        lease = Lease.objects.filter(kind=Lease.Kind.IMPORT, object_id=collection.pk).first()
        since = lease.beat_at if lease else collection.started_at
        if since is not None and since < late:
            out.append(
                {
                    "what": "the import",
                    "holder": lease.holder if lease else "",
                    "age_s": int((now - since).total_seconds()),
                    "attempts": collection.attempts,
                    **limits,
                }
            )
    return out
