"""REST API v1 of network analytics (docs/network.md): start a network run and list them, read a run's summary,
its accounts (paged), one of its components, its communities and one of them, and an account's neighbourhood.
Runs, collections and accounts are looked up through the caller's workspace: another workspace's answer 404 like
missing ones."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from .. import selectors
from ..algorithms.network import GRAPHS, GraphSpec
from ..selectors.network import ACCOUNT_COLUMNS, accounts_of
from .analysis_runs import runs_page, start_run
from .serializers import (
    ComputeRunSerializer,
    NeighbourhoodSerializer,
    NetworkAccountPageSerializer,
    NetworkCommunityRowSerializer,
    NetworkCommunitySerializer,
    NetworkComponentSerializer,
    NetworkRunResultSerializer,
    NetworkRunStartSerializer,
    NetworkSummarySerializer,
    PaginatedComputeRunList,
    inferred_graph_data,
)
from .views import PAGINATION, _int_param


def _account(r: dict) -> dict:
    return {"twitter_id": str(r["twitter_id"]), "screen_name": r["screen_name"] or ""} | {
        k: r[k] for k in ACCOUNT_COLUMNS[3:]
    }


@extend_schema(
    methods=["GET"],
    operation_id="workspaces_network_runs_list",
    parameters=PAGINATION,
    responses=PaginatedComputeRunList,
)
@extend_schema(
    methods=["POST"],
    request=NetworkRunStartSerializer,
    responses={201: ComputeRunSerializer},
    description="Start a network run of the workspace's (or a collection's) follower or interaction graph; its "
    "batches are queued when the request commits.",
)
@api_view(["GET", "POST"])
def network_runs(request, ws: str):
    """The network analytics runs of a workspace (GET, paged), or start one (POST)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    if request.method == "GET":
        return runs_page(request, selectors.network_runs(workspace, limit=10_000))
    ser = NetworkRunStartSerializer(data=request.data)
    ser.is_valid(raise_exception=True)
    v = dict(ser.validated_data)
    params = {k: v[k] for k in ("graph", "spreading", "samples", "seed", "communities", "resolution")}
    return start_run(request, workspace, v, algorithm="network", params=params)


@extend_schema(responses=NetworkRunResultSerializer)
@api_view(["GET"])
def network_run(request, ws: str, pk: int):
    """A network run and its summary (``summary`` is null until its structural batch is stored; the betweenness
    facts say ``done`` once the run is)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    summary = selectors.network_summary(run)
    return Response(
        {
            "run": ComputeRunSerializer(run).data,
            "summary": NetworkSummarySerializer(summary).data if summary is not None else None,
            "inferred_graph": inferred_graph_data(run, workspace),
        }
    )


@extend_schema(
    parameters=[
        OpenApiParameter("sort", str, enum=list(selectors.ACCOUNT_SORTS), default="betweenness"),
        OpenApiParameter("limit", int, description="1 to 1000 (default 100)"),
        OpenApiParameter("offset", int),
    ],
    responses=NetworkAccountPageSerializer,
)
@api_view(["GET"])
def network_accounts(request, ws: str, pk: int):
    """The run's accounts with their numbers, ordered by ``sort`` (descending, ties by account)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    sort = request.query_params.get("sort", "betweenness")
    if sort not in selectors.ACCOUNT_SORTS:
        raise ValidationError({"sort": f"must be one of {', '.join(selectors.ACCOUNT_SORTS)}"})
    limit = _int_param(request, "limit", 100, 1, 1000)
    offset = _int_param(request, "offset", 0, 0, 10**9)
    rows, count = selectors.network_accounts(workspace, run, sort=sort, limit=limit, offset=offset)
    return Response({"sort": sort, "count": count, "results": [_account(r) for r in rows]})


