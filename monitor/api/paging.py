"""How the API's lists are paged: ``page_size`` and ``page`` (1-based), or ``limit`` and ``offset``, the same
on every endpoint that lists, up to :data:`MAX_PAGE_SIZE` rows a request.

A size out of range or malformed answers 400 naming the parameter, rather than being silently replaced by the
default or clipped (DRF's ``LimitOffsetPagination`` does both): a client that asked for 5,000 rows and got
1,000 would otherwise believe it had them all.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.utils.urls import remove_query_param

MAX_PAGE_SIZE = 1000
DEFAULT_PAGE_SIZE = 50

PARAMETERS = [
    OpenApiParameter("page_size", int, description=f"rows per page, 1 to {MAX_PAGE_SIZE} (same as `limit`)"),
    OpenApiParameter("page", int, description="1-based page number (instead of `offset`)"),
    OpenApiParameter("limit", int, description=f"rows per page, 1 to {MAX_PAGE_SIZE} (same as `page_size`)"),
    OpenApiParameter("offset", int, description="rows to skip (instead of `page`)"),
]


def _int(request: Request, name: str, lo: int, hi: int | None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    try:
        v = int(raw)
    except ValueError:
        raise ValidationError({name: f"not a whole number: {raw!r}"}) from None
    if v < lo or (hi is not None and v > hi):
        raise ValidationError({name: f"must be between {lo} and {hi}" if hi is not None else f"must be at least {lo}"})
    return v


def page_bounds(request: Request, default: int = DEFAULT_PAGE_SIZE) -> tuple[int, int]:
    """(limit, offset) the request asks for: ``page_size``/``limit`` rows from ``page``/``offset``."""
    size = _int(request, "page_size", 1, MAX_PAGE_SIZE)
    limit = _int(request, "limit", 1, MAX_PAGE_SIZE)
    if size is not None and limit is not None and size != limit:
        raise ValidationError({"page_size": "give page_size or limit, not both"})
    size = size or limit or min(default, MAX_PAGE_SIZE)
    page = _int(request, "page", 1, None)
    offset = _int(request, "offset", 0, None)
    if page is not None and offset is not None:
        raise ValidationError({"page": "give page or offset, not both"})
    return size, offset if offset is not None else ((page or 1) - 1) * size


class Pagination(LimitOffsetPagination):
    """DRF's limit/offset envelope (``count``, ``next``, ``previous``, ``results``) with :func:`page_bounds`."""

    default_limit = DEFAULT_PAGE_SIZE
    max_limit = MAX_PAGE_SIZE

    def paginate_queryset(self, queryset, request, view=None):
        self.request = request
        self.limit, self.offset = page_bounds(request, self.default_limit)
        self.count = self.get_count(queryset)
        if self.count > self.limit and self.template is not None:
            self.display_page_controls = True
        if self.count == 0 or self.offset > self.count:
            return []
        return list(queryset[self.offset : self.offset + self.limit])

    def get_next_link(self):
        # the links use limit/offset whichever the request used: both name the same page
        url = super().get_next_link()
        return _without(url, "page_size", "page")

    def get_previous_link(self):
        return _without(super().get_previous_link(), "page_size", "page")

    def get_schema_operation_parameters(self, view):
        return []  # the function views document PARAMETERS through extend_schema


def _without(url: str | None, *names: str) -> str | None:
    if url is None:
        return None
    for name in names:
        url = remove_query_param(url, name)
    return url


def page_of(rows: list, request: Request, default: int = DEFAULT_PAGE_SIZE) -> list:
    """The requested page of a list already read (small lists: the caller's workspaces)."""
    limit, offset = page_bounds(request, default)
    return rows[offset : offset + limit]
