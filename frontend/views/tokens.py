"""The user's REST API tokens: the list (name, prefix, workspace, created, expires, last used, revoked), a new
one (its key shown this once, with a copy button: only a hash is stored) and revoking one. The service
(monitor/services/tokens.py) checks the workspace and the lifetime."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from monitor import selectors, services

from ..forms_workspaces import TokenForm, add_service_errors


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    wss = list(selectors.workspaces_for_user(request.user))
    form = TokenForm(request.POST or None, workspaces=wss)
    key = created = None
    if request.method == "POST" and form.is_valid():
        slug = form.cleaned_data["workspace"]
        try:
            created, key = services.api_token_create(
                user=request.user,
                workspace=next((w for w in wss if w.slug == slug), None) if slug else None,
                name=form.cleaned_data["name"],
                days=form.cleaned_data["days"],
            )
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            form = TokenForm(workspaces=wss)
    ctx = {
        "tokens": selectors.api_tokens_for_user(request.user),
        "form": form,
        "key": key,
        "created": created,
        "now": timezone.now(),
        "workspaces": wss,
    }
    resp = render(request, "frontend/tokens.html", ctx, status=400 if form.errors else 200)
    if key:
        resp["Cache-Control"] = "no-store"  # the key is shown this once
    return resp


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = selectors.api_token_get(request.user, pk)
    services.api_token_revoke(token=token)
    messages.success(request, f"Revoked the token {token.prefix}…{' (' + token.name + ')' if token.name else ''}.")
    return redirect("account-tokens")
