"""Every write of the alerts app (``<entity>_<action>``), and the evaluation that raises alerts.

:func:`evaluate_workspace` runs after every compute run (the ``evaluate_alerts`` task) and on a schedule
(``evaluate_all``, beat). For every active, un-snoozed rule whose owner may still see the workspace it:

1. reads the candidates (:mod:`monitor.alerts.rules`; no writes);
2. in one transaction holding the rule's row lock (so two evaluations of one rule run one after the other):
   drops the candidates that already have an alert (dedupe: one alert per rule, account, window and tweet,
   also enforced by unique indexes), keeps at most ``max_alerts_per_day`` minus the alerts created for the
   rule in the last 24 hours, creates those and records how many it held back in ``suppressed_count`` (the
   rule's "rate limited: N more suppressed" note, set at every evaluation, with ``last_suppressed_at``; they
   are raised by a later evaluation once the 24 hours allow it), and, for a rule with a webhook,
   creates one :class:`WebhookDelivery` per alert;
3. after that transaction: emails the owner (one message per rule, with the unsubscribe link) and queues
   ``deliver_webhook`` (by name, through :mod:`monitor.jobs`) for each delivery when the surrounding
   transaction commits.

The inbox is the alert rows themselves (``selectors.inbox_for_user``; ``read_at`` null = unread). Evaluating twice
creates nothing new, so the tasks are idempotent. An alert is only raised for a rule that has the inbox on or
another channel: a rule with every channel off is skipped.

Mute = ``is_active`` off (:func:`rule_mute`), snooze = ``muted_until`` (:func:`rule_snooze`: a snoozed rule is
not evaluated, and what still holds when the snooze ends is raised then), unsubscribe =
:func:`rule_unsubscribe` (email off for that rule, by the token of the email's link).
"""

from __future__ import annotations

import datetime as dt
import logging

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from monitor import jobs
from monitor.models import Account, Membership, Workspace

from . import delivery, rules
from .kinds import PARAM_NAMES
from .models import Alert, AlertRule, WebhookDelivery
from .selectors import inbox_for_user

log = logging.getLogger(__name__)

__all__ = [
    "alert_mark_read",
    "alerts_mark_all_read",
    "deliveries_retry_due",
    "evaluate_rule",
    "evaluate_workspace",
    "rule_create",
    "rule_delete",
    "rule_mute",
    "rule_rotate_secret",
    "rule_snooze",
    "rule_unsubscribe",
    "rule_update",
]


# --- rules ------------------------------------------------------------------------------------------------


def rule_create(*, workspace: Workspace, owner, name: str, kind: str, publisher: Account | None = None, **params):
    """A new rule; ``params`` are the model's parameter and channel fields. The returned rule's
    ``webhook_secret`` is the one time the secret is shown (the admin masks it)."""
    if publisher is not None and publisher.workspace_id != workspace.pk:
        raise ValueError("the publisher is not an account of this workspace")
    rule = AlertRule(workspace=workspace, owner=owner, name=name, kind=kind, publisher=publisher, **params)
    rule.full_clean()
    rule.save()
    return rule


def rule_rotate_secret(*, rule: AlertRule) -> str:
    """A new webhook secret (returned once; deliveries already created keep their old signature)."""
    from .models import new_webhook_secret

    rule.webhook_secret = new_webhook_secret()
    rule.save(update_fields=["webhook_secret"])
    return rule.webhook_secret


def rule_mute(*, rule: AlertRule, muted: bool = True) -> AlertRule:
    rule.is_active = not muted
    rule.save(update_fields=["is_active"])
    return rule


def rule_snooze(*, rule: AlertRule, until: dt.datetime | None) -> AlertRule:
    """Snooze until ``until`` (None: wake up now)."""
    rule.muted_until = until
    rule.save(update_fields=["muted_until"])
    return rule


def rule_unsubscribe(*, token: str) -> AlertRule:
    """Turn email off for the rule whose unsubscribe token this is (``AlertRule.DoesNotExist`` otherwise).
    Idempotent; the rule's inbox and webhook channels are left as they are."""
    if not token:
        raise AlertRule.DoesNotExist("empty token")
    rule = AlertRule.objects.get(unsubscribe_token=token)
    if rule.email:
        rule.email = False
        rule.save(update_fields=["email"])
    return rule


# --- inbox ------------------------------------------------------------------------------------------------


def alert_mark_read(*, alert: Alert, now: dt.datetime | None = None) -> Alert:
    if alert.read_at is None:
        alert.read_at = now or timezone.now()
        Alert.objects.filter(pk=alert.pk, read_at__isnull=True).update(read_at=alert.read_at)
    return alert


def alerts_mark_all_read(*, user, workspace: Workspace, now: dt.datetime | None = None) -> int:
    return inbox_for_user(user, workspace, unread_only=True).update(read_at=now or timezone.now())


# --- evaluation -------------------------------------------------------------------------------------------


def _owner_may_see(rule: AlertRule) -> bool:
    owner = rule.owner
    if not owner.is_active:
        return False
    return owner.is_superuser or Membership.objects.filter(workspace_id=rule.workspace_id, user=owner).exists()


