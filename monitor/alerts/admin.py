"""Admin for the alerts: rules (secrets masked; "rotate webhook secret" shows a new one once), alerts (raw-id
account and tweet), webhook deliveries (view-only: the delivery task writes them)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import models

from . import services
from .models import Alert, AlertRule, WebhookDelivery


@admin.register(AlertRule)
class AlertRuleAdmin(admin.ModelAdmin):
    list_display = ("name", "workspace", "owner", "kind", "publisher", "is_active", "muted_until", "suppressed_count")
    list_filter = ("kind", "is_active", "email", "inbox", "workspace")
    search_fields = ("name", "owner__username", "owner__email", "workspace__slug")
    raw_id_fields = ("publisher", "owner")
    list_select_related = ("workspace", "owner", "publisher")
    readonly_fields = ("secret_hint", "suppressed_count", "last_suppressed_at", "last_evaluated_at", "created_at")
    actions = ["rotate_secret"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    @admin.display(description="webhook secret")
    def secret_hint(self, obj) -> str:
        return f"…{obj.webhook_secret[-4:]}" if obj and obj.webhook_secret else ""

    @admin.action(description="Rotate the webhook secret (shown once)")
    def rotate_secret(self, request, queryset):
        for rule in queryset:
            secret = services.rule_rotate_secret(rule=rule)
            self.message_user(request, f"{rule.name}: new webhook secret {secret}", messages.WARNING)


@admin.register(Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = ("created_at", "rule", "account", "value", "rank", "window_start", "window_end", "read_at")
    list_filter = ("rule__kind", "workspace", "created_at")
    search_fields = ("message", "account__screen_name", "rule__name")
    raw_id_fields = ("account", "tweet", "rule")
    list_select_related = ("rule", "account")
    readonly_fields = ("created_at",)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ("pk", "alert", "url", "status", "attempts", "last_status_code", "next_attempt_at", "sent_at")
    list_filter = ("status", "created_at")
    search_fields = ("url", "alert__message")
    raw_id_fields = ("alert",)
    list_select_related = ("alert",)
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
