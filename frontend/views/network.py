"""Network analytics pages (docs/network.md): the Network page of a workspace or collection (start a run, follow
it, read its results), one component or community of a run, an account's neighbourhood, their downloads, and the
method's documentation page. Views read through ``monitor.selectors`` and start runs through ``monitor.services``; a run
or collection of another workspace answers 404."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from monitor import exports, selectors
from monitor.algorithms.network import GRAPHS, GraphSpec

from ..forms import NeighbourhoodForm, NetworkRunForm
from .base import start_analysis, workspace_context
from .exports import stream

# nodes drawn at once. The server lays them out (compute.drawing.force_layout, about 0.4 s for 2,000 on one core,
# cached per graph) and the browser only draws them with WebGL, labelling a dozen: the first frame of 2,000 comes
# within a second (benchmarks/drawing.md), where cytoscape's layout on the page took 10 s for 250
DRAW_LIMIT = 2000
MEMBERS = 200  # a component page's member table


def _graph_choice(request: HttpRequest, workspace, collection) -> str:
    """The graph the page shows: ``?graph=``, else that of the newest finished run, else the follower graph."""
    graph = request.GET.get("graph")
    if graph in GRAPHS:
        return graph
    latest = [r for r in (selectors.network_latest(workspace, graph=g, collection=collection) for g in GRAPHS) if r]
    return max(latest, key=lambda r: r.pk).params["graph"] if latest else "follows"


def _results(workspace, run) -> dict:
    """What the page shows of a finished run: the summary, its charts' data, the brokers and the conversations."""
    summary = selectors.network_summary(run)
    if summary is None:
        return {}
    conversations = selectors.network_conversation_graph(workspace, run, limit=DRAW_LIMIT)
    return {
        "summary": summary,
        "brokers": selectors.network_brokers(workspace, run, limit=20),
        "communities": selectors.network_communities(workspace, run, limit=20),
        "charts": {
            "components": summary.components.get("distribution", []),
            "strong": summary.strong_components.get("distribution", []),
            "in": summary.degrees.get("in", {}).get("log_bins", []),
            "out": summary.degrees.get("out", {}).get("log_bins", []),
            "shells": summary.cores.get("shells", []),
        },
        "largest": [
            {"component": i, "size": size, "share": size / summary.n_nodes if summary.n_nodes else 0.0}
            for i, size in enumerate(summary.components.get("largest", [])[:10])
        ],
        "conversation_drawing": selectors.drawing(conversations) if len(conversations.ids) else None,
    }


def _page(request: HttpRequest, workspace, *, collection=None, run=None, form=None, status: int = 200):
    graph = run.params["graph"] if run is not None else _graph_choice(request, workspace, collection)
    shown = run if run is not None else selectors.network_latest(workspace, graph=graph, collection=collection)
    runs = selectors.network_runs(workspace, collection=collection)
    ctx = workspace_context(
        request,
        workspace,
        collection=collection,
        graph=graph,
        graphs=[("follows", "Follower graph"), ("interactions", "Interaction graph")],
        run=shown,
        pinned=run is not None,
        runs=runs,
        active=[r for r in runs if r.is_active],
        form=form or NetworkRunForm(initial={"graph": graph}),
        **(_results(workspace, shown) if shown is not None and shown.status == "done" else {}),
    )
    return render(request, "frontend/network.html", ctx, status=status)


