"""Intake's backpressure check (``monitor.services.stream.intake``): the backlog is counted only when a cheap upper
bound says it may have reached the limit, and the answer is the same as counting every time."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from monitor.models import StreamEvent
from monitor.services.stream import Backpressure, intake, stream_accept, stream_backlog
from monitor.services.stream.intake import queued_bound

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_floor_probed_yet():
    """The bound's floor is kept a second per process and workspace id; a test's ids may be an earlier test's."""
    intake._floors.clear()
    yield
    intake._floors.clear()


def _lines(*tweet_ids: int) -> list[tuple[int, str]]:
    return [
        (k, json.dumps({"tweet_id": str(t), "user_id": "7", "created_at": "2020-01-01T00:00:00Z"}))
        for k, t in enumerate(tweet_ids, 1)
    ]


def _event(ws, partition: int, status: str) -> int:
    return StreamEvent.objects.create(
        workspace=ws, partition=partition, kind="tweet", cascade_key=1, body="{}", received_at=timezone.now(),
        status=status,
    ).pk  # fmt: skip


def test_the_bound_covers_every_queued_event_of_every_partition_even_one_no_longer_configured(ws_a, ws_b, settings):
    settings.SPREADWATCH_STREAM_PARTITIONS = 4
    assert queued_bound(ws_a.pk) == 0
    old = _event(ws_a, 9, "queued")  # written when there were more partitions: still queued, still counted
    _event(ws_a, 1, "applied")
    _event(ws_b, 2, "queued")
    _event(ws_a, 3, "queued")
    newest = _event(ws_a, 0, "waiting")
    assert stream_backlog(ws_a.pk) == 2
    bound = queued_bound(ws_a.pk)
    assert bound >= 2
    if connection.vendor == "postgresql":
        assert bound == newest - old + 1  # from the oldest queued event to the newest id
    StreamEvent.objects.filter(pk=old).update(status="applied")
    assert queued_bound(ws_a.pk) >= stream_backlog(ws_a.pk) == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite's bound is the count itself")
def test_a_backlog_far_below_the_limit_is_not_counted(ws_a, settings):
    settings.SPREADWATCH_STREAM_MAX_BACKLOG = 1_000
    stream_accept(workspace=ws_a, lines=_lines(1, 2, 3))
    with CaptureQueriesContext(connection) as q:
        stream_accept(workspace=ws_a, lines=_lines(4))
    assert not [x["sql"] for x in q.captured_queries if "COUNT(" in x["sql"].upper()]
    assert stream_backlog(ws_a.pk) == 4


def test_a_bound_past_the_limit_is_checked_by_counting(ws_a, settings):
    """Applied events between the oldest queued one and the newest make the bound too high: the count decides."""
    settings.SPREADWATCH_STREAM_MAX_BACKLOG = 3
    stream_accept(workspace=ws_a, lines=_lines(1))
    stream_accept(workspace=ws_a, lines=_lines(2, 3, 4))
    first = StreamEvent.objects.order_by("pk").first()
    StreamEvent.objects.exclude(pk=first.pk).update(status="applied")
    assert stream_backlog(ws_a.pk) == 1
    assert queued_bound(ws_a.pk) >= (4 if connection.vendor == "postgresql" else 1)  # SQLite's is the count
    stream_accept(workspace=ws_a, lines=_lines(5))  # accepted: two queued, under the limit of 3
    stream_accept(workspace=ws_a, lines=_lines(6))
    with pytest.raises(Backpressure) as exc:
        stream_accept(workspace=ws_a, lines=_lines(7))
    assert exc.value.backlog == 3
    assert StreamEvent.objects.filter(status="queued").count() == 3


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite's bound is the count itself")
def test_the_oldest_queued_event_is_probed_at_most_once_a_second_and_the_bound_grows_with_new_ids(ws_a, monkeypatch):
    def probes(q) -> int:
        return len([x for x in q.captured_queries if "LATERAL" in x["sql"]])

    with CaptureQueriesContext(connection) as q:
        stream_accept(workspace=ws_a, lines=_lines(1, 2))  # the intake's check probes the floor
        first = queued_bound(ws_a.pk)
        stream_accept(workspace=ws_a, lines=_lines(3, 4, 5))
        second = queued_bound(ws_a.pk)
    assert (first, second, probes(q)) == (2, 5, 1)
    StreamEvent.objects.filter(workspace=ws_a).update(status="applied")
    stream_accept(workspace=ws_a, lines=_lines(6))
    assert queued_bound(ws_a.pk) == 6  # the floor probed before they were applied: looser, never too low
    monkeypatch.setattr(intake, "_FLOOR_TTL_S", 0.0)
    with CaptureQueriesContext(connection) as q:
        assert queued_bound(ws_a.pk) == 1
    assert probes(q) == 1
