"""Computing influence for stored cascades: planning batches, running one batch, refreshing aggregates.

A *run* covers a set of tweets; the planner groups them into batches of about ``SPREADWATCH_BATCH_NODES``
participants, largest cascades first, so one task holds a bounded amount of data and a GPU sees cascades of
similar size together. A batch task loads its cascades and the follow edges among their participants,
runs the forward and backward phases (``compute``; CPU or GPU), and in one transaction replaces the
per-cascade influence of its tweets and recomputes the daily aggregates of the (publisher, day) pairs they
belong to. Running a batch twice gives the same rows once: rows are replaced, not added, and a batch that is
already done is skipped under a row lock.

Inside a batch, cascades are computed in groups that share how their input must be read: rebuilt from
follows or given spreading graphs, with or without times, with or without follower counts (a cascade
without any count uses n_v = 1 and the unit "retweeters"; DESIGN §1).

Faults (docs/reliability.md): a batch task may be delivered twice, or again after its worker died mid-batch;
the row lock on the batch and the replace-not-add store make every delivery after the first that commits a
no-op. A batch whose cascades do not fit in GPU memory together is split in halves until they do, and a
cascade that alone does not fit runs on the CPU; the run's notes say so. A run can be cancelled
(:func:`compute_run_cancel`): batches that finished keep their rows (they are correct, and the aggregates they
touched were refreshed with them), a batch still running stores nothing, batches not yet started do nothing;
:func:`compute_run_retry` queues the unfinished batches again.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F
from django.utils import timezone

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward
from compute.backends import resolve_backend
from compute.build import build_cascades
from compute.structures import Cascades, FollowerGraph, SpreadingGraphs
from compute.tables import NO_TWEET, TweetTable

from ..db import analyze_after_bulk_write, copy_in, copy_out, create_temp, dialect, temp_table_name
from ..models import Collection, ComputeBatch, ComputeRun, Tweet, Workspace

log = logging.getLogger(__name__)

__all__ = [
    "compute_batch_run",
    "compute_run_cancel",
    "compute_run_retry",
    "compute_run_start",
    "device_name",
    "plan_batches",
]

ROLE_CODES = {0: "publisher", 1: "spreader", 2: "leaf", 3: "orphan"}


# --- planning ------------------------------------------------------------------------------------------------


def plan_batches(sizes: dict[int, int], budget: int) -> list[list[int]]:
    """Group tweet pks (``sizes``: pk -> participants) into batches of at most ``budget`` participants,
    largest first; a cascade larger than the budget gets a batch of its own."""
    order = sorted(sizes, key=lambda k: (-sizes[k], k))
    batches: list[list[int]] = []
    cur: list[int] = []
    used = 0
    for pk in order:
        n = sizes[pk]
        if cur and used + n > budget:
            batches.append(cur)
            cur, used = [], 0
        cur.append(pk)
        used += n
    if cur:
        batches.append(cur)
    return batches


def _cascade_sizes(tweet_pks: list[int]) -> dict[int, int]:
    sizes: dict[int, int] = {}
    with connection.cursor() as cur:
        tmp = temp_table_name("plan")
        create_temp(cur, tmp, [("id", "bigint")])
        copy_in(cur, tmp, [("id", "bigint")], [np.asarray(tweet_pks, dtype=np.int64)])
        cur.execute(
            f"""SELECT p.id, 1 + COUNT(r.id) FROM {tmp} p LEFT JOIN monitor_retweet r ON r.tweet_id = p.id
                GROUP BY p.id"""
        )
        sizes = {int(a): int(b) for a, b in cur.fetchall()}
        cur.execute(f"DROP TABLE IF EXISTS {tmp}")
    return sizes


def compute_run_start(
    *,
    workspace: Workspace,
    tweet_pks: list[int] | None = None,
    collection: Collection | None = None,
    user=None,
    orphans: str | None = None,
    backend: str | None = None,
    aggregate: str = ComputeRun.Aggregate.TOTAL,
) -> ComputeRun:
    """Create a run over ``tweet_pks`` (all of the workspace's tweets when ``None``), plan its batches and
    queue them once the surrounding transaction commits."""
    if tweet_pks is None:
        tweet_pks = list(Tweet.objects.filter(workspace=workspace).values_list("pk", flat=True))
    run = ComputeRun(
        workspace=workspace,
        collection=collection,
        created_by=user,
        orphans=orphans or settings.SPREADWATCH_ORPHANS,
        backend=backend or settings.SPREADWATCH_BACKEND,
        aggregate=aggregate,
    )
    run.full_clean()
    sizes = _cascade_sizes(tweet_pks) if tweet_pks else {}
    plan = plan_batches(sizes, settings.SPREADWATCH_BATCH_NODES)
    run.n_batches = len(plan)
    run.n_cascades = len(sizes)
    run.n_nodes = sum(sizes.values())
    if not plan:
        run.status = ComputeRun.Status.DONE
        run.started_at = run.finished_at = timezone.now()
    run.save()
    ComputeBatch.objects.bulk_create(
        ComputeBatch(run=run, index=i, tweet_pks=pks, n_cascades=len(pks), n_nodes=sum(sizes[p] for p in pks))
        for i, pks in enumerate(plan)
    )
    if not plan and collection is not None:
        _collection_finished(collection.pk)
    ids = list(run.batches.values_list("pk", flat=True))
    _queue_batches(ids)
    return run


def _queue_batches(ids: list[int]) -> None:
    from ..tasks import compute_batch

    # robust: in eager mode (no broker) a failing batch must not undo the caller's work; it records its error
    for b in ids:
        transaction.on_commit(lambda b=b: compute_batch.delay(b), robust=True)


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
        if locked.status not in (ComputeRun.Status.QUEUED, ComputeRun.Status.RUNNING):
            raise ValidationError(f"a run that is {locked.get_status_display().lower()} cannot be cancelled")
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
    log.info("compute run %s cancelled%s (%d batches stopped)", locked.pk, who, n)
    run.refresh_from_db()
    return run


def compute_run_retry(*, run: ComputeRun) -> ComputeRun:
    """Queue a failed or cancelled run's unfinished batches again (same cascades, options and batch plan).
    Batches are idempotent, so the retried run ends with the same rows as a run that never stopped."""
    with transaction.atomic():
        locked = ComputeRun.objects.select_for_update().get(pk=run.pk)
        if locked.status not in (ComputeRun.Status.FAILED, ComputeRun.Status.CANCELLED):
            raise ValidationError(f"only a failed or cancelled run can be retried, not a {locked.status} one")
        todo = list(locked.batches.exclude(status=ComputeBatch.Status.DONE).values_list("pk", flat=True))
        ComputeBatch.objects.filter(pk__in=todo).update(
            status=ComputeBatch.Status.QUEUED, error="", started_at=None, finished_at=None
        )
        locked.batches_done = locked.batches.filter(status=ComputeBatch.Status.DONE).count()
        locked.error = ""
        if todo:
            locked.status = ComputeRun.Status.RUNNING if locked.batches_done else ComputeRun.Status.QUEUED
            locked.finished_at = None
            if locked.collection_id:
                Collection.objects.filter(pk=locked.collection_id, status=Collection.Status.DONE).update(
                    status=Collection.Status.COMPUTING, finished_at=None
                )
        else:  # every batch had finished (e.g. the last one committed as the run failed elsewhere)
            locked.status = ComputeRun.Status.DONE
            locked.finished_at = timezone.now()
        locked.save(update_fields=["status", "batches_done", "error", "finished_at"])
        _queue_batches(todo)
    run.refresh_from_db()
    return run


# --- one batch ---------------------------------------------------------------------------------------------------


@dataclass
class BatchResult:
    tweet: list[np.ndarray] = field(default_factory=list)  # per node rows
    account: list[np.ndarray] = field(default_factory=list)
    publisher: list[np.ndarray] = field(default_factory=list)
    influence: list[np.ndarray] = field(default_factory=list)
    followers: list[np.ndarray] = field(default_factory=list)
    role: list[np.ndarray] = field(default_factory=list)
    # per tweet
    t_pk: list[np.ndarray] = field(default_factory=list)
    t_status: list[np.ndarray] = field(default_factory=list)  # 1 computed, 2 rejected
    t_nodes: list[np.ndarray] = field(default_factory=list)
    t_edges: list[np.ndarray] = field(default_factory=list)
    t_orphans: list[np.ndarray] = field(default_factory=list)
    t_reach: list[np.ndarray] = field(default_factory=list)
    t_unit: list[np.ndarray] = field(default_factory=list)  # 0 followers, 1 retweeters
    graphs: list[tuple[int, int, bytes]] = field(default_factory=list)  # tweet pk, edges, packed edges
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    n_edges: int = 0
    cpu_fallback: list[int] = field(default_factory=list)  # tweet pks computed on the CPU after a GPU OOM

    def merge(self, other: BatchResult) -> None:
        """Add the results of another part of the same batch."""
        for f in fields(self):
            if f.type.startswith("list["):
                getattr(self, f.name).extend(getattr(other, f.name))
        for k, v in other.timings.items():
            self.timings[k] = self.timings.get(k, 0.0) + v
        self.n_edges += other.n_edges

    def cat(self, name: str, dtype) -> np.ndarray:
        parts = getattr(self, name)
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    def tick(self, key: str, t0: float) -> float:
        t = time.perf_counter()
        self.timings[key] = self.timings.get(key, 0.0) + (t - t0)
        return t


def device_name(backend: str) -> str:
    if backend == "gpu":
        try:
            import cupy

            dev = cupy.cuda.Device()
            name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"]
            return f"GPU {dev.id}: {name.decode() if isinstance(name, bytes) else name}"
        except Exception as exc:  # pragma: no cover - depends on the machine
            return f"GPU ({exc.__class__.__name__})"
    from compute._jit import HAVE_NUMBA

    return f"CPU ({os.cpu_count()} cores{', numba' if HAVE_NUMBA else ', NumPy only'})"


# a lost database connection (a restart, a failover) is not the batch's fault: the task retries it later
DB_LOST = (OperationalError, InterfaceError)
RUNNABLE = (ComputeBatch.Status.QUEUED, ComputeBatch.Status.RUNNING, ComputeBatch.Status.FAILED)


class RunCancelled(Exception):
    """Raised inside a computing batch when its run was cancelled: nothing of the batch is stored."""


def compute_batch_run(*, batch_id: int) -> ComputeBatch:
    """Compute one batch and store its results (the body of the ``compute_batch`` task).

    Safe to deliver any number of times, at once or after a worker died mid-batch: a batch that is done or
    cancelled is left alone; results are stored under row locks on the run and the batch (taken in that order,
    as :func:`compute_run_cancel` does), and only by the first delivery to get there while the batch is neither
    done nor cancelled."""
    batch = ComputeBatch.objects.select_related("run", "run__workspace").get(pk=batch_id)
    run = batch.run
    if batch.status in (ComputeBatch.Status.DONE, ComputeBatch.Status.CANCELLED):
        if batch.status == ComputeBatch.Status.CANCELLED:
            log.info("compute batch %s of run %s skipped: the run was cancelled", batch.pk, run.pk)
        return batch
    now = timezone.now()
    # conditional: a duplicate delivery that finished (or a cancel) in between must not be overwritten
    started = ComputeBatch.objects.filter(pk=batch.pk, status__in=RUNNABLE).update(
        status=ComputeBatch.Status.RUNNING, attempts=F("attempts") + 1, started_at=now, error=""
    )
    if not started:
        batch.refresh_from_db()
        return batch
    if run.started_at is None:
        ComputeRun.objects.filter(pk=run.pk, started_at__isnull=True).update(started_at=now)
    if run.status == ComputeRun.Status.QUEUED:
        ComputeRun.objects.filter(pk=run.pk, status=ComputeRun.Status.QUEUED).update(status=ComputeRun.Status.RUNNING)
    t0 = time.perf_counter()
    try:
        # "auto" is decided by the worker that runs the batch (a GPU worker says SPREADWATCH_BACKEND=gpu)
        used = resolve_backend(settings.SPREADWATCH_BACKEND if run.backend == "auto" else run.backend)
        res = _compute_batch(batch, run, used, stop=lambda: _cancelled(batch.pk))
        t1 = time.perf_counter()
        with transaction.atomic():
            locked_run = ComputeRun.objects.select_for_update().get(pk=run.pk)
            locked = ComputeBatch.objects.select_for_update().get(pk=batch.pk)
            if locked.status == ComputeBatch.Status.DONE:  # a duplicate delivery finished first
                log.info("compute batch %s of run %s was already stored by another delivery", batch.pk, run.pk)
                return locked
            if locked.status == ComputeBatch.Status.CANCELLED or locked_run.status == ComputeRun.Status.CANCELLED:
                raise RunCancelled()
            _store(run, batch, res)
            res.timings["store_s"] = time.perf_counter() - t1
            res.timings["total_s"] = time.perf_counter() - t0
            locked.status = ComputeBatch.Status.DONE
            locked.device = device_name(used) + (f" + {device_name('cpu')}" if res.cpu_fallback else "")
            locked.timings = {k: round(v, 4) for k, v in res.timings.items()}
            locked.finished_at = timezone.now()
            locked.save(update_fields=["status", "device", "timings", "finished_at"])
            _batch_finished(locked_run, locked, res)
        return locked
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
        log.exception("compute batch %s of run %s failed", batch.pk, run.pk)
        msg = f"{exc.__class__.__name__}: {exc}"
        failed = (
            ComputeBatch.objects.filter(pk=batch.pk)
            .exclude(status__in=[ComputeBatch.Status.DONE, ComputeBatch.Status.CANCELLED])
            .update(status=ComputeBatch.Status.FAILED, error=msg, finished_at=timezone.now())
        )
        if failed:  # not when another delivery stored the batch, or the run was cancelled, meanwhile
            ComputeRun.objects.filter(pk=run.pk).exclude(status=ComputeRun.Status.CANCELLED).update(
                status=ComputeRun.Status.FAILED, error=f"batch {batch.index}: {msg}", finished_at=timezone.now()
            )
            if run.collection_id:
                _collection_finished(run.collection_id)
        raise


def _cancelled(batch_pk: int) -> bool:
    return ComputeBatch.objects.filter(pk=batch_pk, status=ComputeBatch.Status.CANCELLED).exists()


def _batch_finished(run: ComputeRun, batch: ComputeBatch, res: BatchResult) -> None:
    """Count ``batch`` into ``run`` (locked by the caller) and finish the run after its last batch."""
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
        run.status = ComputeRun.Status.DONE
        run.finished_at = timezone.now()
    run.save()
    if run.status == ComputeRun.Status.DONE:
        from monitor.alerts.tasks import evaluate_alerts

        # the rankings changed: evaluate the workspace's alert rules once the results are committed
        transaction.on_commit(lambda ws=run.workspace_id: evaluate_alerts.delay(ws), robust=True)
        if run.collection_id:
            _collection_finished(run.collection_id)


def _collection_finished(collection_pk: int) -> None:
    Collection.objects.filter(pk=collection_pk, status=Collection.Status.COMPUTING).update(
        status=Collection.Status.DONE, finished_at=timezone.now()
    )


# --- loading and computing -----------------------------------------------------------------------------------


def is_device_oom(exc: BaseException) -> bool:
    """Whether ``exc`` says the GPU ran out of memory: CuPy's ``OutOfMemoryError``, or a CUDA allocation failure
    reported by the runtime or driver API."""
    cupy = sys.modules.get("cupy")  # not imported here: an error raised by CuPy means it is loaded already
    if cupy is not None and isinstance(exc, cupy.cuda.memory.OutOfMemoryError):
        return True
    text = str(exc)
    return "cudaErrorMemoryAllocation" in text or "CUDA_ERROR_OUT_OF_MEMORY" in text


def _free_device_memory() -> None:
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()


def _compute_batch(batch: ComputeBatch, run: ComputeRun, backend: str, stop: Callable[[], bool]) -> BatchResult:
    """The batch's results. On the GPU, cascades that do not fit in device memory together (the engine plans
    chunks from an estimate, which another process's allocations can beat) are computed in halves, recursively;
    a cascade that alone does not fit runs on the CPU reference. The numbers are the same either way; the notes
    say what happened."""
    try:
        return _compute(batch.tweet_pks, run, backend, stop)
    except Exception as exc:
        if backend != "gpu" or not is_device_oom(exc):
            raise
        log.warning("compute batch %s of run %s: GPU out of memory; splitting it", batch.pk, run.pk)
    _free_device_memory()
    sizes = _cascade_sizes(batch.tweet_pks)
    res = BatchResult()
    parts = 0
    todo = list(_halves(batch.tweet_pks, sizes))
    while todo:
        pks = todo.pop()
        try:
            res.merge(_compute(pks, run, backend, stop))
            parts += 1
            continue
        except Exception as exc:
            if not is_device_oom(exc):
                raise
        _free_device_memory()
        if len(pks) > 1:
            todo += _halves(pks, sizes)
        else:
            res.merge(_compute(pks, run, "cpu", stop))
            res.cpu_fallback += pks
    n = sum(sizes.values())
    res.notes.append(
        f"GPU out of memory on {len(sizes):,} cascades ({n:,} participants) at once: computed in "
        f"{parts + len(res.cpu_fallback)} parts"
        + (f", {len(res.cpu_fallback)} of them on the CPU" if res.cpu_fallback else "")
    )
    if res.cpu_fallback:
        ids = sorted(Tweet.objects.filter(pk__in=res.cpu_fallback[:10]).values_list("tweet_id", flat=True))
        more = f" and {len(res.cpu_fallback) - 10} more" if len(res.cpu_fallback) > 10 else ""
        res.notes.append(
            f"{len(res.cpu_fallback)} cascade(s) too large for the GPU alone ran on the CPU "
            f"(tweets {', '.join(map(str, ids))}{more})"
        )
    return res


def _halves(pks: list[int], sizes: dict[int, int]) -> list[list[int]]:
    """``pks`` in two parts of about equal participants (largest first, each to the lighter part)."""
    parts: tuple[list[int], list[int]] = ([], [])
    used = [0, 0]
    for pk in sorted(pks, key=lambda k: (-sizes.get(k, 1), k)):
        i = 0 if used[0] <= used[1] else 1
        parts[i].append(pk)
        used[i] += sizes.get(pk, 1)
    return [p for p in parts if p]


def _compute(tweet_pks: list[int], run: ComputeRun, backend: str, stop: Callable[[], bool]) -> BatchResult:
    if stop():
        raise RunCancelled()
    res = BatchResult()
    d = dialect()
    t = time.perf_counter()
    with connection.cursor() as cur:
        bt = temp_table_name("batch")
        create_temp(cur, bt, [("id", "bigint")])
        copy_in(cur, bt, [("id", "bigint")], [np.asarray(tweet_pks, dtype=np.int64)])
        tw = copy_out(
            cur,
            f"""SELECT t.id, t.author_id, {d.ts_to_epoch("t.created_at")}, COALESCE(t.author_followers, -1.0),
                    CASE WHEN t.times_known THEN 1 ELSE 0 END,
                    CASE WHEN t.graph_source = 'given' THEN 1 ELSE 0 END
                FROM {bt} b {d.join} monitor_tweet t ON t.id = b.id""",
            [],
            [("pk", "bigint"), ("author", "bigint"), ("time", "float"), ("f", "float"), ("tk", "int"), ("g", "int")],
        )
        rt = copy_out(
            cur,
            f"""SELECT r.tweet_id, r.retweeter_id, {d.ts_to_epoch("r.created_at")}, COALESCE(r.followers_count, -1.0)
                FROM {bt} b {d.join} monitor_retweet r ON r.tweet_id = b.id""",
            [],
            [("tweet", "bigint"), ("user", "bigint"), ("time", "float"), ("f", "float")],
        )
        t = res.tick("load_tweets_s", t)
        given = tw[5] == 1
        # follows among the participants of the cascades rebuilt from follows
        follow_tweets = set(tw[0][~given].tolist())
        part = np.unique(np.concatenate([tw[1][~given], rt[1][np.isin(rt[0], list(follow_tweets))]]))
        fol = [np.zeros(0, np.int64), np.zeros(0, np.int64)]
        if len(part):
            bp = temp_table_name("part")
            create_temp(cur, bp, [("id", "bigint")])
            copy_in(cur, bp, [("id", "bigint")], [part])
            if d.postgres:
                cur.execute(f"ANALYZE {bp}")
            fol = copy_out(
                cur,
                f"""SELECT f.follower_id, f.followee_id FROM {bp} p1
                    {d.join} monitor_follow f ON f.follower_id = p1.id
                    {d.join} {bp} p2 ON p2.id = f.followee_id""",
                [],
                [("a", "bigint"), ("b", "bigint")],
            )
            cur.execute(f"DROP TABLE IF EXISTS {bp}")
        edges = [np.zeros(0, np.int64)] * 3
        if given.any():
            edges = copy_out(
                cur,
                f"""SELECT e.tweet_id, e.src_id, e.dst_id FROM {bt} b {d.join} monitor_givenedge e
                    ON e.tweet_id = b.id""",
                [],
                [("t", "bigint"), ("s", "bigint"), ("d", "bigint")],
            )
        cur.execute(f"DROP TABLE IF EXISTS {bt}")
        t = res.tick("load_follows_s", t)

    graph = FollowerGraph.from_edges(fol[0], fol[1])
    t = res.tick("graph_s", t)
    t_pk, t_author, t_time, t_f, t_tk, t_given = tw
    r_tweet, r_user, r_time, r_f = rt
    # which tweets carry any follower count: those without use n_v = 1 (unit "retweeters")
    has_count = t_f >= 0
    known_rt = np.unique(r_tweet[r_f >= 0])
    has_count |= np.isin(t_pk, known_rt)
    groups: dict[tuple[int, int, int], np.ndarray] = {}
    for key in set(zip(t_given.tolist(), t_tk.tolist(), has_count.astype(int).tolist())):
        sel = (t_given == key[0]) & (t_tk == key[1]) & (has_count.astype(int) == key[2])
        groups[key] = np.flatnonzero(sel)
    for (is_given, times_known, _counts), idx in sorted(groups.items()):
        if stop():  # a safe point: nothing of the batch is stored yet
            raise RunCancelled()
        rsel = np.isin(r_tweet, t_pk[idx])
        table = TweetTable(
            tweet_id=np.concatenate([t_pk[idx], np.zeros(int(rsel.sum()), np.int64)]),
            retweeted_tweet_id=np.concatenate([np.full(len(idx), NO_TWEET), r_tweet[rsel]]),
            user_id=np.concatenate([t_author[idx], r_user[rsel]]),
            created_at=np.concatenate([t_time[idx], r_time[rsel]]),
            followers_count=np.where(
                np.concatenate([t_f[idx], r_f[rsel]]) < 0, np.nan, np.concatenate([t_f[idx], r_f[rsel]])
            ),
        )
        cascades, build = build_cascades(table)
        if not times_known:
            cascades = _without_times(cascades)
        res.notes += build.lines()
        t = res.tick("build_s", t)
        if is_given:
            graphs = _given_graphs(cascades, edges)
        else:
            graphs = forward(cascades, graph, orphans=run.orphans, backend=backend)
        t = res.tick("forward_s", t)
        bw = backward(graphs, backend=backend)
        res.notes += bw.lines()
        t = res.tick("backward_s", t)
        _collect(res, graphs, bw.influence)
        t = res.tick("collect_s", t)
    return res


def _without_times(c: Cascades) -> Cascades:
    return Cascades(
        node_offsets=c.node_offsets,
        user_ids=c.user_ids,
        followers=c.followers,
        publisher=c.publisher,
        tweet_ids=c.tweet_ids,
        times=None,
        unit=c.unit,
        labels=c.labels,
    )


def _given_graphs(c: Cascades, edges: list[np.ndarray]) -> SpreadingGraphs:
    """The stored given edges of these cascades as node indices (cascade tweet ids are Tweet pks)."""
    e_t, e_s, e_d = edges
    keep = np.isin(e_t, c.tweet_ids)
    e_t, e_s, e_d = e_t[keep], e_s[keep], e_d[keep]
    casc_of_edge = np.searchsorted(c.tweet_ids, e_t)  # tweet_ids are sorted by build_cascades
    casc_of_node = c.cascade_of_node()
    # node lookup by (cascade, user): sort the nodes by that pair once
    order = np.lexsort((c.user_ids, casc_of_node))
    key_c, key_u = casc_of_node[order], c.user_ids[order]

    def find(cs: np.ndarray, us: np.ndarray) -> np.ndarray:
        lo = np.searchsorted(key_c, cs, "left")
        hi = np.searchsorted(key_c, cs, "right")
        out = np.empty(len(cs), np.int64)
        for i in range(len(cs)):  # per edge, within its cascade's slice (given graphs are small)
            j = lo[i] + np.searchsorted(key_u[lo[i] : hi[i]], us[i])
            out[i] = order[j]
        return out

    src, dst = find(casc_of_edge, e_s), find(casc_of_edge, e_d)
    eo = np.argsort(casc_of_edge, kind="stable")
    counts = np.bincount(casc_of_edge, minlength=c.n_cascades)
    offsets = np.zeros(c.n_cascades + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    return SpreadingGraphs(c, offsets, src[eo], dst[eo], orphans="given")


def _collect(res: BatchResult, g: SpreadingGraphs, influence: np.ndarray) -> None:
    c = g.cascades
    n = c.n_nodes
    casc = c.cascade_of_node()
    outdeg = np.bincount(g.edge_src, minlength=n)
    indeg = np.bincount(g.edge_dst, minlength=n)
    role = np.where(outdeg == 0, 3, np.where(indeg > 0, 1, 2)).astype(np.int64)
    role[c.publisher] = 0
    rejected = np.zeros(c.n_cascades, bool)
    if n:
        rejected = np.isnan(influence[c.publisher])
    ok_node = ~rejected[casc]
    pub_user = c.user_ids[c.publisher]
    res.tweet.append(c.tweet_ids[casc][ok_node])
    res.account.append(c.user_ids[ok_node])
    res.publisher.append(pub_user[casc][ok_node])
    res.influence.append(influence[ok_node])
    res.followers.append(c.followers[ok_node])
    res.role.append(role[ok_node])
    res.t_pk.append(c.tweet_ids)
    res.t_status.append(np.where(rejected, 2, 1))
    res.t_nodes.append(c.sizes)
    res.t_edges.append(np.diff(g.edge_offsets))
    orphan = (role == 3).astype(np.int64)
    res.t_orphans.append(np.bincount(casc, weights=orphan, minlength=c.n_cascades).astype(np.int64))
    res.t_reach.append(np.where(rejected, np.nan, influence[c.publisher] if n else np.zeros(0)))
    res.t_unit.append(np.full(c.n_cascades, 0 if c.unit == "followers" else 1))
    res.n_edges += g.n_edges
    # the spreading edges of each accepted cascade, as account pks, packed for CascadeGraph
    pairs = np.empty((g.n_edges, 2), dtype="<i8")
    pairs[:, 0] = c.user_ids[g.edge_src]
    pairs[:, 1] = c.user_ids[g.edge_dst]
    offs = g.edge_offsets.tolist()
    tids = c.tweet_ids.tolist()
    for k in np.flatnonzero(~rejected).tolist():
        a, b = offs[k], offs[k + 1]
        res.graphs.append((tids[k], b - a, pairs[a:b].tobytes()))


# --- storing ---------------------------------------------------------------------------------------------------


def _store(run: ComputeRun, batch: ComputeBatch, res: BatchResult) -> None:
    d = dialect()
    ws = run.workspace_id
    with connection.cursor() as cur:
        if d.postgres:
            # aggregate refreshes of one workspace run one at a time (they delete and re-insert the same keys)
            cur.execute("SELECT pg_advisory_xact_lock(%s)", [ws])
        bt = temp_table_name("bt")
        create_temp(cur, bt, [("id", "bigint")])
        copy_in(cur, bt, [("id", "bigint")], [np.asarray(batch.tweet_pks, dtype=np.int64)])
        # the (publisher, day) pairs whose aggregates change, taken from the tweets themselves
        keys = temp_table_name("keys")
        cur.execute(f"DROP TABLE IF EXISTS {keys}")
        cur.execute(
            f"""CREATE TEMP TABLE {keys} AS SELECT DISTINCT t.author_id AS publisher, {d.ts_to_day("t.created_at")}
                AS day FROM {bt} b {d.join} monitor_tweet t ON t.id = b.id"""
        )
        cur.execute(f"DELETE FROM monitor_cascadeinfluence WHERE tweet_id IN (SELECT id FROM {bt})")
        cur.execute(f"DELETE FROM monitor_cascadegraph WHERE tweet_id IN (SELECT id FROM {bt})")
        if d.postgres:
            with cur.cursor.copy("COPY monitor_cascadegraph (tweet_id, n_edges, edges) FROM STDIN") as cp:
                for row in res.graphs:
                    cp.write_row(row)
        else:
            cur.executemany(
                "INSERT INTO monitor_cascadegraph (tweet_id, n_edges, edges) VALUES (%s, %s, %s)", res.graphs
            )

        inf = temp_table_name("inf")
        cols = [
            ("tweet", "bigint"),
            ("account", "bigint"),
            ("publisher", "bigint"),
            ("influence", "float"),
            ("followers", "float"),
            ("role", "int"),
        ]
        create_temp(cur, inf, cols)
        copy_in(
            cur,
            inf,
            cols,
            [
                res.cat("tweet", np.int64),
                res.cat("account", np.int64),
                res.cat("publisher", np.int64),
                res.cat("influence", np.float64),
                res.cat("followers", np.float64),
                res.cat("role", np.int64),
            ],
        )
        role_sql = "CASE i.role " + " ".join(f"WHEN {k} THEN '{v}'" for k, v in ROLE_CODES.items()) + " END"
        cur.execute(
            f"""INSERT INTO monitor_cascadeinfluence (tweet_id, account_id, publisher_id, day, label, influence,
                    followers, role)
                SELECT i.tweet, i.account, i.publisher, {d.ts_to_day("t.created_at")}, t.label, i.influence,
                    i.followers, {role_sql}
                FROM {inf} i {d.join} monitor_tweet t ON t.id = i.tweet WHERE true"""
        )

        st = temp_table_name("tstat")
        scols = [
            ("tweet", "bigint"),
            ("status", "int"),
            ("nodes", "bigint"),
            ("edges", "bigint"),
            ("orphans", "bigint"),
            ("reach", "float"),
            ("unit", "int"),
        ]
        create_temp(cur, st, scols)
        copy_in(
            cur,
            st,
            scols,
            [
                res.cat("t_pk", np.int64),
                res.cat("t_status", np.int64),
                res.cat("t_nodes", np.int64),
                res.cat("t_edges", np.int64),
                res.cat("t_orphans", np.int64),
                res.cat("t_reach", np.float64),
                res.cat("t_unit", np.int64),
            ],
        )
        cur.execute(
            f"""UPDATE monitor_tweet SET
                    compute_status = CASE s.status WHEN 1 THEN 'computed' ELSE 'rejected' END,
                    n_participants = s.nodes, n_edges = s.edges, n_orphans = s.orphans,
                    reach = {d.nan_to_null("s.reach")},
                    unit = CASE s.unit WHEN 0 THEN 'followers' ELSE 'retweeters' END,
                    computed_at = CURRENT_TIMESTAMP, compute_run_id = %s
                FROM {st} s WHERE monitor_tweet.id = s.tweet""",
            [run.pk],
        )

        # aggregates of the touched (publisher, day) pairs, recomputed from the per-cascade rows
        for table in ("monitor_dailyinfluence", "monitor_publisherday"):
            if d.postgres:  # a join the planner drives from the few keys through the unique index
                cur.execute(
                    f"""DELETE FROM {table} x USING {keys} k
                        WHERE x.workspace_id = %s AND x.publisher_id = k.publisher AND x.day = k.day""",
                    [ws],
                )
            else:
                cur.execute(
                    f"""DELETE FROM {table} WHERE workspace_id = %s AND EXISTS (SELECT 1 FROM {keys} k
                        WHERE k.publisher = {table}.publisher_id AND k.day = {table}.day)""",
                    [ws],
                )
        cur.execute(
            f"""INSERT INTO monitor_dailyinfluence (workspace_id, publisher_id, account_id, day, label, influence,
                    cascades)
                SELECT %s, ci.publisher_id, ci.account_id, ci.day, ci.label, SUM(ci.influence), COUNT(*)
                FROM {keys} k {d.join} monitor_cascadeinfluence ci ON ci.publisher_id = k.publisher AND ci.day = k.day
                WHERE true GROUP BY ci.publisher_id, ci.account_id, ci.day, ci.label""",
            [ws],
        )
        cur.execute(
            f"""INSERT INTO monitor_publisherday (workspace_id, publisher_id, day, label, tweets, reach)
                SELECT %s, t.author_id, {d.ts_to_day("t.created_at")}, t.label, COUNT(*), COALESCE(SUM(t.reach), 0)
                FROM {keys} k {d.join} monitor_tweet t ON t.author_id = k.publisher
                    AND {d.ts_to_day("t.created_at")} = k.day
                WHERE t.workspace_id = %s AND t.compute_status = 'computed'
                GROUP BY t.author_id, {d.ts_to_day("t.created_at")}, t.label""",
            [ws, ws],
        )
        analyze_after_bulk_write(
            cur,
            ["monitor_cascadeinfluence", "monitor_cascadegraph", "monitor_dailyinfluence", "monitor_publisherday"],
            int(batch.n_nodes or 0) + len(batch.tweet_pks),
        )
        from ..cache import bump_data_version

        transaction.on_commit(lambda: bump_data_version(ws))
        for tmp in (bt, keys, inf, st):
            cur.execute(f"DROP TABLE IF EXISTS {tmp}")
