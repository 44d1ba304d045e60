"""The Celery app. Queues: ``ingest`` (parse + load uploads), ``cpu`` / ``gpu`` (compute batches),
``default`` (light work). Settings come from Django's (``CELERY_*``), so with no broker configured tasks
run eagerly in the calling process.

GPU workers run one process per GPU with ``--pool=solo``: CUDA must not be initialised before a fork, and
``compute.gpu`` imports CuPy only inside the task, never at module import.

Services queue tasks by name through ``monitor.jobs`` (never importing ``monitor.tasks``: the tasks import the
services); ``MonitorConfig.ready`` imports the task modules, so every process, a worker or one running tasks
eagerly, has them in this app's registry.
"""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")

app = Celery("monitor")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["monitor"])


@worker_process_init.connect  # a prefork pool's child, once it has forked
@worker_ready.connect  # the worker's main process (the one that runs the tasks with --pool=solo)
def _freeze_long_lived(**_kwargs) -> None:
    """A worker's start-up objects out of the cyclic garbage collector's passes (``monitor.boot``)."""
    from monitor.boot import freeze_long_lived

    freeze_long_lived()
