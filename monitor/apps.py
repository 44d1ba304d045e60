from __future__ import annotations

from django.apps import AppConfig
from django.core.signals import request_started


class MonitorConfig(AppConfig):
    name = "monitor"
    verbose_name = "Spreadwatch"

    def ready(self) -> None:
        # imported for what they register: the system checks, the Celery tasks that monitor.jobs queues by name,
        # the algorithms that ComputeRun.algorithm offers (monitor.algorithms)
        from . import checks, embedded, tasks  # noqa: F401
        from .algorithms import coordination, influence, influence_max, network, wtf  # noqa: F401
        from .services import recovery
        from .services.stream import in_process

        # the embedded default applies the live stream in the web process: a served request starts its applier if
        # records are waiting (queued while the server was down, or by follow_stream); a no-op elsewhere
        request_started.connect(in_process.on_request, dispatch_uid="spreadwatch-stream-in-process")
        # on the embedded default a login does not wait for an import's write lock (monitor/embedded.py)
        embedded.install()
        # the demo's web process runs the tasks: a new one first resumes what the one before it left
        request_started.connect(recovery.resume_on_first_request, dispatch_uid="spreadwatch-resume-in-process")
