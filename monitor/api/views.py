"""REST API v1. Every object is looked up through the caller's workspace, so another workspace's objects
answer 404 exactly like missing ones."""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.exceptions import NotAcceptable, PermissionDenied, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from monitor.alerts import selectors as alert_selectors
from monitor.alerts import services as alert_services

from .. import exports, selectors, services
from ..models import Label
from ..services import compute_run_cancel, compute_run_retry
from ..services.uploads import too_many_files_message
from .paging import MAX_PAGE_SIZE, Pagination, page_bounds, page_of
from .paging import PARAMETERS as PAGINATION
from .serializers import (
    AccountDetailSerializer,
    AlertRuleCreatedSerializer,
    AlertRuleSerializer,
    AlertSerializer,
    ApiTokenCreatedSerializer,
    ApiTokenSerializer,
    CollectionSerializer,
    CollectionUploadSerializer,
    CompareSerializer,
    ComputeRunSerializer,
    PaginatedAlertList,
    PaginatedAlertRuleList,
    PaginatedCollectionList,
    PaginatedComputeRunList,
    PublisherSerializer,
    RankingPageSerializer,
    RankingRowSerializer,
    TweetDetailSerializer,
    WorkspaceSerializer,
)

WINDOW = [
    OpenApiParameter("from", OpenApiTypes.DATE, description="first UTC day of the window (YYYY-MM-DD)"),
    OpenApiParameter("to", OpenApiTypes.DATE, description="last UTC day of the window (YYYY-MM-DD)"),
]


@extend_schema(
    summary="List your workspaces",
    parameters=PAGINATION,
    responses=WorkspaceSerializer(many=True),
    description="The workspaces you are a member of (every workspace for a superuser), a plain list.",
)
@api_view(["GET"])
def workspaces(request):
    qs = selectors.workspaces_for_user(request.user)
    if getattr(request.auth, "workspace_id", None) is not None:  # a token for one workspace sees only that one
        qs = qs.filter(pk=request.auth.workspace_id)
    rows = page_of(list(qs), request, default=MAX_PAGE_SIZE)
    return Response(WorkspaceSerializer(rows, many=True).data)


@extend_schema(
    methods=["GET"],
    summary="List the collections",
    operation_id="workspaces_collections_list",
    parameters=PAGINATION,
    responses=PaginatedCollectionList,
)
@extend_schema(
    methods=["POST"],
    summary="Upload a collection",
    request={"multipart/form-data": CollectionUploadSerializer},
    responses={201: CollectionSerializer},
    description="Upload files (repeat `files`); the import (and compute) start when the request commits.",
)
@api_view(["GET", "POST"])
@parser_classes([MultiPartParser, FormParser, JSONParser])
def collections(request, ws: str):
    workspace = selectors.workspace_for_user(request.user, ws)
    if request.method == "GET":
        pager = Pagination()
        qs = selectors.collections_list(workspace, limit=10_000)
        page = pager.paginate_queryset(qs, request)
        return pager.get_paginated_response(CollectionSerializer(page, many=True).data)
    try:
        request.data  # noqa: B018 (parsed here: a refusal of the multipart body is answered as a field error)
    except TooManyFilesSent:
        raise ValidationError({"files": [too_many_files_message()]}) from None
    # a plain dict, never request.data.copy(): a QueryDict copy deep-copies its values, and an upload above
    # FILE_UPLOAD_MAX_MEMORY_SIZE is an open temporary file, which cannot be copied (a 500 for every large upload)
    if hasattr(request.data, "getlist"):
        data = {k: request.data.get(k) for k in request.data if k != "files"}
        data["files"] = request.FILES.getlist("files")
    else:
        data = dict(request.data)
    ser = CollectionUploadSerializer(data=data)
    ser.is_valid(raise_exception=True)
    v = ser.validated_data
    try:
        c = services.collection_create(
            workspace=workspace,
            files=v["files"],
            user=request.user,
            name=v.get("name", ""),
            mode=v["mode"],
            validate_only=v["validate_only"],
            format=v["format"],
            compute=v["compute"],
        )
    except DjangoValidationError as exc:
        raise ValidationError(exc.message_dict if hasattr(exc, "message_dict") else exc.messages) from None
    c.refresh_from_db()
    return Response(CollectionSerializer(c).data, status=status.HTTP_201_CREATED)


