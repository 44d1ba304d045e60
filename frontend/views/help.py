"""The help page: the measure, its aggregates and units, where the data comes from and the API, in plain words.
It holds no data, so it is open without a login (the login page links it)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from monitor import selectors


@require_GET
def help_page(request: HttpRequest) -> HttpResponse:
    workspaces = selectors.workspaces_for_user(request.user) if request.user.is_authenticated else []
    return render(request, "frontend/help.html", {"workspaces": workspaces})
