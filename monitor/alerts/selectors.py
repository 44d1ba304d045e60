"""Every read of the alerts app: the user's inbox, their rules and one rule of theirs.

Like ``monitor.selectors`` each read takes the workspace, and a rule is only reachable by its owner (another
user's rule answers 404 as well). They live in the alerts app, beside its models and services, so that
``monitor.selectors`` never needs the alerts app."""

from __future__ import annotations

import datetime as dt

from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from django.http import Http404

from monitor.models import Workspace

from .kinds import KIND_PARAMS
from .models import Alert, AlertRule


def inbox_for_user(user, workspace: Workspace, *, unread_only: bool = False) -> QuerySet[Alert]:
    """The user's alerts in the workspace, newest first (the rules they own)."""
    qs = Alert.objects.filter(workspace=workspace, rule__owner=user, rule__inbox=True).select_related(
        "rule", "account", "tweet"
    )
    return qs.filter(read_at__isnull=True) if unread_only else qs


def inbox_page_order(user, workspace: Workspace) -> QuerySet[Alert]:
    """The inbox as its page lists it: unread first, then the newest window, the best rank, the newest."""
    return (
        inbox_for_user(user, workspace)
        .annotate(unread=ExpressionWrapper(Q(read_at__isnull=True), output_field=BooleanField()))
        .order_by("-unread", "-window_end", "rank", "-created_at", "pk")
    )


def inbox_alert_get(user, workspace: Workspace, pk: int) -> Alert:
    """One alert of the user's inbox (404 otherwise)."""
    alert = inbox_for_user(user, workspace).filter(pk=pk).first()
    if alert is None:
        raise Http404("no such alert")
    return alert


def alerts_unread_count(user, workspace: Workspace) -> int:
    """The unread alerts of the user's rules in the workspace (what the overview counts: every rule of theirs,
    its inbox channel on or not)."""
    return Alert.objects.filter(workspace=workspace, rule__owner=user, read_at__isnull=True).count()


def rules_for_owner(user, workspace: Workspace) -> QuerySet[AlertRule]:
    """The user's rules in the workspace, with their scope (publisher)."""
    return AlertRule.objects.filter(workspace=workspace, owner=user).select_related("publisher")


def rules_list(user, workspace: Workspace, *, now: dt.datetime) -> list[AlertRule]:
    """The user's rules by name, each with ``snoozed`` (at ``now``) and ``params``: the (name, value) pairs of
    the parameters its kind reads."""
    rows = list(rules_for_owner(user, workspace).order_by("name", "pk"))
    for r in rows:
        r.snoozed = r.muted_until is not None and r.muted_until > now
        r.params = [(p, getattr(r, p)) for p in KIND_PARAMS[r.kind]]
    return rows


def rule_get(user, workspace: Workspace, pk: int) -> AlertRule:
    """One of the user's rules in the workspace (404 otherwise, another user's rule included)."""
    rule = rules_for_owner(user, workspace).filter(pk=pk).first()
    if rule is None:
        raise Http404("no such alert rule")
    return rule


def rule_for_unsubscribe_token(token: str) -> AlertRule | None:
    """The rule an email's unsubscribe link names, or None."""
    return AlertRule.objects.filter(unsubscribe_token=token).first() if token else None
