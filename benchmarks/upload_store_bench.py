"""What storing a large upload costs: Django moves the temporary file an upload arrived in into the media folder
(``django.core.files.move.file_move_safe``, what ``FileSystemStorage`` does for a ``TemporaryUploadedFile``). From
a folder on another filesystem (the container's ``/tmp`` against the media volume: here ``/dev/shm``) that is a
copy of every byte; from ``MEDIA_ROOT/.incoming`` (``monitor/uploads.py``) a rename.

    .venv/bin/python benchmarks/upload_store_bench.py --file var/bench10m/tweets.jsonl --rounds 2

Each round copies ``--file`` into both temporary folders first (not timed), then times each move; the copy's time
includes ``os.sync()``, the write of its bytes to the disk, which a real upload pays too, sooner or later.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", required=True, help="a large file standing for the upload")
    ap.add_argument("--across", default="/dev/shm", help="a folder on another filesystem than --media")
    ap.add_argument("--media", default="var/upload-bench", help="stands for MEDIA_ROOT (created, then removed)")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from django.core.files.move import file_move_safe

    media = Path(args.media)
    incoming = media / ".incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    if os.stat(args.across).st_dev == os.stat(media).st_dev:
        sys.exit(f"{args.across} is on the same filesystem as {media}: name another with --across")
    size = os.path.getsize(args.file)
    rows = []
    try:
        for _ in range(args.rounds):
            across = tempfile.mktemp(dir=args.across, suffix=".upload")
            same = tempfile.mktemp(dir=incoming, suffix=".upload")
            shutil.copyfile(args.file, across)
            shutil.copyfile(args.file, same)
            os.sync()
            t = time.perf_counter()
            file_move_safe(across, media / "a")
            os.sync()
            copied = time.perf_counter() - t
            t = time.perf_counter()
            file_move_safe(same, media / "b")
            renamed = time.perf_counter() - t
            rows.append({"copy_s": round(copied, 3), "rename_ms": round(1000 * renamed, 3)})
            os.unlink(media / "a")
            os.unlink(media / "b")
    finally:
        shutil.rmtree(media, ignore_errors=True)
    print(json.dumps({"bytes": size, "rounds": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
