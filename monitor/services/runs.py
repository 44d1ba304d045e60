"""Compute runs: planning, starting, cancelling, retrying a run, and running one of its batches.

A run (:class:`~monitor.models.ComputeRun`) names its algorithm (``monitor.algorithms``); this module looks it up
and lets it plan the run's batches and load, compute and store each batch. What is the same for every
algorithm is here: statuses, row locks, cancelling, retries, counting batches into the run, failures.

Faults (docs/reliability.md): a batch task may be delivered twice, or again after its worker died mid-batch;
the batch's advisory lock (held for its whole store) and the algorithm's replace-not-add store make every
delivery after the first that commits a no-op; the run's and the batch's row locks are taken only to count the
batch in, so the batches of a run store side by side. A run can be cancelled (:func:`compute_run_cancel`):
batches that finished keep their rows (they are correct, and the aggregates they touched were refreshed with
them), a batch still running stores nothing, batches not yet started do nothing; :func:`compute_run_retry`
queues the unfinished batches again.

Workers survive any run (docs/reliability.md): a batch runs under its workspace's memory ceiling
(:func:`~monitor.services.budgets.workspace_limits`, ``compute.memory``), checked at the algorithm's safe points
and, on a CPU worker, backed by a hard limit on the process's data size; a batch over it stops, fails saying why,
and the worker process takes its next task. A batch whose deliveries ended their worker again and again (a poison
message: killed by the OOM killer, a crash in native code) is not run again after ``SPREADWATCH_MAX_DELIVERIES``:
the delivery that finds it still marked running from those fails it and its run, without computing.

Runs in flight (docs/reliability.md, "Fairness"): at most ``workspace_limits(ws).runs_in_flight`` runs of a
workspace are queued or running at once; a run started (or retried) beyond that is ``waiting``: its batches exist
but are not sent to the broker. When a run ends (done, failed, cancelled) the transaction that ends it releases
the workspace's oldest waiting runs into the free places (their batches are sent once it commits); the
stalled-work sweep does the same as a safety net (:func:`runs_release_waiting`). The count and the release take
the workspace's queue lock (a transaction-scoped advisory lock), so two runs started at once never both see a
free place. An upload's own influence run is not counted and never waits: an upload is never held behind its
workspace's long analyses.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterator

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from compute.backends import device_name, resolve_backend
from compute.memory import MB, Ceiling, MemoryCeilingExceeded, OverMemory, describe_bytes, release

from .. import algorithms, jobs
from ..algorithms import BatchOutcome, RunCancelled
from ..algorithms.base import _phase_reporter, report_phase
from ..cache import forget_keys
from ..models import Collection, ComputeBatch, ComputeRun, Lease, Tweet, Workspace
from ..progress import run_progress_key
from . import budgets
from .leases import holding, notice_create
from .warmup import read_cache_warm, warm_rest_on_commit

log = logging.getLogger(__name__)

__all__ = [
    "DB_LOST",
    "POISON",
    "OVER_MEMORY",
    "compute_batch_run",
    "failure_kind",
    "compute_run_cancel",
    "compute_run_retry",
    "compute_run_start",
    "runs_release_waiting",
]

# a lost database connection (a restart, a failover) is not the batch's fault: the task retries it later
DB_LOST = (OperationalError, InterfaceError)
RUNNABLE = (ComputeBatch.Status.QUEUED, ComputeBatch.Status.RUNNING, ComputeBatch.Status.FAILED)

# how the two failures of this module that the run page explains begin (failure_kind tells them by it)
OVER_MEMORY = "stopped: "
POISON = "this batch ended its worker "
#: what an analyst can change when an algorithm does not say (an algorithm may set ``memory_hint``)
MEMORY_HINT = "run it on less data, or ask an admin to raise the workspace's memory ceiling"


# --- a run -------------------------------------------------------------------------------------------------------


def compute_run_start(
    *,
    workspace: Workspace,
    tweet_pks: list[int] | None = None,
    collection: Collection | None = None,
    user=None,
    orphans: str | None = None,
    backend: str | None = None,
    aggregate: str = ComputeRun.Aggregate.TOTAL,
    algorithm: str = "influence",
    params: dict | None = None,
) -> ComputeRun:
    """Create a run of ``algorithm`` with its own ``params`` over ``tweet_pks`` (all of the workspace's tweets
    when ``None``), let the algorithm plan its batches and queue them once the surrounding transaction commits."""
    try:
        algo = algorithms.get(algorithm)
    except algorithms.UnknownAlgorithm as exc:
        raise ValidationError({"algorithm": str(exc)}) from exc
    try:
        cleaned = algo.clean_params(dict(params or {}))
    except ValueError as exc:
        raise ValidationError({"params": str(exc)}) from exc
    if tweet_pks is None:
        tweet_pks = list(Tweet.objects.filter(workspace=workspace).values_list("pk", flat=True))
    run = ComputeRun(
        workspace=workspace,
        collection=collection,
        created_by=user,
        algorithm=algo.name,
        params=cleaned,
        orphans=orphans or settings.SPREADWATCH_ORPHANS,
        backend=backend or settings.SPREADWATCH_BACKEND,
        aggregate=aggregate,
    )
    run.full_clean()
    plan = algo.plan(run=run, tweet_pks=tweet_pks)
    budgets.check(run=run, plan=plan)  # refuses a run beyond the workspace's budget; records its estimate
    run.n_batches = len(plan)
    run.n_cascades = sum(b.n_cascades for b in plan)
    run.n_nodes = sum(b.n_nodes for b in plan)
    if not plan:
        run.status = ComputeRun.Status.DONE
        run.started_at = run.finished_at = timezone.now()
    with transaction.atomic():
        if plan and run.counts_in_flight:
            # held to the end of the caller's transaction: a run started at the same time counts this one
            _lock_queue(workspace.pk)
            if _must_wait(workspace):
                run.status = ComputeRun.Status.WAITING
        run.save()
        ComputeBatch.objects.bulk_create(
            ComputeBatch(
                run=run, index=i, tweet_pks=b.tweet_pks, params=b.params, n_cascades=b.n_cascades, n_nodes=b.n_nodes
            )
            for i, b in enumerate(plan)
        )
        if not plan and collection is not None:
            _collection_finished(collection.pk)
        if run.status == ComputeRun.Status.WAITING:
            log.info("compute run %s waits: workspace %s has its limit of runs in flight", run.pk, workspace.pk)
        else:
            _queue_batches(list(run.batches.values_list("pk", flat=True)))
    return run


def _queue_batches(ids: list[int]) -> None:
    for b in ids:
        jobs.enqueue_on_commit(jobs.COMPUTE_BATCH, b)


# --- runs in flight ----------------------------------------------------------------------------------------------

# the class of a workspace's queue lock (two-int key space, beside the batches' and the aggregates' classes)
QUEUE_LOCK_CLASS = 20_004
IN_FLIGHT = (ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING)


def _lock_queue(workspace_pk: int) -> None:
    """Hold the workspace's queue lock to the end of the transaction (PostgreSQL; SQLite has one writer). Taken
    after any run row lock the caller holds, and never while waiting for one: waiting runs are locked with
    ``skip_locked`` below, so it cannot close a cycle."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [QUEUE_LOCK_CLASS, workspace_pk % 2**31])


