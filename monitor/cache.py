"""The data-version read cache: reads that are costly and change only when data is written are cached per workspace
under a *data version* that those writes bump.

Rankings, rank histories and the overview's sums read the daily aggregates, which change only when a compute batch
commits (or an import or purge changes the counts). Their results are cached per workspace under a *data version* that
those writes bump (:func:`bump_data_version`) in their own transaction: the version lives in the workspace row, and the
cache keeps a copy of it for ``VERSION_COPY_S`` seconds, dropped when a bump commits. So a cached page is never staler
than the last commit while Redis is up, and at most ``VERSION_COPY_S`` seconds staler after a bump made while Redis was
down; the TTL of the cached reads only bounds memory. The workspace's creation time is part of the key, so a recreated
database (tests, a restored dump) never meets an old entry. ``SPREADWATCH_READ_CACHE_SECONDS=0`` turns it off.

This module is out of ``monitor.selectors`` because bumping the version is a write: services call
:func:`bump_data_version` in their transaction, selectors decorate their reads with :func:`cached`.

**Warming** (:func:`warming`, used by ``monitor.services.warmup``): a compute run's last transaction bumps the
version and then, before it commits, calls the busiest pages' selectors under the version that transaction sees
(the new one, *pinned*: read from the row, never copied into the cache, so no other process meets the new version
before the commit makes its rows visible). What they store is under the keys the pages will ask for once the
commit lands, so the first readers after a run shows done find them. If that transaction does not commit, the
caller drops the keys written (:func:`forget_keys`): the version number is used again by the next bump.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from django.db import connection, models

if TYPE_CHECKING:
    from .models import Workspace

log = logging.getLogger(__name__)

# while warming (see the module): the workspace whose version is pinned, that version, and the keys written
_PINNED: ContextVar[tuple[int, int, list[str]] | None] = ContextVar("sw_read_cache_pinned", default=None)


def _version_key(ws_id: int) -> str:
    # the database's name is part of it: two databases (two deployments, or two test runs) sharing one Redis
    # must not share the counters of their workspaces with the same id
    return f"sw:data-version:{connection.settings_dict['NAME']}:{ws_id}"


# the cache holds a copy of the workspace row's ``data_version`` for this long: a copy that missed a bump (Redis
# was down when the bump's commit deleted it, or a reader put back the value it read just before the commit) is
# stale for at most this long, and a page reads the row at most this often
VERSION_COPY_S = 30

#: how long a cached read is kept at most (``SPREADWATCH_READ_CACHE_SECONDS``): a week. Entries are keyed by the
#: data version, so the TTL is not what keeps them fresh: it was 300 s until 2026-11-27, and then every page was
#: cold again after five quiet minutes (the first analysts after a lull paid p95 1.3-1.9 s at 1M retweets,
#: docs/reliability.md). Memory is bounded by :func:`prune_superseded` instead, which drops the entries of every
#: version but the current one and the one before.
DEFAULT_TTL = 7 * 24 * 3600


def versioned_key(version: str, raw: str) -> str:
    """The cache key of a read or rendered fragment named by ``raw`` under ``version`` (:func:`current_version`'s
    string: ``<workspace>:<created>:<n>``). The workspace and version number stay readable in it, so that
    :func:`prune_superseded` can find the entries of versions that no page will ask for again."""
    ws_pk, number = version.partition(":")[0], version.rpartition(":")[2]
    digest = hashlib.sha1(f"{version}|{raw}".encode()).hexdigest()
    return f"{_read_prefix()}{ws_pk}:{number}:{digest}"


def fragment_key(version: str, name: str, *vary_on: Any) -> str:
    """The cache key of a template fragment (``{% read_cache %}``) rendered for ``vary_on`` under ``version``."""
    return versioned_key(version, "|".join([f"fragment:{name}", *(str(v) for v in vary_on)]))


def _read_prefix() -> str:
    # the database's name, as in _version_key: two deployments sharing one Redis prune only their own entries
    return f"sw:read:{connection.settings_dict['NAME']}:"


def bump_data_version(ws_id: int) -> int:
    """Called inside the transaction of a write that changes what the cached reads return: the new version is
    committed with the data in PostgreSQL, whatever happens to Redis; the cached copy is dropped on commit.
    Returns the new version number. The update locks the workspace row until the commit, so no other write
    commits a version between this one's bump and its commit (what :func:`record_all_time_delta` relies on)."""
    from django.core.cache import cache
    from django.db import transaction

    from .models import Workspace

    with connection.cursor() as cur:
        cur.execute(
            f"UPDATE {Workspace._meta.db_table} SET data_version = data_version + 1 WHERE id = %s "
            "RETURNING data_version",
            [ws_id],
        )
        row = cur.fetchone()
    number = int(row[0]) if row else 0
    for stale in [k for k in _PENDING if k[0] == ws_id]:  # recorded by a transaction of this process that rolled back
        _PENDING.pop(stale, None)
    key = _version_key(ws_id)

    def forget() -> None:
        with contextlib.suppress(Exception):  # a cache that cannot be reached: its copy expires by itself
            cache.delete(key)

    # now, so that what this transaction reads next sees the new version, and again on commit, for the
    # processes that re-read the old one from the database in between
    forget()
    # robust: a cache that cannot be reached must not fail the hooks after this one (the copy expires anyway)
    transaction.on_commit(forget, robust=True)
    return number


