"""REST API v1 of who amplifies whom (docs/wtf.md): an account's lists (read them, start their run), a
publisher's watch list (read it, start its run), both as downloads. Accounts are looked up through the caller's
workspace: another workspace's answer 404 like missing ones. Twitter ids are strings."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.response import Response

from compute.results import DEFAULT_EPSILON, DEFAULT_WALKS, WTF_METHODS

from .. import exports, exports_wtf, selectors, services
from ..algorithms.wtf import (
    DEFAULT_CIRCLE,
    DEFAULT_MAX_ITER,
    DEFAULT_SPREADERS,
    DEFAULT_TOP,
    MAX_CIRCLE,
    MAX_MAX_ITER,
    MAX_SEEDS,
    MAX_TOP,
    RUN_DIRECTIONS,
)
from .serializers import INFERRED_GRAPH_HELP, ComputeRunSerializer, InferredGraphSerializer, inferred_graph_data
from .views import _django_errors, _export_format, _export_view, _stream

# --- representations ---------------------------------------------------------------------------------------------


MAX_ITER_HELP = (
    f"iteration cap of PageRank and Money (default {DEFAULT_MAX_ITER}); a result that stopped at the cap without "
    "converging is computed again with a higher one (150 always converges PageRank)"
)


METHOD_HELP = (
    "how the circle of trust's PageRank is computed: exact (the precise power iteration, default), push (local "
    "forward push), fora (push, then random walks from its residual) or walks (random walks from the seed, no push): "
    "the local ones are estimates (docs/wtf.md)"
)
EPSILON_HELP = f"push and fora: the push threshold per out-edge, in (0, 1) (default {DEFAULT_EPSILON:g})"
WALKS_HELP = (
    f"fora: random walks per unit of the push's residual; walks: random walks from the seed; 1 to 1e9 "
    f"(default {DEFAULT_WALKS:g})"
)


class _MethodFields(serializers.Serializer):
    method = serializers.ChoiceField(choices=WTF_METHODS, default="exact", help_text=METHOD_HELP)
    epsilon = serializers.FloatField(required=False, help_text=EPSILON_HELP)
    walks = serializers.FloatField(required=False, help_text=WALKS_HELP)


class WtfRunStartSerializer(_MethodFields):
    direction = serializers.ChoiceField(choices=RUN_DIRECTIONS, default="both")
    circle = serializers.IntegerField(min_value=1, max_value=MAX_CIRCLE, default=DEFAULT_CIRCLE)
    top = serializers.IntegerField(min_value=1, max_value=MAX_TOP, default=DEFAULT_TOP)
    max_iter = serializers.IntegerField(min_value=1, max_value=MAX_MAX_ITER, required=False, help_text=MAX_ITER_HELP)


class WatchListStartSerializer(_MethodFields):
    spreaders = serializers.IntegerField(min_value=1, max_value=MAX_SEEDS, default=DEFAULT_SPREADERS)
    circle = serializers.IntegerField(min_value=1, max_value=MAX_CIRCLE, default=DEFAULT_CIRCLE)
    top = serializers.IntegerField(min_value=1, max_value=MAX_TOP, default=DEFAULT_TOP)
    max_iter = serializers.IntegerField(min_value=1, max_value=MAX_MAX_ITER, required=False, help_text=MAX_ITER_HELP)


class WtfEntrySerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField()
    score = serializers.FloatField()
    ppr = serializers.FloatField(help_text="the seed's personalized PageRank of the account")


class WtfResultSerializer(serializers.Serializer):
    direction = serializers.ChoiceField(choices=["follows", "followers"])
    circle = serializers.IntegerField()
    top = serializers.IntegerField()
    in_graph = serializers.BooleanField(help_text="false: the account has no follow edge; the lists are empty")
    circle_size = serializers.IntegerField()
    ppr_iterations = serializers.IntegerField()
    ppr_converged = serializers.BooleanField()
    money_iterations = serializers.IntegerField()
    money_converged = serializers.BooleanField()
    max_iter = serializers.IntegerField(help_text="the iteration cap it was computed with")
    method = serializers.ChoiceField(choices=WTF_METHODS, help_text="how its PageRank was computed (exact: precise)")
    epsilon = serializers.FloatField(allow_null=True, help_text="push and fora: the push threshold it used")
    walks = serializers.FloatField(
        allow_null=True, help_text="fora: the walks per unit of residual it used; walks: the walks from the seed"
    )
    computed_at = serializers.DateTimeField()
    run = serializers.IntegerField(allow_null=True)
    relevance = WtfEntrySerializer(many=True, help_text="Money's authorities (followers: likely next amplifiers)")
    similarity = WtfEntrySerializer(many=True, help_text="Money's hubs (follows: look-alike accounts)")


class WtfAccountSerializer(serializers.Serializer):
    account = serializers.CharField()
    screen_name = serializers.CharField()
    results = WtfResultSerializer(many=True, help_text="the newest result of each direction")
    run = ComputeRunSerializer(allow_null=True, help_text="a run computing this account now")
    inferred_graph = InferredGraphSerializer(allow_null=True, help_text=INFERRED_GRAPH_HELP)


class WatchListSpreaderSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField()
    computed = serializers.BooleanField()


class WatchListPointerSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField()
    rank = serializers.IntegerField(help_text="the account's rank in this spreader's likely next amplifiers")
    score = serializers.FloatField()


class WatchListAccountSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField()
    score = serializers.FloatField(help_text="Σ Money relevance over the spreaders pointing to it")
    already_spreading = serializers.BooleanField()
    pointed_by = WatchListPointerSerializer(many=True)


class WatchListSerializer(serializers.Serializer):
    publisher = serializers.CharField()
    run = serializers.IntegerField(allow_null=True, help_text="the run of the watch list; null: never computed")
    params = serializers.DictField()
    computed_at = serializers.DateTimeField(allow_null=True)
    spreaders = WatchListSpreaderSerializer(many=True)
    accounts = WatchListAccountSerializer(many=True)
    active = ComputeRunSerializer(allow_null=True, help_text="a run of the watch list going now")
    inferred_graph = InferredGraphSerializer(allow_null=True, help_text=INFERRED_GRAPH_HELP)


# --- endpoints ----------------------------------------------------------------------------------------------------


def _start(workspace, user, params: dict) -> Response:
    try:
        run = services.compute_run_start(workspace=workspace, tweet_pks=[], user=user, algorithm="wtf", params=params)
    except DjangoValidationError as exc:
        raise _django_errors(exc) from None
    return Response(ComputeRunSerializer(run).data, status=status.HTTP_201_CREATED)


def _run(run):
    return ComputeRunSerializer(run).data if run is not None else None


def _inferred(workspace, results: list[dict]) -> dict | None:
    """``inferred_graph`` of the newest of ``results`` (each with its ``run`` id), or of the graph now."""
    runs = [r["run"] for r in results if r.get("run") is not None]
    run = selectors.run_get(workspace, max(runs)) if runs else None
    return inferred_graph_data(run, workspace)


@extend_schema(methods=["GET"], responses=WtfAccountSerializer)
@extend_schema(
    methods=["POST"],
    request=WtfRunStartSerializer,
    responses={201: ComputeRunSerializer},
    description="Compute the account's look-alike accounts (direction follows) and likely next amplifiers "
    "(followers); the run's batch is queued when the request commits.",
)
@api_view(["GET", "POST"])
def account_wtf(request, ws: str, twitter_id: int):
    """An account's look-alikes and likely next amplifiers (GET), or compute them (POST)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, twitter_id)
    if request.method == "POST":
        ser = WtfRunStartSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        return _start(workspace, request.user, {"accounts": [str(acc.twitter_id)], **ser.validated_data})
    data = exports_wtf.account_data(workspace, acc)
    return Response(
        data
        | {
            "run": _run(selectors.wtf_active_run(workspace, account=acc)),
            "inferred_graph": _inferred(workspace, data.get("results") or []),
        }
    )


