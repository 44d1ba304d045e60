"""The staff's health page (``/health/``): each broker queue's depth, the runs in flight and waiting per
workspace, the outbox, stalled work and the worker processes seen at work. Reads only; each part says when it
cannot be read (no broker, Redis away) instead of failing the page."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count, Min, Q
from django.utils import timezone

from .. import jobs
from ..models import ComputeRun, Lease, OutboxTask, Workspace

__all__ = ["HealthOverview", "health_overview", "workers_ping"]

# what each queue is for, in the page's words
QUEUE_ROLES = {
    "ingest": "imports of uploads",
    "cpu": "influence batches of uploads and recomputes (CPU)",
    "gpu": "influence batches of uploads and recomputes (GPU)",
    "analysis": "graph-wide analyses: network, counter-campaign planner, who-to-follow",
    "default": "alert evaluation and the periodic sweeps",
    "webhooks": "alert webhooks",
}


@dataclass
class HealthOverview:
    broker: str  # "redis", "eager" (tasks run in the web process) or "unreadable"
    queues: list[dict] = field(default_factory=list)
    runs: list[dict] = field(default_factory=list)
    outbox: dict = field(default_factory=dict)
    stalled: list[dict] = field(default_factory=list)
    workers: list[dict] = field(default_factory=list)
    stall_s: int = 60
    now: dt.datetime | None = None


def _queues() -> tuple[str, list[dict]]:
    if jobs.eager():
        return "eager", []
    depths = jobs.queue_depths()
    if depths is None:
        return "unreadable", []
    analysis = getattr(settings, "SPREADWATCH_ANALYSIS_QUEUE", "analysis")
    rows = []
    for name in sorted(depths):
        d = depths[name]
        role = QUEUE_ROLES.get(name, "")
        if name == analysis and name != "analysis":
            role = f"{role}; graph-wide analyses too" if role else "graph-wide analyses"
        rows.append({"name": name, "role": role, **d})
    return "redis", rows


def _runs() -> list[dict]:
    """Per workspace with anything waiting, queued or running: counted analyses in flight and waiting (with its
    limit), and uploads' own runs in flight (not counted)."""
    from ..limits import workspace_limits

    flight = (ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING)
    per = (
        ComputeRun.objects.filter(status__in=(ComputeRun.Status.WAITING, *flight))
        .values("workspace_id")
        .annotate(
            in_flight=Count("pk", filter=Q(status__in=flight, collection__isnull=True)),
            waiting=Count("pk", filter=Q(status=ComputeRun.Status.WAITING)),
            uploads=Count("pk", filter=Q(status__in=flight, collection__isnull=False)),
            oldest_waiting=Min("created_at", filter=Q(status=ComputeRun.Status.WAITING)),
        )
        .order_by("workspace_id")
    )
    rows = list(per)
    workspaces = Workspace.objects.in_bulk([r["workspace_id"] for r in rows])
    for r in rows:
        ws = workspaces[r["workspace_id"]]
        r["workspace"] = ws
        r["limit"] = workspace_limits(ws).runs_in_flight
    return rows


def _outbox() -> dict:
    agg = OutboxTask.objects.aggregate(n=Count("pk"), oldest=Min("created_at"))
    by_name = list(OutboxTask.objects.values("name").annotate(n=Count("pk")).order_by("-n", "name"))
    last = OutboxTask.objects.order_by("-last_tried_at").values("error", "last_tried_at").first()
    return {"n": agg["n"], "oldest": agg["oldest"], "by_name": by_name, "last": last}


def _leases(now: dt.datetime, stall_s: float) -> tuple[list[dict], list[dict]]:
    """(stalled work: leases with no heartbeat for half the stall time, oldest first; the worker processes
    holding work now, from their leases' heartbeats)."""
    late = now - dt.timedelta(seconds=stall_s / 2)
    stalled, workers = [], {}
    for lease in Lease.objects.order_by("beat_at")[:500]:
        age = int((now - lease.beat_at).total_seconds())
        row = {"kind": lease.get_kind_display(), "object_id": lease.object_id, "holder": lease.holder, "age_s": age}
        if lease.beat_at < late:
            stalled.append(row)
        w = workers.setdefault(lease.holder, {"holder": lease.holder, "work": [], "beat_age_s": age})
        w["work"].append(f"{lease.get_kind_display().lower()} {lease.object_id}")
        w["beat_age_s"] = min(w["beat_age_s"], age)
    return stalled, sorted(workers.values(), key=lambda w: w["holder"])


def health_overview(*, now: dt.datetime | None = None) -> HealthOverview:
    now = now or timezone.now()
    stall_s = float(getattr(settings, "SPREADWATCH_STALL_SECONDS", 60))
    broker, queues = _queues()
    stalled, workers = _leases(now, stall_s)
    return HealthOverview(
        broker=broker,
        queues=queues,
        runs=_runs(),
        outbox=_outbox(),
        stalled=stalled,
        workers=workers,
        stall_s=int(stall_s),
        now=now,
    )


def workers_ping(timeout: float = 1.0) -> dict[str, list[str]] | None:
    """The Celery workers that answer a broadcast ping within ``timeout`` seconds, by name, with the queues each
    consumes (``celery inspect``: it waits the whole timeout, so the page asks only on request). ``None`` in eager
    mode or when the broker cannot be reached."""
    if jobs.eager():
        return None
    from ..celery import app

    try:
        inspect = app.control.inspect(timeout=timeout)
        queues = inspect.active_queues() or {}
    except Exception:  # kombu and redis-py raise many kinds
        return None
    return {name: sorted(q.get("name", "") for q in qs) for name, qs in sorted(queues.items())}