# --- what a version changed in the all-time sums ------------------------------------------------------------------
#
# The ranking across publishers over all time is served from a per-process snapshot of the daily aggregates summed
# per (account, label) (``selectors.rankings``). Summing them again takes a pass over every daily row (0.23 s of
# PostgreSQL for 330,000 rows), and a live stream bumps the version about once a second. So a write that knows
# exactly how it changed those sums (a stream micro-batch: the daily rows it deleted and wrote) records the change
# under the version it committed, and a process holding the snapshot of the version before applies it instead
# of reading every row again. A compute batch records its change too (the daily rows it wrote less those it
# replaced), and an import records that it changed none, so the warm-up after a run builds the new version's sums
# from the previous version's cached ones (``selectors.rankings.all_time_sums``). A version with no record (a
# purge, a compute batch on SQLite; or Redis was down) is read whole, as before.

ALL_TIME_DELTA_TTL = 600  # seconds a record is kept: a process further behind than that reads the sums whole


def version_name(ws_id: int, created_at, number: int) -> str:
    """The name of a workspace's data version: what :func:`current_version` returns and cache keys hold."""
    return f"{ws_id}:{created_at.isoformat()}:{number}"


def _all_time_delta_key(version: str) -> str:
    return f"sw:alltime-delta:{connection.settings_dict['NAME']}:{version}"


def _all_time_empty_key(version: str) -> str:
    return f"sw:alltime-empty:{connection.settings_dict['NAME']}:{version}"


def record_no_daily_rows(ws_id: int, number: int) -> None:
    """Record that version ``number`` of the workspace had no daily row, so its all-time sums are empty: a
    compute batch that finds none before its bump (version ``number`` + 1) says so, and the sums of the versions
    after it are the recorded changes alone (:func:`all_time_empty`). Kept as long as the changes are; nothing is
    recorded while the read cache is off or cannot be reached."""
    if read_cache_seconds() <= 0:
        return
    from django.core.cache import cache

    from .models import Workspace

    created = Workspace.objects.filter(pk=ws_id).values_list("created_at", flat=True).first()
    if created is not None:
        with contextlib.suppress(Exception):
            cache.set(_all_time_empty_key(version_name(ws_id, created, number)), True, timeout=ALL_TIME_DELTA_TTL)