@extend_schema(methods=["GET"], responses=WatchListSerializer)
@extend_schema(
    methods=["POST"],
    request=WatchListStartSerializer,
    responses={201: ComputeRunSerializer},
    description="Compute the publisher's watch list: the likely next amplifiers of its top spreaders (by total "
    "influence, all time); its batches are queued when the request commits.",
)
@api_view(["GET", "POST"])
def publisher_watchlist(request, ws: str, publisher: int):
    """A publisher's watch list of likely next amplifiers (GET), or compute it (POST)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher)
    if request.method == "POST":
        ser = WatchListStartSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        params = {"publisher": str(acc.twitter_id), "direction": "followers", **ser.validated_data}
        return _start(workspace, request.user, params)
    data = exports_wtf.watchlist_data(workspace, acc)
    return Response(
        data
        | {
            "active": _run(selectors.wtf_active_run(workspace, publisher=acc)),
            "inferred_graph": _inferred(workspace, [data] if data.get("run") is not None else []),
        }
    )


@_export_view(formats=exports.TABLE_FORMATS)
def account_wtf_export(request, ws: str, twitter_id: int):
    """``GET .../accounts/<id>/wtf/export/?format=csv|json``: the account's lists."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, twitter_id)
    fmt = _export_format(request, exports.TABLE_FORMATS)
    writer = exports_wtf.account_csv if fmt == "csv" else exports_wtf.account_json
    name = exports.filename(workspace, "account", acc.twitter_id, "wtf", ext=fmt)
    return _stream(writer(workspace, acc), fmt=fmt, name=name)


@_export_view(formats=exports.TABLE_FORMATS)
def publisher_watchlist_export(request, ws: str, publisher: int):
    """``GET .../publishers/<id>/watchlist/export/?format=csv|json``: the publisher's watch list."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher)
    fmt = _export_format(request, exports.TABLE_FORMATS)
    writer = exports_wtf.watchlist_csv if fmt == "csv" else exports_wtf.watchlist_json
    name = exports.filename(workspace, "publisher", acc.twitter_id, "watchlist", ext=fmt)
    return _stream(writer(workspace, acc), fmt=fmt, name=name)


__all__ = ["account_wtf", "account_wtf_export", "publisher_watchlist", "publisher_watchlist_export"]
