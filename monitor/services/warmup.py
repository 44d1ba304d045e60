"""Warming the read cache when a compute run finishes, so that the first minute after a run has no cold cliff.

A run's last batch bumps the workspace's data version (``monitor.cache``): every cached read of the workspace is
then cold, and before this the first analysts after a run paid for rebuilding them (p95 1.2-5.4 s under 50
analysts at the 1M-retweet benchmark, docs/reliability.md). The warm-up is in two parts, and
``SPREADWATCH_WARM_REST`` says when the second runs.

**Before the run shows done** (:func:`read_cache_warm`, called by the run's last transaction in
``monitor.services.runs``, after the results and aggregates are stored and before the run is marked done): the
pages an analyst opens first, with the pages' arguments, under the new version (pinned:
``monitor.cache.warming``), so the values are in the cache when the commit makes the run done and the new version
visible at once:

1. the overview; the all-time snapshot's columns; the ranking across publishers and, for the
   ``SPREADWATCH_WARM_PUBLISHERS`` busiest publishers, their ranking, as the pages and the API open them.

**The pages one click further** (:func:`read_cache_warm_rest` when after the commit):

2. the account pages of the ``SPREADWATCH_WARM_ACCOUNTS`` top accounts and the explorer of the
   ``SPREADWATCH_WARM_CASCADES`` largest cascades;
3. the ranking variants one click away (another aggregate, the cascades sort, the last 30 days, page 2).

``SPREADWATCH_WARM_REST``:

* ``before`` (the default): in the same transaction, after part 1, so every page above is warm the moment the
  run shows done (issue 19's "right after a compute run" load case);
* ``thread``: after the commit, in a thread of the worker (queued by :func:`warm_rest_on_commit`): the run
  shows done about 7 s sooner at the 1M-retweet benchmark (issue 20), but analysts who arrive at once meet
  those pages cold and share the machine with the thread: the load test measured p95 up to 1.7 s in that
  minute against 0.1-0.2 s with ``before`` (docs/reliability.md);
* ``after``: after the commit, in line, before the task returns (the worker's next task waits for it).

Until it is done, an analyst who opens one of those pages waits for the build under way
(``monitor.cache.get_or_build``'s builder lock) or builds it.

Each part stops after ``SPREADWATCH_WARM_SECONDS`` (the rest is built by its first reader). Warming never fails
the run: each read runs in its own savepoint (or transaction), under a statement timeout of the time left, and a
failure is logged and counted. It is PostgreSQL's only: on SQLite (``make demo``) the transaction would hold
the database's one writer lock meanwhile. What runs inside the run's transaction holds the workspace row and
its aggregate lock meanwhile (another import or run of the workspace waits): that is what the time bound is for.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, connections, transaction

from .. import selectors
from ..cache import prune_superseded, warming
from ..models import Account, Tweet, Workspace

log = logging.getLogger(__name__)

__all__ = ["WarmResult", "read_cache_prune", "read_cache_warm", "read_cache_warm_rest", "warm_rest_on_commit"]

#: the variants of a ranking one click away from its default, warmed last: (aggregate, sort, preset, page)
VARIANTS = (
    {"aggregate": "mean"},
    {"aggregate": "participation"},
    {"sort": "cascades"},
    {"preset": "30d"},
    {"page_no": 2},
)


@dataclass
class WarmResult:
    """What a warm-up did: reads stored (``done``), failed, and not reached before the deadline (``skipped``; at
    least that many: past the deadline a read whose choice needs a query ends the count)."""

    done: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    keys: list[str] = field(default_factory=list)  # the cache keys written (dropped if the run's commit fails)

    def note(self) -> str:
        return (
            f"read cache warmed: {self.done} page reads in {self.seconds:.1f} s"
            + (f", {self.failed} failed" if self.failed else "")
            + (f", {self.skipped} left to their first reader (SPREADWATCH_WARM_SECONDS)" if self.skipped else "")
        )


def read_cache_warm(*, workspace: Workspace, seconds: float | None = None, rest: bool = False) -> WarmResult:
    """Store in the read cache what the pages opened first of ``workspace`` read (part 1, see the module), and
    with ``rest`` the pages one click further too, under the data version this transaction sees. Never raises;
    ``seconds`` (default ``SPREADWATCH_WARM_SECONDS``; 0: off) bounds it."""
    res = WarmResult()
    if not _enabled(seconds):
        return res
    try:
        # an outer savepoint: whatever goes wrong here leaves the run's transaction as it was
        with transaction.atomic(), warming(workspace) as written, _statement_timeout_restored():
            res.keys = written  # the same list: what was written before a failure is dropped with the rest
            reads = _first_reads(workspace)
            _warm_reads(itertools.chain(reads, _rest_reads(workspace)) if rest else reads, res, seconds)
    except Exception:
        log.exception("warming the read cache of workspace %s failed; its pages build their reads", workspace.pk)
        res.failed += 1
    log.info("workspace %s: %s", workspace.pk, res.note())
    return res


def read_cache_warm_rest(*, workspace_id: int, seconds: float | None = None) -> WarmResult:
    """Store in the read cache what the pages one click further read (parts 2 and 3, see the module), under the
    committed data version, each read in a transaction of its own. Never raises."""
    res = WarmResult()
    if not _enabled(seconds):
        return res
    try:
        workspace = Workspace.objects.get(pk=workspace_id)
        _warm_reads(_rest_reads(workspace), res, seconds)
    except Exception:
        log.exception("warming the read cache of workspace %s failed; its pages build their reads", workspace_id)
        res.failed += 1
    log.info("workspace %s, after the run: %s", workspace_id, res.note())
    return res


#: the threads warming part 2 after a commit (``SPREADWATCH_WARM_REST=thread``), for :func:`wait_for_rest`
_BACKGROUND: list[threading.Thread] = []


def warm_rest_on_commit(workspace_id: int) -> None:
    """Warm part 2 of ``workspace_id`` (:func:`read_cache_warm_rest`) once the current transaction commits: in a
    thread of this process with ``SPREADWATCH_WARM_REST=thread`` (the worker goes on meanwhile; the thread has its
    own database connection and closes it), else in line. Nothing happens if it does not commit."""
    if not _enabled(None):
        return

    def start() -> None:
        if settings.SPREADWATCH_WARM_REST != "thread":
            read_cache_warm_rest(workspace_id=workspace_id)
            return
        _BACKGROUND[:] = [t for t in _BACKGROUND if t.is_alive()]
        thread = threading.Thread(
            target=_in_thread, args=(workspace_id,), name=f"read-cache-warm-{workspace_id}", daemon=False
        )
        _BACKGROUND.append(thread)
        thread.start()

    transaction.on_commit(start, robust=True)


def _in_thread(workspace_id: int) -> None:
    try:
        read_cache_warm_rest(workspace_id=workspace_id)
    finally:
        connections.close_all()  # this thread's connections (Django's are per thread)


def wait_for_rest(timeout: float | None = None) -> bool:
    """Wait for the warm-ups of part 2 running in this process's threads; False if one outlived ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    for thread in list(_BACKGROUND):
        thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
    return not any(t.is_alive() for t in _BACKGROUND)


