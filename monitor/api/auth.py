"""API authentication: :class:`~monitor.models.ApiToken` keys (``Authorization: Token <key>`` or ``Bearer``),
with a rate limit on failures, and :class:`TokenScope`, which keeps a workspace token inside its workspace.

A key is refused when it is unknown, revoked, expired, its user inactive, or its user's password changed since
it was made (the token remembers the session hash, which covers the password hash). Every refusal counts
against the client's address (``monitor.security``): past the limit the API answers 429 without looking the key
up, so keys cannot be guessed at speed."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone
from django.utils.crypto import constant_time_compare
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import BasePermission

from .. import security
from ..models import ApiToken
from ..services.tokens import hash_key

KEYWORDS = (b"token", b"bearer")
USED_EVERY = dt.timedelta(minutes=1)  # last_used_at is written at most this often per token


class ApiTokenAuthentication(BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in KEYWORDS:
            return None
        ip = security.client_ip(request)
        if security.api_auth_locked(ip):
            raise exceptions.Throttled(detail=security.api_locked_message())
        if len(parts) != 2:
            security.api_auth_failed(ip)
            raise exceptions.AuthenticationFailed("Invalid token header.")
        try:
            key = parts[1].decode()
        except UnicodeError:
            security.api_auth_failed(ip)
            raise exceptions.AuthenticationFailed("Invalid token header.") from None
        token = ApiToken.objects.select_related("user", "workspace").filter(key_hash=hash_key(key)).first()
        now = timezone.now()
        why = self._refused(token, now)
        if why:
            security.api_auth_failed(ip)
            raise exceptions.AuthenticationFailed(why)
        if token.last_used_at is None or now - token.last_used_at > USED_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    @staticmethod
    def _refused(token: ApiToken | None, now: dt.datetime) -> str | None:
        if token is None:
            return "Invalid token."
        if token.revoked_at is not None:
            return "This token was revoked."
        if token.expires_at <= now:
            return "This token has expired."
        if not token.user.is_active:
            return "User inactive or deleted."
        if not constant_time_compare(token.auth_hash, token.user.get_session_auth_hash()):
            return "This token was revoked: the password changed after it was made."
        return None

    def authenticate_header(self, request) -> str:
        return self.keyword  # a 401 (not 403) for a missing or bad token


class TokenScope(BasePermission):
    """A token made for one workspace reads only that one: any other answers 404, like a workspace the user is
    not in (its existence is not revealed)."""

    def has_permission(self, request, view) -> bool:
        token = request.auth
        if isinstance(token, ApiToken) and token.workspace_id is not None:
            ws = getattr(view, "kwargs", {}).get("ws")
            if ws is not None and ws != token.workspace.slug:
                raise exceptions.NotFound()
        return True


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes :class:`ApiTokenAuthentication`."""

    target_class = "monitor.api.auth.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'Token-based authentication: "Token <key>" (or "Bearer <key>")',
        }
