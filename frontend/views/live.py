"""The Live page of a workspace (its stream: arriving rate, lag, backlog, the cascades growing now, the rising
spreaders), its JSON twin that the page polls, and the stream tokens page (owners only: a token writes data).
Reads through ``monitor.selectors.stream``, writes through ``monitor.services.stream``."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from monitor import selectors
from monitor.models import StreamToken
from monitor.selectors import stream as stream_selectors
from monitor.services.stream import stream_token_create, stream_token_revoke
from monitor.services.stream.tokens import can_manage_tokens

from .base import workspace_context

REFRESH_MS = 5000


@login_required
@require_GET
def live(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    ctx = workspace_context(
        request,
        workspace,
        live=stream_selectors.live_page(workspace),
        refresh_ms=REFRESH_MS,
        refresh_s=f"{REFRESH_MS / 1000:g}",
        can_manage=can_manage_tokens(user=request.user, workspace=workspace),
    )
    return render(request, "frontend/live.html", ctx)


@never_cache
@login_required
@require_GET
def live_data(request: HttpRequest, ws: str) -> JsonResponse:
    """What the Live page shows, as JSON (its script polls this); tweet and account ids as strings (JavaScript
    numbers lose the low digits of a snowflake) with their page links."""
    workspace = selectors.workspace_for_user(request.user, ws)
    d = stream_selectors.live_page(workspace)
    for c in d["growing"]:
        c["url"] = reverse("tweet", kwargs={"ws": workspace.slug, "tweet_id": c["tweet_id"]}) if c["stored"] else ""
        c["tweet_id"] = str(c["tweet_id"])
    for a in d["rising"]:
        a["url"] = reverse("account", kwargs={"ws": workspace.slug, "twitter_id": a["twitter_id"]})
        a["twitter_id"] = str(a["twitter_id"])
    for e in d["dead_recent"]:
        e["cascade_key"] = None if e["cascade_key"] is None else str(e["cascade_key"])
        e["received_at"] = e["received_at"].isoformat()
    d["at"] = d["at"].isoformat()
    return JsonResponse(d)


def _manager_workspace(request: HttpRequest, ws: str):
    workspace = selectors.workspace_for_user(request.user, ws)
    if not can_manage_tokens(user=request.user, workspace=workspace):
        raise PermissionDenied("only the workspace's owners manage its stream tokens")
    return workspace


@login_required
@require_http_methods(["GET", "POST"])
def stream_tokens(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = _manager_workspace(request, ws)
    if request.method == "POST":
        try:
            token, key = stream_token_create(workspace=workspace, user=request.user, name=request.POST.get("name", ""))
        except ValidationError as exc:
            messages.error(request, "; ".join(exc.messages))
        else:
            messages.warning(
                request,
                f'Stream token "{token.name or token.prefix}" created. Its key is shown this once, copy it now: {key}',
            )
        return redirect("stream-tokens", ws=workspace.slug)
    ctx = workspace_context(request, workspace, tokens=stream_selectors.stream_tokens(workspace))
    return render(request, "frontend/stream_tokens.html", ctx)


@login_required
@require_POST
def stream_token_revoke_view(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    token = get_object_or_404(StreamToken, workspace=workspace, pk=pk)  # another workspace's token: 404
    workspace = _manager_workspace(request, ws)
    stream_token_revoke(token=token, user=request.user)
    messages.success(request, f"Stream token {token.prefix}… revoked: it can no longer append.")
    return redirect("stream-tokens", ws=workspace.slug)
