"""An account's page: its influence per publisher and per day, its cascades, whom it amplified, and its look-alike
accounts and likely next amplifiers (who amplifies whom, docs/wtf.md)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_GET

from monitor import selectors
from monitor.cache import data_version

from ..forms_wtf import WtfForm
from .base import workspace_context


@login_required
@require_GET
def account(request: HttpRequest, ws: str, twitter_id: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    acc = selectors.account_get(workspace, twitter_id)
    ctx = workspace_context(
        request,
        workspace,
        account=acc,
        summary=selectors.account_summary(workspace, acc),
        # read only where the tables below the panels are rendered: not when they come from the read cache
        amplification=SimpleLazyObject(lambda: selectors.account_amplification(workspace, acc)),
        wtf=selectors.wtf_account(workspace, acc),
        coordination=selectors.account_coordination(workspace, acc),
        wtf_form=WtfForm(),
        # the tables below the panels, rendered once per data version (``{% read_cache %}``): at the 1M-retweet
        # benchmark their template was most of a warm page's time (benchmarks/data_layer.md)
        fragment_key=data_version(workspace),
    )
    return render(request, "frontend/account.html", ctx)