@extend_schema(summary="Read a collection: status, progress, counts, report", responses=CollectionSerializer)
@api_view(["GET"])
def collection_detail(request, ws: str, pk: int):
    workspace = selectors.workspace_for_user(request.user, ws)
    return Response(CollectionSerializer(selectors.collection_get(workspace, pk)).data)


@extend_schema(
    summary="List the compute runs",
    operation_id="workspaces_runs_list",
    parameters=PAGINATION,
    responses=PaginatedComputeRunList,
)
@api_view(["GET"])
def runs(request, ws: str):
    workspace = selectors.workspace_for_user(request.user, ws)
    pager = Pagination()
    page = pager.paginate_queryset(selectors.runs_list(workspace, limit=10_000), request)
    return pager.get_paginated_response(ComputeRunSerializer(page, many=True).data)


@extend_schema(summary="Read a compute run", responses=ComputeRunSerializer)
@api_view(["GET"])
def run_detail(request, ws: str, pk: int):
    workspace = selectors.workspace_for_user(request.user, ws)
    return Response(ComputeRunSerializer(selectors.run_get(workspace, pk)).data)


def _run_action(request, ws: str, pk: int, action) -> Response:
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.run_get(workspace, pk)
    try:
        run = action(run)
    except DjangoValidationError as exc:
        raise _django_errors(exc) from exc
    return Response(ComputeRunSerializer(run).data)


@extend_schema(
    summary="Cancel a compute run",
    request=None,
    responses={200: ComputeRunSerializer, 400: OpenApiResponse(description="the run is not queued or running")},
    description="Cancel a queued or running run: finished batches keep their results, a batch still computing "
    "stores nothing, batches not started do nothing. Retry it to compute the rest.",
)
@api_view(["POST"])
def run_cancel(request, ws: str, pk: int):
    return _run_action(request, ws, pk, lambda r: compute_run_cancel(run=r, user=request.user))


@extend_schema(
    summary="Retry a compute run",
    request=None,
    responses={200: ComputeRunSerializer, 400: OpenApiResponse(description="the run is not failed or cancelled")},
    description="Queue the unfinished batches of a failed or cancelled run again.",
)
@api_view(["POST"])
def run_retry(request, ws: str, pk: int):
    return _run_action(request, ws, pk, lambda r: compute_run_retry(run=r))


def _window(request, names: tuple[str, str] = ("from", "to")) -> selectors.Window:
    """The window of UTC days the query parameters ``names`` give (each a YYYY-MM-DD, or absent: open)."""

    def day(name: str) -> dt.date | None:
        raw = request.query_params.get(name)
        if not raw:
            return None
        try:
            return dt.date.fromisoformat(raw)
        except ValueError:
            raise ValidationError({name: f"not a date (YYYY-MM-DD): {raw!r}"}) from None

    return selectors.Window(day(names[0]), day(names[1]))


def _int_param(request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        v = int(raw)
    except ValueError:
        raise ValidationError({name: f"not an integer: {raw!r}"}) from None
    if not lo <= v <= hi:
        raise ValidationError({name: f"must be between {lo} and {hi}"})
    return v


@extend_schema(
    summary="Rank the accounts by influence (all publishers, or one publisher's spreaders)",
    parameters=[
        OpenApiParameter("aggregate", str, enum=list(selectors.AGGREGATES), default="total"),
        *WINDOW,
        *PAGINATION,
    ],
    responses=RankingPageSerializer,
)
@api_view(["GET"])
def ranking(request, ws: str, publisher: int | None = None):
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher) if publisher is not None else None
    aggregate = request.query_params.get("aggregate", "total")
    if aggregate not in selectors.AGGREGATES:
        raise ValidationError({"aggregate": f"must be one of {', '.join(selectors.AGGREGATES)}"})
    limit, offset = page_bounds(request)
    page = selectors.ranking(
        workspace, publisher=acc, aggregate=aggregate, window=_window(request), limit=limit, offset=offset
    )
    return Response(
        {
            "publisher": str(publisher) if publisher is not None else None,
            "aggregate": aggregate,
            "unit": page.unit,
            "tweets": page.tweets,
            "count": page.total_rows,
            "results": RankingRowSerializer(page.rows, many=True).data,
        }
    )


