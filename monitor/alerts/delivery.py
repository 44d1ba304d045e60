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
configured URL). ``SPREADWATCH_WEBHOOK_TIMEOUT`` (default 10 s) is the total time of one attempt, not of each
socket read: a receiver that drips its answer is cut off then. The POST is made outside any database
transaction, on the ``webhooks`` queue with a worker of its own (docs/deploy.md), so a slow receiver delays
only other webhooks.

**One slow receiver does not hold up the others** (:func:`attempt_in_turn`, what the task calls): at most
``SPREADWATCH_WEBHOOK_PER_HOST`` deliveries to one receiving host (host and port) are made at once, over every
webhook worker, counted in a Redis sorted set per host whose entries expire with the attempt's deadline (a worker
killed mid-POST frees its place then). A delivery that finds its host busy is not attempted and not counted: the
task sends itself again after :func:`busy_delay` seconds and its worker takes the next delivery. Without Redis
(the file cache of ``make demo``) or with the setting 0 there is no limit.

Before every attempt the URL goes through :func:`monitor.security.check_webhook_url` again (DNS can change
after the rule was saved), and the connection itself refuses an internal peer address (DNS rebinding): a
refused delivery is ``failed`` at once with the reason in ``last_error``, never retried. Private addresses are
allowed with ``SPREADWATCH_WEBHOOK_ALLOW_PRIVATE``. A host that does not resolve is an ordinary failed attempt
(retried).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import hmac
import http.client
import json
import logging
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import Q
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
CLAIM_MARGIN_S = 30  # a claimed attempt's hold lasts its deadline and this much more


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
        # refuses an internal peer address, and registers the socket with the delivery's deadline
        self._create_connection = _watched_connection


class _GuardedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = _watched_connection


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


class _Deadline:
    """One delivery's total time: a timer shuts the connection's socket down when it is up, which ends whatever
    read or write is blocked on it (a receiver that answers one byte every few seconds defeats any per-read
    timeout); each socket operation's own timeout is what is left of it."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.expired = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def left(self) -> float:
        return max(self.at - time.monotonic(), 0.001)

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.append(sock)
            if self.expired:
                self._shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._socks:
                self._shut(sock)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Deadline:
        _deadline.current = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        _deadline.current = None


_deadline = threading.local()  # the delivery this thread is making (its connections register with it)


def _watched_connection(address, timeout=socket._GLOBAL_DEFAULT_TIMEOUT, source_address=None, **kwargs):
    d = getattr(_deadline, "current", None)
    if d is not None:
        timeout = d.left()
    sock = guarded_create_connection(address, timeout, source_address, **kwargs)
    if d is not None:
        d.watch(sock)
    return sock


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """(status code or None, error text) of one POST, all of it within ``timeout`` seconds; raises
    :class:`Refused` for a refused URL or peer."""
    with _Deadline(timeout) as deadline:
        try:
            return _post_within(url, body, headers, deadline)
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if deadline.expired:
                return None, f"no complete answer within {timeout:g} s (the delivery's deadline)"
            return None, f"{exc.__class__.__name__}: {exc}"


def _post_within(url: str, body: bytes, headers: dict[str, str], deadline: _Deadline) -> tuple[int | None, str]:
    try:
        check_webhook_url(url)
    except WebhookHostUnresolved as exc:
        return None, str(exc)
    except WebhookURLRefused as exc:
        raise Refused(str(exc)) from None
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    opener = _proxied_opener if _proxied(url) else _opener
    try:
        with opener.open(req, timeout=deadline.left()) as resp:
            resp.read(65536)
            if deadline.expired:
                return None, f"no complete answer within {deadline.seconds:g} s (the delivery's deadline)"
            return resp.status, ""
    except urllib.error.HTTPError as exc:
        return exc.code, f"HTTP {exc.code} {exc.reason}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, WebhookAddressRefused) or isinstance(exc, WebhookAddressRefused):
            raise Refused(str(reason)) from None
        if deadline.expired:
            return None, f"no complete answer within {deadline.seconds:g} s (the delivery's deadline)"
        return None, f"{exc.__class__.__name__}: {reason}"


# --- one receiving host at a time ----------------------------------------------------------------------------

HOST_KEY_PREFIX = "spreadwatch:webhook-host:"
BUSY_DELAY_S = (1.0, 3.0)  # a delivery whose host is busy is sent again after a random delay in this range

# drop the expired places, take one if fewer than the limit are held; the key lives as long as its last place
_TAKE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
  redis.call('PEXPIREAT', KEYS[1], math.floor(tonumber(ARGV[2]) * 1000) + 1000)
  return 1
end
return 0
"""


def host_of(url: str) -> str:
    """The receiving host a delivery's place is counted against: ``host:port`` (lower case; the scheme's port
    when the URL names none)."""
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or (443 if parts.scheme.lower() == "https" else 80)
    return f"{(parts.hostname or '').lower()}:{port}"


