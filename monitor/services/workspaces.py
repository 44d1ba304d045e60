"""Workspaces and who may see them."""

from __future__ import annotations

from django.utils.text import slugify

from ..models import Membership, Workspace

__all__ = ["workspace_create", "membership_add"]


def workspace_create(*, name: str, owner=None, slug: str = "") -> Workspace:
    ws = Workspace(name=name, slug=slug or slugify(name)[:60])
    ws.full_clean()
    ws.save()
    if owner is not None:
        membership_add(workspace=ws, user=owner, role=Membership.Role.OWNER)
    return ws


def membership_add(*, workspace: Workspace, user, role: str = Membership.Role.ANALYST) -> Membership:
    m, _ = Membership.objects.get_or_create(workspace=workspace, user=user, defaults={"role": role})
    if m.role != role:
        m.role = role
        m.full_clean()
        m.save(update_fields=["role"])
    return m
