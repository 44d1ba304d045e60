"""REST API v1 of the counter-campaign planner (docs/influence_max.md): start a plan for a publisher and list its
plans, read a plan (the chosen accounts with their marginal gains, the joint reach with its 95 % interval, the
curve against K, the publisher's top spreaders by influence beside them). Publishers and runs are looked up
through the caller's workspace: another workspace's answer 404 like missing ones; progress and cancel are the
runs API's (``runs/<id>/``, ``runs/<id>/cancel/``)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from .. import selectors, services
from .paging import Pagination
from .serializers import (
    ComputeRunSerializer,
    CounterCampaignRunSerializer,
    CounterCampaignStartSerializer,
    PaginatedComputeRunList,
    inferred_graph_data,
)
from .views import PAGINATION, _django_errors


def plan_data(ws, run) -> dict | None:
    """A finished run's plan as the API gives it (Twitter ids as strings); None before it is done."""
    plan = selectors.influence_max_plan(ws, run)
    if plan is None:
        return None
    r, cmp = plan["result"], plan["comparison"]
    base = cmp["baseline"]
    return {
        "publisher": str(r.publisher.twitter_id),
        "method": r.method,
        "k": r.k,
        "model": r.model,
        "model_description": r.model_description,
        "unit": r.unit,
        "audience": {"accounts": r.n_nodes, "follow_edges": r.n_edges, "total_weight": r.total_weight},
        "spread": r.spread,
        "spread_ci": [r.spread_ci_low, r.spread_ci_high],
        "evaluate_runs": r.evaluate_runs,
        "estimate": r.estimate,
        "curve": list(r.curve),
        "rr_sets": r.rr_sets,
        "estimated": r.estimated,
        "seeds": [
            {
                "rank": s["rank"],
                "twitter_id": str(s["twitter_id"]),
                "screen_name": s["screen_name"] or "",
                "marginal_gain": s["gain"],
                "cumulative": s["cumulative"],
                "influence_rank": s["influence_rank"],
                "top_by_influence": s["in_baseline"],
            }
            for s in plan["seeds"]
        ],
        "baseline": [
            {
                "rank": b["rank"],
                "twitter_id": str(b["twitter_id"]),
                "screen_name": b["screen_name"] or "",
                "influence": b["influence"],
                "chosen": b["chosen"],
            }
            for b in plan["baseline"]
        ],
        "baseline_spread": base["spread"] if base else None,
        "baseline_spread_ci": [base["ci_low"], base["ci_high"]] if base else None,
        "overlap": cmp["overlap"],
        "notes": list(r.notes),
    }


@extend_schema(
    methods=["GET"],
    operation_id="workspaces_publishers_counter_campaign_list",
    parameters=PAGINATION,
    responses=PaginatedComputeRunList,
)
@extend_schema(
    methods=["POST"],
    request=CounterCampaignStartSerializer,
    responses={201: ComputeRunSerializer},
    description="Plan a counter-campaign for the publisher: the K accounts of its audience with the largest joint "
    "expected reach; the run's batches are queued when the request commits.",
)
@api_view(["GET", "POST"])
def counter_campaign_runs(request, ws: str, publisher: int):
    """A publisher's counter-campaign plans (GET, paged), or start one (POST)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    account = selectors.account_get(workspace, publisher)
    if request.method == "GET":
        pager = Pagination()
        page = pager.paginate_queryset(
            selectors.influence_max_runs(workspace, publisher=account, limit=10_000), request
        )
        return pager.get_paginated_response(ComputeRunSerializer(page, many=True).data)
    ser = CounterCampaignStartSerializer(data=request.data)
    ser.is_valid(raise_exception=True)
    v = dict(ser.validated_data)
    backend = v.pop("backend")
    params = {"publisher": account.pk, **{k: x for k, x in v.items() if x is not None}}
    try:
        run = services.compute_run_start(
            workspace=workspace, user=request.user, backend=backend, algorithm="influence_max", params=params
        )
    except DjangoValidationError as exc:
        raise _django_errors(exc) from None
    return Response(ComputeRunSerializer(run).data, status=status.HTTP_201_CREATED)


@extend_schema(responses=CounterCampaignRunSerializer)
@api_view(["GET"])
def counter_campaign_run(request, ws: str, pk: int):
    """A planner run and its plan (``plan`` is null until the run is done)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.influence_max_run_get(workspace, pk)
    return Response(
        {
            "run": ComputeRunSerializer(run).data,
            "plan": plan_data(workspace, run),
            "inferred_graph": inferred_graph_data(run, workspace),
        }
    )
