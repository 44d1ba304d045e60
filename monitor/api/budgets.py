"""REST API v1 of cost budgets: what a run would cost before it starts, and whether the workspace's budget allows
it. Starting a run beyond the budget answers 400 keyed by the parameter that drives the cost (every start
endpoint: ``monitor.services.budgets.check`` runs inside ``compute_run_start``)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from .. import selectors
from ..services import budgets
from .views import _django_errors

ALGORITHMS = ("network", "influence_max", "wtf", "influence", "coordination")
#: the query parameters each algorithm reads (those of its start endpoint; ``publisher`` is a Twitter id)
PARAMS = {
    "network": ("graph", "collection", "spreading", "samples", "seed", "communities", "resolution"),
    "coordination": ("method", "collection", "window", "min_count", "min_retweets", "threshold"),
    "influence_max": (
        "publisher",
        "k",
        "model",
        "p",
        "strength",
        "unit",
        "method",
        "eps",
        "seed",
        "evaluate",
        "batches",
    ),
    "wtf": (
        *("accounts", "publisher", "spreaders", "direction", "circle", "top", "max_iter"),
        *("method", "epsilon", "walks"),
    ),
    "influence": (),
}
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")
BOOLEANS = ("spreading", "communities")  # the parameters that are true or false


class EstimateNumbersSerializer(serializers.Serializer):
    algorithm = serializers.CharField()
    seconds = serializers.FloatField(help_text="worker seconds of the whole run on one CPU worker")
    peak_bytes = serializers.IntegerField(help_text="estimated peak memory of the run's largest batch")
    drivers = serializers.DictField(help_text="what drives the cost: sources, nodes, edges, theta, iterations...")
    time_param = serializers.CharField(help_text="the parameter that drives the time")
    memory_param = serializers.CharField(help_text="the parameter that drives the memory")


class BudgetSerializer(serializers.Serializer):
    run_seconds = serializers.IntegerField()
    run_memory_bytes = serializers.IntegerField()


class RunEstimateSerializer(serializers.Serializer):
    algorithm = serializers.CharField()
    estimate = EstimateNumbersSerializer()
    budget = BudgetSerializer(help_text="the workspace's budget (its own, or the deployment's defaults)")
    fits = serializers.BooleanField(help_text="false: starting this run would answer 400 with ``errors``")
    errors = serializers.DictField(child=serializers.CharField(), help_text="{parameter: why it does not fit}")
    summary = serializers.CharField(help_text="one line for a form")


def _params(request, workspace, algorithm: str) -> tuple[dict, object]:
    q = request.query_params
    out: dict = {}
    collection = None
    for name in PARAMS[algorithm]:
        raw = q.getlist(name) if name == "accounts" else q.get(name)
        if raw is None or raw == "" or raw == []:
            continue
        if name == "accounts":
            out[name] = [a.strip() for part in raw for a in part.replace("\n", ",").split(",") if a.strip()]
        elif name in BOOLEANS:
            if raw.lower() not in TRUE + FALSE:
                raise ValidationError({name: f"true or false, not {raw!r}"})
            out[name] = raw.lower() in TRUE
        elif name == "publisher" and algorithm == "influence_max":
            try:
                out[name] = selectors.account_get(workspace, int(raw)).pk
            except ValueError:
                raise ValidationError({name: f"not a Twitter id: {raw!r}"}) from None
        elif name == "collection":
            try:
                collection = selectors.collection_get(workspace, int(raw))
            except ValueError:
                raise ValidationError({name: f"not an integer: {raw!r}"}) from None
            out[name] = collection.pk
        else:
            out[name] = raw
    return out, collection


@extend_schema(
    summary="Estimate a run's cost before starting it",
    description="What a run of ``algorithm`` with these parameters (the start endpoint's, as query parameters; "
    "``publisher`` a Twitter id, ``accounts`` comma-separated) would cost on one CPU worker — seconds and the peak "
    "memory of its largest batch — and whether the workspace's budget allows it. Starting a run with ``fits`` "
    "false answers 400 with the same ``errors``. Nothing is started or stored.",
    parameters=[
        OpenApiParameter("algorithm", str, enum=list(ALGORITHMS), required=True),
        *[
            OpenApiParameter(name, str, required=False, description=f"a parameter of the run ({', '.join(algs)})")
            for name, algs in sorted(
                {n: [a for a in ALGORITHMS if n in PARAMS[a]] for ps in PARAMS.values() for n in ps}.items()
            )
        ],
    ],
    responses=RunEstimateSerializer,
)
@api_view(["GET"])
def run_estimate(request, ws: str):
    """The estimate of a run not started yet, and the workspace's budget."""
    workspace = selectors.workspace_for_user(request.user, ws)
    algorithm = request.query_params.get("algorithm", "")
    if algorithm not in ALGORITHMS:
        raise ValidationError({"algorithm": f"must be one of {', '.join(ALGORITHMS)}"})
    params, collection = _params(request, workspace, algorithm)
    try:
        body = budgets.preview(workspace=workspace, algorithm=algorithm, params=params, collection=collection)
    except DjangoValidationError as exc:
        raise _django_errors(exc) from None
    return Response(body)
