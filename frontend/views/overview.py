"""Home (the user's workspaces) and a workspace's overview."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from monitor import selectors
from monitor.cache import data_version

from .base import workspace_context


@login_required
def home(request: HttpRequest) -> HttpResponse:
    wss = list(selectors.workspaces_for_user(request.user))
    if len(wss) == 1:
        return redirect("overview", ws=wss[0].slug)
    return render(request, "frontend/home.html", {"workspaces": wss})


@login_required
@require_GET
def overview(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    ctx = workspace_context(
        request,
        workspace,
        **selectors.overview_page(workspace),  # counts, publishers, weeks, top, span
        collections=selectors.collections_list(workspace, limit=5),
        runs=selectors.runs_list(workspace, limit=5),
        alerts=_unread_alerts(request, workspace),
        # the data part is rendered once per data version (its tables are most of a warm overview's time)
        fragment_key=data_version(workspace),
    )
    return render(request, "frontend/overview.html", ctx)


def _unread_alerts(request: HttpRequest, workspace) -> dict | None:
    """The unread alerts of the user's rules in this workspace, and the inbox's URL (``None`` until the inbox
    page exists); ``None`` when the alerts app is not installed."""
    from django.apps import apps
    from django.urls import NoReverseMatch

    if not apps.is_installed("monitor.alerts"):
        return None
    from monitor.alerts.selectors import alerts_unread_count

    unread = alerts_unread_count(request.user, workspace)
    try:
        url = reverse("alerts", kwargs={"ws": workspace.slug})
    except NoReverseMatch:
        url = None
    return {"unread": unread, "url": url}