def _rules_due(workspace_id: int, now: dt.datetime):
    return (
        AlertRule.objects.filter(workspace_id=workspace_id, is_active=True)
        .filter(Q(muted_until__isnull=True) | Q(muted_until__lte=now))
        .filter(Q(inbox=True) | Q(email=True) | ~Q(webhook_url=""))
        .select_related("workspace", "owner", "publisher")
        .order_by("pk")
    )


def evaluate_rule(*, rule: AlertRule, now: dt.datetime | None = None) -> list[Alert]:
    """Raise the rule's new alerts and deliver them; returns the alerts created."""
    now = now or timezone.now()
    candidates = rules.evaluate(rule)
    deliveries: list[int] = []
    with transaction.atomic():
        locked = AlertRule.objects.select_for_update().get(pk=rule.pk)
        existing = {
            (a, s, e, t)
            for a, s, e, t in Alert.objects.filter(rule=rule).values_list(
                "account_id", "window_start", "window_end", "tweet_id"
            )
        }
        new = [c for c in candidates if c.key not in existing]
        used = Alert.objects.filter(rule=rule, created_at__gt=now - dt.timedelta(days=1)).count()
        room = max(locked.max_alerts_per_day - used, 0)
        created: list[Alert] = []
        for c in new[:room]:
            try:
                with transaction.atomic():
                    created.append(
                        Alert.objects.create(
                            rule=locked,
                            workspace_id=locked.workspace_id,
                            account_id=c.account_id,
                            tweet_id=c.tweet_id,
                            window_start=c.window_start,
                            window_end=c.window_end,
                            value=c.value,
                            previous_value=c.previous_value,
                            rank=c.rank,
                            previous_rank=c.previous_rank,
                            message=c.message,
                        )
                    )
            except IntegrityError:  # raised meanwhile by a writer that does not lock the rule
                continue
        # held back now (not a running total: the same candidates come back at every evaluation until the
        # limit lets them through, so adding would count them again and again)
        suppressed = len(new) - min(len(new), room)
        fields = ["last_evaluated_at", "suppressed_count"]
        locked.last_evaluated_at = now
        locked.suppressed_count = suppressed
        if suppressed:
            locked.last_suppressed_at = now
            fields.append("last_suppressed_at")
            log.info("rule %s: rate limit (%s/day) suppressed %s alerts", rule.pk, rule.max_alerts_per_day, suppressed)
        locked.save(update_fields=fields)
        if rule.webhook_url:
            for a in created:
                a.rule = rule
                deliveries.append(delivery.delivery_create(a).pk)
    rule.suppressed_count, rule.last_suppressed_at = locked.suppressed_count, locked.last_suppressed_at
    rule.last_evaluated_at = now
    if created:
        delivery.email_alerts(rule, created)
    for pk in deliveries:
        jobs.enqueue_on_commit(jobs.DELIVER_WEBHOOK, pk)
    return created


def evaluate_workspace(*, workspace_id: int, now: dt.datetime | None = None) -> list[Alert]:
    """Evaluate every active, un-snoozed rule of the workspace; returns the alerts created. A rule that fails
    is logged and skipped: one bad rule does not stop the others."""
    now = now or timezone.now()
    out: list[Alert] = []
    for rule in _rules_due(workspace_id, now):
        if not _owner_may_see(rule):
            continue
        try:
            out.extend(evaluate_rule(rule=rule, now=now))
        except Exception:
            log.exception("alert rule %s failed", rule.pk)
    return out


def deliveries_retry_due(*, now: dt.datetime | None = None, limit: int = 500) -> list[int]:
    """Queue the pending webhook deliveries whose next attempt is due (a sweep for retries a worker lost,
    and for eager mode, where a failed attempt is not retried in the request)."""
    now = now or timezone.now()
    due = list(
        WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now)
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
    for pk in due:
        jobs.enqueue_on_commit(jobs.DELIVER_WEBHOOK, pk)
    return due


#: the fields a rule's owner may change (the secret, token, counters and owner are not among them)
RULE_EDITABLE = (
    "name",
    "kind",
    "claim",
    *PARAM_NAMES,
    "inbox",
    "email",
    "webhook_url",
    "max_alerts_per_day",
)


_UNSET = object()


def rule_update(*, rule: AlertRule, publisher: Account | object | None = _UNSET, **fields) -> AlertRule:
    """Change a rule's name, kind, parameters, scope and channels (``publisher=None``: any publisher; left out:
    unchanged). Validates like :func:`rule_create` (``full_clean``)."""
    unknown = set(fields) - set(RULE_EDITABLE)
    if unknown:
        raise ValueError(f"not editable: {', '.join(sorted(unknown))}")
    if publisher is not _UNSET:
        if publisher is not None and publisher.workspace_id != rule.workspace_id:
            raise ValueError("the publisher is not an account of this workspace")
        rule.publisher = publisher
    for name, value in fields.items():
        setattr(rule, name, value)
    rule.full_clean()
    rule.save()
    return rule


def rule_delete(*, rule: AlertRule) -> None:
    """Delete a rule with its alerts and their webhook deliveries."""
    rule.delete()
