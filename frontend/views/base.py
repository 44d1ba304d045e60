"""What every page's view shares: the page size of lists, the context every workspace page renders with, a
service's errors put on a form, and starting an analysis run from its form."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from monitor import selectors, services

PAGE = 50


def workspace_context(request: HttpRequest, ws, **kw) -> dict:
    """The template context of a workspace's page: the workspace, the user's workspaces (the switcher), their
    notices and ``kw``."""
    return {
        "ws": ws,
        "workspaces": selectors.workspaces_for_user(request.user),
        # what the service must tell the user here (a run or import that failed for good after its workers died)
        "notices": selectors.notices_unread(request.user, ws),
        **kw,
    }


def field_errors(form, exc) -> None:
    """Put a service's ``ValidationError`` on ``form``: each message on the field its key names (e.g. a run beyond
    the workspace's budget names ``samples`` or ``eps``), the rest above the form."""
    if hasattr(exc, "error_dict"):
        for key, errors in exc.message_dict.items():
            form.add_error(key if key in form.fields else None, errors)
    else:
        form.add_error(None, exc.messages)


def start_analysis(
    request: HttpRequest,
    workspace,
    form,
    *,
    collection,
    algorithm: str,
    params: Callable[[dict], dict],
    page: Callable[..., HttpResponse],
    said: Callable,
    then: str,
) -> HttpResponse:
    """Start an analysis run from its posted ``form`` over the workspace or ``collection``: the run's parameters
    are ``params(cleaned_data)`` (with the collection's pk added), ``said(run)`` the message, ``then`` the page to go
    back to. A form that does not validate, or a run the service refuses (a parameter, the budget), renders
    ``page(request, workspace, collection=..., form=..., status=400)`` with each error on its field."""
    if not form.is_valid():
        return page(request, workspace, collection=collection, form=form, status=400)
    run_params = params(form.cleaned_data)
    if collection is not None:
        run_params["collection"] = collection.pk
    try:
        run = services.compute_run_start(
            workspace=workspace,
            collection=collection,
            user=request.user,
            backend=form.cleaned_data["backend"],
            algorithm=algorithm,
            params=run_params,
        )
    except ValidationError as exc:
        field_errors(form, exc)
        return page(request, workspace, collection=collection, form=form, status=400)
    messages.success(request, said(run))
    return redirect(then)