@extend_schema(
    parameters=[
        OpenApiParameter("c", int, description="the component's number, 0 = the largest (default 0)"),
        OpenApiParameter("limit", int, description="members returned, 1 to 10000 (default 1000)"),
    ],
    responses=NetworkComponentSerializer,
)
@api_view(["GET"])
def network_component(request, ws: str, pk: int):
    """One weakly connected component of the run: its size and its members by betweenness."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    c = _int_param(request, "c", 0, 0, 2**31 - 1)
    comp = selectors.network_component(workspace, run, c, limit=_int_param(request, "limit", 1000, 1, 10_000))
    return Response({"component": c, "size": comp["size"], "members": [_account(r) for r in comp["members"]]})


@extend_schema(
    parameters=[OpenApiParameter("limit", int, description="the largest communities, 1 to 20 (default 20)")],
    responses=NetworkCommunityRowSerializer(many=True),
)
@api_view(["GET"])
def network_communities(request, ws: str, pk: int):
    """The run's largest modularity communities (the summary's ``communities`` has the count and the modularity),
    each with its size, edges inside, modularity term and its members best ranked by influence; [] when the run
    found none."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    rows = selectors.network_communities(workspace, run, limit=_int_param(request, "limit", 20, 1, 20))
    for r in rows:
        r["top"] = [dict(a, twitter_id=str(a["twitter_id"])) for a in r["top"]]
    return Response(NetworkCommunityRowSerializer(rows, many=True).data)


@extend_schema(
    parameters=[
        OpenApiParameter("c", int, description="the community's number, 1 = the largest (default 1)"),
        OpenApiParameter("limit", int, description="members returned, 1 to 10000 (default 1000)"),
    ],
    responses=NetworkCommunitySerializer,
)
@api_view(["GET"])
def network_community(request, ws: str, pk: int):
    """One modularity community of the run: its size, edges inside, modularity term and its members by
    betweenness (404 for a run without communities or a number it does not have)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.network_run_get(workspace, pk)
    c = _int_param(request, "c", 1, 1, 2**31 - 1)
    got = selectors.network_community(workspace, run, c, limit=_int_param(request, "limit", 1000, 1, 10_000))
    return Response({**got, "members": [_account(r) for r in got["members"]]})


@extend_schema(
    parameters=[
        OpenApiParameter("graph", str, enum=list(GRAPHS), default="follows"),
        OpenApiParameter("depth", int, description=f"hops, 1 to {selectors.MAX_DEPTH} (default 1)"),
        OpenApiParameter("direction", str, enum=list(selectors.DIRECTIONS), default="both"),
        OpenApiParameter("limit", int, description="accounts returned, the nearest first; 1 to 5000 (default 1000)"),
    ],
    responses=NeighbourhoodSerializer,
)
@api_view(["GET"])
def account_neighbourhood(request, ws: str, twitter_id: int):
    """The accounts within ``depth`` hops of an account in the workspace's follower or interaction graph as it is
    now, and the edges among them (404 when the account has no edge in that graph)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, twitter_id)
    graph = request.query_params.get("graph", "follows")
    if graph not in GRAPHS:
        raise ValidationError({"graph": f"must be one of {', '.join(GRAPHS)}"})
    direction = request.query_params.get("direction", "both")
    if direction not in selectors.DIRECTIONS:
        raise ValidationError({"direction": f"must be one of {', '.join(selectors.DIRECTIONS)}"})
    depth = _int_param(request, "depth", 1, 1, selectors.MAX_DEPTH)
    limit = _int_param(request, "limit", 1000, 1, 5000)
    sub = selectors.network_neighbourhood(
        workspace, account, spec=GraphSpec(graph), depth=depth, direction=direction, limit=limit
    )
    if sub is None:
        raise Http404("this account has no edge in that graph")
    names = accounts_of(sub.ids)
    tid = {pk: str(names.get(pk, (pk, ""))[0]) for pk in sub.ids.tolist()}
    weights = sub.weights.tolist() if sub.weights is not None else None
    return Response(
        NeighbourhoodSerializer(
            {
                "account": str(account.twitter_id),
                "graph": graph,
                "depth": depth,
                "direction": direction,
                "nodes": [
                    {
                        "twitter_id": tid[pk],
                        "screen_name": names.get(pk, (pk, ""))[1],
                        "distance": int(sub.attrs["distance"][i]),
                        "in_degree": int(sub.attrs["in_degree"][i]),
                        "out_degree": int(sub.attrs["out_degree"][i]),
                    }
                    for i, pk in enumerate(sub.ids.tolist())
                ],
                "edges": [
                    [tid[s], tid[d]] + ([weights[k]] if weights is not None else [])
                    for k, (s, d) in enumerate(zip(sub.src.tolist(), sub.dst.tolist(), strict=True))
                ],
                "hidden": {"nodes": sub.hidden_nodes, "edges": sub.hidden_edges},
            }
        ).data
    )
