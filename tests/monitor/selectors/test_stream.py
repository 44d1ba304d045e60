"""The Live page's count of running consumers where Redis cannot say: on PostgreSQL, the sessions holding a
consumer's presence lock, dropped when the consumer stops."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from monitor.selectors.stream import consumers_running, stream_state
from monitor.services.stream.consumer import Consumer

pytestmark = pytest.mark.django_db(transaction=True)  # the consumer runs on its own connection


def _until(cond, timeout: float = 20.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def _run(consumer: Consumer) -> threading.Thread:
    def go():
        try:
            consumer.run(stop_after=60, install_signals=False)
        finally:
            connections.close_all()

    t = threading.Thread(target=go)
    t.start()
    return t


def test_without_redis_the_running_consumers_are_counted_on_postgresql(ws_a, ws_b, settings):
    settings.SPREADWATCH_STREAM_REDIS_URL = ""  # no heartbeats to read
    settings.SPREADWATCH_STREAM_POLL_MS = 100
    assert consumers_running(ws_a.pk) == 0
    every = Consumer(name="every", apply=lambda **kw: {})
    only_b = Consumer(name="only-b", workspace=ws_b, apply=lambda **kw: {})
    threads = [_run(every), _run(only_b)]
    try:
        assert _until(lambda: consumers_running(ws_a.pk) == 1 and consumers_running(ws_b.pk) == 2)
        st = stream_state(ws_a)
        assert st["consumers"] is None and st["consumers_running"] == 1
        assert st["applier"]["mode"] == "consumers" and st["applier"]["value"] == "1"
    finally:
        every.stop()
        only_b.stop()
        for t in threads:
            t.join(30)
    assert consumers_running(ws_a.pk) == consumers_running(ws_b.pk) == 0  # stopped: the locks went with them
    assert stream_state(ws_a)["applier"]["mode"] == "none"
