"""REST API v1. Every object is looked up through the caller's workspace, so another workspace's objects
answer 404 exactly like missing ones."""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import StreamingHttpResponse
from rest_framework import status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.exceptions import NotAcceptable, ValidationError
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from .. import exports, selectors, services
from .serializers import (
    CollectionSerializer,
    CollectionUploadSerializer,
    ComputeRunSerializer,
    RankingRowSerializer,
    WorkspaceSerializer,
)


@api_view(["GET"])
def workspaces(request):
    return Response(WorkspaceSerializer(selectors.workspaces_for_user(request.user), many=True).data)


@api_view(["GET", "POST"])
@parser_classes([MultiPartParser, FormParser, JSONParser])
def collections(request, ws: str):
    workspace = selectors.workspace_for_user(request.user, ws)
    if request.method == "GET":
        pager = LimitOffsetPagination()
        qs = selectors.collections_list(workspace, limit=10_000)
        page = pager.paginate_queryset(qs, request)
        return pager.get_paginated_response(CollectionSerializer(page, many=True).data)
    data = request.data.copy() if hasattr(request.data, "copy") else dict(request.data)
    if hasattr(request.data, "getlist"):
        data.setlist("files", request.FILES.getlist("files"))
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


@api_view(["GET"])
def collection_detail(request, ws: str, pk: int):
    workspace = selectors.workspace_for_user(request.user, ws)
    return Response(CollectionSerializer(selectors.collection_get(workspace, pk)).data)


@api_view(["GET"])
def runs(request, ws: str):
    workspace = selectors.workspace_for_user(request.user, ws)
    pager = LimitOffsetPagination()
    page = pager.paginate_queryset(selectors.runs_list(workspace, limit=10_000), request)
    return pager.get_paginated_response(ComputeRunSerializer(page, many=True).data)


@api_view(["GET"])
def run_detail(request, ws: str, pk: int):
    workspace = selectors.workspace_for_user(request.user, ws)
    return Response(ComputeRunSerializer(selectors.run_get(workspace, pk)).data)


def _window(request) -> selectors.Window:
    def day(name: str) -> dt.date | None:
        raw = request.query_params.get(name)
        if not raw:
            return None
        try:
            return dt.date.fromisoformat(raw)
        except ValueError:
            raise ValidationError({name: f"not a date (YYYY-MM-DD): {raw!r}"}) from None

    return selectors.Window(day("from"), day("to"))


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


@api_view(["GET"])
def ranking(request, ws: str, publisher: int | None = None):
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, publisher) if publisher is not None else None
    aggregate = request.query_params.get("aggregate", "total")
    if aggregate not in selectors.AGGREGATES:
        raise ValidationError({"aggregate": f"must be one of {', '.join(selectors.AGGREGATES)}"})
    limit = _int_param(request, "limit", 50, 1, 1000)
    offset = _int_param(request, "offset", 0, 0, 10**9)
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


def _export_view(func):
    func.content_negotiation_class = ExportNegotiation  # read by @api_view, which must wrap this
    return api_view(["GET"])(func)


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


@_export_view
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


@_export_view
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


@_export_view
def tweet_graph(request, ws: str, tweet_id: int):
    """``GET .../tweets/<id>/graph/?format=gexf|graphml``: one cascade's spreading graph."""
    workspace = selectors.workspace_for_user(request.user, ws)
    tweet = selectors.tweet_get(workspace, tweet_id)
    fmt = _export_format(request, exports.GRAPH_FORMATS)
    writer = exports.cascade_gexf if fmt == "gexf" else exports.cascade_graphml
    return _stream(writer(tweet), fmt=fmt, name=exports.filename(workspace, "tweet", tweet.tweet_id, ext=fmt))