def _counted(workspace_pk: int):
    return ComputeRun.objects.filter(workspace_id=workspace_pk, collection__isnull=True)


def _must_wait(workspace: Workspace) -> bool:
    """Whether a new (or retried) counted run of ``workspace`` waits: its places are taken, or earlier runs wait
    already (first come, first served). The caller holds the queue lock."""
    from .budgets import workspace_limits

    runs = _counted(workspace.pk)
    if runs.filter(status=ComputeRun.Status.WAITING).exists():
        return True
    return runs.filter(status__in=IN_FLIGHT).count() >= workspace_limits(workspace).runs_in_flight


def _release(workspace_pk: int) -> list[int]:
    """Move the workspace's oldest waiting runs into its free places (in the caller's transaction) and send their
    unfinished batches once it commits; the ids released. Takes the queue lock."""
    from .budgets import workspace_limits

    _lock_queue(workspace_pk)
    workspace = Workspace.objects.get(pk=workspace_pk)
    runs = _counted(workspace_pk)
    free = workspace_limits(workspace).runs_in_flight - runs.filter(status__in=IN_FLIGHT).count()
    if free <= 0:
        return []
    # skip_locked: a waiting run that is being cancelled right now (its row locked) is not released
    waiting = list(
        runs.select_for_update(skip_locked=True)
        .filter(status=ComputeRun.Status.WAITING)
        .order_by("created_at", "pk")[:free]
    )
    for run in waiting:
        run.status = ComputeRun.Status.RUNNING if run.batches_done else ComputeRun.Status.QUEUED
        run.save(update_fields=["status"])
        _queue_batches(list(run.batches.exclude(status=ComputeBatch.Status.DONE).values_list("pk", flat=True)))
        log.info("compute run %s released: workspace %s has a free place", run.pk, workspace_pk)
    return [r.pk for r in waiting]


