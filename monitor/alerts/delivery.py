"""Delivering alerts: email and signed webhooks (the inbox is the :class:`~monitor.alerts.models.Alert` row).

**Email** goes through Django's email backend (``EMAIL_BACKEND``: console in development, SMTP in
production, locmem in tests), from ``DEFAULT_FROM_EMAIL``, one message per rule and evaluation listing its new
alerts, to the rule owner's address. Every message carries the rule's unsubscribe link
(``SPREADWATCH_BASE_URL`` + :func:`unsubscribe_path`) in the text and in ``List-Unsubscribe`` /
``List-Unsubscribe-Post`` headers (RFC 8058 one-click).

**Webhooks** POST the JSON of :func:`payload` with the headers ``Content-Type: application/json``,
``X-Spreadwatch-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed with the rule's webhook secret>``
and ``X-Spreadwatch-Delivery: <delivery id>``. The body is serialised once, stored on the delivery and sent
byte for byte on every attempt, so a receiver verifies exactly what was signed (:func:`verify_signature`).
A 2xx answer is success; anything else (another status, a redirect, a timeout, a refused connection) is
logged on the row and retried after ``RETRY_BASE_S * 2**(attempts - 1)`` seconds, at most ``MAX_ATTEMPTS``
attempts in all, then the delivery is ``failed``. Redirects are not followed (the signature is for the
configured URL). The timeout is ``SPREADWATCH_WEBHOOK_TIMEOUT`` seconds (default 10).

Before every attempt the URL goes through :func:`monitor.security.check_webhook_url` again (DNS can change
after the rule was saved), and the connection itself refuses an internal peer address (DNS rebinding): a
refused delivery is ``failed`` at once with the reason in ``last_error``, never retried. Private addresses are
allowed with ``SPREADWATCH_WEBHOOK_ALLOW_PRIVATE``. A host that does not resolve is an ordinary failed attempt
(retried).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import http.client
import json
import logging
import urllib.error
import urllib.parse
import urllib.request

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.utils import timezone

from monitor.security import (
    WebhookAddressRefused,
    WebhookHostUnresolved,
    WebhookURLRefused,
    check_webhook_url,
    guarded_create_connection,
)

from .models import Alert, AlertRule, WebhookDelivery

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 6
RETRY_BASE_S = 30
SIGNATURE_HEADER = "X-Spreadwatch-Signature"
DELIVERY_HEADER = "X-Spreadwatch-Delivery"
LOG_KEEP = 20  # attempts kept in the delivery log


# --- unsubscribe links --------------------------------------------------------------------------------------


def unsubscribe_path(rule: AlertRule) -> str:
    """The path of the rule's unsubscribe link (served by ``monitor.alerts.views.unsubscribe``)."""
    return f"/alerts/unsubscribe/{rule.unsubscribe_token}/"


def unsubscribe_url(rule: AlertRule) -> str:
    base = getattr(settings, "SPREADWATCH_BASE_URL", "") or ""
    return base.rstrip("/") + unsubscribe_path(rule)


# --- email --------------------------------------------------------------------------------------------------


def email_alerts(rule: AlertRule, alerts: list[Alert]) -> bool:
    """One message to the rule's owner listing ``alerts``; marks them emailed. False when nothing was sent
    (no address, email off, nothing to say, or the backend failed: the failure is logged, not raised)."""
    to = (rule.owner.email or "").strip()
    if not (rule.email and alerts and to):
        return False
    link = unsubscribe_url(rule)
    lines = [f"- {a.message}" for a in alerts]
    body = "\n".join(
        [
            f"Spreadwatch: {len(alerts)} new alert{'s' if len(alerts) != 1 else ''} for your rule "
            f'"{rule.name}" in {rule.workspace.name}.',
            "",
            *lines,
            "",
            f"Stop these emails for this rule: {link}",
        ]
    )
    subject = f"[Spreadwatch] {rule.name}: {len(alerts)} new alert{'s' if len(alerts) != 1 else ''}"
    msg = EmailMessage(
        subject=subject,
        body=body,
        from_email=None,  # DEFAULT_FROM_EMAIL
        to=[to],
        headers={"List-Unsubscribe": f"<{link}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
    )
    try:
        msg.send(fail_silently=False)
    except Exception:
        log.exception("alert email for rule %s failed", rule.pk)
        return False
    Alert.objects.filter(pk__in=[a.pk for a in alerts]).update(emailed_at=timezone.now())
    return True


# --- webhooks -----------------------------------------------------------------------------------------------


def payload(alert: Alert) -> dict:
    rule, acc = alert.rule, alert.account
    return {
        "alert": alert.pk,
        "rule": {"id": rule.pk, "name": rule.name},
        "kind": rule.kind,
        "workspace": rule.workspace.slug,
        "account": {"twitter_id": str(acc.twitter_id), "screen_name": acc.screen_name},
        "tweet_id": str(alert.tweet.tweet_id) if alert.tweet_id else None,
        "value": alert.value,
        "previous_value": alert.previous_value,
        "rank": alert.rank,
        "previous_rank": alert.previous_rank,
        "window": {"start": alert.window_start.isoformat(), "end": alert.window_end.isoformat()},
        "message": alert.message,
        "created_at": alert.created_at.isoformat(),
    }


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    """For receivers (and tests): does ``header`` (``sha256=<hex>``) sign ``body`` with ``secret``?"""
    if not header or not secret:
        return False
    return hmac.compare_digest(sign(secret, body).encode(), header.strip().encode())


def delivery_create(alert: Alert) -> WebhookDelivery:
    rule = alert.rule
    data = payload(alert)
    body = json.dumps(data, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return WebhookDelivery.objects.create(
        alert=alert,
        url=rule.webhook_url,
        payload=data,
        body=body,
        signature=sign(rule.webhook_secret, body.encode()),
        next_attempt_at=timezone.now(),
    )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None  # a 3xx is answered as an error: the signature is for the configured URL


class _GuardedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = guarded_create_connection  # refuses an internal peer address


class _GuardedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = guarded_create_connection


class _GuardedHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_GuardedHTTPConnection, req)


class _GuardedHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req):
        return self.do_open(_GuardedHTTPSConnection, req, context=self._context)


