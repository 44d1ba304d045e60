"""A workspace's members and pending invitations, who may manage them, and an invitation by its link's token."""

from __future__ import annotations

import hashlib

from django.db.models import QuerySet
from django.http import Http404
from django.utils import timezone

from ..models import Invitation, Membership, Workspace

__all__ = [
    "can_manage_members",
    "invitation_by_token",
    "invitation_get",
    "invitations_pending",
    "member_get",
    "members_list",
]


def can_manage_members(user, ws: Workspace) -> bool:
    """Whether ``user`` may invite, change roles and remove members of ``ws``: an owner, or a superuser."""
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return Membership.objects.filter(workspace=ws, user=user, role__in=Membership.MANAGER_ROLES).exists()


def members_list(ws: Workspace) -> QuerySet[Membership]:
    """The workspace's members, owners first, then by username."""
    return (
        Membership.objects.filter(workspace=ws)
        .select_related("user")
        .order_by("-role", "user__username")  # "owner" > "analyst"
    )


def member_get(ws: Workspace, pk: int) -> Membership:
    m = Membership.objects.filter(workspace=ws, pk=pk).select_related("user", "workspace").first()
    if m is None:
        raise Http404("no such member in this workspace")
    return m


def invitations_pending(ws: Workspace) -> QuerySet[Invitation]:
    """Invitations not yet used, withdrawn or expired, newest first."""
    return Invitation.objects.filter(
        workspace=ws, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
    ).select_related("invited_by")


def invitation_get(ws: Workspace, pk: int) -> Invitation:
    inv = Invitation.objects.filter(workspace=ws, pk=pk).select_related("workspace").first()
    if inv is None:
        raise Http404("no such invitation in this workspace")
    return inv


def invitation_by_token(token: str) -> Invitation | None:
    """The invitation a link's token names (any state: the accept page says why one cannot be used), or None."""
    digest = hashlib.sha256(token.encode()).hexdigest()
    return Invitation.objects.filter(token_hash=digest).select_related("workspace", "invited_by").first()