def runs_release_waiting(*, workspace_id: int | None = None) -> int:
    """Release the waiting runs that have a free place, in ``workspace_id`` or in every workspace with waiting
    runs (the stalled-work sweep's safety net: an end that did not release, a limit an admin raised). Returns
    how many were released."""
    ids = (
        [workspace_id]
        if workspace_id is not None
        else list(
            ComputeRun.objects.filter(status=ComputeRun.Status.WAITING)
            .values_list("workspace_id", flat=True)
            .distinct()
            .order_by()
        )
    )
    n = 0
    for pk in ids:
        with transaction.atomic():
            n += len(_release(pk))
    return n


def compute_run_cancel(*, run: ComputeRun, user=None) -> ComputeRun:
    """Cancel a queued or running run.

    Every batch that has not finished is marked cancelled at once. Its task, when a worker takes it, does
    nothing; a batch that is computing finds the mark at its next safe point (between groups of cascades, and
    in the transaction that would store its results) and stores nothing. Batches that finished before keep
    their rows: each committed its cascades and the aggregates of the (publisher, day) pairs it touched
    together, so the rankings stay consistent with what is stored. :func:`compute_run_retry` computes the
    rest. Celery's ``revoke`` is not used: on Redis it lives in the memory of the workers that are up, so a
    worker started later would run the task anyway; the mark in the database reaches every worker."""
    with transaction.atomic():
        # lock order everywhere: the run, then its batches (see compute_batch_run)
        locked = ComputeRun.objects.select_for_update().get(pk=run.pk)
        if not locked.is_active:
            raise ValidationError(f"a run that is {locked.get_status_display().lower()} cannot be cancelled")
        was_in_flight = locked.status in IN_FLIGHT
        now = timezone.now()
        n = locked.batches.exclude(status=ComputeBatch.Status.DONE).update(
            status=ComputeBatch.Status.CANCELLED, finished_at=now, error=""
        )
        who = f" by {user.get_username()}" if user is not None else ""
        locked.status = ComputeRun.Status.CANCELLED
        locked.finished_at = now
        locked.error = (
            f"cancelled{who}: {locked.batches_done} of {locked.n_batches} batches had finished and keep their "
            f"results; {n} stored nothing"
        )
        locked.save(update_fields=["status", "finished_at", "error"])
        if locked.collection_id:
            _collection_finished(locked.collection_id)  # the import itself is stored: it is done
        if was_in_flight and locked.counts_in_flight:
            _release(locked.workspace_id)  # its place goes to the oldest waiting run
    log.info("compute run %s cancelled%s (%d batches stopped)", locked.pk, who, n)
    run.refresh_from_db()
    return run


