"""Large uploads arrive in a folder on the media folder's filesystem and are stored by a rename
(monitor/uploads.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import django.core.files.storage.filesystem as fs_storage
from django.urls import reverse

from monitor.checks import spreadwatch_config
from monitor.models import CollectionFile
from monitor.uploads import STALE_SECONDS, remove_stale


def test_a_large_web_upload_is_stored_by_renaming_the_file_it_arrived_in(
    client, alice, ws_a, settings, tmp_path, monkeypatch
):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.SPREADWATCH_UPLOAD_TEMP_DIR = str(tmp_path / "media" / ".incoming")  # not there yet: the handler makes it
    body = b"follower_id,followee_id\n" + b"".join(b"%d,%d\n" % (i, i + 1) for i in range(1, 300_000))
    assert len(body) > settings.FILE_UPLOAD_MAX_MEMORY_SIZE  # streamed to a temporary file, not held in memory
    (tmp_path / "follows.csv").write_bytes(body)
    moves: list[tuple[str, str]] = []
    real = fs_storage.file_move_safe

    def spy(old, new, *args, **kwargs):
        moves.append((os.fspath(old), os.fspath(new)))
        return real(old, new, *args, **kwargs)

    client.force_login(alice)
    monkeypatch.setattr(fs_storage, "file_move_safe", spy)
    with open(tmp_path / "follows.csv", "rb") as f:
        r = client.post(
            reverse("upload", kwargs={"ws": ws_a.slug}),
            {"files": [f], "name": "big follows", "format": "auto", "mode": "strict"},
        )
    assert r.status_code == 302, r.content[:500]
    stored = CollectionFile.objects.get(collection__workspace=ws_a)
    # moved, not copied chunk by chunk, from the upload folder, which is on the media folder's filesystem
    assert len(moves) == 1 and os.path.dirname(moves[0][0]) == settings.SPREADWATCH_UPLOAD_TEMP_DIR
    assert os.stat(settings.SPREADWATCH_UPLOAD_TEMP_DIR).st_dev == os.stat(stored.file.path).st_dev
    assert stored.file.path.startswith(settings.MEDIA_ROOT) and Path(stored.file.path).read_bytes() == body
    assert os.listdir(settings.SPREADWATCH_UPLOAD_TEMP_DIR) == []  # nothing left behind


def test_the_settings_put_the_upload_folder_in_the_media_folder():
    # one volume in the Docker deployment, so one filesystem wherever the media folder is mounted
    env = {k: v for k, v in os.environ.items() if k != "SPREADWATCH_UPLOAD_TEMP_DIR"} | {"MEDIA_ROOT": "/srv/sw-media"}
    code = "import monitor.settings as s; print(s.SPREADWATCH_UPLOAD_TEMP_DIR); print(*s.FILE_UPLOAD_HANDLERS)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    folder, handlers = out.stdout.splitlines()
    assert folder == "/srv/sw-media/.incoming" and "monitor.uploads.MediaTemporaryFileUploadHandler" in handlers


def test_an_upload_removes_the_files_stopped_uploads_left_hours_ago(tmp_path):
    old, recent = tmp_path / "tmp1.upload.csv", tmp_path / "tmp2.upload.csv"
    old.write_bytes(b"partial")
    recent.write_bytes(b"still arriving")
    hours_ago = time.time() - STALE_SECONDS - 60
    os.utime(old, (hours_ago, hours_ago))
    assert remove_stale(tmp_path) == 1
    assert not old.exists() and recent.exists()
    assert remove_stale(tmp_path / "no such folder") == 0


def test_the_check_warns_where_uploads_arrive_on_another_filesystem(settings, tmp_path, monkeypatch):
    import monitor.checks as checks

    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.SPREADWATCH_UPLOAD_TEMP_DIR = str(tmp_path / "media" / ".incoming")
    assert "spreadwatch.W007" not in {w.id for w in spreadwatch_config(None)}  # neither exists yet: one filesystem
    real = checks._device
    monkeypatch.setattr(checks, "_device", lambda p: 1 if ".incoming" in os.fspath(p) else real(p))
    assert "spreadwatch.W007" in {w.id for w in spreadwatch_config(None)}


def test_a_collections_timings_say_how_long_its_files_took_to_store_after_its_import_too(ws_a, import_files):
    from tests.webapp import THESIS

    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert {"files_s", "read_s", "merge_s"} <= set(c.timings) and c.timings["files_s"] >= 0