@login_required
@require_GET
def network(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    return _page(request, workspace)


@login_required
@require_GET
def collection_network(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    return _page(request, workspace, collection=selectors.collection_get(workspace, pk))


@login_required
@require_GET
def network_run(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """One network run's results (the Network page shows the newest finished one)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    return _page(request, workspace, collection=run.collection, run=run)


def _start(request: HttpRequest, workspace, collection=None) -> HttpResponse:
    if collection is not None:
        then = reverse("collection-network", kwargs={"ws": workspace.slug, "pk": collection.pk})
    else:
        then = reverse("network", kwargs={"ws": workspace.slug}) + f"?graph={request.POST.get('graph', 'follows')}"
    return start_analysis(
        request,
        workspace,
        NetworkRunForm(request.POST),
        collection=collection,
        algorithm="network",
        params=lambda d: {k: d[k] for k in ("graph", "spreading", "samples", "seed", "communities", "resolution")},
        page=_page,
        said=lambda r: (
            f"Network run {r.pk} queued: {r.n_nodes:,} accounts, {r.n_batches} batch{'es' if r.n_batches != 1 else ''}."
        ),
        then=then,
    )


@login_required
@require_POST
def network_start(request: HttpRequest, ws: str) -> HttpResponse:
    return _start(request, selectors.workspace_for_user(request.user, ws))


@login_required
@require_POST
def collection_network_start(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    return _start(request, workspace, selectors.collection_get(workspace, pk))


def _component_number(request: HttpRequest, kind: str = "component") -> int | HttpResponse:
    default = "0" if kind == "component" else "1"
    try:
        return int(request.GET.get("c", default))
    except ValueError:
        return HttpResponseBadRequest(f"c: the {kind}'s number, an integer\n", content_type="text/plain")


#: a group of a run's accounts that has its own page and download: (its members, its graph)
GROUPS = {
    "component": (selectors.network_component, selectors.network_component_graph),
    "community": (selectors.network_community, selectors.network_community_graph),
}


def _group_page(request: HttpRequest, ws: str, pk: int, kind: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    c = _component_number(request, kind)
    if isinstance(c, HttpResponse):
        return c
    members, graph = GROUPS[kind]
    group = members(workspace, run, c, limit=MEMBERS)
    sub = graph(workspace, run, c, limit=DRAW_LIMIT)
    ctx = workspace_context(
        request,
        workspace,
        run=run,
        kind=kind,
        summary=selectors.network_summary(run),
        component=group,
        number=c,
        drawing=selectors.drawing(sub),
        colour="community" if "community" in sub.attrs and kind == "component" else "core",
        changed=sub.facts.get("graph_changed_since_run"),
    )
    return render(request, "frontend/network_component.html", ctx)


@login_required
@require_GET
def network_component(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """One weak component of a finished run (``?c=``, 0 = the largest): its members and its drawing, coloured by
    community where the run found them."""
    return _group_page(request, ws, pk, "component")


@login_required
@require_GET
def network_community(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    """One modularity community of a finished run (``?c=``, 1 = the largest): its members and its drawing."""
    return _group_page(request, ws, pk, "community")


@login_required
@require_GET
def network_accounts_export(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    name = exports.filename(workspace, "network", run.pk, "accounts", ext="csv")
    return stream(exports.network_accounts_csv(run), fmt="csv", name=name)


@login_required
@require_GET
def network_component_export(request: HttpRequest, ws: str, pk: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    c = _component_number(request)
    if isinstance(c, HttpResponse):
        return c
    sub = selectors.network_component_graph(workspace, run, c)
    text = f"Weak component {c} of network run {run.pk}, with the run's numbers per account and today's edges."
    name = exports.filename(workspace, "network", run.pk, "component", c, ext=fmt)
    return stream(exports.network_subgraph(sub, fmt=fmt, description=text), fmt=fmt, name=name)


@login_required
@require_GET
def network_community_export(request: HttpRequest, ws: str, pk: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    c = _component_number(request, "community")
    if isinstance(c, HttpResponse):
        return c
    sub = selectors.network_community_graph(workspace, run, c)
    text = f"Modularity community {c} of network run {run.pk}, with the run's numbers per account and today's edges."
    name = exports.filename(workspace, "network", run.pk, "community", c, ext=fmt)
    return stream(exports.network_subgraph(sub, fmt=fmt, description=text), fmt=fmt, name=name)


@login_required
@require_GET
def network_conversations_export(request: HttpRequest, ws: str, pk: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    if selectors.network_summary(run) is None:
        raise Http404("this run has no results yet")
    sub = selectors.network_conversation_graph(workspace, run)
    text = f"The conversation graph of network run {run.pk}: the interactions that go both ways."
    name = exports.filename(workspace, "network", run.pk, "conversations", ext=fmt)
    return stream(exports.network_subgraph(sub, fmt=fmt, description=text), fmt=fmt, name=name)


def _neighbourhood(request: HttpRequest, workspace, account, *, limit: int | None):
    """The neighbourhood form read from the query string, and the subgraph it asks for (None: not in the graph)."""
    data = request.GET.copy()
    for name, default in (("graph", "follows"), ("depth", "1"), ("direction", "both")):
        data.setdefault(name, default)
    form = NeighbourhoodForm(data)
    if not form.is_valid():
        return form, None
    d = form.cleaned_data
    spec = GraphSpec(d["graph"] or "follows")
    sub = selectors.network_neighbourhood(
        workspace, account, spec=spec, depth=d["depth"] or 1, direction=d["direction"] or "both", limit=limit
    )
    return form, sub


@login_required
@require_GET
def neighbourhood(request: HttpRequest, ws: str, twitter_id: int) -> HttpResponse:
    """The accounts within a few hops of an account in the follower or interaction graph, drawn."""
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, twitter_id)
    form, sub = _neighbourhood(request, workspace, account, limit=DRAW_LIMIT)
    ctx = workspace_context(
        request,
        workspace,
        account=account,
        form=form,
        sub=sub,
        drawing=selectors.drawing(sub, centre=account.pk) if sub is not None else None,
        query=request.GET.urlencode(),
    )
    return render(request, "frontend/neighbourhood.html", ctx, status=200 if form.is_valid() else 400)


@login_required
@require_GET
def neighbourhood_export(request: HttpRequest, ws: str, twitter_id: int, fmt: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, twitter_id)
    form, sub = _neighbourhood(request, workspace, account, limit=None)
    if not form.is_valid():
        return HttpResponseBadRequest(form.errors.as_text() + "\n", content_type="text/plain; charset=utf-8")
    if sub is None:
        raise Http404("this account is not in that graph")
    d = sub.facts
    text = f"The accounts within {d['depth']} hop(s) of {account} ({d['direction']}) and the edges among them."
    name = exports.filename(workspace, "account", account.twitter_id, "neighbourhood", d["graph"], d["depth"], ext=fmt)
    return stream(exports.network_subgraph(sub, fmt=fmt, description=text), fmt=fmt, name=name)


DOCS = ("network", "measure", "app", "influence_max", "live", "coordination")  # the method pages a result page links


@require_GET
def docs_page(request: HttpRequest, name: str) -> HttpResponse:
    """A method's page of ``docs/`` as the repository has it (Markdown, shown as text): public like the code."""
    path = Path(settings.BASE_DIR) / "docs" / f"{name}.md"
    if name not in DOCS or not path.is_file():
        raise Http404("no such documentation page")
    return render(request, "frontend/docs.html", {"name": name, "text": path.read_text(encoding="utf-8")})
