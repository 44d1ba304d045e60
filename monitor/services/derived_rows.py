"""The engine's derived rows after PostgreSQL lost them: recomputed without a human.

On PostgreSQL the per-cascade influence, the spreading graphs, the daily aggregates and the publishers' day totals
are UNLOGGED tables (migration 0043): they are computed from the uploaded data, which stays in logged tables, and
writing them through the write-ahead log cost a fifth to a third of a compute batch's store
(``benchmarks/data_layer.md``, 2026-12-02 (later)). What that trades: crash recovery (the server killed, the
machine lost) empties every unlogged table, a restore from a base backup (``pg_basebackup``) leaves them out, and
a streaming replica cannot read them (``docs/data-layer.md`` says what that means for a deployment). ``pg_dump``
keeps them.

:func:`derived_rows_check` finds out and repairs: the mark (``monitor_derivedrowsmark``, one row, unlogged as well)
is emptied with them, so while it holds its row nothing was lost (one read of a one-row table). Without it, in one
transaction: the derived tables are emptied (they are already, unless someone deleted the mark), every computed
tweet is marked pending again, each such workspace's data version is bumped (its cached pages were built from the
lost rows), a compute run over all its tweets is started, its members get a notice, and the mark is written
again. A run the workspace's budget refuses is not started: the notice says so, and the tweets wait, pending, for
an analyst to start one from the runs page. The recovery sweep (``recovery.stalled_requeue``, a beat task every
quarter of the stall time) and a background-mode web process's first request (``recovery.resume_in_process``)
call it. SQLite (``make demo``) has no unlogged tables: nothing to check there.
"""

from __future__ import annotations

import logging

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.urls import reverse

from ..cache import bump_data_version
from ..models import DerivedRowsMark, Membership, Tweet, Workspace
from .leases import notice_create

log = logging.getLogger(__name__)

__all__ = ["DERIVED_TABLES", "derived_rows_check"]

#: the unlogged tables of the engine's results (migration 0043), emptied together by crash recovery
DERIVED_TABLES = ("monitor_cascadeinfluence", "monitor_cascadegraph", "monitor_dailyinfluence", "monitor_publisherday")


#: what the members' notice says happened, in an analyst's words
_CRASHED = (
    "The database server crashed and restarted, which empties the tables of computed results (they can be "
    "computed again from the uploads, so they are kept where they are fastest to write)."
)


def _marked(cur) -> bool:
    cur.execute(f"SELECT EXISTS (SELECT 1 FROM {DerivedRowsMark._meta.db_table})")
    return bool(cur.fetchone()[0])


def derived_rows_check() -> list[int]:
    """Recompute what PostgreSQL's crash recovery emptied (see the module); returns the runs started, none while
    the mark is there. Safe to call from any number of processes at once: one of them repairs, the others find
    the mark it wrote."""
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cur:
        if _marked(cur):
            return []
    from .runs import compute_run_start  # runs imports the recovery sweep, which imports this module

    started: list[int] = []
    with transaction.atomic():
        with connection.cursor() as cur:
            # one repair at a time: a second caller waits here, then finds the mark the first one committed
            cur.execute(f"LOCK TABLE {DerivedRowsMark._meta.db_table} IN EXCLUSIVE MODE")
            if _marked(cur):
                return []
            cur.execute(f"TRUNCATE {', '.join(DERIVED_TABLES)}")
            DerivedRowsMark.objects.create(pk=1)
        computed = Tweet.objects.filter(compute_status=Tweet.ComputeStatus.COMPUTED)
        lost = sorted(computed.values_list("workspace_id", flat=True).order_by().distinct())
        computed.update(compute_status=Tweet.ComputeStatus.PENDING)
        for ws in Workspace.objects.filter(pk__in=lost).order_by("pk"):
            bump_data_version(ws.pk)
            url = reverse("runs", kwargs={"ws": ws.slug})
            try:
                with transaction.atomic():  # a refused run leaves the rest of the repair in place
                    run = compute_run_start(workspace=ws)
            except ValidationError as exc:
                refused = "; ".join(exc.messages)
                log.error("workspace %s: derived rows lost; its recompute was refused: %s", ws.pk, refused)
                message = f"{_CRASHED} Recomputing every tweet was refused: {refused}. Start a run from the runs page."
            else:
                started.append(run.pk)
                url = reverse("run", kwargs={"ws": ws.slug, "pk": run.pk})
                log.error("workspace %s: derived rows lost; recomputing them in run %s", ws.pk, run.pk)
                message = f"{_CRASHED} Run {run.pk} computes every tweet again; rankings fill in when it is done."
            for user_id in Membership.objects.filter(workspace=ws).values_list("user_id", flat=True):
                notice_create(workspace_id=ws.pk, user_id=user_id, message=message, url=url)
    return started
