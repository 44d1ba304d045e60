"""``manage.py follow_stream FILE|- --workspace SLUG``: feed a growing NDJSON file (or stdin) into a workspace's
live stream, like ``tail -f`` (docs/live.md).

Lines go to the same intake as ``POST /api/v1/stream/`` (in this process, no HTTP), in batches of at most
``--batch`` lines, or what has arrived when the file stops growing for ``--idle-ms``. The file is followed as it
grows; when it is truncated (read again from its start) or rotated (the name now points at a new file: the old
one is read to its end first, then the new one from its start), a message says so. A full backlog is waited out
(the Retry-After of the intake) and the batch sent again. A bad line is reported as ``file:line: field ...``;
it is left out and the rest of its batch sent (or, with ``--stop-on-bad``, the command stops there, having sent
every line before it). A line still being written (no newline yet) waits for its end.
"""

from __future__ import annotations

import os
import sys
import time

from django.core.management.base import BaseCommand, CommandError

from monitor.models import Workspace
from monitor.services.stream import Backpressure, InputError, StreamRefused, stream_accept
from monitor.services.stream.unit_check import UnitRefused


class Command(BaseCommand):
    help = "Follow a growing NDJSON file (or stdin) into a workspace's live stream."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the file to follow, or - for stdin")
        parser.add_argument("--workspace", required=True, help="workspace slug")
        parser.add_argument("--batch", type=int, default=2000, help="most lines per batch (default %(default)s)")
        parser.add_argument("--idle-ms", type=int, default=300, help="send a partial batch after this long idle")
        parser.add_argument("--stop-on-bad", action="store_true", help="stop at the first bad line")
        parser.add_argument("--no-follow", action="store_true", help="stop at the end of the file (no tail -f)")
        parser.add_argument("--from-end", action="store_true", help="start at the end of the file (tail -f -n0)")
        parser.add_argument("--stop-after", type=float, help="seconds, then stop following (tests, benchmarks)")

    def handle(self, *args, **o):
        ws = Workspace.objects.filter(slug=o["workspace"]).first()
        if ws is None:
            raise CommandError(f"no workspace {o['workspace']!r}")
        if o["batch"] < 1:
            raise CommandError("--batch must be at least 1")
        self.ws, self.o = ws, o
        self.n_sent = self.n_bad = self.n_batches = 0
        name = o["file"]
        try:
            if name == "-":
                self._follow_stdin()
            else:
                self._follow_file(name)
        except KeyboardInterrupt:
            self.stderr.write("interrupted")
        self.stdout.write(
            f"{self.n_sent:,} record(s) accepted in {self.n_batches:,} batch(es); {self.n_bad:,} bad line(s) left out"
        )
        if self.n_bad and o["stop_on_bad"]:
            raise CommandError("stopped at a bad line")

    # --- sending ------------------------------------------------------------------------------------------------

    def _send(self, lines: list[tuple[int, str]], path: str) -> None:
        """Send one batch, waiting out backpressure; leave out bad lines (or stop, with --stop-on-bad)."""
        while lines:
            try:
                acc = stream_accept(workspace=self.ws, lines=lines, source=os.path.basename(path), path=path)
            except Backpressure as exc:
                self.stderr.write(f"backpressure: {exc.backlog:,} queued; waiting {exc.retry_after} s")
                time.sleep(exc.retry_after)
                continue
            except UnitRefused as exc:
                # not one bad line: the feed carries follower counts and the workspace counts retweeters, so every
                # later line with a count would be refused too. Send the lines before it, and stop, saying why
                good = [x for x in lines if x[0] < exc.record.line]
                if good:
                    self._send(good, path)
                raise CommandError(f"{exc.record} (stopped: nothing from this line on was sent)") from None
            except InputError as exc:
                self.stderr.write(str(exc.record))
                self.n_bad += 1
                if self.o["stop_on_bad"]:
                    good = [x for x in lines if x[0] < exc.record.line]
                    if good:
                        self._send(good, path)
                    raise _Stop() from None
                lines = [x for x in lines if x[0] != exc.record.line]
                continue
            except StreamRefused as exc:
                raise CommandError(str(exc)) from None
            self.n_sent += acc.n_events
            self.n_batches += 1
            return

    # --- sources ------------------------------------------------------------------------------------------------

    def _follow_stdin(self) -> None:
        batch: list[tuple[int, str]] = []
        try:
            for n, raw in enumerate(sys.stdin.buffer, 1):
                batch.append((n, raw.decode("utf-8", errors="replace").rstrip("\r\n")))
                if len(batch) >= self.o["batch"]:
                    self._send(batch, "<stdin>")
                    batch = []
            if batch:
                self._send(batch, "<stdin>")
        except _Stop:
            return

    def _follow_file(self, path: str) -> None:
        try:
            fh = open(path, "rb")  # noqa: SIM115 (reopened on rotation)
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror}") from None
        if self.o["from_end"]:
            fh.seek(0, os.SEEK_END)
        line_no = 0
        partial = b""
        batch: list[tuple[int, str]] = []
        idle_since = time.monotonic()
        end = None if self.o["stop_after"] is None else time.monotonic() + self.o["stop_after"]
        try:
            while True:
                raw = fh.readline()
                if raw:
                    idle_since = time.monotonic()
                    if not raw.endswith(b"\n"):
                        partial += raw  # a line still being written
                        continue
                    raw, partial = partial + raw, b""
                    line_no += 1
                    batch.append((line_no, raw.decode("utf-8", errors="replace").rstrip("\r\n")))
                    if len(batch) >= self.o["batch"]:
                        self._send(batch, path)
                        batch = []
                    continue
                # at the end of what is there
                idle = time.monotonic() - idle_since >= self.o["idle_ms"] / 1000
                if batch and (self.o["no_follow"] or idle):
                    self._send(batch, path)
                    batch = []
                if self.o["no_follow"] or (end is not None and time.monotonic() > end):
                    if partial:
                        line_no += 1
                        self._send([(line_no, partial.decode("utf-8", errors="replace"))], path)
                    return
                time.sleep(0.05)
                changed = self._changed(fh, path)
                if changed == "truncated":
                    self.stderr.write(f"{path}: truncated; reading it again from the start")
                    fh.seek(0)
                    line_no, partial = 0, b""
                elif changed == "rotated":
                    rest = fh.read()  # whatever the old file got before it was moved
                    if rest:
                        fh.seek(-len(rest), os.SEEK_CUR)
                        continue
                    self.stderr.write(f"{path}: rotated (a new file under that name); following the new one")
                    fh.close()
                    fh = open(path, "rb")  # noqa: SIM115
                    line_no, partial = 0, b""
        except _Stop:
            return
        finally:
            fh.close()

    @staticmethod
    def _changed(fh, path: str) -> str | None:
        try:
            now = os.stat(path)
        except FileNotFoundError:
            return None  # moved away and not yet replaced: keep reading the old one
        mine = os.fstat(fh.fileno())
        if (now.st_ino, now.st_dev) != (mine.st_ino, mine.st_dev):
            return "rotated"
        if now.st_size < fh.tell():
            return "truncated"
        return None


class _Stop(Exception):
    """--stop-on-bad met a bad line."""
