"""Compute runs: the list, a run's page with its batches, a new run (recompute), and the run's actions: cancel a
queued or running run, retry a failed or cancelled one (POST only; the run page shows the buttons). Writes go
through ``monitor.services``; the run is looked up through the user's workspace, so another workspace's run
answers 404."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from monitor import selectors, services
from monitor.models import ComputeRun
from monitor.services import budgets, compute_run_cancel, compute_run_retry
from monitor.services.runs import failure_kind

from ..forms import RecomputeForm
from .base import PAGE, workspace_context


@login_required
@require_GET
def runs(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    pager = Paginator(selectors.runs_list(workspace, limit=10_000), PAGE)
    page = pager.get_page(request.GET.get("page"))
    return render(request, "frontend/runs.html", workspace_context(request, workspace, page=page, form=RecomputeForm()))


@login_required
@require_GET
def run(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    r = selectors.run_get(workspace, pk)
    ctx = workspace_context(
        request,
        workspace,
        run=r,
        batches=selectors.run_batches(r),
        stalled=selectors.stalled_work(batches=r.batches),
        cost=_cost(r),
        # a batch stopped for its memory, or not run again after it ended its worker: the page says what to do
        failure=failure_kind(r.error) if r.status == ComputeRun.Status.FAILED else "",
        ceiling_mb=budgets.workspace_limits(workspace).run_memory_mb,
        waiting=selectors.run_waiting(r),
    )
    return render(request, "frontend/run.html", ctx)


def _fact(name: str, v) -> str:
    return f"{name} {v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{name} {v}"


def _cost(r: ComputeRun) -> dict | None:
    """The run's estimate beside what it measured: worker seconds (its batches' totals, and IMM's finish)."""
    e = r.estimate or {}
    if "seconds" not in e:
        return None
    t = r.timings or {}
    measured = float(t.get("total_s", 0.0))  # every batch's, summed
    if r.algorithm == "influence_max" and (r.params or {}).get("method") == "imm":
        measured += sum(float(t.get(k, 0.0)) for k in ("merge_s", "select_s", "evaluate_s"))  # IMM's finish
    budget = e.get("budget") or {}
    return {
        "seconds": budgets.duration(e["seconds"]),
        "peak": budgets.size(e["peak_bytes"]),
        "drivers": ", ".join(_fact(k, v) for k, v in e.get("drivers", {}).items()),
        "measured": budgets.duration(measured) if measured else None,
        "budget_seconds": budgets.duration(budget["run_seconds"]) if budget.get("run_seconds") else None,
        "budget_memory": budgets.size(budget["run_memory_bytes"]) if budget.get("run_memory_bytes") else None,
        "held": e.get("held", True),
    }


@login_required
@require_POST
def recompute(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    form = RecomputeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose an orphan policy and a backend.")
        return redirect("runs", ws=workspace.slug)
    try:
        r = services.compute_run_start(
            workspace=workspace,
            user=request.user,
            orphans=form.cleaned_data["orphans"],
            backend=form.cleaned_data["backend"],
            aggregate=ComputeRun.Aggregate.TOTAL,
        )
    except ValidationError as exc:  # beyond the workspace's cost budget (monitor.services.budgets)
        messages.error(request, " ".join(exc.messages))
        return redirect("runs", ws=workspace.slug)
    if r.status == ComputeRun.Status.WAITING:
        messages.success(
            request,
            f"Run {r.pk} waits for the workspace's earlier runs: {r.n_cascades:,} cascades in {r.n_batches} "
            "batch(es), queued as soon as one of them ends.",
        )
    else:
        messages.success(request, f"Run {r.pk} queued: {r.n_cascades:,} cascades in {r.n_batches} batch(es).")
    return redirect(reverse("run", kwargs={"ws": workspace.slug, "pk": r.pk}))


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
