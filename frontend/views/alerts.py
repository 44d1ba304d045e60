"""The alert pages: the inbox, the user's rules with their actions, and the rule form.

Workspace-scoped like every page (``selectors.workspace_for_user``: 404 for a workspace the user is not in);
a rule is only reachable by its owner (another user's rule answers 404 as well). Reads go through
``monitor.alerts.selectors``, writes through ``monitor.alerts.services``."""

from __future__ import annotations

import datetime as dt

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from monitor import selectors
from monitor.alerts import selectors as alert_selectors
from monitor.alerts import services as alerts
from monitor.alerts.kinds import CLAIM_KIND_DEFAULT, KIND_PARAMS

from ..forms_alerts import AlertRuleForm
from .base import PAGE, workspace_context

SNOOZES = {"snooze-1d": dt.timedelta(days=1), "snooze-7d": dt.timedelta(days=7)}
RULE_ACTIONS = (*SNOOZES, "unsnooze", "mute", "unmute", "delete", "rotate-secret")


@login_required
@require_GET
def inbox(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    qs = alert_selectors.inbox_page_order(request.user, workspace)
    page = Paginator(qs, PAGE).get_page(request.GET.get("page"))
    unread = alert_selectors.inbox_for_user(request.user, workspace, unread_only=True).count()
    return render(request, "frontend/alerts.html", workspace_context(request, workspace, page=page, unread=unread))


@login_required
@require_POST
def alert_read(request: HttpRequest, ws: str, pk: int) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    alert = alert_selectors.inbox_alert_get(request.user, workspace, pk)
    alerts.alert_mark_read(alert=alert)
    return redirect(_back(request, "alerts", workspace))


@login_required
@require_POST
def alerts_read_all(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    n = alerts.alerts_mark_all_read(user=request.user, workspace=workspace)
    messages.success(request, f"Marked {n} alert{'s' if n != 1 else ''} as read.")
    return redirect("alerts", ws=workspace.slug)


def _back(request: HttpRequest, name: str, workspace) -> str:
    from django.urls import reverse
    from django.utils.http import url_has_allowed_host_and_scheme

    nxt = request.POST.get("next", "")
    if nxt and url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
        return nxt
    return reverse(name, kwargs={"ws": workspace.slug})


@login_required
@require_GET
def rules(request: HttpRequest, ws: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    now = timezone.now()
    rows = alert_selectors.rules_list(request.user, workspace, now=now)
    return render(request, "frontend/alerts_rules.html", workspace_context(request, workspace, rules=rows, now=now))


@login_required
@require_POST
def rule_action(request: HttpRequest, ws: str, pk: int, action: str) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    rule = alert_selectors.rule_get(request.user, workspace, pk)
    if action not in RULE_ACTIONS:
        raise Http404("no such action")
    if action in SNOOZES:
        until = timezone.now() + SNOOZES[action]
        alerts.rule_snooze(rule=rule, until=until)
        messages.success(request, f'"{rule.name}" is snoozed until {until:%Y-%m-%d %H:%M} UTC.')
    elif action == "unsnooze":
        alerts.rule_snooze(rule=rule, until=None)
        messages.success(request, f'"{rule.name}" is awake again.')
    elif action in ("mute", "unmute"):
        alerts.rule_mute(rule=rule, muted=action == "mute")
        messages.success(request, f'"{rule.name}" is {"muted" if action == "mute" else "active again"}.')
    elif action == "delete":
        name = rule.name
        alerts.rule_delete(rule=rule)
        messages.success(request, f'Deleted the rule "{name}" and its alerts.')
    elif action == "rotate-secret":
        secret = alerts.rule_rotate_secret(rule=rule)
        messages.warning(request, f'New webhook secret for "{rule.name}" (shown once, copy it now): {secret}')
    return redirect("alert-rules", ws=workspace.slug)


@login_required
@require_POST
def evaluate(request: HttpRequest, ws: str) -> HttpResponse:
    """Evaluate the workspace's rules now (the task: in the request without a broker, else on a worker)."""
    from monitor.alerts.tasks import evaluate_alerts

    workspace = selectors.workspace_for_user(request.user, ws)
    result = evaluate_alerts.delay(workspace.pk)
    if getattr(result, "ready", lambda: False)() and result.successful():
        n = result.result
        messages.success(request, f"Evaluated the rules of {workspace.name}: {n} new alert{'s' if n != 1 else ''}.")
    else:
        messages.success(request, "The evaluation has been queued; new alerts appear in the inbox when it finishes.")
    return redirect("alert-rules", ws=workspace.slug)


@login_required
@require_http_methods(["GET", "POST"])
def rule_form(request: HttpRequest, ws: str, pk: int | None = None) -> HttpResponse:
    workspace = selectors.workspace_for_user(request.user, ws)
    rule = alert_selectors.rule_get(request.user, workspace, pk) if pk is not None else None
    initial = AlertRuleForm.initial_for(rule) if rule is not None else None
    if rule is None and request.GET.get("claim", "").isdigit():  # "Set up an alert" on a claim's page
        initial = {"claim": request.GET["claim"], "kind": CLAIM_KIND_DEFAULT}
    form = AlertRuleForm(request.POST or None, workspace=workspace, initial=initial)
    if request.method == "POST" and form.is_valid():
        fields = form.rule_fields()
        try:
            if rule is None:
                rule = alerts.rule_create(workspace=workspace, owner=request.user, **fields)
                messages.success(request, f'Created the rule "{rule.name}".')
                if rule.webhook_url:
                    messages.warning(request, f"Webhook secret (shown once, copy it now): {rule.webhook_secret}")
            else:
                alerts.rule_update(rule=rule, **fields)
                messages.success(request, f'Saved the rule "{rule.name}".')
        except ValidationError as exc:
            for field, errs in getattr(exc, "message_dict", {"__all__": exc.messages}).items():
                form.add_error(field if field in form.fields else None, errs)
        except ValueError as exc:
            form.add_error("publisher", str(exc))
        else:
            return redirect("alert-rules", ws=workspace.slug)
    ctx = workspace_context(request, workspace, form=form, rule=rule, kind_params=KIND_PARAMS)
    return render(request, "frontend/alerts_rule_form.html", ctx, status=400 if form.errors else 200)
