"""REST API tokens: created for a user (optionally for one workspace), shown once, revoked by the user or by a
password change. Only a SHA-256 hash of the key is stored; :mod:`monitor.api.auth` checks a presented key."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone

from ..models import ApiToken, Membership, Workspace

__all__ = ["api_token_create", "api_token_revoke", "api_tokens_revoke_for_user", "hash_key"]

KEY_PREFIX = "sw_"
MAX_DAYS = 366


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_create(
    *, user, workspace: Workspace | None = None, name: str = "", days: int | None = None
) -> tuple[ApiToken, str]:
    """A new token for ``user`` and its key (shown this once). ``workspace``: the only workspace it may read
    (one the user is a member of); ``days``: until it expires (``SPREADWATCH_API_TOKEN_DAYS`` by default)."""
    days = int(days if days is not None else settings.SPREADWATCH_API_TOKEN_DAYS)
    if not 1 <= days <= MAX_DAYS:
        raise ValidationError({"days": f"a token lives 1 to {MAX_DAYS} days"})
    if workspace is not None and not Membership.objects.filter(workspace=workspace, user=user).exists():
        raise ValidationError({"workspace": "not a workspace of this user"})
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name[:100],
        key_hash=hash_key(key),
        prefix=key[: len(KEY_PREFIX) + 5],
        workspace=workspace,
        auth_hash=user.get_session_auth_hash(),
        expires_at=timezone.now() + dt.timedelta(days=days),
    )
    return token, key


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db()
    return token


def api_tokens_revoke_for_user(*, user) -> int:
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True).update(revoked_at=timezone.now())


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="spreadwatch-revoke-tokens-on-password")
def _on_user_saved(sender, instance, created, **kwargs) -> None:
    # set_password() leaves the new raw password in _password until save() has stored the hash: a password change
    # or reset through any path that saves the user (the reset form, the admin, changepassword). Tokens are also
    # checked against the password hash at every request (monitor/api/auth.py), which covers a raw UPDATE.
    if not created and getattr(instance, "_password", None) is not None:
        api_tokens_revoke_for_user(user=instance)