def all_time_empty(ws: Workspace, numbers: list[int]) -> set[int]:
    """Which of the versions ``numbers`` of ``ws`` are recorded as having had no daily row
    (:func:`record_no_daily_rows`)."""
    from django.core.cache import cache

    keys = {_all_time_empty_key(version_name(ws.pk, ws.created_at, n)): n for n in numbers}
    try:
        got = cache.get_many(list(keys))
    except Exception:  # unreachable: none known
        return set()
    return {keys[k] for k, v in got.items() if v}


def record_all_time_delta(ws_id: int, number: int, delta: Any) -> None:
    """Record, once this transaction commits, that version ``number`` (returned by :func:`bump_data_version` in
    it) changed the all-time sums by exactly ``delta`` (``algorithms.influence.AllTimeDelta``: rows of account,
    label code, Σ influence, Σ T_v to add; an empty one where no daily row changed). Exact only when every daily
    row this transaction wrote was written after its bump: the bump holds the workspace row, so the rows it read
    are those of version ``number - 1``. Nothing is recorded while the read cache is off; a cache that cannot be
    reached records nothing (the readers then read the sums whole)."""
    if read_cache_seconds() <= 0:
        return
    from django.core.cache import cache
    from django.db import transaction

    from .models import Workspace

    created = Workspace.objects.filter(pk=ws_id).values_list("created_at", flat=True).first()
    if created is None:
        return
    key = _all_time_delta_key(version_name(ws_id, created, number))
    txid = _transaction_id()
    if txid is not None:  # until the commit, for the reads of this transaction (the run's warm-up)
        _PENDING[(ws_id, number)] = (txid, delta)

    def put() -> None:
        _PENDING.pop((ws_id, number), None)
        with contextlib.suppress(Exception):
            cache.set(key, delta, timeout=ALL_TIME_DELTA_TTL)

    transaction.on_commit(put, robust=True)


#: the changes recorded by this process's open transactions, until they commit: (workspace, version) -> (the
#: PostgreSQL transaction's id, the change). One whose transaction rolled back stays until the workspace's next
#: bump in this process (:func:`bump_data_version`), and is only ever given to the transaction that recorded it.
_PENDING: dict[tuple[int, int], tuple[int, Any]] = {}


def _transaction_id() -> int | None:
    """The current PostgreSQL transaction's id, if it has one (it has written: a recording transaction has bumped
    the version); None elsewhere, outside a transaction block, or in one that has written nothing (asking does not
    give it an id)."""
    if connection.vendor != "postgresql" or not connection.in_atomic_block:
        return None
    with connection.cursor() as cur:
        cur.execute("SELECT txid_current_if_assigned()")
        txid = cur.fetchone()[0]
    return None if txid is None else int(txid)


def all_time_deltas(ws: Workspace, first: int, last: int) -> list | None:
    """The recorded changes of versions ``first`` to ``last`` of ``ws`` in order, or None if any is missing."""
    from django.core.cache import cache

    keys = [_all_time_delta_key(version_name(ws.pk, ws.created_at, n)) for n in range(first, last + 1)]
    try:
        got = cache.get_many(keys)
    except Exception:  # unreachable: read whole
        return None
    if len(got) != len(keys):
        # a version this transaction recorded and has not committed yet: its own reads may use it, while the bump
        # stands in it (a savepoint rolled back with the bump takes the version back, and the record with it)
        mine = {(ws.pk, n) for n in range(first, last + 1)} & _PENDING.keys()
        txid = _transaction_id() if mine else None
        if mine and txid is not None:
            from .models import Workspace

            visible = Workspace.objects.filter(pk=ws.pk).values_list("data_version", flat=True).first() or 0
            for ws_pk, n in sorted(mine):
                entry = _PENDING.get((ws_pk, n))
                if entry is not None and entry[0] == txid and n <= visible:
                    got[_all_time_delta_key(version_name(ws.pk, ws.created_at, n))] = entry[1]
        if len(got) != len(keys):
            return None
    return [got[k] for k in keys]


def _cache_arg(v: Any) -> str:
    if isinstance(v, models.Model):
        return f"{type(v).__name__}:{v.pk}"
    if hasattr(v, "cache_key"):  # a value object naming itself (``selectors.Window``)
        return v.cache_key()
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_cache_arg(x) for x in v) + "]"
    return repr(v)


