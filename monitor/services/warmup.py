"""Warming the read cache when a compute run finishes, so that the first minute after a run has no cold cliff.

A run's last batch bumps the workspace's data version (``monitor.cache``): every cached read of the workspace is
then cold, and before this the first analysts after a run paid for rebuilding them (p95 1.2-5.4 s under 50
analysts at the 1M-retweet benchmark, docs/reliability.md). :func:`read_cache_warm` is called by the run's
last transaction (``monitor.services.runs``), after the results and aggregates are stored and before the run
is marked done: it calls the selectors the busiest pages call, with the pages' arguments, under the new version
(pinned: ``monitor.cache.warming``), so the values are in the cache when the commit makes the run done and the
new version visible at once.

What, in this order, until ``SPREADWATCH_WARM_SECONDS`` have passed (the rest is built by its first reader):

1. the overview; the all-time snapshot's columns; the ranking across publishers and, for the
   ``SPREADWATCH_WARM_PUBLISHERS`` busiest publishers, their ranking, as the pages and the API open them;
2. the account pages of the ``SPREADWATCH_WARM_ACCOUNTS`` top accounts and the explorer of the
   ``SPREADWATCH_WARM_CASCADES`` largest cascades;
3. the ranking variants one click away (another aggregate, the cascades sort, the last 30 days, page 2).

Warming never fails the run: each read runs in its own savepoint, under a statement timeout of the time left,
and a failure is logged and counted. It is PostgreSQL's only: on SQLite (``make demo``) the transaction would hold
the database's one writer lock meanwhile. It runs inside the run's transaction, which holds the workspace row and its
aggregate lock meanwhile (another import or run of the workspace waits): that is what the time bound is for.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction

from .. import selectors
from ..cache import prune_superseded, warming
from ..models import Account, Tweet, Workspace

log = logging.getLogger(__name__)

__all__ = ["WarmResult", "read_cache_prune", "read_cache_warm"]

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
    """What a warm-up did: reads stored (``done``), failed, and not reached before the deadline (``skipped``)."""

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


def read_cache_warm(*, workspace: Workspace, seconds: float | None = None) -> WarmResult:
    """Store in the read cache what the busiest pages of ``workspace`` read, under the data version this
    transaction sees (see the module). Never raises; ``seconds`` (default ``SPREADWATCH_WARM_SECONDS``; 0: off)
    bounds it."""
    res = WarmResult()
    budget = settings.SPREADWATCH_WARM_SECONDS if seconds is None else seconds
    # not on SQLite (the demo's database): its one writer would be held for the warm-up (30 s for Twitter16 in
    # `make demo`), and a login or upload meanwhile would wait for the lock or fail with "database is locked"
    if budget <= 0 or settings.SPREADWATCH_READ_CACHE_SECONDS <= 0 or connection.vendor != "postgresql":
        return res
    t0 = time.monotonic()
    deadline = t0 + budget
    try:
        # an outer savepoint: whatever goes wrong here leaves the run's transaction as it was
        with transaction.atomic(), warming(workspace) as written, _statement_timeout_restored():
            res.keys = written  # the same list: what was written before a failure is dropped with the rest
            for _name, read in _reads(workspace):
                if time.monotonic() >= deadline:
                    res.skipped += 1
                    continue
                if _one(read, deadline):
                    res.done += 1
                else:
                    res.failed += 1
    except Exception:
        log.exception("warming the read cache of workspace %s failed; its pages build their reads", workspace.pk)
        res.failed += 1
    res.seconds = time.monotonic() - t0
    log.info("workspace %s: %s", workspace.pk, res.note())
    return res


def _one(read: Callable[[], object], deadline: float) -> bool:
    """Run one read in a savepoint whose statements stop at the deadline; False (logged) if it failed."""
    try:
        with transaction.atomic():
            left_ms = max(1, int(1000 * (deadline - time.monotonic())))
            with connection.cursor() as cur:  # PostgreSQL's: read_cache_warm runs on nothing else
                cur.execute(f"SET LOCAL statement_timeout = {left_ms}")
            read()
        return True
    except Exception:
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


def _reads(ws: Workspace) -> Iterator[tuple[str, Callable[[], object]]]:
    """The reads to warm, most used first. A generator: the publishers and accounts are read (themselves
    through the cache) only when their turn comes."""
    from ..api.paging import DEFAULT_PAGE_SIZE
    from ..selectors.rankings import all_time_columns

    def api(publisher: Account | None) -> Callable[[], object]:
        # as the API's ranking view asks (monitor/api/views.py): its default page, every day
        window = selectors.Window(None, None)
        return lambda: selectors.ranking(
            ws, publisher=publisher, aggregate="total", window=window, limit=DEFAULT_PAGE_SIZE, offset=0
        )

    yield "overview", lambda: selectors.overview_page(ws)
    yield "all-time snapshot", lambda: all_time_columns(ws)
    yield "ranking", lambda: selectors.ranking_page_view(ws, publisher=None)
    yield "api ranking", api(None)
    publishers = _busiest_publishers(ws, settings.SPREADWATCH_WARM_PUBLISHERS)
    for p in publishers:
        yield f"publisher {p.twitter_id}", lambda p=p: selectors.ranking_page_view(ws, publisher=p)
        yield f"api publisher {p.twitter_id}", api(p)
    for a in _top_accounts(ws, settings.SPREADWATCH_WARM_ACCOUNTS):
        yield (
            f"account {a.twitter_id}",
            lambda a=a: (
                selectors.account_summary(ws, a),
                selectors.account_amplification(ws, a),
                selectors.wtf_account(ws, a),
            ),
        )
    for t in _largest_cascades(ws, settings.SPREADWATCH_WARM_CASCADES):
        limit = selectors.EXPLORER_LIMIT
        yield f"cascade {t.tweet_id}", lambda t=t, limit=limit: selectors.cascade_explorer_page(ws, t, limit=limit)
    for scope in [None, *publishers]:
        for v in VARIANTS:
            yield f"variant {v}", lambda scope=scope, v=v: selectors.ranking_page_view(ws, publisher=scope, **v)


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
