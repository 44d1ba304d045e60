"""The email's unsubscribe link: ``/alerts/unsubscribe/<token>/``. No login: the token is the capability.
GET shows a confirmation button (mail scanners that prefetch links must not unsubscribe anyone); POST
unsubscribes, which is also what RFC 8058 one-click clients send (without a CSRF token, hence the exemption)."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseNotFound
from django.utils.html import format_html
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from . import selectors, services

_PAGE = "<!doctype html><meta charset=utf-8><title>Spreadwatch alerts</title><body>{}</body>"


@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe(request, token: str):
    rule = selectors.rule_for_unsubscribe_token(token)
    if rule is None:
        return HttpResponseNotFound(format_html(_PAGE, "This unsubscribe link is not valid."))
    if request.method == "POST":
        services.rule_unsubscribe(token=token)
        return HttpResponse(format_html(_PAGE, format_html('You will no longer get emails for "{}".', rule.name)))
    return HttpResponse(
        format_html(
            _PAGE,
            format_html(
                '<form method="post"><p>Stop emails for the alert rule "{}"?</p>'
                '<button type="submit">Unsubscribe</button></form>',
                rule.name,
            ),
        )
    )