@extend_schema(
    summary="Compare 2 to 5 publishers: their top spreaders, the overlap per pair, the shared accounts",
    parameters=[
        OpenApiParameter("p", str, many=True, required=True, description="a publisher's Twitter id, 2 to 5 times"),
        OpenApiParameter("aggregate", str, enum=list(selectors.AGGREGATES), default="total"),
        OpenApiParameter("top", int, default=10, description="how many top spreaders of each (1 to 100)"),
        OpenApiParameter(
            "labels", str, many=True, enum=[c for c, _ in Label.choices], description="truth labels (none: every label)"
        ),
        *WINDOW,
    ],
    responses=CompareSerializer,
)
@api_view(["GET"])
def compare(request, ws: str):
    workspace = selectors.workspace_for_user(request.user, ws)
    raw = request.query_params.getlist("p")
    bad = [v for v in raw if not v.strip().isdigit()]
    if bad:
        raise ValidationError({"p": f"not a Twitter id: {bad[0]!r}"})
    try:
        pubs = selectors.compare_publishers_get(workspace, [int(v) for v in raw])
    except selectors.CompareError as e:
        raise ValidationError({"p": str(e)}) from None
    aggregate = request.query_params.get("aggregate", "total")
    if aggregate not in selectors.AGGREGATES:
        raise ValidationError({"aggregate": f"must be one of {', '.join(selectors.AGGREGATES)}"})
    top = _int_param(request, "top", 10, 1, 100)
    labels = request.query_params.getlist("labels")
    unknown = [v for v in labels if v not in Label.values]
    if unknown:
        raise ValidationError({"labels": f"not a truth label: {unknown[0]!r} (one of {', '.join(Label.values)})"})
    cmp = selectors.compare_publishers(
        workspace, pubs, window=_window(request), aggregate=aggregate, top=top, labels=labels or None
    )
    ids = [str(p.twitter_id) for p in pubs]
    return Response(
        {
            "aggregate": aggregate,
            "top": top,
            "columns": [
                {
                    "publisher": str(p.twitter_id),
                    "screen_name": p.screen_name or "",
                    "unit": col.unit,
                    "tweets": col.tweets,
                    "count": col.total_rows,
                    "results": RankingRowSerializer(col.rows, many=True).data,
                }
                for p, col in zip(pubs, cmp.columns, strict=True)
            ],
            "pairs": [
                {"a": str(x["a"].twitter_id), "b": str(x["b"].twitter_id), **{k: x[k] for k in ("overlap", "jaccard")}}
                for x in cmp.pairs
            ],
            "shared": [
                {
                    "twitter_id": str(s["twitter_id"]),
                    "screen_name": s["screen_name"] or "",
                    "in_top": s["in_top"],
                    "cells": [
                        {"publisher": i, "rank": c["rank"], "score": c["score"]} for i, c in zip(ids, s["cells"])
                    ],
                }
                for s in cmp.shared
            ],
        }
    )


# --- exports (streamed downloads) ---------------------------------------------------------------------------------
#
# The export endpoints take their format from ``?format=`` (as in ``ranking/export/?format=csv``), which is also
# the name of DRF's URL format override: left alone, DRF would look for a renderer called "csv" and answer 404.
# So these views use a content negotiation that ignores the override (``?as=`` is accepted as a synonym), and
# that never answers 406 to an ``Accept: text/csv``: the export is a StreamingHttpResponse that DRF passes
# through untouched, and only errors (400, 404) are rendered, as JSON.


