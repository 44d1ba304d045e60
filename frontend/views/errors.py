"""The 400 page: Django answers a request it refuses to parse (too many files or fields, a body over the limit)
before any view runs, so the reason is said here, with the limit, instead of a bare "Bad Request (400)"."""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponseBadRequest
from django.utils.html import format_html

from monitor.services.uploads import too_many_files_message

_PAGE = '<!doctype html><meta charset=utf-8><title>Bad request</title><body><h1>Bad request (400)</h1><p>{}</p><p><a href="javascript:history.back()">Back</a></p></body>'  # noqa: E501


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponseBadRequest:
    from django.conf import settings

    if isinstance(exception, TooManyFilesSent):
        why = too_many_files_message()
    elif isinstance(exception, TooManyFieldsSent):
        why = f"The form sent more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields."
    elif isinstance(exception, RequestDataTooBig):
        why = f"The form's fields (not its files) exceed {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes."
    else:
        why = "The request could not be understood."
    return HttpResponseBadRequest(format_html(_PAGE, why))