def cached(fn: Callable | None = None, *, rev: int = 0) -> Callable:
    """Cache ``fn(ws, ...)`` under the workspace's data version (see the module's docstring). ``@cached(rev=N)``:
    a function whose answer changed shape raises its revision, so that entries the previous code wrote under the
    same data version (a deploy does not bump it) are never read as the new shape."""
    if fn is None:
        return functools.partial(cached, rev=rev)
    name = f"{fn.__name__}@{rev}" if rev else fn.__name__

    def key_for(ws, *args, **kwargs) -> str:
        """The cache key of ``fn(ws, *args, **kwargs)`` under the workspace's current data version."""
        return key_at(current_version(ws), ws, *args, **kwargs)

    def key_at(version: str, ws, *args, **kwargs) -> str:
        """The cache key of ``fn(ws, *args, **kwargs)`` under ``version`` (:func:`version_name`)."""
        raw = "|".join(
            [name, version]
            + [_cache_arg(a) for a in args]
            + [f"{k}={_cache_arg(v)}" for k, v in sorted(kwargs.items())]
        )
        return versioned_key(version, raw)

    @functools.wraps(fn)
    def wrapper(ws, *args, **kwargs):
        ttl = read_cache_seconds()
        if ttl <= 0:
            return fn(ws, *args, **kwargs)
        return get_or_build(key_for(ws, *args, **kwargs), lambda: fn(ws, *args, **kwargs), ttl=ttl, ws_pk=ws.pk,
                            name=fn.__name__)  # fmt: skip

    wrapper.key_for = key_for
    wrapper.key_at = key_at
    return wrapper


def read_cache_seconds() -> int:
    """How long a cached read or fragment lives (``SPREADWATCH_READ_CACHE_SECONDS``; 0 or less: no caching)."""
    from django.conf import settings

    return getattr(settings, "SPREADWATCH_READ_CACHE_SECONDS", DEFAULT_TTL)


def get_or_build(key: str, build: Callable[[], Any], *, ttl: int, ws_pk: int, name: str | None = None) -> Any:
    """The cached value under ``key``, else ``build()``'s, stored for ``ttl`` seconds: the body of :func:`cached`
    and of the ``{% read_cache %}`` fragments. A key written while ``ws_pk``'s version is pinned (warming) is
    recorded, so that it can be dropped if the warming transaction does not commit. A build with a ``name`` (a
    read) is logged: the cold reads a page pays for, which warming is meant to leave none of (tests count them);
    the rendered fragments, which the warm-up does not render, pass none."""
    from django.conf import settings
    from django.core.cache import cache

    hit = cache.get(key)
    if hit is not None:
        return hit
    # one process computes a missing value; the others asking for it meanwhile wait for its result (up to
    # SPREADWATCH_READ_CACHE_WAIT seconds, then compute it themselves) instead of all doing the same work
    # at once: the first minute after a compute run, when every page is cold, stays within what 2 cores do
    lock = key + ":building"
    if not cache.add(lock, 1, timeout=60):
        deadline = time.monotonic() + getattr(settings, "SPREADWATCH_READ_CACHE_WAIT", 10)
        while time.monotonic() < deadline:
            time.sleep(0.05)
            hit = cache.get(key)
            if hit is not None:
                return hit
    try:
        t = time.perf_counter()
        value = build()
        cache.set(key, value, timeout=ttl)
        pinned = _PINNED.get()
        if pinned is not None and pinned[0] == ws_pk:
            pinned[2].append(key)
        if name is not None:
            log.debug("read cache: built %s in %.0f ms", name, 1000 * (time.perf_counter() - t))
    finally:
        cache.delete(lock)
    return value