def _budget(seconds: float | None) -> float:
    return settings.SPREADWATCH_WARM_SECONDS if seconds is None else seconds


def _enabled(seconds: float | None) -> bool:
    budget = _budget(seconds)
    # not on SQLite (the demo's database): its one writer would be held for the warm-up (30 s for Twitter16 in
    # `make demo`), and a login or upload meanwhile would wait for the lock or fail with "database is locked"
    return budget > 0 and settings.SPREADWATCH_READ_CACHE_SECONDS > 0 and connection.vendor == "postgresql"


def _warm_reads(reads: Iterator[tuple[str, Callable[[], object]]], res: WarmResult, seconds: float | None) -> None:
    """Run ``reads`` in turn until the time bound, counting into ``res``. Choosing the next read (the generators'
    own queries: the busiest publishers, the top accounts, the largest cascades) is bounded and isolated like a
    read: at 10M retweets the largest cascades' query once ran past the bound under the statement timeout the last
    read had left behind, outside any savepoint; its cancel aborted the warm-up's transaction and was logged as
    an error."""
    t0 = time.monotonic()
    deadline = t0 + _budget(seconds)
    it = iter(reads)
    try:
        while True:
            late = time.monotonic() >= deadline
            try:
                with _bounded(deadline):
                    _name, read = next(it)
            except StopIteration:
                break
            except Exception:
                if time.monotonic() >= deadline:  # its query met the bound: what it chose is left cold
                    res.skipped += 1
                else:
                    log.warning("choosing the next read to warm failed; the pages left build theirs", exc_info=True)
                    res.failed += 1
                break  # a generator that raised is finished
            if late:
                res.skipped += 1
                continue
            done = _one(read, deadline)
            if done:
                res.done += 1
            elif done is None:  # its statement met the bound: that page is left cold, nothing failed
                res.skipped += 1
            else:
                res.failed += 1
    finally:
        res.seconds = time.monotonic() - t0


@contextlib.contextmanager
def _bounded(deadline: float) -> Iterator[None]:
    """A savepoint whose statements stop at the deadline: one that fails rolls back to it, not the warm-up's
    transaction. ``SET LOCAL`` outlives the savepoint once it is released, so every step sets its own."""
    with transaction.atomic():
        left_ms = max(1, int(1000 * (deadline - time.monotonic())))
        with connection.cursor() as cur:  # PostgreSQL's: read_cache_warm runs on nothing else
            cur.execute(f"SET LOCAL statement_timeout = {left_ms}")
        yield


def _one(read: Callable[[], object], deadline: float) -> bool | None:
    """Run one read in a savepoint whose statements stop at the deadline: True when it is stored, None when it
    was stopped by the deadline (at 10M retweets the last read begun often is), False (logged) if it failed."""
    try:
        with _bounded(deadline):
            read()
        return True
    except Exception:
        if time.monotonic() >= deadline:
            return None
        log.warning("warming a read failed; its page builds it", exc_info=True)
        return False


