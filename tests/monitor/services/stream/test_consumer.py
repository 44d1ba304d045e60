"""The consumer: micro-batches of a partition in id order, follows first, waiting events retried, wake-ups from
Redis acknowledged after the commit, PostgreSQL polled when Redis is not there, partitions shared by the live
consumers."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.utils import timezone

from monitor.models import StreamEvent
from monitor.services.stream import channel, stream_accept
from monitor.services.stream.consumer import Consumer, apply_partition_batch
from monitor.services.stream.records import partition_of

pytestmark = pytest.mark.django_db(transaction=True)


class Recorder:
    """A stand-in for apply_events: records each call's ids and marks them applied (retweets whose original is
    in no applied or given event wait, when ``wait`` is on)."""

    def __init__(self, wait: bool = False):
        self.calls: list[list[int]] = []
        self.wait = wait

    def __call__(self, *, workspace_id: int, event_ids: list[int]) -> dict:
        assert event_ids == sorted(event_ids)
        self.calls.append(list(event_ids))
        evs = StreamEvent.objects.filter(pk__in=event_ids, workspace_id=workspace_id)
        now = timezone.now()
        known = set(
            StreamEvent.objects.filter(workspace_id=workspace_id, kind="tweet", status="applied").values_list(
                "cascade_key", flat=True
            )
        ) | set(evs.filter(kind="tweet").values_list("cascade_key", flat=True))
        for e in evs:
            if self.wait and e.kind == "retweet" and e.cascade_key not in known:
                e.status, e.wait_until = "waiting", e.wait_until or now + timezone.timedelta(minutes=5)
            else:
                e.status, e.applied_at = "applied", now
            e.save(update_fields=["status", "wait_until", "applied_at"])
        return {"applied": len(event_ids)}

    @property
    def ids(self) -> list[int]:
        return [i for c in self.calls for i in c]


def _lines(*objs):
    return [(i, json.dumps(o)) for i, o in enumerate(objs, 1)]


def _tw(tid, uid=1, rt=None):
    d = {"tweet_id": str(tid), "user_id": str(uid), "created_at": "2020-01-01T00:00:00Z"}
    if rt:
        d["retweeted_tweet_id"] = str(rt)
    return d


def _same_partition_keys(n: int, p: int = 0) -> list[int]:
    out, k = [], 1000
    while len(out) < n:
        k += 1
        if partition_of(k, 8) == p:
            out.append(k)
    return out


def test_it_applies_a_partition_in_id_order_in_batches_of_the_configured_size(ws_a, settings):
    settings.SPREADWATCH_STREAM_BATCH = 3
    keys = _same_partition_keys(7)
    acc = stream_accept(workspace=ws_a, lines=_lines(*[_tw(k) for k in keys]))
    rec = Recorder()
    c = Consumer(name="c", workspace=ws_a, apply=rec)
    assert c.drain(ws_a.pk, 0) == 7
    assert [len(x) for x in rec.calls] == [3, 3, 1]
    assert rec.ids == list(range(acc.first_id, acc.last_id + 1))
    assert not StreamEvent.objects.exclude(status="applied").exists()


def test_a_follow_of_another_partition_is_applied_before_later_events(ws_a):
    [k] = _same_partition_keys(1, p=0)
    follower = next(u for u in range(1, 100) if partition_of(u, 8) != 0)
    stream_accept(workspace=ws_a, lines=_lines({"follower_id": follower, "followee_id": 5}))
    stream_accept(workspace=ws_a, lines=_lines(_tw(k)))
    rec = Recorder()
    apply_partition_batch(ws_a.pk, 0, rec)
    follow = StreamEvent.objects.get(kind="follow")
    assert rec.calls[0][0] == follow.pk and follow.status == "applied"


def test_waiting_events_are_retried_when_their_original_arrives_and_when_their_wait_is_over(ws_a):
    rec = Recorder(wait=True)
    k1, k2 = _same_partition_keys(2)
    stream_accept(workspace=ws_a, lines=_lines(_tw(99_001, 2, rt=k1), _tw(99_002, 2, rt=k2)))
    apply_partition_batch(ws_a.pk, 0, rec)
    assert set(StreamEvent.objects.values_list("status", flat=True)) == {"waiting"}
    stream_accept(workspace=ws_a, lines=_lines(_tw(k1)))
    apply_partition_batch(ws_a.pk, 0, rec)
    assert StreamEvent.objects.get(cascade_key=k1, kind="retweet").status == "applied"
    assert StreamEvent.objects.get(cascade_key=k2).status == "waiting"  # nothing new for it yet
    assert apply_partition_batch(ws_a.pk, 0, rec) == (0, 0)
    StreamEvent.objects.filter(cascade_key=k2).update(wait_until=timezone.now())
    assert apply_partition_batch(ws_a.pk, 0, rec)[0] == 1  # due: handed over again (apply decides: dead)


def test_the_garbage_collector_is_paused_for_the_apply_and_back_on_after_it_even_when_it_fails(ws_a):
    import gc

    keys = _same_partition_keys(2)
    seen = []

    def apply(*, workspace_id, event_ids):
        seen.append(gc.isenabled())
        if len(seen) == 2:
            raise RuntimeError("apply failed")
        return Recorder()(workspace_id=workspace_id, event_ids=event_ids)

    assert gc.isenabled()
    stream_accept(workspace=ws_a, lines=_lines(_tw(keys[0])))
    apply_partition_batch(ws_a.pk, 0, apply)
    stream_accept(workspace=ws_a, lines=_lines(_tw(keys[1])))
    with pytest.raises(RuntimeError):
        apply_partition_batch(ws_a.pk, 0, apply)
    assert seen == [False, False] and gc.isenabled()


def _needs_redis() -> None:
    """Wake-ups and heartbeats are the stream's Redis (``make test`` gives one; a bare ``pytest`` on the SQLite
    default has none, and the consumer then polls every partition: tested below)."""
    if channel.client() is None:
        pytest.skip("no stream Redis configured (SPREADWATCH_STREAM_REDIS_URL / REDIS_URL)")


def test_it_wakes_on_intake_and_acknowledges_after_the_commit(ws_a, settings):
    settings.SPREADWATCH_STREAM_POLL_MS = 60_000  # no poll in this test: only the wake-up can start the drain
    settings.SPREADWATCH_STREAM_BATCH_WAIT_MS = 0
    _needs_redis()
    r = channel.client()
    rec = Recorder()
    c = Consumer(name="solo", workspace=ws_a, apply=rec)
    c.step()  # the first step polls everything (nothing yet) and joins the group
    [k] = _same_partition_keys(1, p=3)
    stream_accept(workspace=ws_a, lines=_lines(_tw(k)))
    for _ in range(5):
        if c.step():
            break
    assert StreamEvent.objects.get().status == "applied"
    assert r.xpending(channel.wake_key(ws_a.pk, 3), channel.GROUP)["pending"] == 0


def test_without_redis_the_consumer_still_finds_everything_by_polling(ws_a, settings):
    settings.SPREADWATCH_STREAM_REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.SPREADWATCH_STREAM_POLL_MS = 100
    acc = stream_accept(workspace=ws_a, lines=_lines(*[_tw(k) for k in range(5001, 5041)]))
    assert acc.n_events == 40  # accepted without Redis: the events are in PostgreSQL
    rec = Recorder()
    c = Consumer(name="alone", workspace=ws_a, apply=rec)
    assert sorted(p for _, p in (c._beat() or c.owned)) == list(range(8))  # no heartbeats: tries every partition
    for _ in range(5):
        c.step()
    assert sorted(rec.ids) == list(range(acc.first_id, acc.last_id + 1))


def test_live_consumers_share_the_partitions_and_take_over_a_silent_ones(ws_a, settings):
    _needs_redis()
    a = Consumer(name="a", workspace=ws_a, apply=Recorder())
    b = Consumer(name="b", workspace=ws_a, apply=Recorder())
    a._beat(), b._beat(), a._beat()
    assert {p for _, p in a.owned} == {0, 2, 4, 6} and {p for _, p in b.owned} == {1, 3, 5, 7}
    channel.heartbeat(ws_a.pk, "b", now=0)  # b went silent long ago
    a._beat()
    assert len(a.owned) == 8


def test_a_failing_apply_rolls_its_batch_back_and_the_consumer_lives_on(ws_a, monkeypatch):
    monkeypatch.setattr("monitor.services.stream.consumer.time.sleep", lambda s: None)
    [k] = _same_partition_keys(1)
    stream_accept(workspace=ws_a, lines=_lines(_tw(k)))

    def broken(*, workspace_id, event_ids):
        StreamEvent.objects.filter(pk__in=event_ids).update(status="applied")
        raise ValueError("a bug in apply")

    c = Consumer(name="c", workspace=ws_a, apply=broken)
    assert c.drain(ws_a.pk, 0) == 0
    assert StreamEvent.objects.get().status == "queued"  # its update died with the transaction
    c.apply = Recorder()
    assert c.drain(ws_a.pk, 0) == 1


def test_the_partitions_a_consumer_drains_together_go_into_one_micro_batch(ws_a, settings):
    settings.SPREADWATCH_STREAM_BATCH_WAIT_MS = 0
    keys = [k for p in range(8) for k in _same_partition_keys(2, p=p)]
    acc = stream_accept(workspace=ws_a, lines=_lines(*[_tw(k) for k in keys]))
    rec = Recorder()
    c = Consumer(name="c", workspace=ws_a, apply=rec)
    assert c.drain(ws_a.pk, range(8)) == 16
    assert rec.calls == [list(range(acc.first_id, acc.last_id + 1))]  # one call, in id order


def test_a_poll_drains_every_owned_partition_of_a_workspace_in_one_call(ws_a, settings):
    settings.SPREADWATCH_STREAM_REDIS_URL = "redis://127.0.0.1:1/0"  # no wake-ups: the poll finds them
    settings.SPREADWATCH_STREAM_POLL_MS = 100
    settings.SPREADWATCH_STREAM_BATCH_WAIT_MS = 0
    stream_accept(workspace=ws_a, lines=_lines(*[_tw(k) for p in (1, 4, 6) for k in _same_partition_keys(3, p=p)]))
    rec = Recorder()
    c = Consumer(name="c", workspace=ws_a, apply=rec)
    c._beat()
    for _ in range(3):
        c.step()
    assert [len(x) for x in rec.calls] == [9]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="advisory locks are PostgreSQL's")
def test_a_partition_another_consumer_holds_is_left_out_of_the_shared_micro_batch(ws_a, settings):
    import psycopg

    from monitor.services.stream.consumer import LOCK_SPACE

    settings.SPREADWATCH_STREAM_BATCH_WAIT_MS = 0
    held_keys, free_keys = _same_partition_keys(2, p=3), _same_partition_keys(2, p=5)
    stream_accept(workspace=ws_a, lines=_lines(*[_tw(k) for k in held_keys + free_keys]))
    s = connection.settings_dict
    other = psycopg.connect(host=s["HOST"] or None, port=s["PORT"] or None, user=s["USER"], dbname=s["NAME"],
                            password=s["PASSWORD"] or None, autocommit=True)  # fmt: skip
    try:
        other.execute("SELECT pg_advisory_lock(%s, %s)", [LOCK_SPACE, ws_a.pk * 1024 + 3])
        rec = Recorder()
        assert apply_partition_batch(ws_a.pk, [3, 5], rec) == (2, 2)
        assert set(StreamEvent.objects.filter(cascade_key__in=held_keys).values_list("status", flat=True)) == {"queued"}
        other.execute("SELECT pg_advisory_unlock_all()")
        assert apply_partition_batch(ws_a.pk, [3, 5], rec) == (2, 2)
    finally:
        other.close()
    assert not StreamEvent.objects.exclude(status="applied").exists()


def test_when_a_shared_micro_batch_fails_each_partition_is_tried_apart_so_the_others_go_on(ws_a, monkeypatch):
    monkeypatch.setattr("monitor.services.stream.consumer.time.sleep", lambda s: None)
    [bad] = _same_partition_keys(1, p=0)
    good = _same_partition_keys(2, p=1)
    stream_accept(workspace=ws_a, lines=_lines(*[_tw(k) for k in [bad, *good]]))
    bad_pk = StreamEvent.objects.get(cascade_key=bad).pk
    rec = Recorder()

    def apply(*, workspace_id, event_ids):
        if bad_pk in event_ids:
            raise ValueError("a bug in apply, on one event")
        return rec(workspace_id=workspace_id, event_ids=event_ids)

    c = Consumer(name="c", workspace=ws_a, apply=apply)
    assert c.drain(ws_a.pk, [0, 1]) == 2
    assert StreamEvent.objects.get(pk=bad_pk).status == "queued"
    assert set(StreamEvent.objects.filter(cascade_key__in=good).values_list("status", flat=True)) == {"applied"}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="planner statistics are PostgreSQL's")
def test_a_running_consumer_refreshes_statistics_beside_its_micro_batches_and_stops_the_thread(
    ws_a, settings, monkeypatch
):
    import csv

    from monitor.services.stream._statistics import StatisticsRefresher
    from tests.webapp import EXPECTED_TOTAL, THESIS, total_by_name

    submitted: list[tuple[list[str], int]] = []
    refreshers: list[StatisticsRefresher] = []
    real_submit = StatisticsRefresher.submit

    def submit(self, tables, rows=0):
        refreshers.append(self)
        submitted.append((list(tables), rows))
        real_submit(self, tables, rows)

    monkeypatch.setattr(StatisticsRefresher, "submit", submit)
    settings.SPREADWATCH_STREAM_BATCH_WAIT_MS = 0
    follows = [dict(r) for r in csv.DictReader((THESIS / "follows.csv").open())]
    tweets = [{k: v for k, v in r.items() if v != ""} for r in csv.DictReader((THESIS / "tweets.csv").open())]
    stream_accept(workspace=ws_a, lines=_lines(*follows))
    stream_accept(workspace=ws_a, lines=_lines(*tweets))
    c = Consumer(name="c", workspace=ws_a)
    c.run(stop_after=2.0, install_signals=False)
    assert total_by_name(ws_a) == EXPECTED_TOTAL
    # the workspace's partition of the per-cascade rows (migration 0048)
    assert submitted and {t for tables, _ in submitted for t in tables} >= {f"monitor_cascadeinfluence_w{ws_a.pk}"}
    assert sum(rows for _, rows in submitted) == 11  # every per-cascade row added, handed over after its commit
    assert c.statistics is None and not any(r._thread.is_alive() for r in refreshers)


def test_an_apply_function_without_the_statistics_keyword_is_called_without_it(ws_a, settings):
    rec = Recorder()
    settings.SPREADWATCH_STREAM_BATCH_WAIT_MS = 0
    stream_accept(workspace=ws_a, lines=_lines(_tw(1)))
    Consumer(name="c", workspace=ws_a, apply=rec).run(stop_after=1.0, install_signals=False)
    assert len(rec.ids) == 1
