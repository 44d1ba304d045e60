"""What the analyses' run endpoints share (network analytics, coordinated accounts): the paged list of a
workspace's runs, and starting a run over the workspace or one of its collections with the validated body's
``collection`` and ``backend``: 201 with the run, or 400 naming the parameter (a budget refusal included)."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.response import Response

from .. import selectors, services
from .paging import Pagination
from .serializers import ComputeRunSerializer
from .views import _django_errors


def runs_page(request, runs) -> Response:
    """A page of ``runs`` (newest first) in the paged envelope."""
    pager = Pagination()
    page = pager.paginate_queryset(runs, request)
    return pager.get_paginated_response(ComputeRunSerializer(page, many=True).data)


def start_run(request, workspace, validated: dict, *, algorithm: str, params: dict) -> Response:
    """Start ``algorithm`` with ``params`` over the workspace, or over ``validated["collection"]`` (looked up in
    the workspace: another workspace's answers 404) on ``validated["backend"]``."""
    collection = None
    if validated.get("collection") is not None:
        collection = selectors.collection_get(workspace, validated["collection"])
        params = {**params, "collection": collection.pk}
    try:
        run = services.compute_run_start(
            workspace=workspace,
            collection=collection,
            user=request.user,
            backend=validated["backend"],
            algorithm=algorithm,
            params=params,
        )
    except DjangoValidationError as exc:
        raise _django_errors(exc) from None
    return Response(ComputeRunSerializer(run).data, status=status.HTTP_201_CREATED)
