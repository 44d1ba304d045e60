"""The staff's health page: queue depths, runs in flight and waiting per workspace, the outbox, stalled work and
the workers at work (``monitor.selectors.health``). Staff only: it names every workspace. ``/healthz`` (JSON, no
login) is the load balancers' check and stays as it is."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from monitor.selectors.health import health_overview, workers_ping


@never_cache
@login_required
@require_GET
def health(request: HttpRequest) -> HttpResponse:
    if not request.user.is_staff:
        raise PermissionDenied("the health page is for staff")
    ping = request.GET.get("ping") == "1"
    ctx = {"h": health_overview(), "ping": ping, "pinged": workers_ping() if ping else None}
    return render(request, "frontend/health.html", ctx)
