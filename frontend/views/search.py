"""Search within a workspace (the header's box), and account URLs by screen name."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from monitor import selectors
from monitor.models import Account

from .base import workspace_context


@login_required
@require_GET
def search(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    found = selectors.search(workspace, request.GET.get("q", ""))
    exact = found.exact()
    if exact is not None:
        # one account or tweet named exactly (an id, a whole screen name): the page the person was looking for
        if isinstance(exact, Account):
            return redirect("account", ws=workspace.slug, twitter_id=exact.twitter_id)
        return redirect("tweet", ws=workspace.slug, tweet_id=exact.tweet_id)
    return render(request, "frontend/search.html", workspace_context(request, workspace, found=found, q=found.query))


@login_required
@require_GET
def account_by_name(request: HttpRequest, ws: str, screen_name: str) -> HttpResponse:
    """``/w/<ws>/accounts/<screen name>/``: the account's page (its URL is by Twitter id)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_by_screen_name(workspace, screen_name)
    if acc is None:
        raise Http404("no account with this screen name in this workspace")
    return redirect("account", ws=workspace.slug, twitter_id=acc.twitter_id)
