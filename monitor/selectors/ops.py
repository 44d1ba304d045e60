"""What the service itself tells a user: their notices in a workspace, and their API tokens."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import Http404

from ..models import ApiToken, Notice, Workspace

__all__ = ["api_token_get", "api_tokens_for_user", "notice_get", "notices_unread"]


def notices_unread(user, ws: Workspace) -> QuerySet[Notice]:
    """The user's notices in the workspace that they have not dismissed, newest first."""
    if not user.is_authenticated:
        return Notice.objects.none()
    return Notice.objects.filter(workspace=ws, user=user, read_at__isnull=True)[:20]


def notice_get(user, ws: Workspace, pk: int) -> Notice:
    n = Notice.objects.filter(workspace=ws, user=user, pk=pk).first()
    if n is None:
        raise Http404("no such notice")
    return n


def api_tokens_for_user(user) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).select_related("workspace")


def api_token_get(user, pk: int) -> ApiToken:
    """One of the user's tokens (404 otherwise, another user's included)."""
    t = api_tokens_for_user(user).filter(pk=pk).first()
    if t is None:
        raise Http404("no such token")
    return t
