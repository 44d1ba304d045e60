"""Recovery without a human: heartbeats of the work a worker holds, and the sweep that queues again the work
whose worker is gone.

**Heartbeats.** :func:`holding` wraps a compute batch and an import: it writes a :class:`~monitor.models.Lease`
(the worker's host and pid, when it started) and, in a worker process, a thread beats ``beat_at`` every quarter
of ``SPREADWATCH_STALL_SECONDS`` on its own database connection, whatever the task is doing (a NumPy kernel, a
COPY, waiting for a lock). The lease is deleted when the work ends, however it ends, in that process.

**The sweep** (:func:`stalled_requeue`, the ``requeue_stalled`` beat task, every quarter of the stall time): a
batch marked running, or an import marked importing, with no heartbeat for ``SPREADWATCH_STALL_SECONDS`` has
lost its worker (killed, its machine lost, frozen). Its transaction died with its database connection, so
nothing of it is stored: it is marked queued again and its task sent again, and the next worker computes it
from the start. A batch is stored under row locks by the first delivery that gets there (``services.runs``),
so a worker that was only slow, not dead, and the new delivery never both count it. After
``SPREADWATCH_STALL_MAX_ATTEMPTS`` deliveries a stalled batch or import fails, saying why, and the analyst who
started it gets a :class:`~monitor.models.Notice` on the workspace's pages. An import is also checked for its
row lock, which it holds for its whole transaction: a locked row whose heartbeat is fresh, or whose lock is held
by a session that is not the one the worker recorded, is a live worker's, left alone.

**An orphaned session.** A worker's transaction dies with its connection only when no other process keeps a
copy of the socket: a process forked while the transaction was open (the parallel reader's workers were such
processes, ``compute/formats/_parallel.py``, until they let go of what they inherit) keeps the session, its
open transaction and its row lock alive after the worker is killed, and the row looks held for ever. On
PostgreSQL the lease records the session the work runs on (``pg_backend_pid()`` and its start time), and the
sweep ends that session (``pg_terminate_backend``: its transaction rolls back, its locks go) when all of these
hold: the heartbeat is stale, the session is the recorded one (pid and start time), it waits on its client (idle
in its transaction, or in a COPY waiting for data) and has since before the stall time, and it holds a lock on
the collections table. Then the import is queued again, or failed after the last attempt, as any stalled one.
A session running a statement is left to finish it; one whose heartbeat is fresh is never touched.

**Lost tasks.** Queued work has no holder to go stale. Its task can still be lost after it was sent: a Redis
without persistence restarted, a web process killed between its commit and the send. The same sweep looks into
the broker (:func:`monitor.jobs.held_by_broker`). A batch, or an import, that has been queued for
``SPREADWATCH_STALL_SECONDS`` while the broker holds no message for it, neither waiting nor delivered, gets
its task sent again. Where the broker cannot be looked into (another broker, Redis not answering), nothing is
concluded and nothing is sent. A message taken by a worker between the two looks is only sent twice, which the
tasks' idempotence makes harmless.

**Lost results.** The engine's results are unlogged tables on PostgreSQL, which a crash of the server empties:
the same sweep checks their mark and recomputes what they held (:mod:`monitor.services.derived_rows`).

In eager mode (no broker: most tests) the work runs inside the request that queued it, so there is no thread
and nothing to sweep.

**A restarted web process (the demo).** In background mode (``make demo``) the web process is the only runner of
tasks, on one thread, and its queue lives in its memory: stopping it (Ctrl-C during an import) loses the task of
every import and batch it had not finished. :func:`resume_in_process` runs once in a new such process, before its
first request is served and before it has run any task: an import or batch marked running is queued again as the
sweep would (an attempt counted; failed after ``SPREADWATCH_STALL_MAX_ATTEMPTS``, so one that stops the process
each time is not tried for ever), and one marked queued has its task sent again.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import OuterRef, Q, Subquery
from django.urls import reverse
from django.utils import timezone

from .. import jobs, partitions
from ..models import Collection, ComputeBatch, ComputeRun, Lease
from .derived_rows import derived_rows_check
from .leases import holding, max_attempts, notice_create, notice_dismiss, stall_seconds

log = logging.getLogger(__name__)

__all__ = [
    "holding",
    "notice_create",
    "notice_dismiss",
    "resume_in_process",
    "resume_on_first_request",
    "stall_seconds",
    "stalled_requeue",
]


# --- the sweep ---------------------------------------------------------------------------------------------------


# what the sweep and a restarted demo process report, each a count
_OUTCOMES = (
    "batches_requeued",
    "batches_failed",
    "imports_requeued",
    "imports_failed",
    "batches_resent",
    "imports_resent",
    "runs_released",
    "derived_rows_recomputed",
    "daily_indexes_built",
)


def _beat_of(kind: str):
    return Subquery(Lease.objects.filter(kind=kind, object_id=OuterRef("pk")).values("beat_at")[:1])


def stalled_requeue(*, now: dt.datetime | None = None) -> dict[str, int]:
    """Queue again (or fail, after too many attempts) every batch and import whose worker stopped beating, send
    again what the broker lost, release waiting runs, and recompute the results a crash of PostgreSQL emptied."""
    now = now or timezone.now()
    cutoff = now - dt.timedelta(seconds=stall_seconds())
    out = dict.fromkeys(_OUTCOMES, 0)
    stale = Q(beat__lt=cutoff) | Q(beat__isnull=True, started_at__lt=cutoff)
    batches = (
        ComputeBatch.objects.filter(status=ComputeBatch.Status.RUNNING, started_at__lt=cutoff)
        .annotate(beat=_beat_of(Lease.Kind.BATCH))
        .filter(stale)
        .values_list("pk", flat=True)
    )
    for pk in list(batches):
        outcome = _requeue_batch(pk, cutoff, now)
        if outcome:
            out[f"batches_{outcome}"] += 1
    imports = (
        Collection.objects.filter(status=Collection.Status.INGESTING, started_at__lt=cutoff)
        .annotate(beat=_beat_of(Lease.Kind.IMPORT))
        .filter(stale)
        .values_list("pk", flat=True)
    )
    for pk in list(imports):
        outcome = _requeue_import(pk, cutoff, now)
        if outcome:
            out[f"imports_{outcome}"] += 1
    out["batches_resent"], out["imports_resent"] = _resend_lost(cutoff, now)
    from .runs import runs_release_waiting  # runs imports this module

    # waiting runs with a free place (an end that did not release them, a limit an admin raised)
    out["runs_released"] = runs_release_waiting()
    # the engine's unlogged results, emptied by a crash of PostgreSQL: recomputed (monitor/services/derived_rows.py)
    out["derived_rows_recomputed"] = len(derived_rows_check())
    # a first run that failed or was cancelled while it loaded its daily rows without indexes (monitor/partitions.py)
    from ..algorithms.influence.rows import AGGREGATE_LOCK_CLASS

    out["daily_indexes_built"] = len(partitions.derived_abandoned(_active_runs, AGGREGATE_LOCK_CLASS))
    if any(out.values()):
        log.warning("stalled work: %s", out)
    return out


def _active_runs(pks: list[int]) -> list[int]:
    """Those of the compute runs ``pks`` that are still queued, waiting or running."""
    active = (ComputeRun.Status.QUEUED, ComputeRun.Status.WAITING, ComputeRun.Status.RUNNING)
    return list(ComputeRun.objects.filter(pk__in=pks, status__in=active).values_list("pk", flat=True))


def _age(beat: dt.datetime | None, started: dt.datetime | None, now: dt.datetime) -> int:
    since = beat or started or now
    return int((now - since).total_seconds())


def _lease(kind: str, pk: int) -> Lease | None:
    return Lease.objects.filter(kind=kind, object_id=pk).first()


def _requeue_batch(pk: int, cutoff: dt.datetime, now: dt.datetime, reason: str = "") -> str | None:
    with transaction.atomic():
        # the lock order of the runner and of cancel: the run, then its batch
        run_pk = ComputeBatch.objects.filter(pk=pk).values_list("run_id", flat=True).first()
        run = ComputeRun.objects.select_for_update(of=("self",)).select_related("workspace").filter(pk=run_pk).first()
        batch = ComputeBatch.objects.select_for_update(skip_locked=True).filter(pk=pk).first()
        if run is None or batch is None or batch.status != ComputeBatch.Status.RUNNING:
            return None  # it finished, was cancelled, or a worker is storing it right now (locked)
        lease = _lease(Lease.Kind.BATCH, pk)
        if lease is not None and lease.beat_at >= cutoff:
            return None  # it beat again in the meantime
        age = _age(lease.beat_at if lease else None, batch.started_at, now)
        who = f"its worker ({lease.holder})" if lease else "its worker"
        why = reason or f"{who} stopped responding (no heartbeat for {age} s)"
        Lease.objects.filter(kind=Lease.Kind.BATCH, object_id=pk).delete()
        if batch.attempts >= max_attempts():
            msg = f"{why} on each of its {batch.attempts} attempts; nothing of it was stored"
            batch.status, batch.error, batch.finished_at = ComputeBatch.Status.FAILED, msg, now
            batch.save(update_fields=["status", "error", "finished_at"])
            if run.status in (ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING):
                run.status, run.error, run.finished_at = ComputeRun.Status.FAILED, f"batch {batch.index}: {msg}", now
                run.save(update_fields=["status", "error", "finished_at"])
                if run.collection_id:  # its import is stored: the collection is done, its run failed
                    Collection.objects.filter(pk=run.collection_id, status=Collection.Status.COMPUTING).update(
                        status=Collection.Status.DONE, finished_at=now
                    )
                notice_create(
                    workspace_id=run.workspace_id,
                    user_id=run.created_by_id,
                    message=f"Compute run {run.pk} failed: batch {batch.index}: {msg}. Retry it from its page.",
                    url=reverse("run", kwargs={"ws": run.workspace.slug, "pk": run.pk}),
                )
            log.error("compute batch %s of run %s failed: %s", pk, run.pk, msg)
            return "failed"
        batch.status, batch.started_at = ComputeBatch.Status.QUEUED, None
        batch.save(update_fields=["status", "started_at"])
        if len(run.notes) < 50:
            run.notes.append(
                f"batch {batch.index}: queued again at {now:%H:%M:%S} UTC: {why}, "
                f"attempt {batch.attempts} of {max_attempts()}"
            )
            run.save(update_fields=["notes"])
        jobs.enqueue_on_commit(jobs.COMPUTE_BATCH, pk)
    log.warning("compute batch %s of run %s queued again: %s", pk, run.pk, why)
    return "requeued"


# what _requeue_import_once answers for a row an import still holds locked
_LOCKED = "locked"


def _requeue_import(pk: int, cutoff: dt.datetime, now: dt.datetime, reason: str = "") -> str | None:
    outcome = _requeue_import_once(pk, cutoff, now, reason)
    if outcome == _LOCKED:
        ended = _end_orphaned_session(pk, cutoff)
        outcome = _requeue_import_once(pk, cutoff, now, reason, ended=ended) if ended else None
    return None if outcome == _LOCKED else outcome


def _requeue_import_once(
    pk: int, cutoff: dt.datetime, now: dt.datetime, reason: str = "", ended: int | None = None
) -> str | None:
    with transaction.atomic():
        # an import holds its row lock for its whole transaction: a row we cannot lock has a worker, or a session
        # left open after its worker died (see _end_orphaned_session)
        c = (
            Collection.objects.select_for_update(skip_locked=True)
            .select_related("workspace")
            .filter(pk=pk, status=Collection.Status.INGESTING)
            .first()
        )
        if c is None:
            locked = Collection.objects.filter(pk=pk, status=Collection.Status.INGESTING).exists()
            return _LOCKED if locked else None
        lease = _lease(Lease.Kind.IMPORT, pk)
        if lease is not None and lease.beat_at >= cutoff:
            return None
        age = _age(lease.beat_at if lease else None, c.started_at, now)
        who = f"its worker ({lease.holder})" if lease else "its worker"
        why = reason or f"{who} stopped responding (no heartbeat for {age} s)"
        if ended:
            why += f"; its database session (pid {ended}), left open with the import's lock, was ended"
        Lease.objects.filter(kind=Lease.Kind.IMPORT, object_id=pk).delete()
        if c.attempts >= max_attempts():
            c.status = Collection.Status.FAILED
            c.error = (
                f"{why} on each of its {c.attempts} attempts; nothing of it was stored. "
                "Retry it once the ingest workers are healthy."
            )
            c.finished_at = now
            c.save(update_fields=["status", "error", "finished_at"])
            notice_create(
                workspace_id=c.workspace_id,
                user_id=c.uploaded_by_id,
                message=f"The import of {c.name} failed: {c.error}",
                url=reverse("collection", kwargs={"ws": c.workspace.slug, "pk": c.pk}),
            )
            log.error("import of collection %s failed: %s", pk, c.error)
            return "failed"
        c.status = Collection.Status.QUEUED
        c.error = f"queued again at {now:%H:%M:%S} UTC: {why}, attempt {c.attempts} of {max_attempts()}"
        c.save(update_fields=["status", "error"])
        jobs.enqueue_on_commit(jobs.INGEST_COLLECTION, pk)
    log.warning("import of collection %s queued again: %s", pk, why)
    return "requeued"


# how long the sweep waits for an ended session to be gone (its transaction rolled back, its locks released)
_SESSION_END_WAIT_S = 10.0

# the recorded session, still there, waiting on its client since before the stall time, holding a lock on the
# collections table; ended in the same statement that finds it
_END_ORPHANED_SQL = """
SELECT a.pid, pg_terminate_backend(a.pid)
FROM pg_stat_activity a
WHERE a.pid = %(pid)s
  AND a.backend_start = %(started)s
  AND a.datname = current_database()
  AND (a.state LIKE 'idle in transaction%%' OR a.wait_event_type = 'Client')
  AND a.state_change < now() - make_interval(secs => %(stall)s)
  AND EXISTS (
    SELECT 1 FROM pg_locks l
    WHERE l.pid = a.pid AND l.granted AND l.relation = %(table)s::regclass
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  )
"""
_SESSION_THERE_SQL = "SELECT 1 FROM pg_stat_activity WHERE pid = %(pid)s AND backend_start = %(started)s"


def _end_orphaned_session(pk: int, cutoff: dt.datetime) -> int | None:
    """End the database session of an import whose worker stopped beating but whose row is still locked by the
    session that worker recorded, idle (see the module). Returns its pid once it is gone, else ``None``."""
    if connection.vendor != "postgresql":
        return None
    lease = _lease(Lease.Kind.IMPORT, pk)
    if lease is None or lease.beat_at >= cutoff or lease.backend_pid is None or lease.backend_started_at is None:
        return None  # a live worker (fresh heartbeat), or a lease that names no session
    params = {
        "pid": lease.backend_pid,
        "started": lease.backend_started_at,
        "stall": stall_seconds(),
        "table": Collection._meta.db_table,
    }
    try:
        with connection.cursor() as cur:
            # the activity statistics are read once per transaction unless cleared (the sweep may run in one)
            cur.execute("SELECT pg_stat_clear_snapshot()")
            cur.execute(_END_ORPHANED_SQL, params)
            row = cur.fetchone()
            if row is None or not row[1]:
                return None  # not that session any more, busy, or not ours to end
            deadline = time.monotonic() + _SESSION_END_WAIT_S
            while time.monotonic() < deadline:
                cur.execute("SELECT pg_stat_clear_snapshot()")
                cur.execute(_SESSION_THERE_SQL, params)
                if cur.fetchone() is None:
                    break
                time.sleep(0.05)
            else:
                return None  # still ending: the next sweep finds the row free
    except DatabaseError:  # e.g. not allowed to signal it (another role): leave it, say so
        log.warning("import of collection %s: could not end its orphaned database session", pk, exc_info=True)
        return None
    log.warning(
        "import of collection %s: no heartbeat from its worker (%s) since %s, yet its transaction was still open:"
        " ended its database session (pid %s), which rolled it back",
        pk,
        lease.holder,
        f"{lease.beat_at:%H:%M:%S} UTC",
        lease.backend_pid,
    )
    return lease.backend_pid


def _resend_lost(cutoff: dt.datetime, now: dt.datetime) -> tuple[int, int]:
    """Send again the task of every batch and import queued since before ``cutoff`` whose message the broker no
    longer holds (see the module). Returns how many of each."""
    if jobs.eager():
        return 0, 0
    batches = list(
        ComputeBatch.objects.filter(
            status=ComputeBatch.Status.QUEUED,
            run__status__in=(ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING),
            run__created_at__lt=cutoff,
        ).values_list("pk", flat=True)
    )
    imports = list(
        Collection.objects.filter(status=Collection.Status.QUEUED, created_at__lt=cutoff).values_list("pk", flat=True)
    )
    if not batches and not imports:
        return 0, 0
    held = jobs.held_by_broker([jobs.COMPUTE_BATCH, jobs.INGEST_COLLECTION])
    if held is None:
        return 0, 0
    lost_batches = [pk for pk in batches if (jobs.COMPUTE_BATCH, jobs.args_repr(pk)) not in held]
    lost_imports = [pk for pk in imports if (jobs.INGEST_COLLECTION, jobs.args_repr(pk)) not in held]
    resent = [0, 0]
    for pk in lost_batches:
        with transaction.atomic():
            batch = (
                ComputeBatch.objects.select_for_update(skip_locked=True)
                .select_related("run")
                .filter(pk=pk, status=ComputeBatch.Status.QUEUED)
                .first()
            )
            if batch is None:
                continue  # a worker took it meanwhile (or holds it locked right now)
            run = batch.run
            if len(run.notes) < 50:
                ComputeRun.objects.filter(pk=run.pk).update(
                    notes=[
                        *run.notes,
                        f"batch {batch.index}: its task was sent again at {now:%H:%M:%S} UTC: the broker had lost it "
                        "(queued, but no message waiting or delivered)",
                    ]
                )
            jobs.enqueue_on_commit(jobs.COMPUTE_BATCH, pk)
        resent[0] += 1
    for pk in lost_imports:
        with transaction.atomic():
            # skip_locked: an import that has just begun holds the row for its whole transaction
            c = Collection.objects.select_for_update(skip_locked=True).filter(pk=pk, status=Collection.Status.QUEUED)
            c = c.first()
            if c is None:
                continue
            c.error = (
                f"its task was sent again at {now:%H:%M:%S} UTC: the broker had lost it (queued, but no message "
                "waiting or delivered)"
            )
            c.save(update_fields=["error"])
            jobs.enqueue_on_commit(jobs.INGEST_COLLECTION, pk)
        resent[1] += 1
    if lost_batches or lost_imports:
        log.warning("tasks the broker lost, sent again: batches %s, imports %s", lost_batches, lost_imports)
    return resent[0], resent[1]


# --- a restarted web process (the demo) -----------------------------------------------------------------------------

_RESTARTED = "the web process that ran it stopped before it ended"


def resume_in_process(*, now: dt.datetime | None = None) -> dict[str, int]:
    """In a new web process of background mode, send again what the one before it left (see the module).

    Only there (:func:`resume_on_first_request` calls it), and only before this process has run a task: the
    imports and batches marked running then have no runner anywhere, and those marked queued have no task.
    Returns what it did, as :func:`stalled_requeue`."""
    out = dict.fromkeys(_OUTCOMES, 0)
    now = now or timezone.now()
    every_lease = now + dt.timedelta(days=1)  # older than this: no other process runs tasks here
    queued_imports = list(
        Collection.objects.filter(status=Collection.Status.QUEUED).order_by("pk").values_list("pk", flat=True)
    )
    queued_batches = list(
        ComputeBatch.objects.filter(
            status=ComputeBatch.Status.QUEUED,
            run__status__in=(ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING),
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    # the imports first: the background thread runs tasks in the order they are sent, and an import's run follows it
    for pk in Collection.objects.filter(status=Collection.Status.INGESTING).order_by("pk").values_list("pk", flat=True):
        outcome = _requeue_import(pk, every_lease, now, reason=_RESTARTED)
        if outcome:
            out[f"imports_{outcome}"] += 1
    for pk in queued_imports:
        jobs.send(jobs.INGEST_COLLECTION, pk)
        out["imports_resent"] += 1
    running = ComputeBatch.objects.filter(status=ComputeBatch.Status.RUNNING).order_by("pk")
    for pk in running.values_list("pk", flat=True):
        outcome = _requeue_batch(pk, every_lease, now, reason=_RESTARTED)
        if outcome:
            out[f"batches_{outcome}"] += 1
    for pk in queued_batches:
        jobs.send(jobs.COMPUTE_BATCH, pk)
        out["batches_resent"] += 1
    out["derived_rows_recomputed"] = len(derived_rows_check())
    if any(out.values()):
        log.warning("work the previous web process left, resumed: %s", out)
    return out


_resume_lock = threading.Lock()
_resumed = False


def resume_on_first_request(**kwargs) -> None:
    """``request_started`` receiver: :func:`resume_in_process` once per process, inside its first request and
    before that request's view runs (a request that came at the same time waits for it), so no task of this
    process has started yet. On when ``SPREADWATCH_RESUME_IN_PROCESS`` (``make demo``/``make serve``)."""
    global _resumed
    if _resumed or not (getattr(settings, "SPREADWATCH_RESUME_IN_PROCESS", False) and jobs.in_background()):
        return
    with _resume_lock:
        if _resumed:
            return
        _resumed = True
        try:
            resume_in_process()
        except Exception:  # the page must still answer; the analyst can still cancel and retry from the page
            log.exception("could not resume the work the previous web process left")
