"""``manage.py stream_consume [--workspace SLUG] [--name NAME]``: a stream consumer (docs/live.md).

Run one or more per machine, on as many machines as you like, against the same PostgreSQL and Redis: the live
consumers share the partitions of every workspace (or of one, with ``--workspace``), and the ones left take over
the partitions of one that stops or dies. SIGTERM or Ctrl-C stops after the current micro-batch."""

from __future__ import annotations

import logging
import time

from django.core.management.base import BaseCommand, CommandError

from monitor.models import Workspace
from monitor.services.stream.consumer import DEFAULT_APPLY, Consumer, default_name, load_apply


class Command(BaseCommand):
    help = "Apply the live stream's queued events, in micro-batches, sharing the partitions with other consumers."

    def add_arguments(self, parser):
        parser.add_argument("--workspace", help="only this workspace's stream (default: every workspace)")
        parser.add_argument("--name", help="consumer name, unique among the live ones (default: host:pid)")
        parser.add_argument("--stop-after", type=float, help="seconds, then stop (benchmarks and tests)")
        parser.add_argument(
            "--apply",
            default=DEFAULT_APPLY,
            help="module:function applying a batch (default: %(default)s; tests and benchmarks swap it)",
        )

    def handle(self, *args, **o):
        logging.basicConfig(level=logging.INFO if o["verbosity"] >= 1 else logging.WARNING,
                            format="%(asctime)s %(levelname)s %(message)s")  # fmt: skip
        ws = None
        if o["workspace"]:
            ws = Workspace.objects.filter(slug=o["workspace"]).first()
            if ws is None:
                raise CommandError(f"no workspace {o['workspace']!r}")
        try:
            apply = load_apply(o["apply"])
        except (ImportError, AttributeError) as exc:
            raise CommandError(f"cannot load the apply function {o['apply']!r}: {exc}") from exc
        c = Consumer(name=o["name"] or default_name(), workspace=ws, apply=apply)
        self.stdout.write(f"consumer {c.name}: {'workspace ' + ws.slug if ws else 'every workspace'}, ready")
        self.stdout.flush()
        t0 = time.monotonic()
        c.run(stop_after=o["stop_after"])
        dt = time.monotonic() - t0
        self.stdout.write(f"consumer {c.name}: stopped; {c.applied:,} events in {c.batches:,} batches, {dt:.1f} s")
