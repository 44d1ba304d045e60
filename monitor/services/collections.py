"""Creating collections from uploads and running their import (the ``ingest`` task's body)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import connection, transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone

from compute.formats import InputError

from .. import jobs, partitions
from ..db import analyze_after_bulk_write
from ..models import Collection, CollectionFile, Lease, Workspace
from ..progress import import_percent, progress_key
from .ingest import IngestResult, load_files
from .ingest.side_load import SideLoad
from .leases import holding, notice_create
from .runs import compute_run_start
from .uploads import Upload, UploadError

log = logging.getLogger(__name__)

__all__ = [
    "collection_cancel",
    "collection_create",
    "collection_ingest",
    "collection_retry",
    "progress_key",
]


# the database's name is part of the keys: two databases sharing one Redis (two deployments, or two test runs)
# have collections with the same ids, and one's cancel must not stop the other's import (it did, in test runs)
def cancel_key(collection_id: int) -> str:
    return f"spreadwatch:{connection.settings_dict['NAME']}:collection-cancel:{collection_id}"


class Cancelled(Exception):
    """Raised inside a running import when an analyst cancelled it: the transaction rolls back."""


def collection_cancel(*, collection: Collection) -> Collection:
    """Cancel a queued or running import. A queued one is marked at once (its task will find it cancelled); a
    running one stops at its next progress report and rolls back, so nothing of it is stored; one whose worker
    is gone (it holds no lock and reports no progress) is marked at once. An import that has finished cannot be
    cancelled (its data is stored; delete the workspace's data instead)."""
    if collection.status == Collection.Status.QUEUED:
        n = Collection.objects.filter(pk=collection.pk, status=Collection.Status.QUEUED).update(
            status=Collection.Status.CANCELLED, finished_at=timezone.now(), error="cancelled before it started"
        )
        if n:
            collection.refresh_from_db()
            return collection
    if collection.status == Collection.Status.INGESTING:
        cache.set(cancel_key(collection.pk), True, timeout=24 * 3600)
        _cancel_if_orphaned(collection)
        return collection
    raise ValidationError(f"a collection that is {collection.get_status_display().lower()} cannot be cancelled")


# an import holds its collection's row lock for its whole transaction; one that has not reported progress for
# this long and whose row is not locked has no worker any more (killed, or its database connection lost for
# longer than its task's retries): its transaction was rolled back, so it can be marked cancelled at once
ORPHANED_AFTER_S = 30.0


def _cancel_if_orphaned(collection: Collection) -> bool:
    """Mark an import cancelled when no worker is running it any more (see above). Returns whether it did."""
    p = cache.get(progress_key(collection.pk)) or {}
    if time.time() - p.get("at", 0.0) < ORPHANED_AFTER_S:
        return False  # it reported progress a moment ago: its worker will see the cancel
    with transaction.atomic():
        row = (
            Collection.objects.select_for_update(skip_locked=True)
            .filter(pk=collection.pk, status=Collection.Status.INGESTING)
            .first()
        )
        if row is None:
            return False  # an import holds the row: it is alive and stops at its next progress report
        row.status = Collection.Status.CANCELLED
        row.error = "cancelled: no worker was running this import any more, and nothing of it was stored"
        row.finished_at = timezone.now()
        row.save(update_fields=["status", "error", "finished_at"])
    cache.delete(cancel_key(collection.pk))
    collection.refresh_from_db()
    log.warning("collection %s: import had no worker any more; marked cancelled", collection.pk)
    return True


def collection_retry(*, collection: Collection) -> Collection:
    """Queue a failed or cancelled import again, with the same files and options (the import is idempotent,
    so a retry after a partial failure stores each record once)."""
    if collection.status not in (Collection.Status.FAILED, Collection.Status.CANCELLED):
        raise ValidationError(f"only a failed or cancelled import can be retried, not a {collection.status} one")
    if (collection.report or {}).get("files_unreadable"):
        raise ValidationError(
            "the uploaded files cannot be read, so a retry would fail the same way: upload corrected files"
        )
    missing = [
        cf.original_name for cf in collection.files.all() if not cf.file or not cf.file.storage.exists(cf.file.name)
    ]
    if missing:
        raise ValidationError(f"the uploaded files are gone ({', '.join(missing)}): upload them again")
    cache.delete(cancel_key(collection.pk))
    Collection.objects.filter(pk=collection.pk).update(
        status=Collection.Status.QUEUED, error="", report={}, counts={}, started_at=None, finished_at=None
    )
    jobs.enqueue_on_commit(jobs.INGEST_COLLECTION, collection.pk)
    collection.refresh_from_db()
    return collection


#: the seconds ``collection_create`` took to store the upload's files, kept among the collection's timings
FILES_TIMING = "files_s"


def collection_create(
    *,
    workspace: Workspace,
    files: list,
    user=None,
    name: str = "",
    mode: str = Collection.Mode.STRICT,
    validate_only: bool = False,
    format: str = "auto",
    compute: bool = True,
) -> Collection:
    """Store the uploaded ``files`` (Django ``UploadedFile``s or local paths) and queue their import.

    ``format`` applies to every file (``"auto"``: detect each). The import starts when the transaction
    commits.
    """
    if not files:
        raise ValidationError({"files": "choose at least one file"})
    total = 0
    for f in files:
        size = f.size if hasattr(f, "size") else Path(f).stat().st_size
        total += size
    if total > settings.SPREADWATCH_UPLOAD_MAX_BYTES:
        raise ValidationError(
            {"files": f"the upload is {total:,} bytes; the limit is {settings.SPREADWATCH_UPLOAD_MAX_BYTES:,}"}
        )
    names = [Path(getattr(f, "name", str(f))).name for f in files]
    collection = Collection(
        workspace=workspace,
        name=name or ", ".join(names)[:200],
        uploaded_by=user,
        mode=mode,
        validate_only=validate_only,
        compute=compute,
    )
    collection.full_clean()
    saved: list = []
    try:
        with transaction.atomic():
            collection.save()
            # a cancel or progress that an earlier collection of the same number left in the cache (the database
            # re-created or restored beside a cache that was not) must not reach this one
            cache.delete_many([cancel_key(collection.pk), progress_key(collection.pk)])
            t = time.perf_counter()
            for f, shown in zip(files, names):
                cf = CollectionFile(
                    collection=collection, original_name=shown, format="" if format == "auto" else format
                )
                if hasattr(f, "read"):
                    cf.size = f.size
                    cf.file.save(shown, f, save=False)
                else:
                    with open(f, "rb") as fh:
                        cf.size = Path(f).stat().st_size
                        cf.file.save(shown, File(fh), save=False)
                saved.append(cf.file)
                cf.save()
            # a web upload's files are renamed into the media folder (monitor/uploads.py), a local path's copied
            collection.timings = {FILES_TIMING: round(time.perf_counter() - t, 3)}
            collection.save(update_fields=["timings"])
            jobs.enqueue_on_commit(jobs.INGEST_COLLECTION, collection.pk)
    except BaseException:
        # the rows rolled back: the files already written to the media folder must not stay behind them
        for stored in saved:
            try:
                stored.delete(save=False)
            except OSError:
                log.warning("could not delete %s after a failed upload", stored.name, exc_info=True)
        raise
    return collection


def collection_ingest(*, collection_id: int, after_error: bool = False) -> Collection:
    """Import a queued collection. Idempotent: a collection that is no longer queued or importing is left
    alone, and a retried import merges the same rows (natural ids). A delivery that finds the import still
    importing after ``SPREADWATCH_MAX_DELIVERIES`` deliveries that never ended (each ended its worker: a poison
    message) fails it instead (``after_error``: this delivery is the task's retry after an error it raised)."""
    c = Collection.objects.select_related("workspace").get(pk=collection_id)
    if c.status not in (Collection.Status.QUEUED, Collection.Status.INGESTING):
        return c
    if c.status == Collection.Status.INGESTING and not after_error and _poisoned(c):
        c.refresh_from_db()
        return c
    if not _mark_ingesting(c):
        c.refresh_from_db()
        return c  # another delivery finished it (or it was cancelled) meanwhile
    key = progress_key(c.pk)
    progress = _progress_reporter(c)
    files = [(Path(cf.file.path), cf.original_name, cf.format or "auto") for cf in c.files.all()]
    report: dict = {}
    try:
        # a heartbeat while it runs: the stalled-work sweep queues it again if this worker dies (recovery.py)
        with holding(Lease.Kind.IMPORT, c.pk):
            _import(c, files, progress, report)
    except InputError as exc:
        # strict mode: the first bad record; the transaction rolled back, so nothing was stored
        report.update(
            read={"n_bad": 1, "shown": [exc.record.to_dict()], "by_reason": {exc.record.category: 1}},
            notes=["strict mode: the upload stopped at the first bad record and nothing was stored"],
        )
        return _rejected(c, str(exc), report)
    except UploadError as exc:
        # the files themselves cannot be read (not data, an unknown format, a refused archive): the same files
        # would fail the same way, so the page offers an upload of corrected files instead of a retry
        report["files_unreadable"] = True
        return _rejected(c, str(exc), report)
    except _Superseded:
        log.info("collection %s was imported by another delivery meanwhile", c.pk)
        c.refresh_from_db()
        return c
    except Cancelled:
        cache.delete(cancel_key(c.pk))
        c.status = Collection.Status.CANCELLED
        c.error = "cancelled while importing; nothing was stored"
        c.finished_at = timezone.now()
        c.save(update_fields=["status", "error", "finished_at"])
        return c
    except Exception as exc:
        log.exception("import of collection %s failed", c.pk)
        return _failed(c, f"{exc.__class__.__name__}: {exc}", report)
    finally:
        cache.delete(key)
    if c.validate_only:
        _finish_validation(c)
    return c


def _poisoned(c: Collection) -> bool:
    """Fail an import whose ``SPREADWATCH_MAX_DELIVERIES`` deliveries all ended their worker; True if it did.
    A live import holds its row lock: this waits for it, and then finds it no longer importing."""
    n = max(1, int(getattr(settings, "SPREADWATCH_MAX_DELIVERIES", 3)))
    if c.attempts < n:
        return False
    error = (
        f"this import ended its worker {c.attempts} times (killed, or out of memory) without finishing: not run "
        "again; nothing of it was stored. Split the files into smaller uploads, or retry it once the ingest "
        "workers have more memory."
    )
    failed = Collection.objects.filter(pk=c.pk, status=Collection.Status.INGESTING, attempts=c.attempts).update(
        status=Collection.Status.FAILED, error=error, finished_at=timezone.now()
    )
    if failed:
        Lease.objects.filter(kind=Lease.Kind.IMPORT, object_id=c.pk).delete()
        log.error("import of collection %s: %s", c.pk, error)
        notice_create(
            workspace_id=c.workspace_id,
            user_id=c.uploaded_by_id,
            message=f"The import of {c.name} failed: {error}",
            url=reverse("collection", kwargs={"ws": c.workspace.slug, "pk": c.pk}),
        )
    return bool(failed)


def _mark_ingesting(c: Collection) -> bool:
    """Mark the import started (one more attempt); False when it is no longer queued or importing. Conditional:
    a second delivery waits here for the first's row lock and then finds the import finished, not importing."""
    now = timezone.now()
    started = Collection.objects.filter(
        pk=c.pk, status__in=(Collection.Status.QUEUED, Collection.Status.INGESTING)
    ).update(status=Collection.Status.INGESTING, started_at=now, error="", attempts=F("attempts") + 1)
    if not started:
        return False
    c.status, c.started_at, c.error = Collection.Status.INGESTING, now, ""
    c.refresh_from_db(fields=["attempts"])  # the import saves the whole row at its end: keep the count it has now
    cache.set(
        progress_key(c.pk),
        {"stage": "starting", "phase": "reading", "percent": 0.0, "at": time.time()},
        timeout=24 * 3600,
    )
    return True


class _Superseded(Exception):
    """Another delivery of the same import finished it while this one waited for its row lock."""


def _progress_reporter(c: Collection) -> Callable[[str, float], None]:
    """Progress to the cache for the collection page; raises :class:`Cancelled` once an analyst cancelled."""
    key = progress_key(c.pk)

    # the import's own fraction on the collection's one bar (monitor/progress.py): reading and storing, then the
    # compute's phases when a compute follows
    computes = bool(c.compute and not c.validate_only)

    def progress(stage: str, frac: float) -> None:
        if cache.get(cancel_key(c.pk)):
            raise Cancelled()
        phase, percent = import_percent(frac, computes=computes)
        cache.set(key, {"stage": stage, "phase": phase, "percent": percent, "at": time.time()}, timeout=24 * 3600)

    return progress


def _import(c: Collection, files: list[Upload], progress: Callable[[str, float], None], report: dict) -> None:
    """The import's one transaction: read and merge ``files``, record what happened, start the compute (a
    validation rolls it all back). ``report`` is filled as it goes, for the failure paths too. A workspace's first
    follows and retweets are stored on second connections meanwhile (``side_load``), whose leftovers are dropped
    once this transaction has ended, committed or not."""
    side = SideLoad(c.workspace_id) if not c.validate_only and SideLoad.possible() else None
    failed = True
    try:
        _import_in_transaction(c, files, progress, report, side)
        failed = False
    finally:
        if side is not None:
            side.close(failed=failed)


def _import_in_transaction(c: Collection, files: list[Upload], progress, report: dict, side: SideLoad | None) -> None:
    with transaction.atomic():
        # held until the import commits or rolls back: a cancel tells a live import from a dead one by it
        locked = Collection.objects.select_for_update().filter(pk=c.pk).values_list("status", flat=True).first()
        if locked == Collection.Status.CANCELLED:
            raise Cancelled()  # marked cancelled as orphaned in the moment before this lock was taken
        if locked != Collection.Status.INGESTING:
            raise _Superseded()
        res = load_files(
            files,
            workspace_id=c.workspace_id,
            collection_id=c.pk,
            # a validation reports every bad record, whatever the mode the upload would store with
            mode=Collection.Mode.SKIP_BAD if c.validate_only else c.mode,
            store=not c.validate_only,
            progress=progress,
            graph_later=True,  # the follower graph's file is written while the statistics and the plan are made
            side_load=side,
        )
        try:
            report.update(read=res.report.to_dict(), notes=res.notes, formats=res.formats)
            if not c.validate_only:  # before the compute reads them, in this transaction (see the helper)
                _analyze(res, c.workspace_id, done=side.analyzed if side is not None else ())
            c.format = "+".join(res.formats)[:16]
            c.counts = res.counts
            # the files' store (collection_create) kept beside the import's steps
            stored = (c.timings or {}).get(FILES_TIMING)
            c.timings = ({} if stored is None else {FILES_TIMING: stored}) | res.timings
            c.report = report
            if c.validate_only:
                transaction.set_rollback(True)
            else:
                _finish_stored(c, res)
        except BaseException:
            res.wait_graph_file(failing=True)
            raise


# the tables an import writes in bulk, whose planner statistics must be fresh before the compute reads them
# (monitor_tweetdocument: the tweets' search documents, written by PostgreSQL's triggers with the tweets); and the
# workspace's follows, retweets and snapshots (on PostgreSQL its partitions: ANALYZE of a parent samples every
# workspace's)
_BULK_TABLES = [
    "monitor_account",
    "monitor_tweet",
    "monitor_tweetdocument",
]


def _analyze(res: IngestResult, ws: int, done=()) -> None:
    """The planner statistics of what the import wrote; ``done``: partitions analysed already (the side load's)."""
    with connection.cursor() as cur:
        analyze_after_bulk_write(
            cur,
            [*_BULK_TABLES, *(t for t in partitions.analyze_names(cur, ws) if t not in done)],
            sum(v for k, v in res.counts.items() if k.endswith(("_new", "_stored")) and not k.startswith("conflicts")),
        )


def _finish_stored(c: Collection, res: IngestResult) -> None:
    """After a stored import: new data for the read cache, and the compute of the cascades it changed."""
    from ..algorithms.influence import AllTimeDelta
    from ..cache import bump_data_version, record_all_time_delta

    # in the import's transaction: committed with its rows. An import writes no daily aggregate (its cascades are
    # the compute's to store), so it changes no all-time sum: recorded as such, the ranking's snapshots and the
    # run's warm-up carry the sums over it instead of grouping every daily row again
    record_all_time_delta(c.workspace_id, bump_data_version(c.workspace_id), AllTimeDelta.empty())
    run = None
    if c.compute and res.tweet_pks:
        c.status = Collection.Status.COMPUTING
        c.save()
        run = compute_run_start(workspace=c.workspace, tweet_pks=res.tweet_pks, collection=c, user=c.uploaded_by)
    # written meanwhile in a thread (load_files' graph_later); before the commit, which queues the run's batches
    res.wait_graph_file()
    if run is None or run.status == run.Status.DONE:
        c.status = Collection.Status.DONE
        c.finished_at = timezone.now()
    c.save()


def _finish_validation(c: Collection) -> None:
    c.status = Collection.Status.VALIDATED
    c.finished_at = timezone.now()
    c.save()
    # nothing is stored from a validation: drop the uploaded files too
    for cf in c.files.all():
        cf.file.delete(save=False)


def _rejected(c: Collection, error: str, report: dict) -> Collection:
    """The upload itself is bad (a bad record in strict mode, an unreadable or refused file): the same files
    would fail the same way again, so they are deleted rather than kept for a retry (they may be large)."""
    _failed(c, error, report)
    if c.status == Collection.Status.FAILED:  # not when another delivery took the import over (it reads them)
        _delete_files(c)
    return c


def _delete_files(c: Collection) -> None:
    for cf in c.files.all():
        if cf.file:
            try:
                cf.file.delete(save=False)
            except OSError:  # already gone, or the storage is away: the import's outcome stands
                log.warning("could not delete %s of collection %s", cf.file.name, c.pk, exc_info=True)


def _failed(c: Collection, error: str, report: dict) -> Collection:
    """Record this delivery's failure, unless the import moved on without it: a worker that froze for longer than
    the stall time had its session ended and its import queued again (``recovery``); when it wakes, the row is
    no longer the one it claimed (queued again, or claimed by a later delivery) and its failure is not written
    over the new delivery's state."""
    now = timezone.now()
    written = Collection.objects.filter(pk=c.pk, status=Collection.Status.INGESTING, attempts=c.attempts).update(
        status=Collection.Status.FAILED, error=error, report=report, counts={}, finished_at=now
    )
    if not written:
        log.warning("import of collection %s failed (%s) after another delivery took it over: left to it", c.pk, error)
        c.refresh_from_db()
        return c
    c.status, c.error, c.report, c.counts, c.finished_at = Collection.Status.FAILED, error, report, {}, now
    return c
