"""The counter-campaign planner (docs/influence_max.md): per publisher, start a plan (K, the model and its
probabilities, the method), follow it, read the chosen accounts beside the publisher's top spreaders, download
them. Views read through ``monitor.selectors`` and start runs through ``monitor.services``; progress and cancel
are the run page's; a run or account of another workspace answers 404."""

from __future__ import annotations

import csv
import io

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from monitor import exports, selectors, services

from ..forms_influence_max import METHOD_LABELS, CounterCampaignForm
from .base import field_errors, workspace_context
from .exports import stream

CSV_COLUMNS = (
    "rank",
    "twitter_id",
    "screen_name",
    "marginal_gain",
    "estimated_spread",
    "influence_rank",
    "top_by_influence",
)


def _page(request: HttpRequest, workspace, publisher, *, run=None, form=None, status: int = 200) -> HttpResponse:
    shown = run if run is not None else selectors.influence_max_latest(workspace, publisher)
    runs = selectors.influence_max_runs(workspace, publisher=publisher)
    plan = selectors.influence_max_plan(workspace, shown) if shown is not None and shown.status == "done" else None
    ctx = workspace_context(
        request,
        workspace,
        publisher=publisher,
        run=shown,
        pinned=run is not None,
        runs=runs,
        active=[r for r in runs if r.is_active],
        form=form or CounterCampaignForm(),
        plan=plan,
        method_label=METHOD_LABELS.get(plan["result"].method, "") if plan is not None else "",
        chart=(
            {"curve": plan["curve"], "comparison": plan["comparison"], "unit": plan["result"].unit}
            if plan is not None
            else None
        ),
    )
    return render(request, "frontend/influence_max.html", ctx, status=status)


@login_required
@require_GET
def planner(request: HttpRequest, ws: str, publisher: int) -> HttpResponse:
    """A publisher's planner: the form, its runs, and the newest finished plan."""
    workspace = selectors.workspace_for_user(request.user, ws)
    return _page(request, workspace, selectors.account_get(workspace, publisher))


@login_required
@require_GET
def planner_run(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """One planner run's results (the publisher's planner shows the newest finished one)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.influence_max_run_get(workspace, pk)
    publisher = selectors.influence_max_publisher(workspace, run)
    return _page(request, workspace, publisher, run=run)


@login_required
@require_POST
def planner_start(request: HttpRequest, ws: str, publisher: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, publisher)
    form = CounterCampaignForm(request.POST)
    if not form.is_valid():
        return _page(request, workspace, account, form=form, status=400)
    try:
        r = services.compute_run_start(
            workspace=workspace,
            user=request.user,
            backend=form.cleaned_data["backend"],
            algorithm="influence_max",
            params=form.params(account.pk),
        )
    except ValidationError as exc:
        field_errors(form, exc)
        return _page(request, workspace, account, form=form, status=400)
    batches = f"{r.n_batches} batch{'es' if r.n_batches != 1 else ''}"
    messages.success(request, f"Plan {r.pk} queued: an audience of {r.n_nodes:,} accounts, {batches}.")
    return redirect(reverse("counter-campaign", kwargs={"ws": workspace.slug, "publisher": account.twitter_id}))


def _seeds_csv(run):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for rank, _pk, tid, name, gain, cumulative, influence_rank, in_baseline in selectors.influence_max_seed_rows(run):
        w.writerow(
            [
                rank,
                tid,
                exports.csv_text(name or ""),
                repr(gain),
                repr(cumulative),
                influence_rank or "",
                str(in_baseline).lower(),
            ]
        )
    yield buf.getvalue()


@login_required
@require_GET
def planner_export(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """The chosen accounts of a finished run as CSV, in the order they were chosen."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.influence_max_run_get(workspace, pk)
    if selectors.influence_max_result(run) is None:
        raise Http404("this run has no results yet")
    name = exports.filename(workspace, "counter-campaign", run.pk, ext="csv")
    return stream(_seeds_csv(run), fmt="csv", name=name)
