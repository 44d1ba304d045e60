"""Leases and notices: the primitives the work and its recovery share.

A worker holding a batch or an import holds its :class:`~monitor.models.Lease` and beats its heartbeat from a
thread (:func:`holding`); the stalled-work sweep (``monitor.services.recovery``) reads the heartbeats. A module of
its own so that the runner (``services.runs``) and the import (``services.collections``) take leases without
importing the sweep, which releases waiting runs through the runner.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import socket
import threading
from collections.abc import Iterator

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from .. import jobs
from ..models import Lease, Notice

log = logging.getLogger(__name__)

__all__ = ["holder_name", "holding", "max_attempts", "notice_create", "notice_dismiss", "stall_seconds"]


def stall_seconds() -> float:
    return float(getattr(settings, "SPREADWATCH_STALL_SECONDS", 60))


def max_attempts() -> int:
    return int(getattr(settings, "SPREADWATCH_STALL_MAX_ATTEMPTS", 3))


def holder_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# --- heartbeats --------------------------------------------------------------------------------------------------


def _beat_loop(kind: str, pk: int, holder: str, every: float, stop: threading.Event) -> None:
    try:
        while not stop.wait(every):
            try:
                Lease.objects.filter(kind=kind, object_id=pk, holder=holder).update(beat_at=timezone.now())
            except DatabaseError:
                # the database is away: the task itself will notice; a missed beat only risks a redundant re-queue
                log.warning("heartbeat of %s %s failed", kind, pk, exc_info=True)
                connection.close()
    finally:
        connection.close()  # this thread's own connection


def _this_session() -> tuple[int | None, dt.datetime | None]:
    """PostgreSQL: this thread's database session (its pid and start time), on which the held work runs its
    transaction; ``(None, None)`` elsewhere."""
    if connection.vendor != "postgresql":
        return None, None
    with connection.cursor() as cur:
        cur.execute("SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()")
        row = cur.fetchone()
    return (row[0], row[1]) if row else (None, None)


@contextlib.contextmanager
def holding(kind: str, pk: int) -> Iterator[None]:
    """Hold ``kind`` ``pk`` (a :class:`Lease`) while the block runs, beating its heartbeat from a thread. The
    block must run its transaction on this thread's connection (the lease names that session)."""
    holder = holder_name()
    now = timezone.now()
    backend_pid, backend_started_at = _this_session()
    lease = Lease(
        kind=kind,
        object_id=pk,
        holder=holder,
        started_at=now,
        beat_at=now,
        backend_pid=backend_pid,
        backend_started_at=backend_started_at,
    )
    Lease.objects.bulk_create(
        [lease],
        update_conflicts=True,
        unique_fields=["kind", "object_id"],
        update_fields=["holder", "started_at", "beat_at", "backend_pid", "backend_started_at"],
    )
    stop = threading.Event()
    thread = None
    if not jobs.eager():
        every = max(0.25, stall_seconds() / 4)
        thread = threading.Thread(
            target=_beat_loop, args=(kind, pk, holder, every, stop), name=f"heartbeat-{kind}-{pk}", daemon=True
        )
        thread.start()
    try:
        yield
    finally:
        stop.set()
        if thread is not None:
            thread.join(timeout=30)
        with contextlib.suppress(DatabaseError):  # the database may be the reason the block ended
            Lease.objects.filter(kind=kind, object_id=pk, holder=holder).delete()


# --- notices -----------------------------------------------------------------------------------------------------


def notice_create(*, workspace_id: int, user_id: int | None, message: str, url: str = "") -> Notice | None:
    """A notice for ``user_id`` in the workspace (none for work nobody started, e.g. a run from a script)."""
    if user_id is None:
        return None
    return Notice.objects.create(workspace_id=workspace_id, user_id=user_id, message=message, url=url)


def notice_dismiss(*, notice: Notice) -> None:
    Notice.objects.filter(pk=notice.pk, read_at__isnull=True).update(read_at=timezone.now())
