"""Security helpers: the webhook URL guard (no requests to internal addresses) and login rate limiting.

**Webhook URLs** (:func:`check_webhook_url`): only ``http``/``https``; the host is resolved and every address it
resolves to must be public: loopback, link-local (169.254/16, fe80::/10), private (10/8, 172.16/12, 192.168/16,
fc00::/7, and the other non-global ranges), unspecified, multicast and reserved addresses, and the IPv6 forms that embed
an IPv4 address a gateway forwards to (6to4 2002::/16, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, Teredo 2001::/32) are
refused unless ``SPREADWATCH_WEBHOOK_ALLOW_PRIVATE`` is true (development, tests, a receiver on the LAN). The guard runs
when a rule is saved (``AlertRule.clean``, so the form and the API show it on ``webhook_url``) and again at delivery
(DNS can change): :func:`guarded_create_connection` also checks the address the socket actually connected to, so a name
that resolves to a public address for the check and to a private one for the connection (DNS rebinding) is refused too.

**Login rate limiting**: after ``SPREADWATCH_LOGIN_MAX_FAILURES`` (10) failed logins for one username from one IP
address within ``SPREADWATCH_LOGIN_WINDOW_S`` (900 s), further attempts are refused until the window ends, even with the
right password; likewise after ``SPREADWATCH_LOGIN_MAX_FAILURES_PER_USER`` (30) for one username from any addresses
(spraying from many addresses) and ``SPREADWATCH_LOGIN_MAX_FAILURES_PER_ADDRESS`` (30) from one address over any
usernames. Refused API tokens count against the address too (:mod:`monitor.api.auth`), and password-reset requests are
limited per address and per email (``SPREADWATCH_PASSWORD_RESET_MAX``, 5 per window). With Redis unreachable the counts
are kept per process. Failures are counted in Django's cache (``user_login_failed`` signal); the refusal is made by
:class:`RateLimitedModelBackend` (every ``authenticate`` call: the login page, the admin's login) and
:class:`LoginRateLimitMiddleware` answers the login page's POST with a clear message (429) before the form runs.
"""

from __future__ import annotations

import hashlib
import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.contrib.auth.views import PasswordResetView
from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache
from django.core.exceptions import PermissionDenied, ValidationError
from django.dispatch import receiver

# --- webhook URLs ---------------------------------------------------------------------------------------------


class WebhookURLRefused(ValueError):
    """The URL may not receive webhooks; ``str(exc)`` says why (shown to the user and logged on deliveries)."""


class WebhookHostUnresolved(WebhookURLRefused):
    """The host does not resolve (now): refused when a rule is saved, a retryable failure at delivery."""


class WebhookAddressRefused(OSError):
    """Raised from inside a connection whose peer address is refused (urllib wraps it in ``URLError``)."""


def address_refused_reason(ip: str) -> str | None:
    """Why ``ip`` may not receive webhooks (None: it may)."""
    try:
        addr = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return f"{ip!r} is not an IP address"
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        else:
            # addresses that carry an IPv4 address a gateway will forward to: whatever that address is, the gateway
            # decides where it lands (an internal host behind the NAT64, a 6to4 relay), so they are refused outright
            for net, words in _TRANSLATED:
                if addr in net:
                    return f"{addr} is {words}"
    checks = (
        ("is_unspecified", "an unspecified address"),
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    )
    for attr, words in checks:
        if getattr(addr, attr):
            return f"{addr} is {words}"
    if not addr.is_global:
        return f"{addr} is not a public address"
    return None


_TRANSLATED = (
    (ipaddress.ip_network("2002::/16"), "a 6to4 address (2002::/16)"),
    (ipaddress.ip_network("64:ff9b::/96"), "a NAT64 address (64:ff9b::/96)"),
    (ipaddress.ip_network("64:ff9b:1::/48"), "a local-use NAT64 address (64:ff9b:1::/48)"),
    (ipaddress.ip_network("2001::/32"), "a Teredo address (2001::/32)"),
)


