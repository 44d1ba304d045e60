"""The alerts' data model: rules, the alerts they raised, and webhook deliveries.

* :class:`AlertRule` — what an analyst (``owner``) subscribed to in one workspace: a ``kind`` with its
  parameters (``k``, ``threshold``, ``places``, ``reach``, ``count``, ``window_days``, ``aggregate``), a scope
  (``publisher``, or ``None`` for every publisher of the workspace) and its channels (``inbox``, ``email``,
  ``webhook_url`` signed with ``webhook_secret``). ``is_active`` mutes it, ``muted_until`` snoozes it,
  ``unsubscribe_token`` is the capability of the email's unsubscribe link, ``max_alerts_per_day`` is the
  rate limit (alerts created for the rule in any 24 hours); ``suppressed_count`` says how many the limit
  held back at the last evaluation (they come later, when the 24 hours allow).
* :class:`Alert` — one firing: the rule, the account (for ``cascade_reach`` the cascade's publisher, with the
  ``tweet``), the window of UTC days, the value and what it is compared with, the rank. It is also the inbox
  entry (``read_at`` null = unread). Deduplication is a database constraint: one alert per (rule, account,
  window, tweet) — two partial unique indexes, because PostgreSQL treats NULL tweets as distinct.
* :class:`WebhookDelivery` — one POST of one alert to the rule's URL: the signed payload, status, attempts
  and the last response, and when to try again.

Foreign keys to ``monitor.Account`` and ``monitor.Tweet`` have no database constraint, like the bulk tables
(``services.workspace_purge`` deletes accounts and tweets with set-based SQL); the workspace and user keys do,
and deleting a workspace through the ORM removes its rules, alerts and deliveries.
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from monitor.models import Account, Claim, ComputeRun, Tweet, Workspace

from .kinds import KINDS, PARAMS_BY_NAME


def new_webhook_secret() -> str:
    return secrets.token_hex(32)


def new_unsubscribe_token() -> str:
    return secrets.token_urlsafe(32)


class AlertRule(models.Model):
    """A subscription: when ``kind``'s condition holds for an account, raise an :class:`Alert`."""

    # the kinds and their parameters are listed once, in ``kinds.KINDS`` / ``kinds.PARAMS``
    Kind = models.TextChoices("Kind", [(k.constant, (k.value, k.label)) for k in KINDS])

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="alert_rules")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="alert_rules")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=24, choices=Kind.choices)
    publisher = models.ForeignKey(
        Account,
        on_delete=models.CASCADE,
        db_constraint=False,
        null=True,
        blank=True,
        related_name="+",
        help_text="empty: any publisher of the workspace",
    )
    claim = models.ForeignKey(
        Claim,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="alert_rules",
        help_text="the claim a claim kind follows (required for those, unused by the others)",
    )
    # parameters (each kind reads the ones ``kinds.KINDS`` names; ``kinds.PARAMS`` lists them all)
    k = models.PositiveIntegerField(default=10, help_text=PARAMS_BY_NAME["k"].field_help)
    threshold = models.FloatField(default=0.0, help_text=PARAMS_BY_NAME["threshold"].field_help)
    places = models.PositiveIntegerField(default=5, help_text=PARAMS_BY_NAME["places"].field_help)
    reach = models.FloatField(default=0.0, help_text=PARAMS_BY_NAME["reach"].field_help)
    count = models.PositiveIntegerField(default=1, help_text=PARAMS_BY_NAME["count"].field_help)
    members = models.PositiveIntegerField(default=5, help_text=PARAMS_BY_NAME["members"].field_help)
    window_days = models.PositiveIntegerField(default=7, help_text=PARAMS_BY_NAME["window_days"].field_help)
    aggregate = models.CharField(
        max_length=16,
        choices=ComputeRun.Aggregate.choices,
        default="total",
        help_text=PARAMS_BY_NAME["aggregate"].field_help,
    )
    # channels
    inbox = models.BooleanField(default=True)
    email = models.BooleanField(default=False)
    webhook_url = models.URLField(max_length=500, blank=True, default="")
    webhook_secret = models.CharField(max_length=64, default=new_webhook_secret, editable=False)
    # mute, snooze, unsubscribe, rate limit
    is_active = models.BooleanField(default=True, help_text="off: muted")
    muted_until = models.DateTimeField(null=True, blank=True, help_text="snoozed until then")
    unsubscribe_token = models.CharField(max_length=64, unique=True, default=new_unsubscribe_token, editable=False)
    max_alerts_per_day = models.PositiveIntegerField(default=20, help_text="alerts created in any 24 hours")
    suppressed_count = models.PositiveIntegerField(
        default=0, help_text="alerts the rate limit held back at the last evaluation"
    )
    last_suppressed_at = models.DateTimeField(null=True, blank=True)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "is_active"], name="alertrule_for_evaluation")]
        constraints = [
            models.CheckConstraint(condition=Q(window_days__gte=1), name="alertrule_window_positive"),
            models.CheckConstraint(condition=Q(k__gte=1), name="alertrule_k_positive"),
            models.CheckConstraint(condition=Q(places__gte=1), name="alertrule_places_positive"),
            models.CheckConstraint(condition=Q(members__gte=2), name="alertrule_members_at_least_2"),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        """Refuse a claim kind without a claim of the workspace (on ``claim``), and a webhook URL that is not
        http(s) or resolves to an internal address (``monitor.security``; on ``webhook_url``). Only a new or
        changed URL is checked: a rule whose stored host stopped resolving can still be muted, snoozed or edited in
        its other fields (each delivery checks the URL again anyway)."""
        super().clean()
        from django.core.exceptions import ValidationError

        from monitor.security import validate_webhook_url

        from .kinds import CLAIM_KINDS

        if self.kind in CLAIM_KINDS and self.claim_id is None:
            raise ValidationError({"claim": "choose the claim this rule follows"})
        if self.claim_id is not None and self.claim.workspace_id != self.workspace_id:
            raise ValidationError({"claim": "not a claim of this workspace"})

        if self.pk is not None:
            stored = AlertRule.objects.filter(pk=self.pk).values_list("webhook_url", flat=True).first()
            if stored == self.webhook_url:
                return
        try:
            validate_webhook_url(self.webhook_url)
        except ValidationError as exc:
            raise ValidationError({"webhook_url": exc.messages}) from None


class Alert(models.Model):
    """One firing of a rule for one account and window (and tweet, for ``cascade_reach``); the inbox entry."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="alerts")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, db_constraint=False, related_name="+")
    tweet = models.ForeignKey(
        Tweet, on_delete=models.CASCADE, db_constraint=False, null=True, blank=True, related_name="+"
    )
    window_start = models.DateField()
    window_end = models.DateField()
    value = models.FloatField()
    previous_value = models.FloatField(null=True, blank=True)
    rank = models.IntegerField(null=True, blank=True)
    previous_rank = models.IntegerField(null=True, blank=True)
    message = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["rule", "account", "window_start", "window_end"],
                condition=Q(tweet__isnull=True),
                name="alert_dedupe_account",
            ),
            models.UniqueConstraint(
                fields=["rule", "account", "window_start", "window_end", "tweet"],
                condition=Q(tweet__isnull=False),
                name="alert_dedupe_tweet",
            ),
        ]
        indexes = [
            models.Index(fields=["rule", "created_at"], name="alert_for_rate_limit"),
            models.Index(fields=["workspace", "-created_at"], name="alert_inbox"),
        ]
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.message[:80]


class WebhookDelivery(models.Model):
    """One alert POSTed to one URL: every attempt updates the row (the delivery log)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="deliveries")
    url = models.URLField(max_length=500)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.IntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    log = models.JSONField(default=list, blank=True, help_text="one entry per attempt")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # set while a worker makes an attempt (the POST runs outside any transaction, so no row lock says it): another
    # delivery of the task leaves it alone until then; a worker that died mid-attempt leaves a claim that expires
    attempting_until = models.DateTimeField(null=True, blank=True)
    payload = models.JSONField(default=dict)
    body = models.TextField(help_text="the exact bytes sent (signed), UTF-8")
    signature = models.CharField(max_length=80)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="webhook_due")]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"delivery {self.pk} ({self.status})"