def compute_run_retry(*, run: ComputeRun) -> ComputeRun:
    """Queue a failed or cancelled run's unfinished batches again (same cascades, options and batch plan).
    Batches are idempotent, so the retried run ends with the same rows as a run that never stopped."""
    warmed: list[str] = []
    with _forgotten_unless_committed(warmed), transaction.atomic():
        locked = ComputeRun.objects.select_for_update().get(pk=run.pk)
        if locked.status not in (ComputeRun.Status.FAILED, ComputeRun.Status.CANCELLED):
            raise ValidationError(f"only a failed or cancelled run can be retried, not a {locked.status} one")
        todo = list(locked.batches.exclude(status=ComputeBatch.Status.DONE).values_list("pk", flat=True))
        ComputeBatch.objects.filter(pk__in=todo).update(
            status=ComputeBatch.Status.QUEUED, error="", started_at=None, finished_at=None
        )
        locked.batches_done = locked.batches.filter(status=ComputeBatch.Status.DONE).count()
        locked.error = ""
        wait = False
        if todo:
            if locked.counts_in_flight:
                _lock_queue(locked.workspace_id)  # a retried run takes its turn like a new one
                wait = _must_wait(locked.workspace)
            if wait:
                locked.status = ComputeRun.Status.WAITING
            else:
                locked.status = ComputeRun.Status.RUNNING if locked.batches_done else ComputeRun.Status.QUEUED
            locked.finished_at = None
            if locked.collection_id:
                Collection.objects.filter(pk=locked.collection_id, status=Collection.Status.DONE).update(
                    status=Collection.Status.COMPUTING, finished_at=None
                )
        else:  # every batch had finished (e.g. the last one committed as the run failed elsewhere)
            algorithms.get(locked.algorithm).finish(run=locked)  # that commit did not finish the failed run
            _warm(locked, warmed)
            locked.status = ComputeRun.Status.DONE
            locked.finished_at = timezone.now()
        locked.save(update_fields=["status", "batches_done", "error", "finished_at", "timings", "notes"])
        if not wait:
            _queue_batches(todo)
    run.refresh_from_db()
    return run


# --- one batch ---------------------------------------------------------------------------------------------------


def compute_batch_run(*, batch_id: int, after_error: bool = False) -> ComputeBatch:
    """Compute one batch with its run's algorithm and store its results (the body of the ``compute_batch`` task).

    Safe to deliver any number of times, at once or after a worker died mid-batch: a batch that is done or
    cancelled is left alone; results are stored under the batch's advisory lock, counted in under row locks on
    the run and the batch (taken in that order, as :func:`compute_run_cancel` does), and kept only for the first
    delivery to get there while neither the batch nor the run is cancelled.

    Bounded (see the module): the batch runs under its workspace's memory ceiling and fails, saying why, above it
    (the worker lives on); a delivery that finds the batch still running from ``SPREADWATCH_MAX_DELIVERIES``
    deliveries that never ended fails it without computing (:data:`POISON`). ``after_error``: this delivery is
    the task's own retry after the previous one ended with an error it could not record (a lost database), so
    the batch's running mark is no sign of a crash."""
    batch = ComputeBatch.objects.select_related("run", "run__workspace").get(pk=batch_id)
    run = batch.run
    if batch.status in (ComputeBatch.Status.DONE, ComputeBatch.Status.CANCELLED):
        if batch.status == ComputeBatch.Status.CANCELLED:
            log.info("compute batch %s of run %s skipped: the run was cancelled", batch.pk, run.pk)
        return batch
    if _poisoned(batch, run, after_error=after_error):
        batch.refresh_from_db()
        return batch
    if not _claim(batch, run):
        batch.refresh_from_db()
        return batch
    ceiling: Ceiling | None = None
    try:
        # "auto" is decided by the worker that runs the batch (a GPU worker says SPREADWATCH_BACKEND=gpu)
        used = resolve_backend(settings.SPREADWATCH_BACKEND if run.backend == "auto" else run.backend)
        ceiling = _ceiling(run, used)
        # a heartbeat while it runs: the stalled-work sweep queues it again if this worker dies (recovery.py)
        with holding(Lease.Kind.BATCH, batch.pk), ceiling:
            return _compute_and_store(batch, run, used, ceiling)
    except RunCancelled:
        log.info("compute batch %s of run %s stopped: the run was cancelled; nothing was stored", batch.pk, run.pk)
        ComputeBatch.objects.filter(pk=batch.pk).exclude(status=ComputeBatch.Status.DONE).update(
            status=ComputeBatch.Status.CANCELLED, finished_at=timezone.now()
        )
        batch.refresh_from_db()
        return batch
    except DB_LOST:
        # recording the failure would need the database that was just lost; the task retries the batch, which
        # is still marked running (a redelivery may run it: RUNNABLE)
        log.warning("compute batch %s of run %s lost its database connection", batch.pk, run.pk, exc_info=True)
        raise
    except Exception as exc:
        if ceiling is None or not _over_memory(exc):
            log.exception("compute batch %s of run %s failed", batch.pk, run.pk)
            _batch_failed(batch, run, f"{exc.__class__.__name__}: {exc}")
            raise
        msg = _memory_message(run, exc, ceiling)
    # over its memory: not raised on, so that nothing (Celery's record of a failure) keeps the exception's frames and
    # the arrays they hold; the process gives the memory back and takes its next task
    log.warning("compute batch %s of run %s %s", batch.pk, run.pk, msg)
    _batch_failed(batch, run, msg)
    release()
    batch.refresh_from_db()
    return batch