# direct connections check the peer address; through a configured HTTP(S) proxy the peer is the proxy, so only the
# URL's own resolution (check_webhook_url) is checked
_opener = urllib.request.build_opener(_NoRedirect, _GuardedHTTPHandler, _GuardedHTTPSHandler)
_proxied_opener = urllib.request.build_opener(_NoRedirect)


class Refused(Exception):
    """The URL or the address connected to may not receive webhooks: the delivery fails, no retry."""


def _proxied(url: str) -> bool:
    parts = urllib.parse.urlsplit(url)
    return bool(urllib.request.getproxies().get(parts.scheme.lower())) and not urllib.request.proxy_bypass(
        parts.hostname or ""
    )


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """(status code or None, error text) of one POST; raises :class:`Refused` for a refused URL or peer."""
    try:
        check_webhook_url(url)
    except WebhookHostUnresolved as exc:
        return None, str(exc)
    except WebhookURLRefused as exc:
        raise Refused(str(exc)) from None
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    opener = _proxied_opener if _proxied(url) else _opener
    try:
        with opener.open(req, timeout=timeout) as resp:
            resp.read(65536)
            return resp.status, ""
    except urllib.error.HTTPError as exc:
        return exc.code, f"HTTP {exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, WebhookAddressRefused) or isinstance(exc, WebhookAddressRefused):
            raise Refused(str(reason)) from None
        return None, f"{exc.__class__.__name__}: {reason}"


def retry_delay(attempts: int) -> int:
    """Seconds to wait after the ``attempts``-th failed attempt: 30, 60, 120, 240, 480."""
    return RETRY_BASE_S * 2 ** max(attempts - 1, 0)


def deliver(delivery_id: int) -> WebhookDelivery:
    """:func:`attempt`, returning only the delivery."""
    return attempt(delivery_id)[0]


def attempt(delivery_id: int) -> tuple[WebhookDelivery, bool]:
    """Make one attempt at a pending delivery (the body of the ``deliver_webhook`` task). A sent or failed
    delivery is returned untouched, and so is one another worker is attempting right now (its row is locked):
    a redelivered task never POSTs twice what was already accepted. Returns (delivery, whether this call
    made an attempt)."""
    timeout = float(getattr(settings, "SPREADWATCH_WEBHOOK_TIMEOUT", 10))
    with transaction.atomic():
        d = (
            WebhookDelivery.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
            .first()
        )
        if d is None:
            return WebhookDelivery.objects.get(pk=delivery_id), False
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "Spreadwatch-Webhook/1",
            SIGNATURE_HEADER: d.signature,
            DELIVERY_HEADER: str(d.pk),
        }
        started = timezone.now()
        refused = False
        try:
            code, error = _post(d.url, d.body.encode(), headers, timeout)
        except Refused as exc:
            code, error, refused = None, f"refused: {exc}", True
        d.attempts += 1
        d.last_status_code = code
        ok = code is not None and 200 <= code < 300
        d.last_error = "" if ok else (error or f"HTTP {code}")
        d.log = [*d.log, {"at": started.isoformat(), "status_code": code, "error": d.last_error}][-LOG_KEEP:]
        if ok:
            d.status = WebhookDelivery.Status.SENT
            d.sent_at = timezone.now()
            d.next_attempt_at = None
        elif refused or d.attempts >= MAX_ATTEMPTS:
            d.status = WebhookDelivery.Status.FAILED
            d.next_attempt_at = None
        else:
            d.next_attempt_at = timezone.now() + dt.timedelta(seconds=retry_delay(d.attempts))
        d.save()
    if not ok:
        log.warning("webhook delivery %s attempt %s failed: %s", d.pk, d.attempts, d.last_error)
    return d, True