def _allow_private(allow_private: bool | None) -> bool:
    if allow_private is None:
        return bool(getattr(settings, "SPREADWATCH_WEBHOOK_ALLOW_PRIVATE", False))
    return allow_private


def check_webhook_url(url: str, *, allow_private: bool | None = None, resolve=socket.getaddrinfo) -> list[str]:
    """The addresses ``url``'s host resolves to, or :class:`WebhookURLRefused` saying why it may not be used.
    ``allow_private`` defaults to ``settings.SPREADWATCH_WEBHOOK_ALLOW_PRIVATE`` (read at each call)."""
    allow = _allow_private(allow_private)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WebhookURLRefused(f"not a valid URL ({exc})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise WebhookURLRefused("only http and https URLs can receive webhooks")
    host = parts.hostname
    if not host:
        raise WebhookURLRefused("the URL has no host")
    if parts.username is not None or parts.password is not None:
        raise WebhookURLRefused("the URL may not carry a user name or password")
    port = port or (443 if parts.scheme.lower() == "https" else 80)
    try:
        infos = resolve(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError) as exc:
        raise WebhookHostUnresolved(f"the host {host} cannot be resolved ({exc})") from None
    addresses = sorted({info[4][0] for info in infos})
    if not addresses:
        raise WebhookHostUnresolved(f"the host {host} resolves to no address")
    if not allow:
        for ip in addresses:
            reason = address_refused_reason(ip)
            if reason:
                raise WebhookURLRefused(
                    f"webhooks may not be sent to internal addresses: {host} resolves to {reason}"
                    " (SPREADWATCH_WEBHOOK_ALLOW_PRIVATE allows it)"
                )
    return addresses


def validate_webhook_url(url: str) -> None:
    """Django validator form of :func:`check_webhook_url` (an empty URL is fine: no webhook)."""
    if not url:
        return
    try:
        check_webhook_url(url)
    except WebhookURLRefused as exc:
        raise ValidationError(str(exc), code="webhook_url_refused") from None


def guarded_create_connection(address, timeout=socket._GLOBAL_DEFAULT_TIMEOUT, source_address=None, **kwargs):
    """``socket.create_connection`` that refuses (closes and raises :class:`WebhookAddressRefused`) when the
    address actually connected to is internal, unless private addresses are allowed."""
    sock = socket.create_connection(address, timeout, source_address, **kwargs)
    if _allow_private(None):
        return sock
    try:
        peer = sock.getpeername()[0]
    except OSError:
        sock.close()
        raise
    reason = address_refused_reason(peer)
    if reason:
        sock.close()
        raise WebhookAddressRefused(f"webhooks may not be sent to internal addresses: connected to {reason}")
    return sock


# --- login rate limiting ------------------------------------------------------------------------------------------


def client_ip(request) -> str:
    """The client's address: REMOTE_ADDR, or behind a trusted proxy (``SPREADWATCH_BEHIND_PROXY``) the last
    address of X-Forwarded-For (the one the proxy added; the ones before it are the client's word)."""
    if request is None:
        return ""
    if getattr(settings, "SPREADWATCH_BEHIND_PROXY", False):
        fwd = request.META.get("HTTP_X_FORWARDED_FOR", "")
        parts = [p.strip() for p in fwd.split(",") if p.strip()]
        if parts:
            return parts[-1]
    return request.META.get("REMOTE_ADDR", "") or ""


# Counters live in the shared cache (Redis), so every web process sees them. When it is unreachable
# (monitor/softcache.py answers a miss) they fall back to a per-process count: the limits still hold, per process,
# instead of every attempt being free (fail open) or every login refused (fail closed).
_local = LocMemCache("spreadwatch-rate-limits", {"TIMEOUT": 900, "OPTIONS": {"MAX_ENTRIES": 100_000}})


def _hash_key(kind: str, *parts: str) -> str:
    # the database's name is part of it, as for the other shared keys: two deployments (or test runs) sharing a
    # Redis must not count each other's failures
    from django.db import connection

    raw = "\x00".join((connection.settings_dict["NAME"], *parts)).encode()
    return f"spreadwatch:{kind}:" + hashlib.sha256(raw).hexdigest()


def _count(key: str) -> int:
    shared = cache.get(key)
    if shared is None:
        return int(_local.get(key, 0) or 0)
    return int(shared)


def _hit(key: str, window: int) -> int:
    """Count one event in ``key``'s window (it starts at the first event); returns the count."""
    cache.add(key, 0, timeout=window)
    try:
        cache.incr(key)
    except ValueError:  # expired between add and incr, or the cache is unreachable
        cache.set(key, 1, timeout=window)
    if cache.get(key) is not None:
        return _count(key)
    _local.add(key, 0, timeout=window)
    try:
        return _local.incr(key)
    except ValueError:
        _local.set(key, 1, timeout=window)
        return 1


def _forget(key: str) -> None:
    cache.delete(key)
    _local.delete(key)


def _key(username: str | None, ip: str) -> str:
    return _hash_key("login-failures", (username or "").strip().lower(), ip)


def _user_key(username: str | None) -> str:
    return _hash_key("login-failures-user", (username or "").strip().lower())


def _ip_key(ip: str) -> str:
    return _hash_key("login-failures-ip", ip)


def _limits() -> tuple[int, int]:
    return (
        int(getattr(settings, "SPREADWATCH_LOGIN_MAX_FAILURES", 10)),
        int(getattr(settings, "SPREADWATCH_LOGIN_WINDOW_S", 900)),
    )


def _wide_limits() -> tuple[int, int]:
    return (
        int(getattr(settings, "SPREADWATCH_LOGIN_MAX_FAILURES_PER_USER", 30)),
        int(getattr(settings, "SPREADWATCH_LOGIN_MAX_FAILURES_PER_ADDRESS", 30)),
    )


def login_failures(username: str | None, ip: str) -> int:
    return _count(_key(username, ip))


def login_lock(username: str | None, ip: str) -> str | None:
    """Why logins for ``username`` from ``ip`` are refused now (the message to show), or None."""
    max_failures, window = _limits()
    per_user, per_ip = _wide_limits()
    minutes = max(1, round(window / 60))
    if max_failures > 0 and _count(_key(username, ip)) >= max_failures:
        return LOCKED_MESSAGE.format(minutes=minutes)
    if per_user > 0 and _count(_user_key(username)) >= per_user:
        return f"Too many failed logins for this user. Try again in {minutes} minutes."
    if per_ip > 0 and _count(_ip_key(ip)) >= per_ip:
        return f"Too many failed logins from your address. Try again in {minutes} minutes."
    return None


def login_locked(username: str | None, ip: str) -> bool:
    return login_lock(username, ip) is not None


def login_failed(username: str | None, ip: str) -> int:
    """Count one failure for the username from the address, the username from anywhere and the address for any
    username (the windows start at their first failure); returns the first count."""
    _, window = _limits()
    _hit(_user_key(username), window)
    _hit(_ip_key(ip), window)
    return _hit(_key(username, ip), window)


def login_reset(username: str | None, ip: str) -> None:
    """After a successful login: the user's own counts start again (the address's does not: one valid account
    must not buy a sprayer a fresh budget)."""
    _forget(_key(username, ip))
    _forget(_user_key(username))


LOCKED_MESSAGE = "Too many failed logins for this user from your address. Try again in {minutes} minutes."


def locked_message(username: str | None = None, ip: str | None = None) -> str:
    if username is not None and ip is not None:
        why = login_lock(username, ip)
        if why:
            return why
    _, window = _limits()
    return LOCKED_MESSAGE.format(minutes=max(1, round(window / 60)))


# --- API token failures and password-reset requests ----------------------------------------------------------------


def api_auth_failed(ip: str) -> int:
    """Count a refused API credential from ``ip``."""
    _, window = _limits()
    return _hit(_hash_key("api-auth-failures", ip), window)


def api_auth_locked(ip: str) -> bool:
    _, per_ip = _wide_limits()
    return per_ip > 0 and _count(_hash_key("api-auth-failures", ip)) >= per_ip


def api_locked_message() -> str:
    _, window = _limits()
    return f"Too many failed API authentications from your address. Try again in {max(1, round(window / 60))} minutes."


def password_reset_allowed(ip: str, email: str) -> bool:
    """Count a password-reset request from ``ip`` for ``email``; False once either has asked too often in the
    window (each request may send an email: an open mail cannon otherwise)."""
    limit = int(getattr(settings, "SPREADWATCH_PASSWORD_RESET_MAX", 5))
    if limit <= 0:
        return True
    _, window = _limits()
    by_ip = _hit(_hash_key("reset-ip", ip), window)
    by_email = _hit(_hash_key("reset-email", (email or "").strip().lower()), window)
    return by_ip <= limit and by_email <= limit


def password_reset_message() -> str:
    _, window = _limits()
    return f"Too many password-reset requests. Try again in {max(1, round(window / 60))} minutes."


@receiver(user_login_failed, dispatch_uid="spreadwatch-login-failed")
def _on_login_failed(sender, credentials, request=None, **kwargs):
    username = (credentials or {}).get("username")
    if request is None or username is None:
        return
    login_failed(username, client_ip(request))


@receiver(user_logged_in, dispatch_uid="spreadwatch-logged-in")
def _on_logged_in(sender, request, user, **kwargs):
    if request is not None:
        login_reset(user.get_username(), client_ip(request))


class RateLimitedModelBackend(ModelBackend):
    """Django's ModelBackend, refusing (``PermissionDenied``: no later backend is tried) while the username
    is locked out for the client's address."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(self._username_field())
        if request is not None:
            why = login_lock(username, client_ip(request))
            if why:
                raise PermissionDenied(why)
        return super().authenticate(request, username=username, password=password, **kwargs)

    @staticmethod
    def _username_field() -> str:
        from django.contrib.auth import get_user_model

        return get_user_model().USERNAME_FIELD


class LoginRateLimitMiddleware:
    """Answers a POST to the login page for a locked-out username with the login page and a clear message
    (429), without checking the password."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and self._is_login(request.path_info):
            username = request.POST.get("username")
            why = login_lock(username, client_ip(request)) if username else None
            if why:
                return self._refuse(request, why)
        return self.get_response(request)

    @staticmethod
    def _is_login(path: str) -> bool:
        from django.urls import NoReverseMatch, reverse

        try:
            return path == reverse(settings.LOGIN_URL)
        except NoReverseMatch:
            return False

    @staticmethod
    def _refuse(request, why: str):
        from django.contrib.auth.forms import AuthenticationForm
        from django.forms.utils import ErrorDict
        from django.shortcuts import render

        form = AuthenticationForm(request, data=request.POST)
        form.cleaned_data = {}
        # no password check: the form carries only the lockout message
        form._errors = ErrorDict({"__all__": form.error_class([why])})
        ctx = {"form": form, "next": request.POST.get("next", "")}
        return render(request, "frontend/login.html", ctx, status=429)


class RateLimitedPasswordResetView(PasswordResetView):
    """Django's password-reset form, answering 429 (with the form and a message, no email) once the address or
    the email asked too often within the window (``password_reset_allowed``)."""

    def form_valid(self, form):
        if not password_reset_allowed(client_ip(self.request), form.cleaned_data.get("email", "")):
            form.add_error(None, password_reset_message())
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().form_valid(form)
