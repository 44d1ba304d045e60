"""``manage.py import_collection WORKSPACE FILE [FILE ...]``: upload files as a collection from the shell.

The files are copied into upload storage and imported exactly as a web upload would be (same task, same
report); with no broker configured this runs in the foreground, otherwise ``--wait`` follows the workers.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from monitor import services
from monitor.models import Collection, Workspace


class Command(BaseCommand):
    help = "Import tweets / follows / cascade files into a workspace and compute their influence."

    def add_arguments(self, parser):
        parser.add_argument("workspace", help="workspace slug (created with --create)")
        parser.add_argument("files", nargs="+", help="input files, archives or folders (trees, TUDataset)")
        parser.add_argument("--name", default="", help="collection name (default: the file names)")
        parser.add_argument("--format", default="auto", help="auto (default), csv, follows, v1, v2, trees, ...")
        parser.add_argument("--skip-bad", action="store_true", help="store the good records, report the rest")
        parser.add_argument("--validate-only", action="store_true", help="check and report; store nothing")
        parser.add_argument("--no-compute", action="store_true", help="import only; compute later")
        parser.add_argument("--create", action="store_true", help="create the workspace if it does not exist")
        parser.add_argument("--wait", action="store_true", help="with real workers: wait until done")

    def handle(self, *args, **o):
        ws = Workspace.objects.filter(slug=o["workspace"]).first()
        if ws is None:
            if not o["create"]:
                raise CommandError(f"no workspace {o['workspace']!r} (use --create to make it)")
            ws = services.workspace_create(name=o["workspace"], slug=o["workspace"])
        paths = [Path(p) for p in o["files"]]
        for p in paths:
            if not p.exists():
                raise CommandError(f"{p}: no such file or folder")
        files = []
        tmp = None
        for p in paths:
            if p.is_dir():  # a trees / TUDataset folder travels as a tar archive, like a browser upload
                import tarfile
                import tempfile

                tmp = tmp or Path(tempfile.mkdtemp(prefix="spreadwatch-import-"))
                arc = tmp / f"{p.name}.tar"
                with tarfile.open(arc, "w") as tf:
                    tf.add(p, arcname=p.name)
                files.append(arc)
            else:
                files.append(p)
        t0 = time.perf_counter()
        try:
            c = services.collection_create(
                workspace=ws,
                files=files,
                name=o["name"],
                mode=Collection.Mode.SKIP_BAD if o["skip_bad"] else Collection.Mode.STRICT,
                validate_only=o["validate_only"],
                format=o["format"],
                compute=not o["no_compute"],
            )
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        finally:
            if tmp is not None:
                import shutil

                shutil.rmtree(tmp, ignore_errors=True)
        c.refresh_from_db()
        while o["wait"] and c.is_active:
            time.sleep(1)
            c.refresh_from_db()
        self._report(c, time.perf_counter() - t0)
        if c.status == Collection.Status.FAILED:
            sys.exit(2)

    def _report(self, c: Collection, seconds: float) -> None:
        w = self.stdout.write
        w(f"collection {c.pk} ({c.name}): {c.get_status_display()} in {seconds:.1f} s; format {c.format or '?'}")
        if c.error:
            self.stderr.write(f"error: {c.error}")
        read = c.report.get("read") or {}
        if read:
            w(f"records: {read.get('n_good', 0):,} good, {read.get('n_bad', 0):,} bad")
            for r in read.get("shown", []):
                where = r["path"] if r.get("line") is None else f"{r['path']}:{r['line']}"
                what = r["reason"] if not r.get("field") else f"field '{r['field']}': {r['reason']}"
                w(f"  {where}: {what}")
        for k, v in sorted(c.counts.items()):
            w(f"  {k}: {v:,}")
        for note in c.report.get("notes", []):
            w(f"note: {note}")
        run = c.compute_runs.order_by("-pk").first()
        if run is not None:
            w(
                f"compute run {run.pk}: {run.get_status_display()}, {run.n_cascades:,} cascades, "
                f"{run.batches_done}/{run.n_batches} batches, devices {', '.join(run.devices) or '-'}"
            )
            if run.error:
                self.stderr.write(f"compute error: {run.error}")
