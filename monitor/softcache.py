"""Redis as a soft dependency: Django's Redis cache backend where an unreachable Redis is a cache miss.

Everything Spreadwatch keeps in the cache can be rebuilt or done without: cached reads are recomputed from
PostgreSQL, the data version falls back to the workspace row (``monitor.cache``), an import's progress is
shown as "running" without its percentage, and the login and API rate limits keep a per-process count beside
the shared one (``monitor.security``). So while Redis is down (restarted, failed over, out of memory) a read
answers as for a missing key and a write is dropped, instead of a 500 on every page: an outage costs speed,
not service. Each failure is logged, at most once per ``LOG_EVERY_S`` per process.

``add`` answers True when Redis is down: its callers use it as a lock ("I build this value"), and with no
Redis every process must build its own value rather than wait for a builder that cannot announce itself.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

log = logging.getLogger(__name__)

LOG_EVERY_S = 30.0


def _errors() -> tuple[type[BaseException], ...]:
    import redis

    # OSError: a refused or reset socket that redis-py did not wrap
    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


class SharedClients(RedisCacheClient):
    """Django's Redis cache client, keeping one redis-py client per connection pool instead of making one for
    every operation: making one (its table of response callbacks) took longer than the ``GET`` it served, which
    took 146 us through Django's client and 69 us through a kept one on a 2-core host
    (``benchmarks/merge_steps_bench.py``); a 1M-retweet run's warm-up made 1,493 of them. A redis-py client is
    safe to share between threads: it takes a connection from its pool for each command, and a pool opens new
    connections in a forked child."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return client


class SoftRedisCache(RedisCache):
    """:class:`RedisCache` whose operations never raise because Redis is unreachable (see the module)."""

    _last_logged = 0.0

    def __init__(self, server: str, params: dict) -> None:
        params = dict(params)
        # a Redis that accepts the connection and then hangs must not hang a page either: seconds, not forever
        options = {"socket_connect_timeout": 1.0, "socket_timeout": 2.0, **params.get("OPTIONS", {})}
        params["OPTIONS"] = options
        super().__init__(server, params)
        self._class = SharedClients
        self._errors = _errors()

    def _soft(self, what: str, call: Callable[[], Any], fallback: Any) -> Any:
        try:
            return call()
        except self._errors as exc:
            now = time.monotonic()
            if now - SoftRedisCache._last_logged > LOG_EVERY_S:
                SoftRedisCache._last_logged = now
                log.warning("cache unreachable (%s: %s): %s answered as a miss", exc.__class__.__name__, exc, what)
            return fallback() if callable(fallback) else fallback

    def get(self, key, default=None, version=None):
        return self._soft("get", lambda: super(SoftRedisCache, self).get(key, default, version), default)

    def get_many(self, keys, version=None):
        return self._soft("get_many", lambda: super(SoftRedisCache, self).get_many(keys, version), dict)

    def has_key(self, key, version=None):
        return self._soft("has_key", lambda: super(SoftRedisCache, self).has_key(key, version), False)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._soft("set", lambda: super(SoftRedisCache, self).set(key, value, timeout, version), None)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._soft("set_many", lambda: super(SoftRedisCache, self).set_many(data, timeout, version), list)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._soft("add", lambda: super(SoftRedisCache, self).add(key, value, timeout, version), True)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._soft("touch", lambda: super(SoftRedisCache, self).touch(key, timeout, version), False)

    def delete(self, key, version=None):
        return self._soft("delete", lambda: super(SoftRedisCache, self).delete(key, version), False)

    def delete_many(self, keys, version=None):
        return self._soft("delete_many", lambda: super(SoftRedisCache, self).delete_many(keys, version), None)

    def incr(self, key, delta=1, version=None):
        def missing():
            raise ValueError(f"Key '{key}' not found (the cache is unreachable)")

        return self._soft("incr", lambda: super(SoftRedisCache, self).incr(key, delta, version), missing)

    def get_or_set(self, key, default, timeout=DEFAULT_TIMEOUT, version=None):
        def computed():
            return default() if callable(default) else default

        return self._soft(
            "get_or_set", lambda: super(SoftRedisCache, self).get_or_set(key, default, timeout, version), computed
        )

    def clear(self):
        return self._soft("clear", lambda: super(SoftRedisCache, self).clear(), False)
