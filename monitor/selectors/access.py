"""Access: which workspaces a user may read, and the lookups of one object *within* a workspace.

:func:`workspace_for_user` is the one place access is decided (404, not 403, for a workspace the user is not
in: its existence is not revealed); every ``*_get`` takes the workspace, so an object of another workspace
cannot leak through a forgotten filter."""

from __future__ import annotations

from django.http import Http404

from ..models import Account, Collection, ComputeRun, Membership, Tweet, Workspace


def workspaces_for_user(user):
    if not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    return Workspace.objects.filter(memberships__user=user)


def workspace_for_user(user, slug: str) -> Workspace:
    ws = workspaces_for_user(user).filter(slug=slug).first()
    if ws is None:
        raise Http404("no such workspace")
    return ws


def membership_role(user, ws: Workspace) -> str | None:
    if user.is_superuser:
        return Membership.Role.OWNER
    return Membership.objects.filter(user=user, workspace=ws).values_list("role", flat=True).first()


def account_get(ws: Workspace, twitter_id: int) -> Account:
    acc = Account.objects.filter(workspace=ws, twitter_id=twitter_id).first()
    if acc is None:
        raise Http404("no such account in this workspace")
    return acc


def collection_get(ws: Workspace, pk: int) -> Collection:
    c = Collection.objects.filter(workspace=ws, pk=pk).select_related("uploaded_by").first()
    if c is None:
        raise Http404("no such collection in this workspace")
    return c


def run_get(ws: Workspace, pk: int) -> ComputeRun:
    r = ComputeRun.objects.filter(workspace=ws, pk=pk).select_related("collection", "created_by").first()
    if r is None:
        raise Http404("no such compute run in this workspace")
    return r


def tweet_get(ws: Workspace, tweet_id: int) -> Tweet:
    t = Tweet.objects.filter(workspace=ws, tweet_id=tweet_id).select_related("author").first()
    if t is None:
        raise Http404("no such tweet in this workspace")
    return t
