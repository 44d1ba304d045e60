from __future__ import annotations

from django.apps import AppConfig


class MonitorConfig(AppConfig):
    name = "monitor"
    verbose_name = "Spreadwatch"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
