"""Collections: the list of a workspace's uploads, a collection's files and runs, and where its import is."""

from __future__ import annotations

from django.core.cache import cache

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
    """Where a running import is: ``{"stage", "percent"}`` from the cache, or the final state."""
    # the key is the writer's: the import task publishes its progress under it
    from ..services.collections import progress_key

    if collection.status in (Collection.Status.QUEUED, Collection.Status.INGESTING):
        p = cache.get(progress_key(collection.pk))
        if p:
            return p
        return {"stage": "waiting for a worker" if collection.status == "queued" else "starting", "percent": 0.0}
    if collection.status == Collection.Status.COMPUTING:
        run = collection.compute_runs.order_by("-pk").first()
        pct = 100.0 * run.progress if run else 0.0
        return {
            "stage": f"computing ({run.batches_done}/{run.n_batches} batches)" if run else "computing",
            "percent": pct,
        }
    return {"stage": collection.get_status_display(), "percent": 100.0}
