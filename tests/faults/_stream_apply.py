"""A test-only ``apply_events`` for the stream fault test (``stream_consume --apply
tests.faults._stream_apply:apply_events``): it records every event id it is given in the table
``stream_fault_applied`` (one row per id and call, in call order) and marks the events applied, all in the
consumer's transaction, so a row that survives is an application that committed. Test code only.

``FAULTS_STREAM_PAUSE_AT=k``: this process's k-th call writes its rows, then the marker file
``$FAULTS_DIR/apply-<pid>`` and sleeps (for the test to kill it) before its transaction can commit.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from django.db import connection
from django.utils import timezone

from monitor.models import StreamEvent

TABLE = "stream_fault_applied"
CREATE = f"CREATE TABLE IF NOT EXISTS {TABLE} (n bigserial PRIMARY KEY, event_id bigint NOT NULL, pid int NOT NULL)"
_calls = 0


def apply_events(*, workspace_id: int, event_ids: list[int]) -> dict:
    global _calls
    _calls += 1
    with connection.cursor() as cur:
        cur.execute(
            f"INSERT INTO {TABLE} (event_id, pid) SELECT x, %s FROM unnest(%s::bigint[]) WITH ORDINALITY AS u(x, o) "
            "ORDER BY o",
            [os.getpid(), list(event_ids)],
        )
    StreamEvent.objects.filter(workspace_id=workspace_id, pk__in=event_ids).update(
        status=StreamEvent.Status.APPLIED, applied_at=timezone.now()
    )
    if _calls == int(os.environ.get("FAULTS_STREAM_PAUSE_AT", "0") or 0):
        (Path(os.environ["FAULTS_DIR"]) / f"apply-{os.getpid()}").write_text(str(len(event_ids)))
        time.sleep(300)  # killed here, inside the transaction
    return {"applied": len(event_ids), "waiting": 0, "dead": 0}