@contextlib.contextmanager
def _statement_timeout_restored() -> Iterator[None]:
    """The transaction's statement timeout as it was before the warm-up set its own per read (PostgreSQL)."""
    with connection.cursor() as cur:
        cur.execute("SHOW statement_timeout")
        before = cur.fetchone()[0]
    try:
        yield
    finally:
        with connection.cursor() as cur:
            cur.execute("SELECT set_config('statement_timeout', %s, true)", [before])


def _first_reads(ws: Workspace) -> Iterator[tuple[str, Callable[[], object]]]:
    """Part 1: the reads of the pages opened first, most used first. A generator: the publishers are read
    (themselves through the cache) only when their turn comes."""
    from ..selectors.rankings import all_time_sums

    yield "overview", lambda: selectors.overview_page(ws)
    yield "all-time snapshot", _unless_cached(all_time_sums, ws)
    yield "ranking", lambda: selectors.ranking_page_view(ws, publisher=None)
    yield "api ranking", _api_ranking(ws, None)
    for p in _busiest_publishers(ws, settings.SPREADWATCH_WARM_PUBLISHERS):
        yield f"publisher {p.twitter_id}", lambda p=p: selectors.ranking_page_view(ws, publisher=p)
        yield f"api publisher {p.twitter_id}", _api_ranking(ws, p)


def _rest_reads(ws: Workspace) -> Iterator[tuple[str, Callable[[], object]]]:
    """Parts 2 and 3: the pages one click further (the busiest publishers come from the cache part 1 filled)."""
    for a in _top_accounts(ws, settings.SPREADWATCH_WARM_ACCOUNTS):
        yield (
            f"account {a.twitter_id}",
            lambda a=a: (
                selectors.account_summary(ws, a),
                selectors.account_amplification(ws, a),
                selectors.wtf_account(ws, a, on_open=False),  # computing the panels is the page's to pay
            ),
        )
    for t in _largest_cascades(ws, settings.SPREADWATCH_WARM_CASCADES):
        limit = selectors.EXPLORER_LIMIT
        yield f"cascade {t.tweet_id}", lambda t=t, limit=limit: selectors.cascade_explorer_page(ws, t, limit=limit)
    for scope in [None, *_busiest_publishers(ws, settings.SPREADWATCH_WARM_PUBLISHERS)]:
        for v in VARIANTS:
            yield f"variant {v}", lambda scope=scope, v=v: selectors.ranking_page_view(ws, publisher=scope, **v)


def _unless_cached(read: Callable, ws: Workspace) -> Callable[[], object]:
    """``read(ws)`` (a :func:`~monitor.cache.cached` read) unless its entry is stored already. The all-time sums
    are built by the overview before them as a rule: reading them back anyway fetched the whole entry from the
    cache and unpickled it for nothing (at 10M retweets 4.3M rows, a 173 MB entry before its columns were narrowed:
    about 0.7 s and 370 MB more of the worker's peak memory, ``benchmarks/data_layer.md``)."""

    def run() -> None:
        from django.core.cache import cache

        if not cache.has_key(read.key_for(ws)):
            read(ws)

    return run


def _api_ranking(ws: Workspace, publisher: Account | None) -> Callable[[], object]:
    """The ranking as the API's ranking view asks for it (monitor/api/views.py): its default page, every day."""
    from ..api.paging import DEFAULT_PAGE_SIZE

    window = selectors.Window(None, None)
    return lambda: selectors.ranking(
        ws, publisher=publisher, aggregate="total", window=window, limit=DEFAULT_PAGE_SIZE, offset=0
    )


def _busiest_publishers(ws: Workspace, n: int) -> list[Account]:
    if n <= 0:
        return []
    return _accounts_in_order(ws, [p["twitter_id"] for p in selectors.publishers_summary(ws, limit=n)])


def _top_accounts(ws: Workspace, n: int) -> list[Account]:
    if n <= 0:
        return []
    return _accounts_in_order(ws, [r["twitter_id"] for r in selectors.ranking(ws, limit=n).rows])


def _accounts_in_order(ws: Workspace, twitter_ids: list[int]) -> list[Account]:
    """The workspace's accounts of these Twitter ids, in their order (one query)."""
    found = {a.twitter_id: a for a in Account.objects.filter(workspace=ws, twitter_id__in=twitter_ids)}
    return [found[t] for t in twitter_ids if t in found]


def _largest_cascades(ws: Workspace, n: int) -> list[Tweet]:
    if n <= 0:
        return []
    return list(Tweet.objects.filter(workspace=ws, n_participants__gt=1).order_by("-n_participants", "pk")[:n])


def read_cache_prune() -> dict[str, int]:
    """Drop the cached reads of superseded data versions (``monitor.cache.prune_superseded``): the read cache's
    entries live a week, so that a quiet spell does not make the pages cold; this is what bounds its memory to
    about two versions a workspace. Called by beat every ``SPREADWATCH_READ_CACHE_PRUNE_EVERY_S`` (60) seconds."""
    out = prune_superseded()
    if out["deleted"]:
        log.info("read cache: %d entries of superseded versions dropped (%d scanned)", out["deleted"], out["scanned"])
    return out
