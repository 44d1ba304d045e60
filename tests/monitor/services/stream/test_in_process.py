"""The embedded default (``make demo``: no broker, tasks on the web process's background thread) applies the live
stream in the web process: records posted to ``POST /api/v1/stream/`` are applied with no ``stream_consume``
running, the request does not wait for it, a failure is tried again, records queued while no applier ran are found
by the next request, and a ``stream_consume`` running beside it applies nothing twice."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.db import connections
from rest_framework.test import APIClient

from monitor import jobs
from monitor.models import Retweet, StreamEvent, Tweet
from monitor.services.stream import in_process, stream_accept, stream_token_create
from monitor.services.stream.apply import apply_events
from monitor.services.stream.consumer import Consumer

pytestmark = pytest.mark.django_db(transaction=True)  # the applier thread reads what the request committed

URL = "/api/v1/stream/"


def _tweet(tid: int, uid: int, rt: int | None = None, t: int = 1_600_000_000) -> dict:
    d = {"tweet_id": str(tid), "user_id": str(uid), "created_at": t, "followers_count": 10}
    if rt is not None:
        d["retweeted_tweet_id"] = str(rt)
    return d


def _body(objs: list[dict]) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def _cascade(original: int, n: int, *, first_user: int = 100) -> list[dict]:
    """An original and ``n`` retweets of it, by distinct users, a second apart."""
    return [_tweet(original, 1)] + [
        _tweet(original * 1000 + i, first_user + i, rt=original, t=1_600_000_001 + i) for i in range(n)
    ]


def _post(ws, objs: list[dict]):
    key = stream_token_create(workspace=ws, name="feeder")[1]
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return c.generic("POST", URL, _body(objs), content_type="application/x-ndjson")


def _until(cond, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def _open(ws) -> int:
    return StreamEvent.objects.filter(workspace=ws, status__in=("queued", "waiting")).count()


@pytest.fixture
def embedded(settings):
    """The demo's web server: no broker (the suite's Celery is eager), tasks in the background. The applier is
    stopped after the test, and the tasks its micro-batches queued (the alerts' evaluation) are waited for, before
    the database is flushed: a task still reading there deadlocked the flush's TRUNCATE (seen once in CI)."""
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True
    settings.SPREADWATCH_STREAM_POLL_MS = 200
    settings.SPREADWATCH_STREAM_BATCH_WAIT_MS = 0
    yield
    assert in_process.stop(timeout=30)
    assert jobs.background_idle(timeout=60)
    in_process._applier.apply = None


def test_records_posted_on_the_embedded_default_are_applied_without_a_consumer(ws_a, embedded):
    r = _post(ws_a, _cascade(7001, 5))
    assert r.status_code == 202, r.content
    assert _until(lambda: _open(ws_a) == 0), "the records stayed queued: nothing applied them"
    assert Tweet.objects.filter(workspace=ws_a, tweet_id=7001).exists()
    assert Retweet.objects.filter(tweet__workspace=ws_a, tweet__tweet_id=7001).count() == 5
    # the applier ends once nothing is left to do; the next intake starts it again
    assert _until(lambda: not in_process.running(), timeout=10)
    assert _post(ws_a, _cascade(7002, 2, first_user=300)).status_code == 202
    assert _until(lambda: Retweet.objects.filter(tweet__workspace=ws_a, tweet__tweet_id=7002).count() == 2)


def test_without_the_background_mode_intake_only_queues(ws_a, settings):
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = False  # the suite, management commands, a deployment
    assert _post(ws_a, _cascade(7001, 3)).status_code == 202
    time.sleep(0.5)
    assert not in_process.running() and _open(ws_a) == 4


def test_the_request_that_posts_does_not_wait_for_the_apply(ws_a, embedded):
    gate, entered = threading.Event(), threading.Event()

    def held(**kw):
        entered.set()
        assert gate.wait(30)
        return apply_events(**kw)

    in_process._applier.apply = held
    try:
        r = _post(ws_a, _cascade(7001, 3))
        assert r.status_code == 202  # answered while the apply is held
        assert entered.wait(30) and _open(ws_a) == 4
    finally:
        gate.set()
    assert _until(lambda: _open(ws_a) == 0)


def test_a_failing_micro_batch_is_rolled_back_and_applied_later(ws_a, embedded):
    calls = []

    def flaky(**kw):
        calls.append(kw["event_ids"])
        if len(calls) == 1:
            raise RuntimeError("the apply broke once")
        return apply_events(**kw)

    in_process._applier.apply = flaky
    assert _post(ws_a, _cascade(7001, 3)).status_code == 202
    assert _until(lambda: _open(ws_a) == 0)
    assert len(calls) >= 2 and sorted(i for c in calls[1:] for i in c) == calls[0]  # each applied once after it
    assert Retweet.objects.filter(tweet__workspace=ws_a).count() == 3


def test_records_queued_while_no_applier_ran_are_found_by_the_next_request(ws_a, client, embedded, settings):
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = False  # e.g. follow_stream in another process, or the server down
    acc = stream_accept(workspace=ws_a, lines=list(enumerate(map(json.dumps, _cascade(7001, 3)), 1)))
    assert acc.n_events == 4 and not in_process.running()
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True
    in_process._applier._request_probe_at = 0.0
    assert client.get("/healthz").status_code == 200  # any request the web process serves
    assert _until(lambda: _open(ws_a) == 0)


def test_a_stream_consume_beside_it_applies_nothing_twice(ws_a, embedded, settings):
    """Both take every partition (no Redis heartbeats here): the locks and the re-check share the events out."""
    settings.SPREADWATCH_STREAM_REDIS_URL = ""
    seen: list[int] = []
    lock = threading.Lock()

    def counted(**kw):
        with lock:
            seen.extend(kw["event_ids"])
        time.sleep(0.02)  # a micro-batch takes time: let the two overlap
        return apply_events(**kw)

    in_process._applier.apply = counted
    consumer = Consumer(name="beside", apply=counted, batch=7)

    def consume():
        try:
            consumer.run(stop_after=60, install_signals=False)
        finally:
            connections.close_all()

    t = threading.Thread(target=consume)
    t.start()
    try:
        for k in range(6):
            assert _post(ws_a, _cascade(7001 + k, 6, first_user=100 + 10 * k)).status_code == 202
        assert _until(lambda: _open(ws_a) == 0, timeout=60)
    finally:
        consumer.stop()
        t.join(30)
    assert len(seen) == len(set(seen)) == 42  # 6 originals, 36 retweets: each handed to an apply exactly once
    assert Retweet.objects.filter(tweet__workspace=ws_a).count() == 36