def max_deliveries() -> int:
    return max(1, int(getattr(settings, "SPREADWATCH_MAX_DELIVERIES", 3)))


def _poisoned(batch: ComputeBatch, run: ComputeRun, *, after_error: bool) -> bool:
    """True when this delivery must not compute the batch: it is still marked running from
    ``SPREADWATCH_MAX_DELIVERIES`` deliveries that never ended (each ended its worker), or it failed after that
    many (left failed). The first case fails the batch and its run, saying why, and tells the analyst."""
    n = max_deliveries()
    if batch.attempts < n:
        return False
    if batch.status == ComputeBatch.Status.FAILED:
        log.warning("compute batch %s of run %s not run again: it failed after %d attempts", batch.pk, run.pk, n)
        return True
    if batch.status != ComputeBatch.Status.RUNNING or after_error:
        return False
    msg = (
        f"{POISON}{batch.attempts} times (killed, or out of memory) without finishing: not run again; "
        "nothing of it was stored"
    )
    # conditional: only when no other delivery claimed, finished or cancelled it in between
    now = timezone.now()
    failed = ComputeBatch.objects.filter(
        pk=batch.pk, status=ComputeBatch.Status.RUNNING, attempts=batch.attempts
    ).update(status=ComputeBatch.Status.FAILED, error=msg, finished_at=now)
    if not failed:
        return False
    Lease.objects.filter(kind=Lease.Kind.BATCH, object_id=batch.pk).delete()
    log.error("compute batch %s of run %s: %s", batch.pk, run.pk, msg)
    ended = ComputeRun.objects.filter(
        pk=run.pk, status__in=(ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING)
    ).update(status=ComputeRun.Status.FAILED, error=f"batch {batch.index}: {msg}", finished_at=now)
    if ended:
        if run.collection_id:
            _collection_finished(run.collection_id)
        if run.counts_in_flight:
            runs_release_waiting(workspace_id=run.workspace_id)  # its place goes to the oldest waiting run
        notice_create(
            workspace_id=run.workspace_id,
            user_id=run.created_by_id,
            message=f"Compute run {run.pk} failed: batch {batch.index}: {msg}. Its page says what to do.",
            url=reverse("run", kwargs={"ws": run.workspace.slug, "pk": run.pk}),
        )
    return True


def _ceiling(run: ComputeRun, backend: str) -> Ceiling:
    """The batch's memory ceiling: its workspace's limit; the hard backstop only on a CPU worker (a CUDA process's
    host mappings count in the data size, and a refused one is no clean error), and on a GPU worker only the
    process's anonymous pages count (the driver maps shared memory as it copies to the device: about twice the
    graph's size, which stopped a bigger4-sized run's first GPU batch at the default 2 GB ceiling)."""
    limit = budgets.workspace_limits(run.workspace).run_memory_bytes
    gpu = backend == "gpu"
    hard = bool(getattr(settings, "SPREADWATCH_MEMORY_HARD_LIMIT", True)) and not gpu
    return Ceiling(limit, hard=hard, shared=not gpu)


