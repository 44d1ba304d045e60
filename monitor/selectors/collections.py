"""Collections: the list of a workspace's uploads, a collection's files and runs, and where its import is."""

from __future__ import annotations

from django.core.cache import cache

from .. import progress
from ..models import Collection, CollectionFile, ComputeRun, Workspace


def collections_list(ws: Workspace, *, limit: int = 100):
    return Collection.objects.filter(workspace=ws).select_related("uploaded_by").order_by("-created_at")[:limit]


def collection_files(collection: Collection) -> list[CollectionFile]:
    """The collection's uploaded files (its page lists them)."""
    return list(collection.files.all())


def collection_runs(collection: Collection) -> list[ComputeRun]:
    """The compute runs the collection started, newest first."""
    return list(collection.compute_runs.order_by("-pk"))


def collection_progress(collection: Collection) -> dict:
    """Where a collection is on its one progress bar over every phase (monitor/progress.py):
    ``{"phase", "phase_label", "step", "steps", "stage", "percent"}``; ``stage`` says what the phase is doing.
    The import publishes its progress to the cache, a compute run its batches' phases; 100 % only once the
    collection has finished (a finished import that still computes is not done)."""
    # the keys the import and the compute batches publish their progress under
    from ..progress import progress_key, run_progress_key

    computes = bool(collection.compute and not collection.validate_only)
    names = list(progress.PHASES_NAMES if computes else progress.IMPORT_PHASES)
    if collection.status in (Collection.Status.QUEUED, Collection.Status.INGESTING):
        p = cache.get(progress_key(collection.pk)) or {}
        stage = p.get("stage") or ("waiting for a worker" if collection.status == "queued" else "starting")
        phase = p.get("phase") if p.get("phase") in names else "reading"
        pct = min(float(p.get("percent") or 0.0), progress.TOP_WHILE_ACTIVE)
        return _shown(phase, names, stage, pct)
    if collection.status == Collection.Status.COMPUTING:
        run = collection.compute_runs.order_by("-pk").first()
        if run is None:
            return _shown("computing", names, "computing", progress.phase_percent("computing"))
        p = cache.get(run_progress_key(run.pk)) or {}
        # a phase reported before the last stored batch was counted belongs to that batch: the next one waits
        phase = p.get("phase") if p.get("done") == run.batches_done and p.get("phase") else "computing"
        if phase not in progress.COMPUTE_PHASES:
            phase = "computing"
        phase, pct = progress.compute_percent(run.batches_done, run.n_batches, phase)
        if run.batches_done >= run.n_batches:
            stage = "finishing the run"
        elif not p and run.batches_done == 0:
            stage = f"waiting to compute {run.n_batches:,} batch{'es' if run.n_batches != 1 else ''}"
        else:
            stage = f"batch {run.batches_done + 1:,} of {run.n_batches:,}"
        return _shown(phase, names, stage, pct)
    return {
        "phase": "done" if collection.status in (Collection.Status.DONE, Collection.Status.VALIDATED) else "ended",
        "phase_label": collection.get_status_display(),
        "step": len(names),
        "steps": len(names),
        "stage": collection.get_status_display(),
        "percent": 100.0,
    }


def _shown(phase: str, names: list[str], stage: str, percent: float) -> dict:
    return {
        "phase": phase,
        "phase_label": phase.capitalize(),
        "step": names.index(phase) + 1,
        "steps": len(names),
        "stage": stage,
        "percent": percent,
    }
