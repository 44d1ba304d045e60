"""The live stream applied in the web process, on the embedded default (``make demo``, ``make serve``).

There, no broker runs and the Celery tasks run on a background thread of the web process
(``SPREADWATCH_EAGER_IN_BACKGROUND``, ``monitor.jobs``); no ``manage.py stream_consume`` runs either, so without
this the stream's records would stay queued for ever. In that mode one *applier* thread of the web process does a
consumer's work: it is started (or woken) after each intake commit and, at most once per poll interval, by any
request the process serves (so records queued while the server was stopped, or by ``manage.py follow_stream`` in
another process, are found as soon as anyone uses the site); it drains the workspaces woken and, every
``SPREADWATCH_STREAM_POLL_MS``, every workspace with queued events or waiting ones whose wait is over; and it ends
once a poll finds nothing open and nothing woke it (the next intake or request starts it again).

It reuses the consumer's micro-batch (:func:`.consumer.apply_partition_batch` through :meth:`.consumer.Consumer.drain`),
so everything that makes ``stream_consume`` safe holds here too, and both may run at once: each micro-batch locks
its events and re-checks that they are still queued or waiting (``FOR UPDATE`` and advisory locks on PostgreSQL; on
SQLite one writer at a time), so an event is applied once whoever gets it; a failed micro-batch rolls back and is
tried again at the next poll; an error never ends the thread (it is logged). Its micro-batches are smaller than a
consumer's (:data:`BATCH`): each is one write transaction, and on SQLite every other writer (an upload, a compute
batch) waits for it. The request that posted the records never waits: intake only wakes the thread.

The thread does not beat a heartbeat: the consumers the Live page counts are the ``stream_consume`` processes;
that the web process applies the records is said there on its own (:func:`enabled`).
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import connections
from django.db.models import Q
from django.utils import timezone

from ... import jobs
from ...models import StreamEvent
from .consumer import ApplyFn, Consumer, default_name, load_apply

log = logging.getLogger(__name__)

__all__ = ["BATCH", "enabled", "wake", "ensure_running", "on_request", "running", "stop", "idle"]

# events per micro-batch in the web process: a consumer takes up to SPREADWATCH_STREAM_BATCH (10,000), which on
# SQLite would hold the database's one write lock for seconds while uploads and compute batches wait
BATCH = 1_000


def enabled() -> bool:
    """Whether this process applies the stream itself: eager tasks on the web process's background thread (the
    embedded default's web server), where no consumer is expected to run."""
    return jobs.in_background()


class _Applier:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._woken: set[int] = set()
        self._thread: threading.Thread | None = None
        self._consumer: Consumer | None = None
        self._stop = False
        self._busy = False
        self._request_probe_at = 0.0
        self.apply: ApplyFn | None = None  # tests swap the apply function; None: apply_events

    def running(self) -> bool:
        with self._cond:
            return self._thread is not None and self._thread.is_alive()

    def wake(self, ws_id: int | None) -> None:
        with self._cond:
            if ws_id is not None:
                self._woken.add(ws_id)
            self._stop = False
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="spreadwatch-stream-apply", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def on_request(self) -> None:
        now = time.monotonic()
        if now - self._request_probe_at < settings.SPREADWATCH_STREAM_POLL_MS / 1000:
            return  # a busy site does not take the lock on every request
        self._request_probe_at = now
        if not self.running():
            self.wake(None)

    def stop(self, timeout: float = 30.0) -> bool:
        """Ask the thread to end after its current micro-batch and wait for it; whether it ended."""
        with self._cond:
            self._stop = True
            thread = self._thread
            if self._consumer is not None:
                self._consumer.stopping = True
            self._cond.notify_all()
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def idle(self, timeout: float = 30.0) -> bool:
        """Wait until nothing woke the thread that it has not drained yet (tests)."""
        end = time.monotonic() + timeout
        with self._cond:
            return self._cond.wait_for(lambda: not self._woken and not self._busy, max(0.0, end - time.monotonic()))

    # --- the thread ---------------------------------------------------------------------------------------------

    def _run(self) -> None:
        me = threading.current_thread()
        consumer = Consumer(name=f"web {default_name()}", apply=self.apply or load_apply(), batch=BATCH)
        with self._cond:
            self._consumer = consumer
        poll_s = settings.SPREADWATCH_STREAM_POLL_MS / 1000
        next_poll = 0.0  # the first round polls: what was queued before the thread started
        try:
            while True:
                with self._cond:
                    if not self._woken and not self._stop:
                        self._cond.wait(max(0.0, next_poll - time.monotonic()))
                    if self._stop or not enabled():
                        self._thread = self._consumer = None  # under the lock: a wake from now starts a new one
                        return
                    todo, self._woken = self._woken, set()
                    self._busy = True
                polled = time.monotonic() >= next_poll
                found = self._round(consumer, todo, polled)
                if polled:
                    next_poll = time.monotonic() + poll_s
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
                    if polled and not found and not self._woken:
                        # nothing open anywhere: the next intake or request starts the thread again
                        self._thread = self._consumer = None
                        return
        finally:
            with self._cond:
                self._busy = False
                if self._thread is me:
                    self._thread = None
                    self._consumer = None
                self._cond.notify_all()

    def _round(self, consumer: Consumer, todo: set[int], poll: bool) -> bool:
        """Drain the workspaces woken (and, at a poll, every one with open work); whether any had open work."""
        found = False
        try:
            if poll:
                open_ = _workspaces_with_work()
                found = bool(open_)
                todo = todo | open_
            parts = list(range(settings.SPREADWATCH_STREAM_PARTITIONS))
            for ws_id in sorted(todo):
                if consumer.stopping:
                    break
                consumer.drain(ws_id, parts)  # logs and rolls back its own failures
        except Exception:  # e.g. the database away: tried again at the next poll, the thread lives on
            log.exception("stream applier of the web process: a round failed; tried again in a moment")
            found = True
            time.sleep(1)
        finally:
            connections.close_all()  # this thread's connections only: none is held between rounds
        return found


def _workspaces_with_work() -> set[int]:
    """The workspaces with queued events, or waiting ones whose wait is over (the index of open events)."""
    S = StreamEvent.Status
    due = Q(status=S.QUEUED) | Q(status=S.WAITING, wait_until__lte=timezone.now())
    return set(StreamEvent.objects.filter(due).values_list("workspace_id", flat=True).distinct())


_applier = _Applier()


def wake(ws_id: int) -> None:
    """After an intake commit: have the web process apply ``ws_id``'s new records (no-op unless :func:`enabled`).
    Returns at once: the thread does the work."""
    if enabled():
        _applier.wake(ws_id)


def ensure_running() -> None:
    """Start the applier if it is not running (it polls every workspace first); no-op unless :func:`enabled`."""
    if enabled() and not _applier.running():
        _applier.wake(None)


def on_request(**_kwargs) -> None:
    """``request_started`` receiver: records queued while the server was down, or by another process, are found
    once the site is used (at most one check per poll interval)."""
    if enabled():
        _applier.on_request()


def running() -> bool:
    return _applier.running()


def stop(timeout: float = 30.0) -> bool:
    return _applier.stop(timeout)


def idle(timeout: float = 30.0) -> bool:
    return _applier.idle(timeout)
