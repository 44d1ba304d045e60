"""Where an upload is written while it arrives: a folder on the media folder's filesystem, so that storing it is a
rename, not a second copy.

Django streams an upload larger than ``FILE_UPLOAD_MAX_MEMORY_SIZE`` into a temporary file, and storing it in
the media folder (``collection_create``) then moves that file: a rename where both are on one filesystem, a copy
of every byte otherwise. Django's default folder is the system's (``/tmp``), which in the Docker deployment is
the web container's own filesystem while the media folder is a volume, so every upload was written twice, the
second time while the analyst's request waited for its answer (a 4.5 GB collection: 10-13 s here,
``benchmarks/data_layer.md``). This handler writes them into ``SPREADWATCH_UPLOAD_TEMP_DIR`` (by default
``MEDIA_ROOT/.incoming``), which it creates where it is missing; ``manage.py check`` warns where the two are on
different filesystems (``spreadwatch.W007``). Not Django's ``FILE_UPLOAD_TEMP_DIR``: Django's own check refuses a
folder that does not exist yet, and a process without the media volume (a compute worker) has none.

A web process stopped during an upload leaves its partial file there (in ``/tmp`` a restart would have removed
it): each new upload removes the folder's files untouched for :data:`STALE_SECONDS` (an upload under way writes
its file as its bytes arrive, so its modification time stays recent).
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import time

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile, UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, TemporaryFileUploadHandler

__all__ = ["STALE_SECONDS", "MediaTemporaryFileUploadHandler", "remove_stale"]

log = logging.getLogger(__name__)

#: a temporary upload file not written for this long belongs to an upload that ended without it (its process
#: stopped)
STALE_SECONDS = 6 * 3600


def remove_stale(folder: str | os.PathLike, now: float | None = None) -> int:
    """Remove the files of ``folder`` not modified for :data:`STALE_SECONDS`; returns how many."""
    now = time.time() if now is None else now
    removed = 0
    with contextlib.suppress(FileNotFoundError), os.scandir(folder) as entries:
        for e in entries:
            try:
                if e.is_file(follow_symlinks=False) and now - e.stat().st_mtime > STALE_SECONDS:
                    os.unlink(e.path)
                    removed += 1
            except OSError:  # removed meanwhile by another process's upload, or not ours to remove
                continue
    if removed:
        log.info("removed %d stale temporary upload file(s) from %s", removed, folder)
    return removed


class _IncomingFile(TemporaryUploadedFile):
    """Django's temporary upload file, in ``folder``."""

    def __init__(self, folder: str, name, content_type, size, charset, content_type_extra=None) -> None:
        _, ext = os.path.splitext(name)
        file = tempfile.NamedTemporaryFile(suffix=".upload" + ext, dir=folder)  # noqa: SIM115 - Django closes it
        UploadedFile.__init__(self, file, name, content_type, size, charset, content_type_extra)


class MediaTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    """Django's handler for large uploads, writing into ``SPREADWATCH_UPLOAD_TEMP_DIR`` (made where missing)."""

    def new_file(self, *args, **kwargs) -> None:
        FileUploadHandler.new_file(self, *args, **kwargs)
        folder = settings.SPREADWATCH_UPLOAD_TEMP_DIR
        os.makedirs(folder, exist_ok=True)
        remove_stale(folder)
        self.file = _IncomingFile(folder, self.file_name, self.content_type, 0, self.charset, self.content_type_extra)