def _over_memory(exc: BaseException) -> bool:
    """Whether ``exc``, or what caused it, is a refused allocation (numba's parallel loops wrap a MemoryError in a
    SystemError)."""
    seen = 0
    e: BaseException | None = exc
    while e is not None and seen < 8:
        if isinstance(e, MemoryError):
            return True
        e = e.__cause__ or e.__context__
        seen += 1
    return False


def _memory_message(run: ComputeRun, exc: BaseException, ceiling: Ceiling) -> str:
    """What the run page says of a batch stopped for its memory: how much, the workspace's ceiling, what to change."""
    hint = getattr(algorithms.get(run.algorithm), "memory_hint", "") or MEMORY_HINT
    limit = f"this workspace's ceiling of {ceiling.limit // MB:,} MB"
    if isinstance(exc, MemoryCeilingExceeded):
        return f"{OVER_MEMORY}its memory reached {describe_bytes(exc.used)}, above {limit}; {hint}"
    if isinstance(exc, OverMemory):  # the algorithm said why, before allocating
        return f"{OVER_MEMORY}{exc}"
    held = describe_bytes(max(ceiling.used(), 0))
    if ceiling.hard_used:
        why = f"an allocation would have taken its memory above {limit} (it held {held})"
    else:
        why = f"an allocation was refused: the worker ran out of memory (it held {held}; {limit})"
    return f"{OVER_MEMORY}{why}; {hint}"


def failure_kind(error: str) -> str:
    """``"memory"`` or ``"poison"`` for a batch's (or run's, ``batch N: ...``) error written here, else ``""``."""
    text = error.split(": ", 1)[1] if error.startswith("batch ") and ": " in error else error
    if text.startswith(OVER_MEMORY):
        return "memory"
    if text.startswith(POISON):
        return "poison"
    return ""


def _claim(batch: ComputeBatch, run: ComputeRun) -> bool:
    """Mark the batch running (and its run started); False when another delivery finished it, or a cancel
    came, in between."""
    now = timezone.now()
    if ComputeRun.objects.filter(pk=run.pk, status=ComputeRun.Status.WAITING).exists():
        # a stray message (sent before the run was retried into the wait): its batches are sent on release
        log.info("compute batch %s of run %s left queued: the run waits for its turn", batch.pk, run.pk)
        return False
    # conditional: a duplicate delivery that finished (or a cancel) in between must not be overwritten
    started = ComputeBatch.objects.filter(pk=batch.pk, status__in=RUNNABLE).update(
        status=ComputeBatch.Status.RUNNING, attempts=F("attempts") + 1, started_at=now, error=""
    )
    if not started:
        return False
    if run.started_at is None:
        ComputeRun.objects.filter(pk=run.pk, started_at__isnull=True).update(started_at=now)
    if run.status == ComputeRun.Status.QUEUED:
        ComputeRun.objects.filter(pk=run.pk, status=ComputeRun.Status.QUEUED).update(status=ComputeRun.Status.RUNNING)
    return True


def _phase(run: ComputeRun, batch: ComputeBatch, phase: str) -> None:
    # "done" is how many other batches were stored when this one began the phase: the reader ignores a phase whose
    # batch has been counted since (or that another worker's batch reported before this run moved on). This batch
    # is left out: its own "aggregates" (the run's completion and the read cache's warm-up) comes after it is marked
    # done in its still uncommitted transaction, and counting it there made the bar fall back to "computing" for as
    # long as the warm-up took
    done = ComputeBatch.objects.filter(run_id=run.pk, status=ComputeBatch.Status.DONE).exclude(pk=batch.pk).count()
    cache.set(
        run_progress_key(run.pk),
        {"phase": phase, "batch": batch.index, "done": done, "at": time.time()},
        timeout=24 * 3600,
    )


