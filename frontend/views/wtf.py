"""Who amplifies whom's pages (docs/wtf.md): start an account's run (its look-alike accounts and likely next
amplifiers, shown on the account page) or a publisher's watch list run (shown on the publisher page), follow a
run's progress, subscribe to the watch list's alert, download the lists, read the method's page. Writes go
through ``monitor.services`` (and the alerts' services); objects are looked up through the user's workspace, so
another workspace's answer 404."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from monitor import exports_wtf, selectors, services
from monitor.alerts import services as alert_services
from monitor.alerts.kinds import WATCHLIST_KIND
from monitor.exports import filename

from ..forms_wtf import WatchListForm, WtfForm
from .base import workspace_context
from .exports import stream


def _start(request: HttpRequest, workspace, params: dict, done: str) -> None:
    """Start a WTF run with ``params`` and say how it went (a message on the next page)."""
    try:
        run = services.compute_run_start(
            workspace=workspace, tweet_pks=[], user=request.user, algorithm="wtf", params=params
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return
    if run.n_batches:
        messages.success(request, f"{done} (run {run.pk}, {run.n_batches} batch{'es' if run.n_batches > 1 else ''}).")
    else:
        messages.warning(request, "Nothing to compute: the publisher has no ranked spreaders yet.")


def _form_errors(request: HttpRequest, form) -> None:
    messages.error(request, " ".join(f"{form.fields[k].label or k}: {e}" for k, es in form.errors.items() for e in es))


@login_required
@require_POST
def account_wtf(request: HttpRequest, ws: str, twitter_id: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, twitter_id)
    form = WtfForm(request.POST)
    if form.is_valid():
        params = {"accounts": [str(acc.twitter_id)], "direction": "both"} | form.params()
        _start(request, workspace, params, "Computing the look-alike accounts and likely next amplifiers")
    else:
        _form_errors(request, form)
    return redirect(reverse("account", kwargs={"ws": workspace.slug, "twitter_id": acc.twitter_id}) + "#wtf")


@login_required
@require_POST
def publisher_watchlist(request: HttpRequest, ws: str, publisher: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher)
    form = WatchListForm(request.POST)
    if form.is_valid():
        params = {"publisher": str(acc.twitter_id), "direction": "followers"} | form.params()
        _start(request, workspace, params, "Computing the watch list")
    else:
        _form_errors(request, form)
    return redirect(reverse("publisher", kwargs={"ws": workspace.slug, "publisher": acc.twitter_id}) + "#watchlist")


@login_required
@require_POST
def publisher_watchlist_alert(request: HttpRequest, ws: str, publisher: int) -> HttpResponse:
    """Subscribe the user to "an account on this watch list starts spreading this publisher" (inbox, 7 days)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher)
    if selectors.wtf_watchlist_rule(workspace, request.user, acc) is None:
        alert_services.rule_create(
            workspace=workspace,
            owner=request.user,
            name=f"Watch list of @{acc.screen_name or acc.twitter_id}",
            kind=WATCHLIST_KIND,
            publisher=acc,
        )
        messages.success(request, "Alert rule created: you will be told when an account on this list starts spreading.")
    return redirect(reverse("publisher", kwargs={"ws": workspace.slug, "publisher": acc.twitter_id}) + "#watchlist")


@login_required
@require_GET
def wtf_progress(request: HttpRequest, ws: str, pk: int) -> JsonResponse:
    """A WTF run's progress (polled by ``progress.js`` on the account and publisher pages)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.run_get(workspace, pk)
    if run.algorithm != "wtf":
        raise Http404("not a who-amplifies-whom run")
    return JsonResponse(selectors.wtf_run_progress(run), headers={"Cache-Control": "no-store"})


@login_required
@require_GET
def account_wtf_export(request: HttpRequest, ws: str, twitter_id: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, twitter_id)
    writer = exports_wtf.account_csv if fmt == "csv" else exports_wtf.account_json
    return stream(writer(workspace, acc), fmt=fmt, name=filename(workspace, "account", acc.twitter_id, "wtf", ext=fmt))


@login_required
@require_GET
def publisher_watchlist_export(request: HttpRequest, ws: str, publisher: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher)
    writer = exports_wtf.watchlist_csv if fmt == "csv" else exports_wtf.watchlist_json
    name = filename(workspace, "publisher", acc.twitter_id, "watchlist", ext=fmt)
    return stream(writer(workspace, acc), fmt=fmt, name=name)


@login_required
@require_GET
def wtf_docs(request: HttpRequest, ws: str) -> HttpResponse:
    """docs/wtf.md as the repository has it (Markdown shown as text): what the panels' numbers mean."""
    workspace = selectors.workspace_for_user(request.user, ws)
    path = Path(settings.BASE_DIR) / "docs" / "wtf.md"
    if not path.is_file():
        raise Http404("docs/wtf.md is not in this build")
    ctx = workspace_context(request, workspace, name="wtf", text=path.read_text(encoding="utf-8"))
    return render(request, "frontend/wtf_docs.html", ctx)
