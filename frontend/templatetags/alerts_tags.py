"""``{% load alerts_tags %}``: the unread-alerts badge of the navigation (one query)."""

from __future__ import annotations

from django import template

register = template.Library()


@register.simple_tag
def unread_alerts_count(user, ws) -> int:
    """The user's unread alerts in the workspace: ``{% unread_alerts_count user ws as n %}``; 0 without both."""
    if ws is None or not getattr(user, "is_authenticated", False):
        return 0
    from monitor.alerts.selectors import inbox_for_user

    return inbox_for_user(user, ws, unread_only=True).count()