class ExportNegotiation(DefaultContentNegotiation):
    class settings:  # stands in for api_settings, of which only URL_FORMAT_OVERRIDE is read here
        URL_FORMAT_OVERRIDE = None

    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            return renderers[0], renderers[0].media_type


def _export_view(*parameters: OpenApiParameter, formats: tuple[str, ...]):
    def wrap(func):
        func.content_negotiation_class = ExportNegotiation  # read by @api_view, which must wrap this
        fmt = OpenApiParameter("format", str, enum=list(formats), default=formats[0])
        schema = extend_schema(
            parameters=[fmt, *parameters],
            responses={
                (200, exports.CONTENT_TYPES[f]): OpenApiResponse(OpenApiTypes.BINARY, description="streamed file")
                for f in formats
            },
        )
        return schema(api_view(["GET"])(func))

    return wrap


def _export_format(request, choices: tuple[str, ...]) -> str:
    fmt = request.query_params.get("format") or request.query_params.get("as") or choices[0]
    if fmt not in choices:
        raise ValidationError({"format": f"must be one of {', '.join(choices)}"})
    return fmt


def _stream(chunks, *, fmt: str, name: str) -> StreamingHttpResponse:
    r = StreamingHttpResponse(chunks, content_type=exports.CONTENT_TYPES[fmt])
    r["Content-Disposition"] = f'attachment; filename="{name}"'
    r["Cache-Control"] = "private, no-store"
    return r


@_export_view(
    OpenApiParameter("aggregate", str, enum=list(selectors.AGGREGATES), default="total"),
    *WINDOW,
    formats=exports.TABLE_FORMATS,
)
def ranking_export(request, ws: str, publisher: int | None = None):
    """``GET .../ranking/export/?format=csv|json&aggregate=&from=&to=``: every ranked account, streamed."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher) if publisher is not None else None
    fmt = _export_format(request, exports.TABLE_FORMATS)
    aggregate = request.query_params.get("aggregate", "total")
    if aggregate not in selectors.AGGREGATES:
        raise ValidationError({"aggregate": f"must be one of {', '.join(selectors.AGGREGATES)}"})
    window = _window(request)
    if window.start and window.end and window.start > window.end:
        raise ValidationError({"from": "the window's start is after its end"})
    writer = exports.ranking_csv if fmt == "csv" else exports.ranking_json
    parts = ["ranking"] if acc is None else ["publisher", acc.twitter_id, "ranking"]
    name = exports.filename(workspace, *parts, aggregate, window=window, ext=fmt)
    return _stream(writer(workspace, publisher=acc, aggregate=aggregate, window=window), fmt=fmt, name=name)


@_export_view(*WINDOW, OpenApiParameter("max_cascades", int), formats=exports.GRAPH_FORMATS)
def publisher_network(request, ws: str, publisher: int):
    """``GET .../publishers/<id>/network/?format=gexf|graphml&from=&to=&max_cascades=``."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher)
    fmt = _export_format(request, exports.GRAPH_FORMATS)
    window = _window(request)
    if window.start and window.end and window.start > window.end:
        raise ValidationError({"from": "the window's start is after its end"})
    max_cascades = _int_param(request, "max_cascades", 2000, 1, 50_000)
    writer = exports.publisher_network_gexf if fmt == "gexf" else exports.publisher_network_graphml
    name = exports.filename(workspace, "publisher", acc.twitter_id, "network", window=window, ext=fmt)
    return _stream(writer(workspace, acc, window=window, max_cascades=max_cascades), fmt=fmt, name=name)


