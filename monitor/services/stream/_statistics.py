"""The planner statistics of the tables a consumer's micro-batches grow, refreshed beside them, not inside them.

A micro-batch's store refreshes the statistics of the per-cascade, graph and aggregate tables once they have grown
by a tenth (``monitor.db.analyze_after_bulk_write``). Inside the micro-batch's transaction that ANALYZE held the
workspace's store lock, and the consumer's next micro-batch waited for it: at 10,000 events a second one
micro-batch in four or five took 0.1-0.2 s longer, and the events that arrived meanwhile waited for it too
(``benchmarks/stream_web.md``, 2026-11-28, sixth session). A running consumer
(:meth:`monitor.services.stream.consumer.Consumer.run`) hands the refresh to a :class:`StatisticsRefresher`
instead: one thread with its own database connection, which checks the tables' growth again after the commit
(from the server's committed row counts) and analyses those that are due, while the consumer's next
micro-batch runs. ANALYZE takes a lock that inserts, updates and deletes do not wait for.

What that changes: the statistics become current a fraction of a second after the commit instead of with it (the
next micro-batch's plans may use the ones before, as they did between two refreshes anyway); requests that
arrive while one refresh runs are merged into the next check; a consumer that stops or dies with a refresh
pending leaves it to the next micro-batch's check, which counts the same growth. A failed refresh is logged
and never touches the micro-batch, which has committed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

from django.db import connection

from ...db import analyze_after_bulk_write

log = logging.getLogger(__name__)

__all__ = ["StatisticsRefresher"]


class StatisticsRefresher:
    """One background thread that refreshes the statistics of the tables :meth:`submit` names (after the
    caller's commit); :meth:`stop` waits for the one under way and closes the thread's connection."""

    def __init__(self, name: str = "statistics") -> None:
        self.name = name
        self.refreshed = 0  # checks that analysed at least one table
        self.failed = 0
        self._due: set[str] = set()
        self._cv = threading.Condition()
        self._stopping = False
        self._busy = False
        self._thread: threading.Thread | None = None

    def submit(self, tables: Iterable[str], rows: int = 0) -> None:
        """Check ``tables`` (and analyse those grown past their statistics) in the thread. ``rows``: the rows the
        write added, which must be committed by now; the check reads them from the server's counts, so it is
        only used to skip writes that added none."""
        if rows <= 0:
            return
        with self._cv:
            if self._stopping:
                return
            self._due.update(tables)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._thread.start()
            self._cv.notify()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Block until every submitted check has run (the tests wait so); whether it was so before ``timeout``."""
        with self._cv:
            return self._cv.wait_for(lambda: not self._due and not self._busy, timeout)

    def stop(self, timeout: float = 30.0) -> None:
        """Run what is due, then end the thread (its connection closed)."""
        with self._cv:
            self._stopping = True
            self._cv.notify()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _loop(self) -> None:
        try:
            while True:
                with self._cv:
                    self._cv.wait_for(lambda: self._due or self._stopping)
                    if not self._due:
                        return
                    tables, self._due = sorted(self._due), set()
                    self._busy = True
                try:
                    # autocommit, no transaction block: ANALYZE then takes each table's lock in a transaction of
                    # its own and lets it go before the next, so it never holds one while waiting for another (a
                    # compute run's batch analyses the same tables inside its transaction)
                    with connection.cursor() as cur:
                        # what the micro-batches added is committed, so counted by the server already
                        if analyze_after_bulk_write(cur, tables, 0, committed=True):
                            self.refreshed += 1
                except Exception:
                    self.failed += 1
                    log.exception("statistics of %s not refreshed (the next micro-batch checks again)", tables)
                    connection.close()
                finally:
                    with self._cv:
                        self._busy = False
                        self._cv.notify_all()
        finally:
            connection.close()