def current_version(ws: Workspace) -> str:
    """The workspace (its creation time included: a recreated database never meets old entries) and its data
    version: the cached copy, or the row's (PostgreSQL is the truth; the cache only saves the query)."""
    from django.core.cache import cache

    from .models import Workspace

    pinned = _PINNED.get()
    if pinned is not None and pinned[0] == ws.pk:
        return version_name(ws.pk, ws.created_at, pinned[1])
    key = _version_key(ws.pk)
    version = cache.get(key)
    if version is None:
        version = Workspace.objects.filter(pk=ws.pk).values_list("data_version", flat=True).first() or 0
        cache.set(key, version, timeout=VERSION_COPY_S)
    return version_name(ws.pk, ws.created_at, version)


def data_version(ws: Workspace) -> str | None:
    """A name for the workspace's data as it is now (it changes with every compute commit and import), for
    caching what is derived from it; None while the read cache is off."""
    if read_cache_seconds() <= 0:
        return None
    return current_version(ws)


@contextlib.contextmanager
def warming(ws: Workspace) -> Iterator[list[str]]:
    """Within: the cached reads of ``ws`` use the data version this connection sees now (inside a transaction
    that bumped it: the new one) and do not copy it into the cache; yields the list of keys they write."""
    from .models import Workspace

    version = Workspace.objects.filter(pk=ws.pk).values_list("data_version", flat=True).first() or 0
    written: list[str] = []
    token = _PINNED.set((ws.pk, version, written))
    try:
        yield written
    finally:
        _PINNED.reset(token)


def forget_keys(keys: list[str]) -> None:
    """Drop cached values (warmed for a version whose transaction did not commit)."""
    from django.core.cache import cache

    with contextlib.suppress(Exception):  # unreachable: they expire with the read cache's TTL
        cache.delete_many(keys)


def _glob_escape(text: str) -> str:
    # Redis SCAN MATCH is a glob: a database named with * ? [ ] or \ must match only itself
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)


def redis_client():
    """The redis-py client behind the cache (Django's Redis backend; it connects on first use), or None where the
    cache is not Redis (the file cache of ``make demo``)."""
    from django.core.cache import cache

    inner = getattr(cache, "_cache", None)
    return inner.get_client(None, write=True) if hasattr(inner, "get_client") else None


def prune_superseded(*, keep: int = 2) -> dict[str, int]:
    """Delete the cached reads and fragments of every workspace's versions but its newest ``keep`` (the current
    one and the one before, which a process holding a copy of the version read ``VERSION_COPY_S`` ago may still
    ask for), and those of workspaces that are gone. What bounds the read cache's memory now that its entries
    live for :data:`DEFAULT_TTL` (a beat task calls it every minute, ``monitor.tasks.read_cache_prune``). A
    version a warm-up pinned ahead of the row is newer than the row's, so it is kept. Only for Redis (the file
    cache of ``make demo`` culls by count itself); never raises: an unreachable Redis prunes nothing this time.
    Returns how many keys were scanned and deleted."""
    from django.core.cache import cache

    from .models import Workspace

    out = {"scanned": 0, "deleted": 0}
    client = redis_client()
    if client is None:
        return out
    current = dict(Workspace.objects.values_list("pk", "data_version"))
    prefix = cache.make_key(_read_prefix())
    doomed: list[bytes] = []
    try:
        for raw in client.scan_iter(match=_glob_escape(prefix) + "*", count=1000):
            out["scanned"] += 1
            ws, _, rest = raw.decode()[len(prefix) :].partition(":")
            number = rest.partition(":")[0]
            if not (ws.isdigit() and number.isdigit()):
                continue
            now = current.get(int(ws))
            if now is None or int(number) <= now - keep:
                doomed.append(raw)
                if len(doomed) >= 500:
                    out["deleted"] += client.unlink(*doomed)
                    doomed.clear()
        if doomed:
            out["deleted"] += client.unlink(*doomed)
    except Exception as exc:  # Redis unreachable or failing mid-scan: the rest waits for the next call
        log.warning("read cache: pruning stopped (%s: %s)", exc.__class__.__name__, exc)
    return out