def _compute_and_store(batch: ComputeBatch, run: ComputeRun, used: str, ceiling: Ceiling) -> ComputeBatch:
    """The algorithm's load -> compute, then its store under the batch's lock; raises RunCancelled when the run
    was cancelled before the store was counted in (the store is then undone with its transaction)."""
    token = _phase_reporter.set(lambda phase: _phase(run, batch, phase))
    try:
        return _compute_and_store_phases(batch, run, used, ceiling)
    finally:
        _phase_reporter.reset(token)


def _compute_and_store_phases(batch: ComputeBatch, run: ComputeRun, used: str, ceiling: Ceiling) -> ComputeBatch:
    algo = algorithms.get(run.algorithm)
    _phase(run, batch, "computing")
    t0 = time.perf_counter()

    def stop() -> bool:  # the algorithm's safe points: the memory ceiling (raises), then a cancel
        ceiling.check()
        return _cancelled(batch.pk)

    res = algo.compute(run=run, batch=batch, backend=used, stop=stop)
    ceiling.check()
    t1 = time.perf_counter()
    warmed: list[str] = []  # read-cache keys the last batch warmed for the version this transaction commits
    with _forgotten_unless_committed(warmed), transaction.atomic():
        # Two locks, so that the batches of one run store side by side: the batch's own advisory lock for the
        # whole store (two deliveries of one batch store one after the other, and the second finds it done),
        # and the row locks on the run and the batch only at the end, to count the batch in. Taking the run's
        # row lock first and holding it for the store made every other batch of the run wait (issue 21).
        _lock_batch(batch.pk)
        current = ComputeBatch.objects.select_related("run").get(pk=batch.pk)
        if current.status == ComputeBatch.Status.DONE:  # a duplicate delivery finished first
            log.info("compute batch %s of run %s was already stored by another delivery", batch.pk, run.pk)
            return current
        if current.status == ComputeBatch.Status.CANCELLED or current.run.status == ComputeRun.Status.CANCELLED:
            raise RunCancelled()
        _phase(run, batch, "storing results")
        algo.store(run=run, batch=batch, result=res)
        t2 = time.perf_counter()
        # lock order everywhere: the run, then its batches (compute_run_cancel takes them so)
        locked_run = ComputeRun.objects.select_for_update().get(pk=run.pk)
        locked = ComputeBatch.objects.select_for_update().get(pk=batch.pk)
        if locked.status == ComputeBatch.Status.CANCELLED or locked_run.status == ComputeRun.Status.CANCELLED:
            raise RunCancelled()  # cancelled while it stored: the transaction, and so the store, is undone
        res.timings["store_wait_run_s"] = time.perf_counter() - t2
        res.timings["store_s"] = time.perf_counter() - t1
        res.timings["total_s"] = time.perf_counter() - t0
        locked.status = ComputeBatch.Status.DONE
        locked.device = device_name(used) + (f" + {device_name('cpu')}" if res.cpu_fallback else "")
        locked.timings = {k: round(v, 4) for k, v in res.timings.items()}
        locked.finished_at = timezone.now()
        locked.save(update_fields=["status", "device", "timings", "finished_at"])
        _batch_finished(locked_run, locked, res, warmed)
    return locked


# the class of a batch's advisory lock (two-int key space, beside the merge's and the aggregates' classes)
BATCH_LOCK_CLASS = 20_003


