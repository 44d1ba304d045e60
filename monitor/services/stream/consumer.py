"""Stream consumers (``manage.py stream_consume``): take the queued events of their partitions in id order, in
micro-batches, and hand each batch to ``apply_events``; exactly once per event, whatever dies.

**Where the work is.** PostgreSQL: every accepted event is a ``queued`` row. Redis Streams carry *wake-ups* only
(one stream per workspace and partition, written after each intake commit, read by the consumer group
``apply``): a wake-up says "partition p has new events", the consumer drains p from PostgreSQL, then XACKs it.
A wake-up that is lost, or a Redis that is down, costs latency, never an event: every consumer also drains its
partitions every ``SPREADWATCH_STREAM_POLL_MS``.

**Who does which partition.** Live consumers beat a heartbeat into a sorted set per workspace; partition p of a
workspace belongs to the ``p mod n``-th live name (sorted). When a consumer stops beating for
``SPREADWATCH_STREAM_CONSUMER_TIMEOUT_MS`` its partitions go to the others, which also take over its
unacknowledged wake-ups (XAUTOCLAIM). Ownership by heartbeat can overlap for a moment (two consumers that see
different live sets); what makes one cascade always applied by one consumer in id order is a PostgreSQL
transaction-level advisory lock per (workspace, partition), taken around each micro-batch: a consumer that does
not get it skips the partition this round. Without Redis every consumer tries every partition and the lock alone
shares them out.

**One micro-batch** (one transaction) covers every partition of a workspace that the consumer was woken for
(or polls): the advisory lock of each (a partition another consumer holds is left out this round); the first
``SPREADWATCH_STREAM_BATCH`` queued events of the locked partitions by id (after waiting up to
``SPREADWATCH_STREAM_BATCH_WAIT_MS`` for a small batch to fill); their *waiting* events of the same cascades
(their original may be in this batch) or whose wait is over;
every queued *follow* of the workspace with a smaller id than the batch's last, from any partition (a follow
applies to later retweets of every cascade, so it is applied before them, by whichever consumer gets there
first); all of them locked ``FOR UPDATE`` in id order and re-checked still queued or waiting; then
``apply_events(workspace_id=..., event_ids=[...ascending])``, which deletes each event applied (or marks it
applied with a note), waiting or dead. A consumer killed in the middle rolls the whole transaction back: the
events stay queued for the next owner. One that dies after the commit but before XACK leaves a wake-up that the
next owner claims, drains (finding nothing new) and acknowledges. So delivery of wake-ups is at least once, and
application exactly once.

**Planner statistics.** While :meth:`Consumer.run` runs, the micro-batches hand the statistics refresh of the
tables they grow to a :class:`~._statistics.StatisticsRefresher` (one thread, its own connection), which runs
it after their commit, beside the next micro-batch, instead of inside the transaction that holds the
workspace's store lock. An apply function that does not take ``analyze_later`` is called without it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import logging
import os
import signal
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from ...db import int_array_param
from ...models import StreamEvent, Workspace
from . import channel
from ._gc import collector_paused
from ._statistics import StatisticsRefresher

log = logging.getLogger(__name__)

__all__ = ["Consumer", "load_apply", "apply_partition_batch", "DEFAULT_APPLY"]

DEFAULT_APPLY = "monitor.services.stream.apply:apply_events"
LOCK_SPACE = 0x5357  # "SW": the first key of the advisory locks; the second is workspace id * 1024 + partition
# "SX": while a consumer runs, its session holds a shared advisory lock (PRESENCE_SPACE, its workspace's id, or 0
# for every workspace), so the Live page can count the running consumers on PostgreSQL when Redis cannot say
# (monitor.selectors.stream); the server drops it with the session, however the process ends
PRESENCE_SPACE = 0x5358

ApplyFn = Callable[..., dict]


def load_apply(path: str = DEFAULT_APPLY) -> ApplyFn:
    """The apply function named ``module:function``, imported only when a consumer starts (so intake and these
    tools import without it)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name or "apply_events")


