"""``monitor.softcache``: the Redis cache keeps one redis-py client per connection pool, shared by its operations
and threads, and still answers a command after the connection under it was dropped."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings

from monitor.softcache import SoftRedisCache


@pytest.fixture
def redis_cache():
    location = settings.CACHES["default"].get("LOCATION")
    if "SoftRedisCache" not in settings.CACHES["default"]["BACKEND"]:
        pytest.skip("the cache is not Redis here (no REDIS_URL)")
    c = SoftRedisCache(location, {"KEY_PREFIX": "softcache-test"})
    yield c
    c.delete_many([f"k{i}" for i in range(8)] + ["k", "n"])


def test_every_operation_uses_one_client_per_pool(redis_cache):
    inner = redis_cache._cache
    assert inner.get_client() is inner.get_client(write=True)  # one server: reads and writes share its pool
    made = []
    real = inner._client
    inner._clients.clear()
    inner._client = lambda **kw: made.append(kw) or real(**kw)
    redis_cache.set("k", {"a": 1})
    assert redis_cache.get("k") == {"a": 1}
    assert redis_cache.add("n", 1) and redis_cache.incr("n") == 2
    redis_cache.delete("k")
    assert redis_cache.get("k", "gone") == "gone"
    assert len(made) == 1


def test_threads_share_the_client_and_each_reads_its_own_keys(redis_cache):
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for j in range(50):
                redis_cache.set(f"k{i}", (i, j))
                assert redis_cache.get(f"k{i}") == (i, j)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_the_shared_client_reconnects_after_its_connections_are_dropped(redis_cache):
    redis_cache.set("k", 1)
    client = redis_cache._cache.get_client()
    client.connection_pool.disconnect()  # as after a Redis restart: the pooled sockets are gone
    assert redis_cache.get("k") == 1
    assert redis_cache._cache.get_client() is client