@_export_view(formats=exports.GRAPH_FORMATS)
def tweet_graph(request, ws: str, tweet_id: int):
    """``GET .../tweets/<id>/graph/?format=gexf|graphml``: one cascade's spreading graph."""
    workspace = selectors.workspace_for_user(request.user, ws)
    tweet = selectors.tweet_get(workspace, tweet_id)
    fmt = _export_format(request, exports.GRAPH_FORMATS)
    writer = exports.cascade_gexf if fmt == "gexf" else exports.cascade_graphml
    return _stream(writer(tweet), fmt=fmt, name=exports.filename(workspace, "tweet", tweet.tweet_id, ext=fmt))


# --- publishers, accounts, cascades -------------------------------------------------------------------------------


def _ref(account) -> dict:
    return {"twitter_id": str(account.twitter_id), "screen_name": account.screen_name}


@extend_schema(
    summary="List the publishers",
    parameters=PAGINATION,
    responses=PublisherSerializer(many=True),
    description="The workspace's publishers with computed tweets and their reach, busiest first; a plain list "
    f"({MAX_PAGE_SIZE} rows unless `page_size` says fewer).",
)
@api_view(["GET"])
def publishers(request, ws: str):
    workspace = selectors.workspace_for_user(request.user, ws)
    limit, offset = page_bounds(request, default=MAX_PAGE_SIZE)
    rows = [
        {
            "account": {"twitter_id": str(r["twitter_id"]), "screen_name": r["screen_name"]},
            "tweets": r["tweets"],
            "reach": r["reach"],
            "first_day": r["first"],
            "last_day": r["last"],
        }
        for r in selectors.publishers_summary(workspace, limit=limit, offset=offset)
    ]
    return Response(PublisherSerializer(rows, many=True).data)


@extend_schema(summary="Read an account's influence", parameters=WINDOW, responses=AccountDetailSerializer)
@api_view(["GET"])
def account_detail(request, ws: str, twitter_id: int):
    """An account's influence per publisher and per day (in the window), its most influential cascades, its
    follower counts, and whom it amplified / who amplified it."""
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, twitter_id)
    s = selectors.account_summary(workspace, acc, window=_window(request))
    amp = selectors.account_amplification(workspace, acc)
    data = {
        "twitter_id": str(acc.twitter_id),
        "screen_name": acc.screen_name,
        "total": s["total"],
        "cascades": s["n_cascades"],
        "published": {"tweets": s["published"]["n"] or 0, "reach": s["published"]["reach"]},
        "per_publisher": [
            {
                "publisher": {
                    "twitter_id": str(r["publisher__twitter_id"]),
                    "screen_name": r["publisher__screen_name"],
                },
                "total": r["total"],
                "cascades": r["n_cascades"],
            }
            for r in s["per_publisher"]
        ],
        "per_day": [{"day": r["day"], "total": r["total"], "cascades": r["n_cascades"]} for r in s["per_day"]],
        "top_cascades": [
            {
                "tweet_id": str(c.tweet.tweet_id),
                "publisher": str(c.publisher.twitter_id),
                "day": c.day,
                "label": c.label,
                "influence": c.influence,
                "role": c.role,
            }
            for c in s["cascades"]
        ],
        "follower_counts": [{"observed_at": f.observed_at, "count": f.count} for f in s["follower_counts"]],
        "amplification": {
            "amplified": [{"account": _ref(r["account"]), "cascades": r["cascades"]} for r in amp["amplified"]],
            "amplified_by": [{"account": _ref(r["account"]), "cascades": r["cascades"]} for r in amp["amplified_by"]],
            "cascades_read": amp["cascades_read"],
        },
    }
    return Response(AccountDetailSerializer(data).data)


