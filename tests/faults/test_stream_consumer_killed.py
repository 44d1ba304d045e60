"""kill -9 of a stream consumer in the middle of a micro-batch, while records keep arriving: two consumer
processes share the partitions, the killed one's partitions and unacknowledged wake-ups go to the other, and
every accepted event ends applied exactly once, each cascade in id order.

It runs twice: with a test-only apply (``tests/faults/_stream_apply.py``) that records each application in a
table, so "exactly once" is counted directly and the kill lands inside a batch's transaction; and with the
product's ``apply_events`` (the kill lands between batches: it has no pause hook), where every event must end
applied and each retweet stored once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from django.db import connection
from django.db.models import Sum

from monitor.models import Retweet, StreamArrival, StreamEvent
from monitor.services.stream import stream_accept
from monitor.services.stream.consumer import DEFAULT_APPLY

from . import harness
from ._stream_apply import CREATE, TABLE
from .fixtures import database_url

pytestmark = pytest.mark.django_db(transaction=True)

N_CASCADES, PER_CASCADE, CHUNK = 60, 40, 200


class ConsumerProc:
    def __init__(self, name: str, folder, env: dict[str, str], real: bool):
        self.name = name
        self.log = folder / f"consumer-{name}.log"
        apply = DEFAULT_APPLY if real else "tests.faults._stream_apply:apply_events"
        argv = [sys.executable, "manage.py", "stream_consume", "--workspace", "newsroom", "--name", name,
                "--apply", apply]  # fmt: skip
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(argv, cwd=harness.ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def tail(self, n: int = 4000) -> str:
        return self.text()[-n:]

    def stop(self) -> None:
        harness.stop_process(self.proc)


def _records():
    """Originals first, then their retweets interleaved across cascades, with follows among the retweeters."""
    out = []
    base = 1_300_000_000_000_000_000
    for c in range(N_CASCADES):
        out.append({"tweet_id": str(base + c * 1000), "user_id": str(10_000 + c), "created_at": 1600000000 + c})
    for j in range(1, PER_CASCADE):
        for c in range(N_CASCADES):
            out.append(
                {"tweet_id": str(base + c * 1000 + j), "retweeted_tweet_id": str(base + c * 1000),
                 "user_id": str(j), "created_at": 1600000000 + c + j, "followers_count": j}
            )  # fmt: skip
        out.append({"follower_id": str(j + 1), "followee_id": str(j)})
    return out


@pytest.fixture
def stream_env(tmp_path, settings, request):
    real = request.param
    if connection.vendor != "postgresql":
        pytest.fail("the fault tests need PostgreSQL shared with the consumer processes: run under with_services.py")
    marks = tmp_path / "marks"
    marks.mkdir()
    with harness.redis_server(appendonly=False) as redis:
        settings.SPREADWATCH_STREAM_REDIS_URL = redis.url
        settings.SPREADWATCH_STREAM_CONSUMER_TIMEOUT_MS = 2000
        env = {
            **os.environ,
            "PYTHONPATH": str(harness.ROOT),
            "DATABASE_URL": database_url(),
            "SPREADWATCH_STREAM_REDIS_URL": redis.url,
            "REDIS_URL": "",
            "SPREADWATCH_STREAM_CONSUMER_TIMEOUT_MS": "2000",
            "SPREADWATCH_STREAM_POLL_MS": "1000",
            "SPREADWATCH_STREAM_BATCH": "100",
            "SPREADWATCH_STREAM_BATCH_WAIT_MS": "50",
            "FAULTS_DIR": str(marks),
        }
        with connection.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
            cur.execute(CREATE)
        procs: list[ConsumerProc] = []

        def start(name: str, **extra: str) -> ConsumerProc:
            p = ConsumerProc(name, tmp_path, {**env, **extra}, real)
            procs.append(p)
            return p

        try:
            yield start, marks, redis, real
        finally:
            for p in procs:
                p.stop()
            with connection.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {TABLE}")


@pytest.mark.parametrize("stream_env", [False, True], ids=["counting-apply", "product-apply"], indirect=True)
def test_every_accepted_event_is_applied_once_after_a_consumer_is_killed_mid_batch(ws_a, stream_env):
    start, marks, redis, real = stream_env
    a = start("a", FAULTS_STREAM_PAUSE_AT="" if real else "3")
    b = start("b")
    logs = [a, b]
    for p in logs:
        harness.wait_for(lambda p=p: "ready" in p.text(), f"consumer {p.name} to start", harness.START_S, logs=logs)
    harness.wait_for(
        lambda: "partitions" in a.text() and "partitions" in b.text() and len(
            redis.client().zrange(f"spreadwatch:{connection.settings_dict['NAME']}:stream:{ws_a.pk}:consumers", 0, -1)
        ) == 2, "both consumers to join", logs=logs,
    )  # fmt: skip
    records = _records()
    chunks = [records[i : i + CHUNK] for i in range(0, len(records), CHUNK)]
    killed_at = None
    for i, chunk in enumerate(chunks):
        stream_accept(workspace=ws_a, lines=[(k, json.dumps(o)) for k, o in enumerate(chunk, 1)], source=f"chunk{i}")
        time.sleep(0.2)
        paused = next(marks.glob("apply-*"), None)
        if paused is not None and killed_at is None:
            pid = int(paused.name.split("-")[1])
            owner = a if pid == a.proc.pid else b
            assert owner is a
            os.kill(pid, signal.SIGKILL)  # inside its transaction: rows written, not committed
            a.proc.wait(timeout=30)
            killed_at = i
        if real and i == len(chunks) // 3 and killed_at is None:
            a.proc.send_signal(signal.SIGKILL)  # the real apply has no pause hook: kill -9 between batches
            a.proc.wait(timeout=30)
            killed_at = i
    assert killed_at is not None and killed_at < len(chunks) - 1, "the kill must land mid-stream"
    n = len(records)
    if real:  # killed between batches (no pause hook): maybe nothing was left to claim
        # the product's apply deletes each event it applies and counts it in the Live page's arrivals, in the
        # same transaction: every event counted, and counted once
        def arrived() -> int:
            return StreamArrival.objects.filter(workspace=ws_a).aggregate(n=Sum("events"))["n"] or 0

        harness.wait_for(lambda: arrived() >= n, f"all {n} events to be applied", logs=logs)
        assert arrived() == n and not StreamEvent.objects.filter(workspace=ws_a).exists()
        assert Retweet.objects.filter(tweet__workspace=ws_a).count() == N_CASCADES * (PER_CASCADE - 1)
        return
    harness.wait_for(
        lambda: StreamEvent.objects.filter(workspace=ws_a, status="applied").count() == n,
        f"all {n} events to be applied",
        logs=logs,
    )
    assert StreamEvent.objects.filter(workspace=ws_a).count() == n
    # the wake-ups a read and never acknowledged: b claims them once they have been idle for the consumer timeout
    # (2 s here), which can come after b has already applied their events from its own later wake-ups or polls
    harness.wait_for(lambda: "claimed" in b.text(), "b to claim a's wake-ups", 15, logs=logs)
    assert "claimed" in b.text()
    with connection.cursor() as cur:
        cur.execute(f"SELECT event_id, count(*), array_agg(DISTINCT pid) FROM {TABLE} GROUP BY event_id")
        rows = cur.fetchall()
        cur.execute(f"SELECT event_id FROM {TABLE} ORDER BY n")
        order = [r[0] for r in cur.fetchall()]
    ids = set(StreamEvent.objects.filter(workspace=ws_a).values_list("pk", flat=True))
    assert {r[0] for r in rows} == ids
    assert [r for r in rows if r[1] != 1] == []  # exactly once: the killed batch's rows died with its transaction
    assert {p for r in rows for p in r[2]} == {a.proc.pid, b.proc.pid}  # a committed batches before its death
    # each cascade applied in id order
    pos = {e: i for i, e in enumerate(order)}
    for key in StreamEvent.objects.filter(workspace=ws_a).values_list("cascade_key", flat=True).distinct():
        evs = list(
            StreamEvent.objects.filter(workspace=ws_a, cascade_key=key).order_by("pk").values_list("pk", flat=True)
        )
        assert [pos[e] for e in evs] == sorted(pos[e] for e in evs), f"cascade {key} out of order"
    # every wake-up acknowledged, the killed consumer's included (claimed by b)
    r = redis.client()
    keys = [f"spreadwatch:{connection.settings_dict['NAME']}:stream:{ws_a.pk}:wake:{p}" for p in range(8)]

    def unacknowledged() -> list[str]:
        return [k for k in keys if r.exists(k) and r.xpending(k, "apply")["pending"]]

    # a consumer acknowledges a wake-up after the batch it started has committed: the last ones may still be
    # on their way when the last event shows applied, so wait for them (a lost one never comes)
    harness.wait_for(lambda: not unacknowledged(), "every wake-up to be acknowledged", logs=logs)