def _lock_batch(batch_pk: int) -> None:
    """Hold the batch's advisory lock to the end of the transaction (PostgreSQL; SQLite has one writer)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [BATCH_LOCK_CLASS, batch_pk % 2**31])


def _cancelled(batch_pk: int) -> bool:
    return ComputeBatch.objects.filter(pk=batch_pk, status=ComputeBatch.Status.CANCELLED).exists()


def _batch_finished(run: ComputeRun, batch: ComputeBatch, res: BatchOutcome, warmed: list[str]) -> None:
    """Count ``batch`` into ``run`` (locked by the caller) and finish the run after its last batch; the read-cache
    keys warmed for the new data version are added to ``warmed`` (none before the last batch)."""
    # counted, not incremented: a batch redone after its worker died must not count twice
    run.batches_done = run.batches.filter(status=ComputeBatch.Status.DONE).count()
    run.n_edges += res.n_edges
    for k, v in batch.timings.items():
        run.timings[k] = round(run.timings.get(k, 0.0) + v, 4)
    for device in batch.device.split(" + ") if batch.device else []:
        if device not in run.devices:
            run.devices.append(device)
    for note in res.notes:
        if len(run.notes) < 50:
            run.notes.append(f"batch {batch.index}: {note}")
    if run.batches_done >= run.n_batches and run.status != ComputeRun.Status.FAILED:
        # the algorithm completes the run from its batches' rows here, once: in this transaction, under the run's
        # row lock, after the last batch stored (a graph-wide analysis adds up its partial sums)
        report_phase("aggregates")  # the algorithm's run-wide completion (the influence's is in its store)
        algorithms.get(run.algorithm).finish(run=run)
        _warm(run, warmed)  # before the run shows done: its pages' reads are cached when the commit lands
        run.status = ComputeRun.Status.DONE
        run.finished_at = timezone.now()
    run.save()
    if run.status == ComputeRun.Status.DONE:
        # the rankings changed: evaluate the workspace's alert rules once the results are committed
        jobs.enqueue_on_commit(jobs.EVALUATE_ALERTS, run.workspace_id)
        if run.collection_id:
            _collection_finished(run.collection_id)
        if run.counts_in_flight:
            _release(run.workspace_id)  # in this transaction: its place goes to the oldest waiting run


def _warm(run: ComputeRun, warmed: list[str]) -> None:
    """Warm the read cache of the run's workspace for the data version this transaction is about to commit
    (``services.warmup``: the pages opened first now, the rest now or once it commits), adding the keys written to
    ``warmed``; never raises. Its time goes into the run's timings, what it left cold into a note."""
    before = settings.SPREADWATCH_WARM_REST == "before"  # the rest too, in this transaction (the default)
    out = read_cache_warm(workspace=run.workspace, rest=before)
    if not before:
        warm_rest_on_commit(run.workspace_id)
    warmed += out.keys
    if out.done or out.failed or out.skipped:
        run.timings["warm_s"] = round(out.seconds, 4)
    if (out.failed or out.skipped) and len(run.notes) < 51:
        run.notes.append(out.note())


@contextlib.contextmanager
def _forgotten_unless_committed(keys: list[str]) -> Iterator[None]:
    """Around a transaction that may warm the read cache: if it does not commit, the keys it warmed are dropped
    (their data version was not committed, and the next bump will use its number again)."""
    try:
        yield
    except BaseException:
        if keys:
            forget_keys(keys)
        raise


def _batch_failed(batch: ComputeBatch, run: ComputeRun, msg: str) -> None:
    failed = (
        ComputeBatch.objects.filter(pk=batch.pk)
        .exclude(status__in=[ComputeBatch.Status.DONE, ComputeBatch.Status.CANCELLED])
        .update(status=ComputeBatch.Status.FAILED, error=msg, finished_at=timezone.now())
    )
    if failed:  # not when another delivery stored the batch, or the run was cancelled, meanwhile
        with transaction.atomic():
            before = ComputeRun.objects.select_for_update().filter(pk=run.pk).values_list("status", flat=True).first()
            ComputeRun.objects.filter(pk=run.pk).exclude(status=ComputeRun.Status.CANCELLED).update(
                status=ComputeRun.Status.FAILED, error=f"batch {batch.index}: {msg}", finished_at=timezone.now()
            )
            if run.collection_id:
                _collection_finished(run.collection_id)
            if before in IN_FLIGHT and run.counts_in_flight:
                _release(run.workspace_id)  # its place goes to the oldest waiting run


def _collection_finished(collection_pk: int) -> None:
    Collection.objects.filter(pk=collection_pk, status=Collection.Status.COMPUTING).update(
        status=Collection.Status.DONE, finished_at=timezone.now()
    )
