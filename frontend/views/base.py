"""What every page's view shares: the page size of lists and the context every workspace page renders with."""

from __future__ import annotations

from django.http import HttpRequest

from monitor import selectors

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
