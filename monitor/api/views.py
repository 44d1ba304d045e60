"""REST API v1. Every object is looked up through the caller's workspace, so another workspace's objects
answer 404 exactly like missing ones."""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.decorators import api_view, parser_classes
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from .. import selectors, services
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
