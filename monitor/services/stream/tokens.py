"""Stream tokens: a workspace's append-only credentials for ``POST /api/v1/stream/``.

The key (``sws_`` and 43 URL-safe characters, distinct from the API tokens' ``sw_``) is shown once, at creation;
only its SHA-256 is stored. Owners of the workspace (and superusers) create and revoke them. A stream token can
append to its workspace's stream and do nothing else: every other endpoint refuses it (it is not an API token),
and the stream endpoint accepts nothing but stream tokens (docs/live.md)."""

from __future__ import annotations

import datetime as dt
import secrets

from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from ...models import Membership, StreamToken, Workspace
from ..tokens import hash_key

__all__ = ["KEY_PREFIX", "stream_token_create", "stream_token_revoke", "stream_token_for_key", "can_manage_tokens"]

KEY_PREFIX = "sws_"
USED_EVERY = dt.timedelta(minutes=1)  # last_used_at is written at most this often per token


def can_manage_tokens(*, user, workspace: Workspace) -> bool:
    """Owners of the workspace and superusers manage its stream tokens; analysts do not (a token writes data)."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return Membership.objects.filter(user=user, workspace=workspace, role=Membership.Role.OWNER).exists()


def stream_token_create(*, workspace: Workspace, user=None, name: str = "") -> tuple[StreamToken, str]:
    """A new token for ``workspace`` and its key (shown this once). ``user``: who makes it (must be allowed to)."""
    if user is not None and not can_manage_tokens(user=user, workspace=workspace):
        raise PermissionDenied("only the workspace's owners manage its stream tokens")
    name = (name or "").strip()
    if len(name) > 100:
        raise ValidationError({"name": "at most 100 characters"})
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    token = StreamToken.objects.create(
        workspace=workspace,
        name=name,
        key_hash=hash_key(key),
        prefix=key[: len(KEY_PREFIX) + 6],
        created_by=user if user is not None and user.is_authenticated else None,
    )
    return token, key


def stream_token_revoke(*, token: StreamToken, user=None) -> StreamToken:
    if user is not None and not can_manage_tokens(user=user, workspace=token.workspace):
        raise PermissionDenied("only the workspace's owners manage its stream tokens")
    StreamToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db()
    return token


def stream_token_for_key(key: str) -> tuple[StreamToken | None, str | None]:
    """The live token of ``key`` and None, or None and why it is refused. Marks it used (at most once a minute)."""
    if not key.startswith(KEY_PREFIX):
        return None, "Not a stream token: the stream takes only stream tokens (sws_...)."
    token = StreamToken.objects.select_related("workspace").filter(key_hash=hash_key(key)).first()
    if token is None:
        return None, "Invalid stream token."
    if token.revoked_at is not None:
        return None, "This stream token was revoked."
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > USED_EVERY:
        StreamToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token, None
