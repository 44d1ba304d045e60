"""A tweet's page (its participants) and the cascade explorer (its spreading graph drawn)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from monitor import selectors

from .base import workspace_context

EXPLORER_LIMIT = selectors.EXPLORER_LIMIT  # nodes drawn by default (the warm-up after a run stores this view)
EXPLORER_MAX = 50_000  # the most a reader may ask for with ?limit=


@login_required
@require_GET
def tweet(request: HttpRequest, ws: str, tweet_id: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    t = selectors.tweet_get(workspace, tweet_id)
    ctx = workspace_context(request, workspace, tweet=t, participants=selectors.tweet_participants(t))
    return render(request, "frontend/tweet.html", ctx)


@login_required
@require_GET
def cascade(request: HttpRequest, ws: str, tweet_id: int) -> HttpResponse:
    """The cascade explorer: one tweet's spreading graph drawn with WebGL around the publisher.

    Large cascades are cut to the ``limit`` most influential participants (the publisher always stays) and
    the edges among them; the page says how many nodes and edges are hidden."""
    workspace = selectors.workspace_for_user(request.user, ws)
    t = selectors.tweet_get(workspace, tweet_id)
    try:
        limit = min(max(int(request.GET.get("limit", EXPLORER_LIMIT)), 10), EXPLORER_MAX)
    except ValueError:
        return HttpResponse("limit: not an integer", status=400, content_type="text/plain")
    page = selectors.cascade_explorer_page(workspace, t, limit=limit)
    return render(
        request, "frontend/cascade.html", workspace_context(request, workspace, tweet=t, data=page, limit=limit)
    )
