"""System checks for dangerous configurations (``manage.py check --deploy`` and every start)."""

from __future__ import annotations

import os

from django.conf import settings
from django.core.checks import Warning, register

from compute.backends import gpu_package_installed


@register()
def spreadwatch_config(app_configs, **kwargs):
    out = []
    engine = settings.DATABASES["default"]["ENGINE"]
    sqlite = engine.endswith("sqlite3")
    if settings.SPREADWATCH_BACKEND == "gpu" and not gpu_package_installed():
        out.append(
            Warning(
                "SPREADWATCH_BACKEND=gpu but CuPy is not installed: every compute task will fail.",
                hint="pip install '.[gpu]' on GPU workers, or use SPREADWATCH_BACKEND=auto.",
                id="spreadwatch.W001",
            )
        )
    if settings.SPREADWATCH_COMPUTE_QUEUE == "gpu" and settings.SPREADWATCH_BACKEND == "cpu":
        out.append(
            Warning(
                "compute batches go to the 'gpu' queue but SPREADWATCH_BACKEND=cpu.",
                hint="Set SPREADWATCH_COMPUTE_QUEUE=cpu, or run GPU workers with SPREADWATCH_BACKEND=gpu.",
                id="spreadwatch.W002",
            )
        )
    if sqlite and settings.SPREADWATCH_HAS_BROKER:
        out.append(
            Warning(
                "SQLite with a Celery broker: several worker processes will write to one SQLite file and "
                "fail with 'database is locked' under load.",
                hint="Use PostgreSQL (DATABASE_URL=postgres://...) with real workers.",
                id="spreadwatch.W003",
            )
        )
    if settings.SPREADWATCH_HAS_BROKER and settings.CELERY_TASK_ALWAYS_EAGER:
        out.append(
            Warning(
                "CELERY_BROKER_URL is set but CELERY_TASK_ALWAYS_EAGER is true: tasks run in the web process.",
                hint="Unset CELERY_TASK_ALWAYS_EAGER.",
                id="spreadwatch.W004",
            )
        )
    if settings.SPREADWATCH_HAS_BROKER and not settings.REDIS_URL:
        out.append(
            Warning(
                "Workers without REDIS_URL keep import progress in a file cache the web process may not see.",
                hint="Set REDIS_URL to the Redis the workers use.",
                id="spreadwatch.W005",
            )
        )
    if not settings.DEBUG and not settings.SECRET_KEY_FROM_ENV and not sqlite:
        out.append(
            Warning(
                "SECRET_KEY comes from a generated file in the data dir, not from the environment.",
                hint="Set SECRET_KEY in production so every web process signs sessions with the same key.",
                id="spreadwatch.W006",
            )
        )
    if _upload_folder_elsewhere():
        out.append(
            Warning(
                f"Uploads arrive in {settings.SPREADWATCH_UPLOAD_TEMP_DIR}, on another filesystem than the media "
                f"folder {settings.MEDIA_ROOT}: every large upload is copied once more when it is stored.",
                hint="Set SPREADWATCH_UPLOAD_TEMP_DIR to a folder on the media folder's filesystem (its default: "
                "MEDIA_ROOT/.incoming).",
                id="spreadwatch.W007",
            )
        )
    return out


def _device(path) -> int | None:
    """The filesystem (``st_dev``) ``path`` is on, or would be on once created: that of its nearest existing
    folder."""
    p = os.path.abspath(path)
    while True:
        try:
            return os.stat(p).st_dev
        except OSError:
            parent = os.path.dirname(p)
            if parent == p:
                return None
            p = parent


def _upload_folder_elsewhere() -> bool:
    """Whether large uploads are written on another filesystem than the media folder (monitor/uploads.py)."""
    a, b = _device(settings.SPREADWATCH_UPLOAD_TEMP_DIR), _device(settings.MEDIA_ROOT)
    return a is not None and b is not None and a != b
