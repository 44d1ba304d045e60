"""Search within a workspace (the header's box), and account URLs by screen name."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from monitor import selectors
from monitor.models import Account

from .base import workspace_context

#: the text search's page size
TWEETS_PAGE = 20


def _text_query(q: str) -> bool:
    """Whether ``q`` is searched in the tweets' text too: anything but an "@handle" or a bare number."""
    q = q.strip()
    return bool(q) and not q.startswith("@") and not q.isdigit()


@login_required
@require_GET
def search(request: HttpRequest, ws: str) -> HttpResponse:
    """Accounts, publishers and tweets by id or screen name, and tweets by their text, hashtags and links
    (``selectors.tweet_search``; ``sort`` and ``page`` page the latter)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    q = request.GET.get("q", "")
    found = selectors.search(workspace, q)
    sort = request.GET.get("sort", "relevance")
    if sort not in selectors.claims_sorts():
        sort = "relevance"
    try:
        page_no = max(1, int(request.GET.get("page", "1")))
    except ValueError:
        page_no = 1
    hits = None
    if _text_query(q):
        hits = selectors.tweet_search(workspace, q, sort=sort, limit=TWEETS_PAGE, offset=(page_no - 1) * TWEETS_PAGE)
    exact = found.exact()
    if exact is not None and page_no == 1 and (hits is None or not hits.total):
        # one account or tweet named exactly (an id, a whole screen name): the page the person was looking for
        if isinstance(exact, Account):
            return redirect("account", ws=workspace.slug, twitter_id=exact.twitter_id)
        return redirect("tweet", ws=workspace.slug, tweet_id=exact.tweet_id)
    n_pages = max(1, -(-hits.total // TWEETS_PAGE)) if hits is not None else 1
    return render(
        request,
        "frontend/search.html",
        workspace_context(
            request,
            workspace,
            found=found,
            q=found.query,
            hits=hits,
            sort=sort,
            sorts=selectors.claims_sorts(),
            page_no=page_no,
            n_pages=n_pages,
            first_rank=(page_no - 1) * TWEETS_PAGE + 1,
            query=urlencode({"q": found.query, "sort": sort}),
        ),
    )


@login_required
@require_GET
def account_by_name(request: HttpRequest, ws: str, screen_name: str) -> HttpResponse:
    """``/w/<ws>/accounts/<screen name>/``: the account's page (its URL is by Twitter id)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_by_screen_name(workspace, screen_name)
    if acc is None:
        raise Http404("no account with this screen name in this workspace")
    return redirect("account", ws=workspace.slug, twitter_id=acc.twitter_id)