def per_host() -> int:
    return max(0, int(getattr(settings, "SPREADWATCH_WEBHOOK_PER_HOST", 1) or 0))


def busy_delay() -> float:
    return random.uniform(*BUSY_DELAY_S)


@contextlib.contextmanager
def host_place(url: str, seconds: float):
    """Hold one of the receiving host's places for at most ``seconds`` (then it expires by itself); yields
    whether one was free. Yields True, holding nothing, where there is no limit (0, no Redis, Redis not
    answering: a webhook is never kept back for the limiter's sake)."""
    from monitor.cache import redis_client

    limit = per_host()
    client = None
    if limit:
        try:
            client = redis_client()
        except Exception:
            log.warning("webhook host limit: Redis unavailable, no limit this time", exc_info=True)
    if client is None:
        yield True
        return
    key = HOST_KEY_PREFIX + host_of(url)
    token = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}:{time.time_ns()}"
    now = time.time()
    try:
        took = bool(client.eval(_TAKE, 1, key, now, now + seconds, limit, token))
    except Exception:
        log.warning("webhook host limit: Redis did not answer, no limit this time", exc_info=True)
        yield True
        return
    if not took:
        yield False
        return
    try:
        yield True
    finally:
        with contextlib.suppress(Exception):  # it expires by itself
            client.zrem(key, token)


def attempt_in_turn(delivery_id: int) -> tuple[WebhookDelivery, str]:
    """:func:`attempt` once the receiving host has a free place (see above). Returns the delivery and what
    happened: ``"attempted"``, ``"busy"`` (the host had no free place: nothing was done; send it again after
    :func:`busy_delay`) or ``"skipped"`` (sent, failed, or being attempted by another worker)."""
    d = WebhookDelivery.objects.get(pk=delivery_id)
    if d.status != WebhookDelivery.Status.PENDING:
        return d, "skipped"
    timeout = float(getattr(settings, "SPREADWATCH_WEBHOOK_TIMEOUT", 10))
    with host_place(d.url, timeout + CLAIM_MARGIN_S) as free:
        if not free:
            log.info("webhook delivery %s waits: %s has its limit of deliveries at once", d.pk, host_of(d.url))
            return d, "busy"
        d, attempted = attempt(delivery_id)
    return d, "attempted" if attempted else "skipped"


def retry_delay(attempts: int) -> int:
    """Seconds to wait after the ``attempts``-th failed attempt: 30, 60, 120, 240, 480."""
    return RETRY_BASE_S * 2 ** max(attempts - 1, 0)


def deliver(delivery_id: int) -> WebhookDelivery:
    """:func:`attempt`, returning only the delivery."""
    return attempt(delivery_id)[0]


def attempt(delivery_id: int) -> tuple[WebhookDelivery, bool]:
    """Make one attempt at a pending delivery (the body of the ``deliver_webhook`` task). A sent or failed
    delivery is returned untouched, and so is one another worker is attempting right now: a redelivered task
    never POSTs twice what was already accepted. Returns (delivery, whether this call made an attempt).

    Three steps, the POST outside any transaction (a slow receiver must hold no row lock and no database
    connection's transaction): claim the delivery by setting ``attempting_until`` past the end of this
    attempt (a conditional UPDATE: one worker wins; a worker that dies mid-attempt leaves a claim that simply
    expires, and the sweep retries it), POST within the total deadline, record the outcome."""
    timeout = float(getattr(settings, "SPREADWATCH_WEBHOOK_TIMEOUT", 10))
    now = timezone.now()
    claim_until = now + dt.timedelta(seconds=timeout + CLAIM_MARGIN_S)
    claimed = (
        WebhookDelivery.objects.filter(pk=delivery_id, status=WebhookDelivery.Status.PENDING)
        .filter(Q(attempting_until__isnull=True) | Q(attempting_until__lte=now))
        .update(attempting_until=claim_until)
    )
    if not claimed:
        return WebhookDelivery.objects.get(pk=delivery_id), False
    d = WebhookDelivery.objects.get(pk=delivery_id)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Spreadwatch-Webhook/1",
        SIGNATURE_HEADER: d.signature,
        DELIVERY_HEADER: str(d.pk),
    }
    refused = False
    try:
        code, error = _post(d.url, d.body.encode(), headers, timeout)
    except Refused as exc:
        code, error, refused = None, f"refused: {exc}", True
    with transaction.atomic():
        d = WebhookDelivery.objects.select_for_update().get(pk=delivery_id)
        d.attempting_until = None
        if d.status != WebhookDelivery.Status.PENDING:
            d.save(update_fields=["attempting_until"])
            return d, True  # an admin failed it meanwhile: keep their word
        d.attempts += 1
        d.last_status_code = code
        ok = code is not None and 200 <= code < 300
        d.last_error = "" if ok else (error or f"HTTP {code}")
        d.log = [*d.log, {"at": now.isoformat(), "status_code": code, "error": d.last_error}][-LOG_KEEP:]
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
