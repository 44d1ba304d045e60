"""Compute-run actions: cancel a queued or running run, retry a failed or cancelled one (POST only; the run page
shows the buttons). Writes go through ``monitor.services.compute``; the run is looked up through the user's
workspace, so another workspace's run answers 404."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from monitor import selectors
from monitor.services import compute_run_cancel, compute_run_retry


def _run_post(request: HttpRequest, ws: str, pk: int, action, done: str) -> HttpResponse:
    """Run one compute-run service on a POST and come back to the run page with its outcome."""
    workspace = selectors.workspace_for_user(request.user, ws)
    r = selectors.run_get(workspace, pk)
    try:
        action(r)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, done)
    return redirect("run", ws=workspace.slug, pk=r.pk)


@login_required
@require_POST
def run_cancel(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    return _run_post(
        request,
        ws,
        pk,
        lambda r: compute_run_cancel(run=r, user=request.user),
        "Run cancelled: finished batches keep their results; a batch still computing stores nothing.",
    )


@login_required
@require_POST
def run_retry(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    return _run_post(
        request, ws, pk, lambda r: compute_run_retry(run=r), "Run queued again: its unfinished batches will compute."
    )
