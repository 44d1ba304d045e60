"""Compute runs: the list of a workspace's runs and a run's batches."""

from __future__ import annotations

from ..models import ComputeRun, Workspace


def runs_list(ws: Workspace, *, limit: int = 100):
    return ComputeRun.objects.filter(workspace=ws).select_related("collection", "created_by").order_by("-pk")[:limit]


def run_batches(run: ComputeRun):
    """The run's batches in order, with the columns its page shows."""
    return run.batches.order_by("index").only(
        "index",
        "n_cascades",
        "n_nodes",
        "status",
        "attempts",
        "device",
        "timings",
        "error",
        "started_at",
        "finished_at",
        "run_id",
    )
