from __future__ import annotations

from django.apps import AppConfig


class MonitorConfig(AppConfig):
    name = "monitor"
    verbose_name = "Spreadwatch"

    def ready(self) -> None:
        # imported for what they register: the system checks, the Celery tasks that monitor.jobs queues by name,
        # the algorithms that ComputeRun.algorithm offers (monitor.algorithms)
        from . import checks, tasks  # noqa: F401
        from .algorithms import influence, influence_max, network, wtf  # noqa: F401
