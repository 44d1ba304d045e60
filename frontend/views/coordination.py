"""Coordinated accounts' pages (docs/coordination.md): the Coordination page of a workspace or collection (start
a run, follow it, read its clusters with the graph drawn), one cluster of a run (members, shared tweets, the
timeline of their retweets), and the downloads. Views read through ``monitor.selectors`` and start runs through
``monitor.services``; a run or collection of another workspace answers 404."""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from monitor import exports, exports_coordination, selectors

from ..forms_coordination import CoordinationRunForm
from .base import start_analysis, workspace_context
from .exports import stream

DRAW_LIMIT = 2000  # accounts drawn at once (the largest clusters that fit), as the network pages
CLUSTERS = 50  # clusters listed on the page; the downloads have them all
MEMBERS = 500  # a cluster page's members table


HOURLY_SPAN = 7 * 24  # a cluster active within a week is drawn hour by hour; a longer one day by day


def strip(timeline: list, *, width: float = 120.0, height: float = 24.0) -> dict | None:
    """A cluster's retweets over time (``[["YYYY-MM-DDTHH", n], ...]`` per UTC hour) as the bars of a small SVG
    (``viewBox 0 0 width height``): one bar per hour when they span at most a week, else per day, from the first to
    the last, empty ones included (as gaps), each with its hour or day and count for its title."""
    if not timeline:
        return None
    hours = [(dt.datetime.strptime(h, "%Y-%m-%dT%H"), n) for h, n in timeline]
    first, last = hours[0][0], hours[-1][0]
    hourly = (last - first) / dt.timedelta(hours=1) < HOURLY_SPAN
    if hourly:
        bins = {t: n for t, n in hours}
        step, fmt = dt.timedelta(hours=1), "%Y-%m-%d %H:00"
    else:
        first, last = first.replace(hour=0), last.replace(hour=0)
        bins = {}
        for t, n in hours:
            day = t.replace(hour=0)
            bins[day] = bins.get(day, 0) + n
        step, fmt = dt.timedelta(days=1), "%Y-%m-%d"
    span = int((last - first) / step) + 1
    peak = max(bins.values()) or 1
    w = width / span
    bars = []
    for t, n in sorted(bins.items()):
        h = max(1.0, height * n / peak)
        bars.append({"x": round(int((t - first) / step) * w, 3), "w": round(max(w * 0.85, 0.6), 3),
                     "y": round(height - h, 3), "h": round(h, 3),
                     "title": f"{t.strftime(fmt)}: {n:,} retweet{'s' if n != 1 else ''}"})  # fmt: skip
    unit = "hour" if hourly else "day"
    return {"bars": bars, "width": width, "height": height, "first": first, "last": last, "bins": span,
            "unit": unit, "peak": peak}  # fmt: skip


def _results(workspace, run) -> dict:
    summary = selectors.coordination_summary(run)
    if summary is None:
        return {}
    clusters, n_clusters = selectors.coordination_clusters(workspace, run, limit=CLUSTERS)
    for c in clusters:
        c["strip"] = strip(c["timeline"])
        c["more"] = c["size"] - len(c["members"])
    sub = selectors.coordination_graph(workspace, run, limit=DRAW_LIMIT)
    return {
        "summary": summary,
        "clusters": clusters,
        "n_clusters": n_clusters,
        "drawing": selectors.drawing(sub) if len(sub.ids) else None,
    }


def _page(request: HttpRequest, workspace, *, collection=None, run=None, form=None, status: int = 200):
    shown = run if run is not None else selectors.coordination_latest(workspace, collection=collection)
    runs = selectors.coordination_runs(workspace, collection=collection)
    ctx = workspace_context(
        request,
        workspace,
        collection=collection,
        run=shown,
        pinned=run is not None,
        runs=runs,
        active=[r for r in runs if r.is_active],
        form=form or CoordinationRunForm(),
        **(_results(workspace, shown) if shown is not None and shown.status == "done" else {}),
    )
    return render(request, "frontend/coordination.html", ctx, status=status)


@login_required
@require_GET
def coordination(request: HttpRequest, ws: str) -> HttpResponse:
    return _page(request, selectors.workspace_for_user(request.user, ws))


@login_required
@require_GET
def collection_coordination(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    return _page(request, workspace, collection=selectors.collection_get(workspace, pk))


@login_required
@require_GET
def coordination_run(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """One coordination run's results (the Coordination page shows the newest finished one)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.coordination_run_get(workspace, pk)
    return _page(request, workspace, collection=run.collection, run=run)


def _start(request: HttpRequest, workspace, collection=None) -> HttpResponse:
    if collection is not None:
        then = reverse("collection-coordination", kwargs={"ws": workspace.slug, "pk": collection.pk})
    else:
        then = reverse("coordination", kwargs={"ws": workspace.slug})
    form = CoordinationRunForm(request.POST)
    return start_analysis(
        request,
        workspace,
        form,
        collection=collection,
        algorithm="coordination",
        params=lambda _d: form.params(),
        page=_page,
        said=lambda r: f"Coordination run {r.pk} queued: {r.n_nodes:,} retweeting accounts.",
        then=then,
    )


@login_required
@require_POST
def coordination_start(request: HttpRequest, ws: str) -> HttpResponse:
    return _start(request, selectors.workspace_for_user(request.user, ws))


@login_required
@require_POST
def collection_coordination_start(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    return _start(request, workspace, selectors.collection_get(workspace, pk))


def _cluster_number(request: HttpRequest) -> int | HttpResponse:
    try:
        return int(request.GET.get("c", "1"))
    except ValueError:
        return HttpResponseBadRequest("c: the cluster's number, an integer\n", content_type="text/plain")


@login_required
@require_GET
def coordination_cluster(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """One cluster of a finished run (``?c=``, 1 = the largest): its members, shared tweets and timeline."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.coordination_run_get(workspace, pk)
    c = _cluster_number(request)
    if isinstance(c, HttpResponse):
        return c
    cluster = selectors.coordination_cluster(workspace, run, c, limit=MEMBERS)
    sub = selectors.coordination_graph(workspace, run, cluster=c, limit=DRAW_LIMIT)
    ctx = workspace_context(
        request,
        workspace,
        run=run,
        summary=selectors.coordination_summary(run),
        cluster=cluster,
        strip=strip(cluster["timeline"], width=600, height=60),
        drawing=selectors.drawing(sub),
    )
    return render(request, "frontend/coordination_cluster.html", ctx)


@login_required
@require_GET
def coordination_edges_export(request: HttpRequest, ws: str, pk: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.coordination_run_get(workspace, pk)
    name = exports.filename(workspace, "coordination", run.pk, "edges", ext=fmt)
    body = exports_coordination.edges_csv(run) if fmt == "csv" else exports_coordination.edges_json(run)
    return stream(body, fmt=fmt, name=name)


@login_required
@require_GET
def coordination_graph_export(request: HttpRequest, ws: str, pk: int, fmt: str) -> HttpResponse:
    """The run's coordination graph, or one cluster's (``?c=``)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.coordination_run_get(workspace, pk)
    cluster = None
    if "c" in request.GET:
        cluster = _cluster_number(request)
        if isinstance(cluster, HttpResponse):
            return cluster
        selectors.coordination_cluster(workspace, run, cluster, limit=0)  # 404 for a cluster the run lacks
    parts = ("coordination", run.pk, "graph") if cluster is None else ("coordination", run.pk, "cluster", cluster)
    name = exports.filename(workspace, *parts, ext=fmt)
    return stream(exports_coordination.graph(workspace, run, fmt=fmt, cluster=cluster), fmt=fmt, name=name)