def default_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _lock(ws_id: int, partition: int) -> bool:
    """The partition's advisory lock for this transaction (PostgreSQL); SQLite serialises writers anyway."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_xact_lock(%s, %s)", [LOCK_SPACE, ws_id * 1024 + partition])
        return bool(cur.fetchone()[0])


def apply_partition_batch(
    ws_id: int, partitions: int | Sequence[int], apply: ApplyFn, *, batch: int | None = None
) -> tuple[int, int]:
    """One micro-batch of a workspace's ``partitions`` (one, or several that one consumer owns: see the module):
    ``(events handed to apply, queued events taken)``; ``(0, 0)`` when there was nothing to do or other consumers
    hold every one of the partitions.

    Several partitions go into one ``apply`` call because its cost is largely per call (the queue's statements,
    the merge's temporary tables, the aggregate refresh): a consumer owning all 8 partitions of a stream fed
    2,000 records/s made 8 calls of ~250 events a round and fell behind (``benchmarks/stream_web.md``)."""
    batch = batch or settings.SPREADWATCH_STREAM_BATCH
    parts = _sorted_partitions(partitions)
    Q, W = StreamEvent.Status.QUEUED, StreamEvent.Status.WAITING
    now = timezone.now()
    with transaction.atomic():
        parts = [p for p in parts if _lock(ws_id, p)]  # try-locks: never waits, so never deadlocks
        if not parts:
            return 0, 0
        mine = StreamEvent.objects.filter(workspace_id=ws_id, partition__in=parts)
        queued = list(mine.filter(status=Q).order_by("pk").values_list("pk", "cascade_key")[:batch])
        keys = {k for _, k in queued if k is not None}
        waiting = mine.filter(status=W)
        due = list(waiting.filter(wait_until__lte=now).order_by("pk").values_list("pk", flat=True)[:batch])
        same = []
        if keys:
            same = list(waiting.filter(cascade_key__in=keys).order_by("pk").values_list("pk", flat=True)[:batch])
        if not queued and not due:
            return 0, 0
        ids = {pk for pk, _ in queued} | set(due) | set(same)
        if queued:
            follows = StreamEvent.objects.filter(
                workspace_id=ws_id, kind=StreamEvent.Kind.FOLLOW, status=Q, pk__lt=queued[-1][0]
            ).exclude(partition__in=parts)
            ids |= set(follows.order_by("pk").values_list("pk", flat=True)[:batch])
        locked = _lock_open(sorted(ids))
        if locked:
            t = time.perf_counter()
            with collector_paused():  # (see ._gc)
                out = apply(workspace_id=ws_id, event_ids=locked) or {}
            secs = out.get("seconds") or {}
            log.info("micro-batch of workspace %s partitions %s: %d events in %.3f s (%s)", ws_id, parts, len(locked),
                     time.perf_counter() - t, " ".join(f"{k}={v:.3f}" for k, v in secs.items()))  # fmt: skip
    if locked:
        channel.count(ws_id, "applied", len(locked))
    return len(locked), len(queued)


def _lock_open(ids: list[int]) -> list[int]:
    """The events among ``ids`` still queued or waiting, locked ``FOR UPDATE`` (waiting for another consumer that
    holds one, then checking it again), in id order. On PostgreSQL from an array through the primary key: Django's
    ``IN`` list of 10,000 placeholders cost 0.11-0.38 s of statement and its building in Python per micro-batch
    (``benchmarks/stream_web.md``)."""
    open_ = (StreamEvent.Status.QUEUED, StreamEvent.Status.WAITING)
    if connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute(
                """SELECT e.id FROM unnest(%s::bigint[]) AS x(id) JOIN monitor_streamevent e ON e.id = x.id
                   WHERE e.status IN (%s, %s) ORDER BY e.id FOR UPDATE OF e""",
                [int_array_param(ids), *open_],
            )
            return [r[0] for r in cur.fetchall()]
    qs = StreamEvent.objects.select_for_update().filter(pk__in=ids, status__in=open_).order_by("pk")
    return list(qs.values_list("pk", flat=True))


def announce_presence(ws_id: int | None) -> None:
    """Hold this session's presence lock (see ``PRESENCE_SPACE``), once: taken again after a reconnect (a lost
    connection drops it). PostgreSQL only."""
    if connection.vendor != "postgresql":
        return
    key = ws_id or 0
    with connection.cursor() as cur:
        cur.execute(
            """SELECT pg_try_advisory_lock_shared(%s, %s) WHERE NOT EXISTS (
                 SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
                 AND classid = %s::oid AND objid = %s::oid AND objsubid = 2)""",
            [PRESENCE_SPACE, key, PRESENCE_SPACE, key],
        )


def withdraw_presence(ws_id: int | None) -> None:
    if connection.vendor != "postgresql" or connection.connection is None:
        return
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_unlock_shared(%s, %s)", [PRESENCE_SPACE, ws_id or 0])


def _sorted_partitions(partitions: int | Sequence[int]) -> list[int]:
    return sorted({partitions} if isinstance(partitions, int) else set(partitions))


def _oldest_queued_age_ms(ws_id: int, partitions: list[int]) -> tuple[int, float | None]:
    """(queued count up to a batch, age in ms of the oldest queued event) of a workspace's partitions: a count
    and one row, not a batch of rows (10,000 timestamps at every drain)."""
    queued = StreamEvent.objects.filter(
        workspace_id=ws_id, partition__in=partitions, status=StreamEvent.Status.QUEUED
    ).order_by("pk")
    oldest = queued.values_list("received_at", flat=True).first()
    if oldest is None:
        return 0, None
    return queued[: settings.SPREADWATCH_STREAM_BATCH].count(), (timezone.now() - oldest).total_seconds() * 1000


@dataclass
class _Stream:
    """A (workspace, partition) wake-up stream this consumer reads: the ids it read or claimed, to XACK once the
    partition is drained."""

    ws_id: int
    partition: int
    key: str
    pending: list[bytes] = field(default_factory=list)
    group_ready: bool = False
    replayed: bool = False


class Consumer:
    """One consumer process. ``run()`` loops until stopped (SIGTERM / SIGINT, or ``stop_after`` seconds); a loop
    (:meth:`step`) beats, recomputes ownership, claims a dead consumer's wake-ups, waits for wake-ups (at most
    the poll interval), and drains the partitions woken, or all of its own at each poll."""

    def __init__(
        self,
        *,
        name: str | None = None,
        workspace: Workspace | None = None,
        apply: ApplyFn | None = None,
        batch: int | None = None,
    ):
        self.name = name or default_name()
        self.batch = batch  # events per micro-batch; None: SPREADWATCH_STREAM_BATCH (the web process's applier: fewer)
        self.workspace = workspace
        self.apply = apply or load_apply()
        self.n_parts = settings.SPREADWATCH_STREAM_PARTITIONS
        self.stopping = False
        self.streams: dict[tuple[int, int], _Stream] = {}
        self.owned: list[tuple[int, int]] = []
        self.ws_ids: list[int] = []
        self._ws_refreshed = 0.0
        self._beat_at = 0.0
        self._poll_at = 0.0
        self.applied = 0
        self.batches = 0
        self.statistics: StatisticsRefresher | None = None  # while run() runs (see ._statistics)

    # --- membership ---------------------------------------------------------------------------------------------

    def _workspaces(self) -> list[int]:
        if self.workspace is not None:
            return [self.workspace.pk]
        now = time.monotonic()
        if now - self._ws_refreshed > 30 or not self.ws_ids:
            self.ws_ids = list(Workspace.objects.order_by("pk").values_list("pk", flat=True))
            self._ws_refreshed = now
        return self.ws_ids

    def _beat(self) -> None:
        """Heartbeat, then the partitions this consumer owns now."""
        try:
            announce_presence(self.workspace.pk if self.workspace else None)
        except DatabaseError:  # the database away: the micro-batches will say so; counted again once it is back
            connection.close_if_unusable_or_obsolete()
        owned = []
        for ws_id in self._workspaces():
            channel.heartbeat(ws_id, self.name)
            live = channel.live_consumers(ws_id)
            if not live or self.name not in live:
                owned += [(ws_id, p) for p in range(self.n_parts)]  # no Redis: the advisory locks share them out
            else:
                i, n = live.index(self.name), len(live)
                owned += [(ws_id, p) for p in range(self.n_parts) if p % n == i]
        if owned != self.owned:
            log.info("consumer %s: partitions %s", self.name, owned)
        self.owned = owned
        self._beat_at = time.monotonic()
        self._claim()

    def _stream(self, ws_id: int, p: int) -> _Stream:
        s = self.streams.get((ws_id, p))
        if s is None:
            s = self.streams[(ws_id, p)] = _Stream(ws_id, p, channel.wake_key(ws_id, p))
        return s

    def _ensure_group(self, r, s: _Stream) -> None:
        if s.group_ready:
            return
        import redis

        try:
            r.xgroup_create(s.key, channel.GROUP, id="0", mkstream=True)
        except redis.exceptions.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        s.group_ready = True

    def _claim(self) -> None:
        """Take over the unacknowledged wake-ups of consumers silent for the timeout, on the partitions owned now;
        and, once per stream, re-read this name's own (a restart under the same name)."""
        idle = settings.SPREADWATCH_STREAM_CONSUMER_TIMEOUT_MS

        def claim(r) -> None:
            for ws_id, p in self.owned:
                s = self._stream(ws_id, p)
                self._ensure_group(r, s)
                if not s.replayed:
                    got = r.xreadgroup(channel.GROUP, self.name, {s.key: "0"}, count=1000)
                    for _, msgs in got or ():
                        s.pending += [mid for mid, _ in msgs]
                    s.replayed = True
                start = "0-0"
                while True:
                    res = r.xautoclaim(s.key, channel.GROUP, self.name, idle, start_id=start, count=1000)
                    nxt, msgs = res[0], res[1]
                    if msgs:
                        log.info("consumer %s: claimed %d wake-up(s) of %s", self.name, len(msgs), s.key)
                        s.pending += [m[0] for m in msgs]
                    if nxt in (b"0-0", "0-0"):
                        break
                    start = nxt

        channel.soft("claim", claim)

    # --- the loop -------------------------------------------------------------------------------------------------

    def _wait_for_wakeups(self, timeout_ms: int) -> set[tuple[int, int]]:
        """Block until a wake-up on an owned stream (or the timeout): the partitions woken."""
        by_key = {self._stream(ws, p).key: (ws, p) for ws, p in self.owned}

        def read(r):
            for ws, p in self.owned:
                self._ensure_group(r, self._stream(ws, p))
            return r.xreadgroup(channel.GROUP, self.name, {k: ">" for k in by_key}, count=1000, block=timeout_ms)

        if channel.client() is None or not by_key:
            time.sleep(timeout_ms / 1000)
            return set()
        got = channel.soft("read wake-ups", read, False)
        if got is False:  # Redis down: poll at the poll interval
            time.sleep(timeout_ms / 1000)
            return set()
        woken = set()
        for key, msgs in got or ():
            key = key.decode() if isinstance(key, bytes) else key
            unit = by_key.get(key)
            if unit is not None and msgs:
                self.streams[unit].pending += [mid for mid, _ in msgs]
                woken.add(unit)
        return woken

    def _ack(self, s: _Stream) -> None:
        if not s.pending:
            return
        ids, s.pending = s.pending, []
        channel.soft("ack", lambda r: r.xack(s.key, channel.GROUP, *ids))

    def drain(self, ws_id: int, partitions: int | Sequence[int]) -> int:
        """Apply the queued events of a workspace's partitions (one, or several: in one micro-batch) until none
        are left (or other consumers hold them)."""
        p = _sorted_partitions(partitions)
        n_total = 0
        wait_ms = settings.SPREADWATCH_STREAM_BATCH_WAIT_MS
        batch = self.batch or settings.SPREADWATCH_STREAM_BATCH
        waited = False
        while not self.stopping:
            if not waited and wait_ms > 0:
                n, age = _oldest_queued_age_ms(ws_id, p)
                if 0 < n < batch and age is not None and age < wait_ms:
                    time.sleep((wait_ms - age) / 1000)  # let a small batch fill, at most the batch wait
                waited = True
            apply = self.apply
            if self.statistics is not None:
                apply = functools.partial(apply, analyze_later=self.statistics.submit)
            try:
                n_applied, n_queued = apply_partition_batch(ws_id, p, apply, batch=batch)
            except DatabaseError as exc:  # a deadlock or a lost connection: the batch rolled back; next round
                log.warning("consumer %s: batch of %s/%s failed (%s): retried later", self.name, ws_id, p, exc)
                connection.close_if_unusable_or_obsolete()
                time.sleep(0.5)
                return n_total
            except Exception:  # apply_events failed: rolled back too
                if len(p) > 1:  # one partition at a time this round: the failing one waits, the others go on
                    log.exception("consumer %s: apply_events failed on %s/%s: each partition apart", self.name,
                                  ws_id, p)  # fmt: skip
                    return n_total + sum(self.drain(ws_id, q) for q in p)
                log.exception("consumer %s: apply_events failed on %s/%s: retried in 5 s", self.name, ws_id, p)
                time.sleep(5)
                return n_total
            if n_applied:
                self.applied += n_applied
                self.batches += 1
            n_total += n_applied
            if n_queued < batch:
                break
        return n_total

    def step(self) -> int:
        now = time.monotonic()
        if now - self._beat_at > settings.SPREADWATCH_STREAM_CONSUMER_TIMEOUT_MS / 4000:
            self._beat()
        poll_s = settings.SPREADWATCH_STREAM_POLL_MS / 1000
        remaining = max(0.0, self._poll_at + poll_s - time.monotonic())
        # BLOCK 0 would mean "for ever" to Redis: at least 1 ms
        woken = self._wait_for_wakeups(max(1, int(min(remaining, 1.0) * 1000))) if remaining > 0 else set()
        if time.monotonic() >= self._poll_at + poll_s:
            woken = set(self.owned)
            self._poll_at = time.monotonic()
        n = 0
        for unit, st in self.streams.items():
            if unit not in self.owned and st.pending:
                self._ack(st)  # a wake-up of a partition given away since: its new owner polls it
        by_ws: dict[int, list[int]] = {}
        for ws_id, p in sorted(woken):
            if (ws_id, p) in self.owned:
                by_ws.setdefault(ws_id, []).append(p)
        for ws_id, parts in by_ws.items():  # a workspace's partitions in one micro-batch
            if self.stopping:
                break
            n += self.drain(ws_id, parts)
            for p in parts:
                self._ack(self._stream(ws_id, p))
        return n

    def stop(self, *_args) -> None:
        self.stopping = True

    def run(self, *, stop_after: float | None = None, install_signals: bool = True) -> None:
        if install_signals:
            signal.signal(signal.SIGTERM, self.stop)
            signal.signal(signal.SIGINT, self.stop)
        end = None if stop_after is None else time.monotonic() + stop_after
        if connection.vendor == "postgresql" and _takes(self.apply, "analyze_later"):
            self.statistics = StatisticsRefresher(f"{self.name} statistics")
        try:
            while not self.stopping and (end is None or time.monotonic() < end):
                self.step()
        finally:
            if self.statistics is not None:
                self.statistics.stop()
                self.statistics = None
            for ws_id in self._workspaces():
                channel.leave(ws_id, self.name)
            with contextlib.suppress(DatabaseError):  # the session is gone, and the lock with it
                withdraw_presence(self.workspace.pk if self.workspace else None)


def _takes(fn: ApplyFn, name: str) -> bool:
    """Whether ``fn`` accepts the keyword ``name`` (an apply function swapped in by a test or benchmark may not)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
