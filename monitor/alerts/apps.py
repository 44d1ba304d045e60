from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    name = "monitor.alerts"
    label = "alerts"
    verbose_name = "Alerts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # the Celery app autodiscovers ``monitor.tasks`` only: importing ours here registers the shared tasks
        from . import tasks  # noqa: F401
