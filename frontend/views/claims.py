"""Claims (docs/claims.md): the list of a workspace's saved searches, a claim's page (timeline by truth label, its
spreaders over a window, its publishers, the accounts it tracks, its newest tweets) and the forms that save,
change, delete and track. Views read through ``monitor.selectors`` and write through ``monitor.services``; a claim
of another workspace answers 404."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from monitor import selectors, services
from monitor.models import Label

from .base import workspace_context

TWEETS = 20  # the claim page's newest tweets; the search page has them all, paged


def _claim(workspace, pk: int):
    claim = selectors.claim_get(workspace, pk)
    if claim is None:
        raise Http404("no such claim in this workspace")
    return claim


def _errors(exc: ValidationError) -> dict:
    return exc.message_dict if hasattr(exc, "error_dict") else {"__all__": exc.messages}


def _list(request: HttpRequest, workspace, *, form: dict | None = None, errors: dict | None = None, status=200):
    return render(
        request,
        "frontend/claims.html",
        workspace_context(
            request,
            workspace,
            claims=selectors.claims_of(workspace),
            form=form or {"name": "", "query": request.GET.get("q", "")},
            errors=errors or {},
        ),
        status=status,
    )


@login_required
@require_GET
def claims(request: HttpRequest, ws: str) -> HttpResponse:
    return _list(request, selectors.workspace_for_user(request.user, ws))


@login_required
@require_POST
def claim_create(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    form = {"name": request.POST.get("name", ""), "query": request.POST.get("query", "")}
    try:
        claim = services.claim_create(workspace=workspace, user=request.user, **form)
    except ValidationError as exc:
        return _list(request, workspace, form=form, errors=_errors(exc), status=400)
    messages.success(request, f"Saved the claim “{claim.name}”.")
    return redirect("claim", ws=workspace.slug, pk=claim.pk)


def _window(request: HttpRequest, workspace) -> tuple[selectors.Window, str]:
    preset = request.GET.get("window", "all")
    if preset not in (*selectors.PRESET_DAYS, "all"):
        preset = "all"
    return selectors.window_for_preset(preset, selectors.data_span(workspace))


def _page(
    request: HttpRequest, workspace, claim, *, errors: dict | None = None, form: dict | None = None, status: int = 200
) -> HttpResponse:
    """The claim's page; ``form``: what the change form shows (what was posted, when it was refused)."""
    window, preset = _window(request, workspace)
    ctx = {
        "claim": claim,
        "errors": errors or {},
        "window": window,
        "preset": preset,
        "presets": [*selectors.PRESET_DAYS, "all"],
        "tracked": selectors.claim_tracked(claim),
        "tracked_pks": set(claim.tracked or []),
        "form": form or {"name": claim.name, "query": claim.query},
    }
    try:
        ctx["query"] = selectors.parse_query(claim.query)
        timeline = selectors.claim_timeline(workspace, claim.query)
        for r in timeline:  # the table's columns, in the labels' order
            r["counts"] = [r["by_label"][v] for v in Label.values]
        ctx.update(
            timeline=timeline,
            label_names=Label.labels,
            timeline_data=[
                {
                    "day": r["day"].isoformat(),
                    "tweets": r["tweets"],
                    "retweets": r["retweets"],
                    "reach": r["reach"],
                    **{f"label_{k}": v for k, v in r["by_label"].items()},
                }
                for r in timeline
            ],
            totals={
                "tweets": sum(r["tweets"] for r in timeline),
                "retweets": sum(r["retweets"] for r in timeline),
                "reach": sum(r["reach"] for r in timeline),
                "false": sum(r["by_label"].get("false", 0) for r in timeline),
            },
            provenance=selectors.claim_provenance(workspace, claim.query),
            spreaders=selectors.claim_spreaders(workspace, claim.query, window=window),
            publishers=selectors.claim_publishers(workspace, claim.query, window=window),
            tweets=selectors.tweet_search(workspace, claim.query, sort="newest", limit=TWEETS),
        )
    except (selectors.QueryError, selectors.ClaimTooBroad) as exc:
        ctx["broken"] = str(exc)
    return render(request, "frontend/claim.html", workspace_context(request, workspace, **ctx), status=status)


@login_required
@require_GET
def claim(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    return _page(request, workspace, _claim(workspace, pk))


@login_required
@require_POST
def claim_update(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    claim = _claim(workspace, pk)
    posted = {"name": request.POST.get("name", ""), "query": request.POST.get("query", "")}
    try:
        services.claim_update(claim=claim, **posted)
    except ValidationError as exc:
        claim.refresh_from_db()
        return _page(request, workspace, claim, errors=_errors(exc), form=posted, status=400)
    messages.success(request, "Saved.")
    return redirect("claim", ws=workspace.slug, pk=claim.pk)


@login_required
@require_POST
def claim_delete(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    claim = _claim(workspace, pk)
    services.claim_delete(claim=claim)
    messages.success(request, f"Deleted the claim “{claim.name}”.")
    return redirect("claims", ws=workspace.slug)


@login_required
@require_POST
def claim_track(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """Track an account for this claim: ``account`` is a Twitter id or a screen name (with or without "@")."""
    workspace = selectors.workspace_for_user(request.user, ws)
    claim = _claim(workspace, pk)
    who = (request.POST.get("account") or "").strip()
    account = None
    if who.lstrip("@").isdigit() and not who.startswith("@"):
        try:
            account = selectors.account_get(workspace, int(who))
        except Http404:
            account = None
    elif who:
        account = selectors.account_by_screen_name(workspace, who)
    if account is None:
        errors = {"account": [f"no account {who!r} in this workspace" if who else "give a Twitter id or screen name"]}
        return _page(request, workspace, claim, errors=errors, status=400)
    try:
        services.claim_track(claim=claim, account=account)
    except ValidationError as exc:
        return _page(request, workspace, claim, errors=_errors(exc), status=400)
    messages.success(request, f"Tracking {account} for this claim.")
    return redirect("claim", ws=workspace.slug, pk=claim.pk)


@login_required
@require_POST
def claim_untrack(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    claim = _claim(workspace, pk)
    try:
        account_pk = int(request.POST.get("account", ""))
    except ValueError:
        return _page(request, workspace, claim, errors={"account": ["which account to stop tracking"]}, status=400)
    services.claim_untrack(claim=claim, account_pk=account_pk)
    return redirect("claim", ws=workspace.slug, pk=claim.pk)