@extend_schema(summary="Read a cascade: participants and spreading edges", responses=TweetDetailSerializer)
@api_view(["GET"])
def tweet_detail(request, ws: str, tweet_id: int):
    """One cascade: the tweet's facts, every participant with its influence and role, and the spreading edges
    ``[src, dst]`` as Twitter ids (``src`` could have seen the tweet from ``dst``)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    t = selectors.tweet_get(workspace, tweet_id)
    g = selectors.cascade_graph(t)
    tid = {n.account_id: str(n.account.twitter_id) for n in g["nodes"]}
    missing = {int(x) for x in set(g["src"].tolist()) | set(g["dst"].tolist())} - set(tid)
    if missing:
        tid.update({pk: str(x) for pk, x in selectors.twitter_ids(missing).items()})
    data = {
        "tweet_id": str(t.tweet_id),
        "author": _ref(t.author),
        "created_at": t.created_at,
        "text": t.text,
        "label": t.label,
        "compute_status": t.compute_status,
        "graph_source": t.graph_source,
        "n_participants": t.n_participants,
        "n_edges": t.n_edges,
        "n_orphans": t.n_orphans,
        "reach": t.reach,
        "unit": t.unit,
        "participants": [
            {"account": _ref(n.account), "influence": n.influence, "followers": n.followers, "role": n.role}
            for n in g["nodes"]
        ],
        "edges": [[tid[s], tid[d]] for s, d in zip(g["src"].tolist(), g["dst"].tolist(), strict=True)],
    }
    return Response(TweetDetailSerializer(data).data)


# --- alerts: the caller's rules and inbox ---------------------------------------------------------------------------


def _django_errors(exc: DjangoValidationError) -> ValidationError:
    return ValidationError(exc.message_dict if hasattr(exc, "message_dict") else exc.messages)


@extend_schema(
    methods=["GET"],
    summary="List your alert rules",
    operation_id="workspaces_alerts_rules_list",
    parameters=PAGINATION,
    responses=PaginatedAlertRuleList,
)
@extend_schema(
    methods=["POST"],
    summary="Create an alert rule",
    request=AlertRuleSerializer,
    responses={201: AlertRuleCreatedSerializer},
)
@api_view(["GET", "POST"])
def alert_rules(request, ws: str):
    """The caller's alert rules in the workspace; POST creates one (its webhook secret is returned this once)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    if request.method == "GET":
        pager = Pagination()
        qs = alert_selectors.rules_for_owner(request.user, workspace).order_by("pk")
        page = pager.paginate_queryset(qs, request)
        return pager.get_paginated_response(AlertRuleSerializer(page, many=True).data)
    ser = AlertRuleSerializer(data=request.data, context={"workspace": workspace})
    ser.is_valid(raise_exception=True)
    v = dict(ser.validated_data)
    publisher = v.pop("publisher", None)
    for f in ("is_active", "muted_until"):
        v.pop(f, None)
    try:
        rule = alert_services.rule_create(workspace=workspace, owner=request.user, publisher=publisher, **v)
        if "is_active" in ser.validated_data:
            alert_services.rule_mute(rule=rule, muted=not ser.validated_data["is_active"])
        if ser.validated_data.get("muted_until"):
            alert_services.rule_snooze(rule=rule, until=ser.validated_data["muted_until"])
    except DjangoValidationError as exc:
        raise _django_errors(exc) from None
    return Response(AlertRuleCreatedSerializer(rule).data, status=status.HTTP_201_CREATED)


