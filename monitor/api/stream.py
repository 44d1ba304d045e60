"""``POST /api/v1/stream/``: append NDJSON records to the stream of the workspace whose stream token is presented.

Only stream tokens (``Authorization: Bearer sws_...``) are accepted here, and they are accepted nowhere else:
API tokens and browser sessions are refused (a stream token is a write-only credential for a feeding process;
an analyst's credential has no business being one). Answers (docs/live.md):

* 202 ``{"accepted", "skipped", "tweets", "retweets", "follows", "first_id", "last_id"}``: every event of the
  body is committed (durably queued) and will be applied exactly once;
* 400 ``{"detail", "line", "field", "reason"}``: the first bad line; nothing of the body was stored;
* 411: a chunked body (``Transfer-Encoding: chunked``, no Content-Length) the server cannot read; nothing was
  stored (gunicorn, the deployment's server, hands it over: it is read as any other body, up to the limit);
* 413: the body is over the size or line limit; nothing was stored;
* 429 with ``Retry-After``: the workspace's backlog is full; nothing was stored;
* 401: no, an unknown, a revoked or a non-stream token.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.decorators import api_view, authentication_classes, parser_classes, permission_classes
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from .. import security
from ..middleware import body_limit, is_chunked_without_length
from ..models import StreamToken
from ..services.stream import BodyTooLarge, InputError, StreamRefused, stream_accept_body
from ..services.stream.tokens import stream_token_for_key

KEYWORDS = (b"bearer", b"token")


class StreamTokenUser:
    """The request's user when a stream token authenticated it: not a person, no permissions anywhere else."""

    is_authenticated = True
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None

    def __init__(self, token: StreamToken) -> None:
        self.token = token

    def __str__(self) -> str:
        return f"stream token {self.token.prefix}…"


class StreamTokenAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        ip = security.client_ip(request)
        if security.api_auth_locked(ip):
            raise exceptions.Throttled(detail=security.api_locked_message())
        try:
            key = parts[1].decode() if len(parts) == 2 else ""
        except UnicodeError:
            key = ""
        token, why = stream_token_for_key(key) if key else (None, "Invalid token header.")
        if token is None:
            security.api_auth_failed(ip)
            raise exceptions.AuthenticationFailed(why)
        return StreamTokenUser(token), token

    def authenticate_header(self, request) -> str:
        return self.keyword


class IsStreamToken(BasePermission):
    def has_permission(self, request, view) -> bool:
        return isinstance(request.auth, StreamToken)


_EXAMPLE = (
    '{"tweet_id": "1001", "user_id": "7", "created_at": "2026-11-24T06:00:00Z", "followers_count": 120}\n'
    '{"tweet_id": "1002", "retweeted_tweet_id": "1001", "user_id": "8", "created_at": "2026-11-24T06:00:05Z"}\n'
    '{"follower_id": "8", "followee_id": "7"}\n'
)


class LengthRequired(StreamRefused):
    status = 411


def _read_body(request) -> bytes:
    """The raw body, read at most one byte past the limit (Django's own request size check is for forms).

    A chunked body reaches here with its length: ``monitor.middleware.ChunkedBodyMiddleware`` read it (or
    answered 411). Without that middleware Django would read nothing of it: refused, never taken for empty."""
    if is_chunked_without_length(request._request):
        raise LengthRequired(
            "a chunked body (Transfer-Encoding: chunked) cannot be read here: send it with a Content-Length "
            "header; nothing was stored"
        )
    limit = settings.SPREADWATCH_STREAM_MAX_BODY_BYTES
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:  # refused without reading it
        raise BodyTooLarge(
            f"the body is {declared:,} bytes, over the limit of {limit:,} (SPREADWATCH_STREAM_MAX_BODY_BYTES): "
            "send it in several requests; nothing was stored"
        )
    return request._request.read(limit + 1)


@body_limit("SPREADWATCH_STREAM_MAX_BODY_BYTES")
@extend_schema(
    summary="Append records to the workspace's live stream (stream tokens only)",
    description=__doc__,
    request={"application/x-ndjson": OpenApiTypes.STR},
    examples=[OpenApiExample("three records", value=_EXAMPLE, request_only=True)],
    responses={
        202: OpenApiResponse(OpenApiTypes.OBJECT, description="all records accepted (committed)"),
        400: OpenApiResponse(OpenApiTypes.OBJECT, description="a bad line; nothing stored"),
        401: OpenApiResponse(description="not a valid stream token"),
        411: OpenApiResponse(OpenApiTypes.OBJECT, description="a chunked body this server cannot read; nothing stored"),
        413: OpenApiResponse(OpenApiTypes.OBJECT, description="body over the size or line limit; nothing stored"),
        429: OpenApiResponse(OpenApiTypes.OBJECT, description="backlog full; nothing stored; see Retry-After"),
    },
)
@api_view(["POST"])
@authentication_classes([StreamTokenAuthentication])
@permission_classes([IsStreamToken])
@parser_classes([])
def stream(request):
    token: StreamToken = request.auth
    try:
        body = _read_body(request)
        acc = stream_accept_body(workspace=token.workspace, body=body, source=token.name or token.prefix)
    except InputError as exc:
        r = exc.record
        return Response(
            {"detail": f"{r}; nothing of this body was stored", "line": r.line, "field": r.field, "reason": r.reason},
            status=status.HTTP_400_BAD_REQUEST,
        )
    except StreamRefused as exc:
        data = {"detail": str(exc)}
        headers = {}
        if exc.status == 429:
            data.update(retry_after=exc.retry_after, backlog=exc.backlog, limit=exc.limit)
            headers["Retry-After"] = str(exc.retry_after)
        return Response(data, status=exc.status, headers=headers)
    return Response(acc.to_dict(), status=status.HTTP_202_ACCEPTED)


class StreamTokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes :class:`StreamTokenAuthentication`."""

    target_class = "monitor.api.stream.StreamTokenAuthentication"
    name = "streamTokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A workspace's stream token (sws_...): it may only append to that workspace's stream",
        }
