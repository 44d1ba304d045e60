"""Workspaces and members in the dashboard: creating a workspace, its settings page (members, roles,
invitations, leaving) and the page an invitation link opens. The rules (who may do what, never the last owner)
are the services' (monitor/services/workspaces.py); these views render and redirect."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import BaseUserCreationForm
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from monitor import selectors, services

from ..forms_workspaces import InviteForm, RoleForm, WorkspaceForm, add_service_errors
from .base import workspace_context


@login_required
@require_http_methods(["GET", "POST"])
def workspace_new(request: HttpRequest) -> HttpResponse:
    """Any signed-in user may create a workspace; they become its owner."""
    form = WorkspaceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            ws = services.workspace_create(name=form.cleaned_data["name"], owner=request.user)
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            messages.success(request, f"Created the workspace {ws.name}. Upload a collection, or invite members.")
            return redirect("workspace-settings", ws=ws.slug)
    ctx = {"form": form, "workspaces": selectors.workspaces_for_user(request.user)}
    return render(request, "frontend/workspace_new.html", ctx, status=400 if form.errors else 200)


def _settings_page(request, workspace, *, invite_form=None, link=None, invited=None, status=200) -> HttpResponse:
    manage = selectors.can_manage_members(request.user, workspace)
    members = list(selectors.members_list(workspace))
    for m in members:
        m.role_form = RoleForm(initial={"role": m.role}, prefix=f"m{m.pk}")
    ctx = workspace_context(
        request,
        workspace,
        manage=manage,
        members=members,
        owners=sum(m.role == m.Role.OWNER for m in members),
        my_role=selectors.membership_role(request.user, workspace),
        is_member=any(m.user_id == request.user.pk for m in members),
        invitations=selectors.invitations_pending(workspace) if manage else [],
        invite_form=invite_form or InviteForm(),
        invite_link=link,
        invited=invited,
    )
    resp = render(request, "frontend/workspace_settings.html", ctx, status=status)
    if link:
        resp["Cache-Control"] = "no-store"  # the invitation link is shown this once
    return resp


@login_required
@require_http_methods(["GET"])
def workspace_settings(request: HttpRequest, ws: str) -> HttpResponse:
    return _settings_page(request, selectors.workspace_for_user(request.user, ws))


@login_required
@require_POST
def member_invite(request: HttpRequest, ws: str) -> HttpResponse:
    """Add an existing user, or e-mail an invitation link (shown here once, not stored: only its hash is)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    form = InviteForm(request.POST)
    if form.is_valid():
        try:
            member, invitation, link = services.member_invite(
                workspace=workspace,
                actor=request.user,
                who=form.cleaned_data["who"],
                role=form.cleaned_data["role"],
                link_for=lambda token: request.build_absolute_uri(reverse("invitation-accept", args=[token])),
            )
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            if member is not None:
                messages.success(request, f"Added {member.user.get_username()} as {member.get_role_display().lower()}.")
                return redirect("workspace-settings", ws=workspace.slug)
            return _settings_page(request, workspace, link=link, invited=invitation)
    return _settings_page(request, workspace, invite_form=form, status=400)


@login_required
@require_POST
def member_role(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    member = selectors.member_get(workspace, pk)
    form = RoleForm(request.POST, prefix=f"m{member.pk}")
    if not form.is_valid():
        messages.error(request, "Choose a role.")
        return redirect("workspace-settings", ws=workspace.slug)
    try:
        services.member_set_role(membership=member, actor=request.user, role=form.cleaned_data["role"])
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"{member.user.get_username()} is now {member.get_role_display().lower()}.")
    return redirect("workspace-settings", ws=workspace.slug)


@login_required
@require_POST
def member_remove(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    member = selectors.member_get(workspace, pk)
    try:
        services.member_remove(membership=member, actor=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("workspace-settings", ws=workspace.slug)
    if member.user_id == request.user.pk:
        messages.success(request, f"You left {workspace.name}.")
        return redirect("home")
    messages.success(request, f"Removed {member.user.get_username()} from {workspace.name}.")
    return redirect("workspace-settings", ws=workspace.slug)


@login_required
@require_POST
def workspace_leave(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    try:
        services.workspace_leave(workspace=workspace, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("workspace-settings", ws=workspace.slug)
    messages.success(request, f"You left {workspace.name}.")
    return redirect("home")


@login_required
@require_POST
def invitation_revoke(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    inv = selectors.invitation_get(workspace, pk)
    services.invitation_revoke(invitation=inv, actor=request.user)
    messages.success(request, f"Withdrew the invitation to {inv.email}.")
    return redirect("workspace-settings", ws=workspace.slug)


class SignUpForm(BaseUserCreationForm):
    """A new account from an invitation: username and password (checked by the password validators); its e-mail
    address is the invitation's."""


@never_cache
@require_http_methods(["GET", "POST"])
def invitation_accept(request: HttpRequest, token: str) -> HttpResponse:
    """The page an invitation link opens. Signed in: join. Not signed in: sign in (and come back), or create an
    account here — the only sign-up there is. The token in the URL is the capability."""
    inv = selectors.invitation_by_token(token)
    problem = "this invitation link is not valid" if inv is None else inv.problem(timezone.now())
    signup = SignUpForm(request.POST if request.POST.get("action") == "signup" else None)
    if request.method == "POST" and not problem:
        try:
            if request.user.is_authenticated:
                m = services.invitation_accept(token=token, user=request.user)
                messages.success(request, f"You joined {m.workspace.name} as {m.get_role_display().lower()}.")
                return redirect("overview", ws=m.workspace.slug)
            if signup.is_valid():
                user, m = services.invitation_accept_new_user(
                    token=token,
                    username=signup.cleaned_data["username"],
                    password=signup.cleaned_data["password1"],
                )
                login(request, user)
                messages.success(request, f"Welcome, {user.get_username()}: you joined {m.workspace.name}.")
                return redirect("overview", ws=m.workspace.slug)
        except ValidationError as exc:
            if hasattr(exc, "error_dict") and "username" in exc.error_dict:
                signup.add_error("username", exc.error_dict["username"])
            else:
                problem = " ".join(exc.messages)
    status = 404 if inv is None else 410 if problem else 400 if signup.errors else 200
    ctx = {"invitation": None if inv is None else inv, "problem": problem, "signup": signup, "token": token}
    return render(request, "frontend/invitation.html", ctx, status=status)
