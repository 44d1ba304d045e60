"""Migrations that move data: run from the migration before them on rows written by the models of that time."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE_ARRIVALS = ("monitor", "0021_account_name_index_dropped")
ARRIVALS = ("monitor", "0022_stream_arrival")


def _migrate(target: tuple[str, str]):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


def test_upgrading_counts_the_last_two_hours_of_applied_events_and_deletes_every_clean_applied_one():
    apps = _migrate(BEFORE_ARRIVALS)
    try:
        Workspace = apps.get_model("monitor", "Workspace")
        StreamEvent = apps.get_model("monitor", "StreamEvent")
        ws = Workspace.objects.create(name="Desk", slug="desk")
        now = timezone.now().replace(microsecond=0)
        second = now - dt.timedelta(minutes=5)

        def event(kind: str, key: int | None, received, status: str = "applied", error: str = "") -> int:
            return StreamEvent.objects.create(
                workspace=ws, partition=0, kind=kind, cascade_key=key, body="{}", received_at=received,
                status=status, error=error, applied_at=received if status == "applied" else None,
            ).pk  # fmt: skip

        for k in range(3):  # three retweets of cascade 1000 and its original, in one second
            event("retweet", 1000, second + dt.timedelta(microseconds=k))
        event("tweet", 1000, second)
        event("follow", None, second)
        old = event("retweet", 2000, now - dt.timedelta(hours=3))  # applied before the window: deleted, not counted
        noted = event("retweet", 1000, second, error="applied without a row: conflicts with a stored tweet")
        queued = event("retweet", 1000, now, status="queued")
        dead = event("retweet", 3000, now, status="dead", error="original 3000 never arrived")

        apps = _migrate(ARRIVALS)
        StreamEvent = apps.get_model("monitor", "StreamEvent")
        StreamArrival = apps.get_model("monitor", "StreamArrival")
        assert set(StreamEvent.objects.values_list("pk", flat=True)) == {noted, queued, dead}
        assert old not in set(StreamEvent.objects.values_list("pk", flat=True))
        counts = {
            (a.cascade_key, a.second): (a.events, a.retweets) for a in StreamArrival.objects.filter(workspace_id=ws.pk)
        }
        assert counts == {(1000, second): (5, 4), (0, second): (1, 0)}  # the noted retweet counts: it was applied
    finally:
        _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes("monitor")[0])