@extend_schema(methods=["GET"], summary="Read an alert rule", responses=AlertRuleSerializer)
@extend_schema(
    methods=["PATCH"],
    summary="Change, mute or snooze an alert rule",
    request=AlertRuleSerializer,
    responses=AlertRuleSerializer,
)
@extend_schema(methods=["DELETE"], summary="Delete an alert rule", responses={204: None})
@api_view(["GET", "PATCH", "DELETE"])
def alert_rule_detail(request, ws: str, pk: int):
    """One of the caller's rules. PATCH changes parameters, scope and channels; ``is_active`` mutes or unmutes it
    and ``muted_until`` snoozes it (null: wake up)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    rule = alert_selectors.rule_get(request.user, workspace, pk)
    if request.method == "GET":
        return Response(AlertRuleSerializer(rule).data)
    if request.method == "DELETE":
        alert_services.rule_delete(rule=rule)
        return Response(status=status.HTTP_204_NO_CONTENT)
    ser = AlertRuleSerializer(rule, data=request.data, partial=True, context={"workspace": workspace})
    ser.is_valid(raise_exception=True)
    v = dict(ser.validated_data)
    is_active = v.pop("is_active", None)
    snooze = v.pop("muted_until", ...)
    kwargs = {"publisher": v.pop("publisher")} if "publisher" in v else {}
    try:
        alert_services.rule_update(rule=rule, **kwargs, **v)
    except DjangoValidationError as exc:
        raise _django_errors(exc) from None
    if is_active is not None:
        alert_services.rule_mute(rule=rule, muted=not is_active)
    if snooze is not ...:
        alert_services.rule_snooze(rule=rule, until=snooze)
    return Response(AlertRuleSerializer(rule).data)


@extend_schema(
    summary="List your alerts",
    parameters=[*PAGINATION, OpenApiParameter("unread", bool, description="only the unread alerts")],
    responses=PaginatedAlertList,
)
@api_view(["GET"])
def alerts(request, ws: str):
    """The caller's inbox in the workspace (alerts of their rules with the inbox on), newest first."""
    workspace = selectors.workspace_for_user(request.user, ws)
    unread = request.query_params.get("unread", "").lower() in ("1", "true", "yes")
    pager = Pagination()
    page = pager.paginate_queryset(alert_selectors.inbox_for_user(request.user, workspace, unread_only=unread), request)
    return pager.get_paginated_response(AlertSerializer(page, many=True).data)


@extend_schema(summary="Mark an alert read", request=None, responses=AlertSerializer)
@api_view(["POST"])
def alert_read(request, ws: str, pk: int):
    """Mark one alert of the caller's inbox as read (idempotent)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    alert = alert_selectors.inbox_alert_get(request.user, workspace, pk)
    return Response(AlertSerializer(alert_services.alert_mark_read(alert=alert)).data)


# --- API tokens ------------------------------------------------------------------------------------------------


def _no_scoped_token(request) -> None:
    """A token limited to one workspace does not manage the user's other credentials."""
    if getattr(request.auth, "workspace_id", None) is not None:
        raise PermissionDenied("a token limited to one workspace cannot list or revoke tokens")


@extend_schema(methods=["GET"], responses=ApiTokenSerializer(many=True))
@extend_schema(
    methods=["POST"],
    request=ApiTokenSerializer,
    responses={201: ApiTokenCreatedSerializer},
    description="Create a token (from a logged-in session only: a token cannot make tokens). Its key is in this "
    "answer and nowhere else. It expires after `days` (default SPREADWATCH_API_TOKEN_DAYS) and stops working when "
    "your password changes.",
)
@api_view(["GET", "POST"])
def tokens(request):
    """The user's API tokens (GET), or create one (POST; the key is shown once)."""
    _no_scoped_token(request)
    if request.method == "GET":
        return Response(ApiTokenSerializer(selectors.api_tokens_for_user(request.user), many=True).data)
    if request.auth is not None:  # authenticated by a token, not a session
        raise PermissionDenied("tokens are made from a logged-in session, not with another token")
    ser = ApiTokenSerializer(data=request.data)
    ser.is_valid(raise_exception=True)
    v = ser.validated_data
    workspace = selectors.workspace_for_user(request.user, v["workspace"]) if v.get("workspace") else None
    try:
        token, key = services.api_token_create(
            user=request.user, workspace=workspace, name=v.get("name", ""), days=v.get("days")
        )
    except DjangoValidationError as exc:
        raise _django_errors(exc) from None
    data = ApiTokenCreatedSerializer(token).data
    data["key"] = key
    return Response(data, status=status.HTTP_201_CREATED)


@extend_schema(request=None, responses={204: None})
@api_view(["DELETE"])
def token_revoke(request, pk: int):
    """Revoke one of your tokens (it answers 401 from now on)."""
    _no_scoped_token(request)
    services.api_token_revoke(token=selectors.api_token_get(request.user, pk))
    return Response(status=status.HTTP_204_NO_CONTENT)
