"""The stream's Redis side: wake-ups (Redis Streams, one per workspace and partition, read by a consumer group),
the consumers' heartbeats, and per-10-second counters of accepted and applied records.

All of it is optional: PostgreSQL holds every accepted event, so when Redis is unreachable intake still accepts
(no wake-up is sent: the consumers find the events when they poll), consumers poll and take partitions by
PostgreSQL advisory locks alone, and the rates are counted from PostgreSQL instead. Every failure is logged at
most once per ``LOG_EVERY_S`` per process. Keys carry the database's name, as the other shared keys do, so two
deployments (or test runs) sharing one Redis never see each other's streams.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection

log = logging.getLogger(__name__)

LOG_EVERY_S = 30.0
GROUP = "apply"
BUCKET_S = 10  # the rate counters' resolution
MAXLEN = 10_000  # wake-ups kept per stream (approximate trim): they are signals, the events are in PostgreSQL

_client: Any = None
_client_url = ""
_last_logged = 0.0


def _errors() -> tuple[type[BaseException], ...]:
    import redis

    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


def client():
    """A Redis client for the stream (``SPREADWATCH_STREAM_REDIS_URL``), or None when none is configured."""
    global _client, _client_url
    url = settings.SPREADWATCH_STREAM_REDIS_URL
    if not url:
        return None
    if _client is None or _client_url != url:
        import redis

        _client = redis.Redis.from_url(url, socket_connect_timeout=1.0, socket_timeout=5.0)
        _client_url = url
    return _client


def soft(what: str, call: Callable[[Any], Any], fallback: Any = None) -> Any:
    """``call(redis)``, or ``fallback`` when there is no Redis or it cannot be reached (logged, rate-limited)."""
    global _last_logged
    r = client()
    if r is None:
        return fallback
    try:
        return call(r)
    except _errors() as exc:
        now = time.monotonic()
        if now - _last_logged > LOG_EVERY_S:
            _last_logged = now
            log.warning("stream Redis unreachable (%s: %s): %s skipped", exc.__class__.__name__, exc, what)
        return fallback


def _base(ws_id: int) -> str:
    return f"spreadwatch:{connection.settings_dict['NAME']}:stream:{ws_id}"


def wake_key(ws_id: int, partition: int) -> str:
    return f"{_base(ws_id)}:wake:{partition}"


def consumers_key(ws_id: int) -> str:
    return f"{_base(ws_id)}:consumers"


def rate_key(ws_id: int, what: str, bucket: int) -> str:
    return f"{_base(ws_id)}:{what}:{bucket}"


# --- wake-ups -------------------------------------------------------------------------------------------------


def publish_wakeups(ws_id: int, partitions: dict[int, tuple[int, int]]) -> bool:
    """One wake-up per touched partition, ``{partition: (first id, last id)}``; False when Redis is not there."""

    def send(r) -> bool:
        pipe = r.pipeline(transaction=False)
        for p, (first, last) in sorted(partitions.items()):
            pipe.xadd(wake_key(ws_id, p), {"first": first, "last": last}, maxlen=MAXLEN, approximate=True)
        pipe.execute()
        return True

    return bool(soft("wake-up", send, False))


# --- rates ------------------------------------------------------------------------------------------------------


def count(ws_id: int, what: str, n: int, *, now: float | None = None) -> None:
    """Add ``n`` to this 10-second bucket's ``what`` (``accepted`` or ``applied``) counter."""
    bucket = int((time.time() if now is None else now) // BUCKET_S)

    def add(r) -> None:
        key = rate_key(ws_id, what, bucket)
        pipe = r.pipeline(transaction=False)
        pipe.incrby(key, n)
        pipe.expire(key, 900)
        pipe.execute()

    soft("rate counter", add)


def counted(ws_id: int, what: str, seconds: int, *, now: float | None = None) -> int | None:
    """The records counted in the last ``seconds`` (whole buckets, the current one included); None without
    Redis."""
    end = int((time.time() if now is None else now) // BUCKET_S)
    n = max(1, seconds // BUCKET_S)
    keys = [rate_key(ws_id, what, b) for b in range(end - n + 1, end + 1)]
    got = soft("rate read", lambda r: r.mget(keys))
    if got is None:
        return None
    return sum(int(v) for v in got if v is not None)


# --- consumers' heartbeats --------------------------------------------------------------------------------------


def heartbeat(ws_id: int, name: str, *, now: float | None = None) -> bool:
    t = time.time() if now is None else now
    return bool(soft("heartbeat", lambda r: r.zadd(consumers_key(ws_id), {name: t}) is not None, False))


def leave(ws_id: int, name: str) -> None:
    soft("leave", lambda r: r.zrem(consumers_key(ws_id), name))


def live_consumers(ws_id: int, *, now: float | None = None) -> list[str] | None:
    """Names of the consumers heard of within the timeout, sorted; None without Redis."""
    t = time.time() if now is None else now
    since = t - settings.SPREADWATCH_STREAM_CONSUMER_TIMEOUT_MS / 1000

    def read(r):
        r.zremrangebyscore(consumers_key(ws_id), "-inf", since - 3600)  # forget long-dead names
        return sorted(n.decode() for n in r.zrangebyscore(consumers_key(ws_id), since, "+inf"))

    return soft("consumers", read)
