"""Two edges of every request that no view sees: a body sent in chunks, and a method the URL does not take.

:class:`ChunkedBodyMiddleware`: a body sent with ``Transfer-Encoding: chunked`` and no ``Content-Length``
(``curl -T -``, an HTTP client streaming from a generator). Django reads ``CONTENT_LENGTH`` bytes of the body,
none when the header is absent, so every view would see an empty body: the stream endpoint answered such a
request ``202 {"accepted": 0}`` and dropped its records. A server that decodes the chunks and ends
``wsgi.input`` where the body ends says so with ``wsgi.input_terminated`` (gunicorn does, the deployment's
server); the body is then read here, up to the view's limit, into a spooled temporary file (memory up to
``FILE_UPLOAD_MAX_MEMORY_SIZE``, disk beyond), and the request goes on as if it had come with that
``Content-Length``: forms, uploads, JSON and the stream all read it as usual. Over the limit: 413 naming the
setting. A server that does not (``runserver``, which hands over the raw chunked bytes): 411 Length Required.
Never a view that sees nothing of a body that was sent.

The limit: a view may name the setting that bounds its body (:func:`body_limit`); otherwise a multipart upload
is bounded by ``SPREADWATCH_UPLOAD_MAX_BYTES`` and any other body by ``DATA_UPLOAD_MAX_MEMORY_SIZE``, the limits
Django and the upload service apply to a body of known length.

:class:`MethodNotAllowedPageMiddleware`: Django answers a method a view does not take (GET on a POST-only URL:
cancel, retry, delete, log out...) with an empty 405. It gets a body here, the ``Allow`` header kept: the API's
error shape (``{"detail": ...}``) under ``/api/``, elsewhere the site's page (``405.html``) saying which methods
the URL takes, with a link back to the page the request came from (its Referer, when on this site) and home.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.urls import Resolver404, resolve
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme

_READ = 64 * 1024
_API = "/api/"


def body_limit(setting: str) -> Callable:
    """Decorator for a view: a chunked body of this view is bounded by the setting ``setting`` (its name, so
    the 413 can say which one to raise)."""

    def mark(view):
        view.chunked_body_limit = setting
        return view

    return mark


def is_chunked_without_length(request: HttpRequest) -> bool:
    """Whether the request says its body is chunked and gives no length (what Django cannot read by itself)."""
    te = request.META.get("HTTP_TRANSFER_ENCODING", "")
    return "chunked" in te.lower() and not request.META.get("CONTENT_LENGTH")


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(_API)


def _refusal(request: HttpRequest, status: int, title: str, why: str) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": why}, status=status)
    page = format_html(
        "<!doctype html><meta charset=utf-8><title>{}</title><body><h1>{} ({})</h1><p>{}</p>"
        '<p><a href="javascript:history.back()">Back</a></p></body>',
        title,
        title,
        status,
        why,
    )
    return HttpResponse(page, status=status)


class ChunkedBodyMiddleware:
    """Reads a chunked body the server decoded, up to the view's limit; 411 where the server cannot (see the
    module's docstring). Placed before anything that reads the body (the login rate limit reads the form)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_chunked_without_length(request):
            return self.get_response(request)
        if not request.META.get("wsgi.input_terminated"):
            return _refusal(
                request,
                411,
                "Length required",
                "this server cannot read a chunked body (Transfer-Encoding: chunked without Content-Length): "
                "send the body with a Content-Length header; nothing was stored",
            )
        setting = self._limit_setting(request)
        limit = int(getattr(settings, setting))
        spool = tempfile.SpooledTemporaryFile(  # noqa: SIM115 (closed when the response is)
            max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, dir=settings.FILE_UPLOAD_TEMP_DIR
        )
        try:
            size = _copy(request.META["wsgi.input"], spool, limit + 1)
            if size > limit:
                return _refusal(
                    request,
                    413,
                    "Request body too large",
                    f"the body is over the limit of {limit:,} bytes ({setting}): "
                    "send it in several requests; nothing was stored",
                )
            spool.seek(0)
            request.META["CONTENT_LENGTH"] = str(size)
            request._stream = LimitedStream(spool, size)
            request._read_started = False
            return self.get_response(request)
        finally:
            spool.close()

    @staticmethod
    def _limit_setting(request: HttpRequest) -> str:
        try:
            view = resolve(request.path_info).func
        except Resolver404:
            view = None
        named = getattr(view, "chunked_body_limit", None)
        if named:
            return named
        if request.META.get("CONTENT_TYPE", "").startswith("multipart/"):
            return "SPREADWATCH_UPLOAD_MAX_BYTES"
        if settings.DATA_UPLOAD_MAX_MEMORY_SIZE is None:  # Django's "no limit": the upload limit still holds
            return "SPREADWATCH_UPLOAD_MAX_BYTES"
        return "DATA_UPLOAD_MAX_MEMORY_SIZE"


def _copy(src, dst, most: int) -> int:
    """Copy ``src`` to its end into ``dst``, stopping once ``most`` bytes were copied; the bytes copied."""
    n = 0
    while n < most:
        block = src.read(min(_READ, most - n))
        if not block:
            break
        dst.write(block)
        n += len(block)
    return n


def _back(request: HttpRequest) -> str:
    """The page the request came from (its Referer), when that is a page of this site other than this URL;
    empty otherwise. Never built from the URL asked for: the page echoes nothing of it (another team's
    workspace in a typed address must not show up in the answer)."""
    ref = request.META.get("HTTP_REFERER", "")
    if not ref or not url_has_allowed_host_and_scheme(ref, {request.get_host()}, request.is_secure()):
        return ""
    return "" if urlsplit(ref).path == request.path else ref


class MethodNotAllowedPageMiddleware:
    """Gives Django's empty 405 a body (see the module's docstring); placed last, so that the other middleware
    (security headers, sessions, the user) see the answer as usual."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 405 or request.method == "HEAD" or response.streaming or response.content:
            return response
        allowed = [m.strip() for m in response.get("Allow", "").split(",") if m.strip()]
        if _is_api(request):
            body = JsonResponse({"detail": f'Method "{request.method}" not allowed.', "allowed": allowed}).content
            content_type = "application/json"
        else:
            context = {"method": request.method, "allowed": allowed, "back": _back(request)}
            body = render_to_string("405.html", context, request=request).encode()
            content_type = "text/html; charset=utf-8"
        response.content = body
        response["Content-Type"] = content_type
        return response
