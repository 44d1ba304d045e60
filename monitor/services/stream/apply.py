"""Applying stream events (issue 17): a micro-batch of accepted records into the workspace, exactly as a batch
upload of everything received so far would leave it.

:func:`apply_events` is the one entry point (the stream consumers call it with the ids of the events they
took). In **one transaction** it

1. locks the given events that are still ``queued`` or ``waiting`` (``SELECT ... FOR UPDATE SKIP LOCKED``): an
   event another consumer holds, or one already applied or dead, is skipped, so a redelivery or a second consumer
   never applies an event twice;
2. reads their bodies with the upload's readers (:mod:`._apply_parse`); a body that cannot be read is a dead
   letter whose error names the field, and the rest of the micro-batch goes on;
3. picks up the ``waiting`` retweets whose original is in this micro-batch, and sets aside the retweets whose
   original is neither stored nor here: ``waiting`` until ``wait_until`` (now + ``SPREADWATCH_STREAM_ORPHAN_WAIT``
   seconds, default 600), then ``dead`` with "original <id> never arrived" -- never dropped silently;
4. stages and merges the rest with the upload's own :class:`~monitor.services.ingest.stager.Stager` and
   :func:`~monitor.services.ingest.merge.merge` (COPY into temporary tables, set-based ``INSERT ... SELECT ...
   ON CONFLICT``: the earliest retweet per user kept, an older retweet replacing a later one, follows once...);
5. recomputes the cascades the merge says may have changed -- the originals and retweeted tweets of the batch,
   and every cascade in which the follower of a new follow retweeted (which includes every cascade in which both
   accounts took part) -- with the influence algorithm's own ``compute`` and ``store`` (forward, backward, the
   per-cascade influence rows and spreading graphs, the touched (publisher, day) aggregates, the data-version
   bump), CPU backend unless told otherwise;
6. queues the alert evaluation on commit (the outbox of :mod:`monitor.jobs`), as a committed compute run does;
7. counts the applied events into the Live page's per-second arrivals (``StreamArrival``) and deletes those
   applied cleanly; marks the others ``applied`` with their note, ``waiting`` or ``dead``.

Recomputing whole touched cascades (rather than adding CRGP's incremental edges) is what makes late and
out-of-order retweets and late follows come out right: the stored state always equals a batch upload of every
record applied so far, in arrival order (see ``docs/stream-apply.md``).

Concurrency: after reading the bodies, the workspace's advisory lock (the one every aggregate refresh takes) is
held to the commit, so applies of one workspace store one at a time and never deadlock on each other's rows;
parsing runs outside it.
"""

from __future__ import annotations

import datetime
import logging
import os
import time
from dataclasses import dataclass, field

import msgspec
import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from compute.arrays import unique
from compute.backends import resolve_backend
from compute.formats import MAX_RECORD_BYTES, ReadReport
from compute.tables import NO_TWEET, FollowTable, TweetTable

from ... import jobs
from ...algorithms import get as get_algorithm
from ...algorithms.influence import AllTimeDelta
from ...cache import bump_data_version, record_all_time_delta
from ...db import int_array_param
from ...models import ComputeBatch, ComputeRun, StreamArrival, StreamEvent, Tweet
from ..ingest.conflicts import stored_conflicts
from ..ingest.merge import lock_workspace, merge
from ..ingest.stager import Stager
from ..units import RETWEETERS, count_field, refusal, unit_fix, unit_of
from ._apply_parse import Parsed, parse_events
from ._rows import UnreadableRows
from .unit_check import counted_id_field

__all__ = ["apply_events", "orphan_wait_seconds", "sweep_waiting", "sweep_waiting_all"]

log = logging.getLogger(__name__)
_OPEN = (StreamEvent.Status.QUEUED, StreamEvent.Status.WAITING)
_UPDATE_CHUNK = 5_000


def orphan_wait_seconds() -> int:
    """How long a retweet waits for its original: ``SPREADWATCH_STREAM_ORPHAN_WAIT`` (setting, else env; 600)."""
    v = getattr(settings, "SPREADWATCH_STREAM_ORPHAN_WAIT", None)
    if v is None:
        v = os.environ.get("SPREADWATCH_STREAM_ORPHAN_WAIT", "600")
    return int(v)


@dataclass
class _Event:
    pk: int
    body: str | None  # read only where ``rows`` is null
    rows: str | None  # the tweet rows the intake read from the body (:mod:`._rows`)
    status: str
    wait_until: object
    cascade_key: int | None
    kind: str
    received_s: int  # ``received_at`` in whole seconds since the epoch (its arrival second)

    @classmethod
    def from_orm_row(cls, row: tuple) -> _Event:
        *head, received_at = row
        return cls(*head, int(received_at.timestamp()))


_EVENT_COLUMNS = ("pk", "body", "rows", "status", "wait_until", "cascade_key", "kind", "received_at")  # _Event's
# on PostgreSQL the arrival second comes as an integer: Django's timestamp loader (a Python wrapper around
# psycopg's) took 14 us per value, 0.14 s for a 10,000-event micro-batch
# fields. The body is read only where the intake stored no rows: the rows are a third of its size
_EVENT_SQL = """e.id, CASE WHEN e.rows IS NULL THEN e.body END, e.rows, e.status, e.wait_until, e.cascade_key, e.kind,
                floor(extract(epoch FROM e.received_at))::bigint"""


@dataclass
class _Outcome:
    """What happens to each locked event, by event index."""

    dead: dict[int, str] = field(default_factory=dict)
    waiting: dict[int, tuple[object, int]] = field(default_factory=dict)  # index -> (wait_until, missing original)
    notes: dict[int, str] = field(default_factory=dict)  # applied, with a note (a row the merge left out)


class _SqlTimer:
    """Time spent in statements that refresh the daily aggregates (to split the store step's seconds)."""

    def __init__(self) -> None:
        self.aggregates = 0.0

    def __call__(self, execute, sql, params, many, context):
        t = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            if "monitor_dailyinfluence" in sql or "monitor_publisherday" in sql:
                self.aggregates += time.perf_counter() - t


def apply_events(
    *, workspace_id: int, event_ids: list[int], backend: str = "cpu", now=None, analyze_later=None
) -> dict:
    """Apply the events ``event_ids`` of workspace ``workspace_id`` (see the module docstring); idempotent.

    Returns the counts -- ``events`` (locked and handled here), ``skipped`` (already applied or dead, held by
    another consumer, or not of this workspace), ``picked_up`` (waiting retweets applied because their original
    came in this micro-batch; included in ``applied``), ``applied``, ``waiting``, ``dead``, ``tweets``,
    ``retweets`` and ``follows`` (records merged), ``cascades`` (recomputed), ``participants`` and ``edges``
    (of those cascades: the recompute's size), ``merge`` (the merge's own counts) -- and ``seconds`` per step:
    ``lock``, ``parse``, ``wait_lock`` (waiting for the workspace's store lock), ``store`` (stage + merge),
    ``compute`` (forward + backward), ``results`` (influence rows and graphs), ``aggregates`` (the touched
    (publisher, day) pairs), ``mark`` and ``total`` (commit hooks excluded).

    ``analyze_later``: where the recompute's tables are due for new planner statistics, hand them to this
    function after the commit (``fn(tables, rows_added)``; a running consumer's
    :class:`~monitor.services.stream._statistics.StatisticsRefresher`) instead of analysing them in the
    transaction, which holds the workspace's store lock.
    """
    t0 = time.perf_counter()
    now = now or timezone.now()
    secs: dict[str, float] = {}
    out = {k: 0 for k in ("events", "skipped", "picked_up", "applied", "waiting", "dead", "tweets", "retweets",
                          "follows", "cascades", "participants", "edges")}  # fmt: skip
    out["merge"] = {}
    ids = sorted({int(i) for i in event_ids})
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:  # for this transaction only
                cur.execute(
                    "SELECT set_config('max_parallel_workers_per_gather', %s, true)",
                    [str(int(settings.SPREADWATCH_STREAM_PARALLEL_WORKERS))],
                )
        events = _lock(workspace_id, ids)
        out["events"], out["skipped"] = len(events), len(ids) - len(events)
        t = _tick(secs, "lock", t0)
        if not events:
            secs["total"] = round(time.perf_counter() - t0, 4)
            out["seconds"] = secs
            return out
        max_record = int(getattr(settings, "SPREADWATCH_MAX_RECORD_BYTES", MAX_RECORD_BYTES))
        parsed = _parse(events, max_record)
        # the waiting retweets of the originals that came now are applied with them
        more = _waiting_for(workspace_id, parsed, exclude=[e.pk for e in events])
        if more:
            out["picked_up"] = len(more)
            parsed = _append(parsed, _parse(more, max_record), len(events))
            events, parsed = _in_arrival_order(events + more, parsed)
        t = _tick(secs, "parse", t)
        with connection.cursor() as cur:
            if connection.vendor == "postgresql":
                # the lock every aggregate refresh of the workspace takes (monitor.algorithms.influence), taken
                # before the merge: the stores of one workspace then never wait on each other's rows
                cur.execute("SELECT pg_advisory_xact_lock(%s)", [workspace_id])
        t = _tick(secs, "wait_lock", t)
        result = _Outcome(dead={i: f"cannot be read: {msg}" for i, msg in parsed.bad.items()})
        tweets, follows = _set_aside_orphans(workspace_id, events, parsed, result, now)
        tweets = _check_unit(workspace_id, events, tweets, result)
        tweet_pks, counts = _store(workspace_id, events, tweets, follows, result)
        out["merge"] = counts
        out["tweets"] = int(np.count_nonzero(tweets.retweeted_tweet_id == NO_TWEET))
        out["retweets"] = int(np.count_nonzero(tweets.retweeted_tweet_id != NO_TWEET))
        out["follows"] = len(follows)
        t = _tick(secs, "store", t)
        if tweet_pks:
            timer = _SqlTimer()
            with connection.execute_wrapper(timer):
                out["edges"], out["participants"], compute_s, results_s = _recompute(
                    workspace_id,
                    tweet_pks,
                    backend,
                    follows_written=bool(counts.get("follows_new")),
                    analyze_later=analyze_later,
                )
            secs["compute"] = round(compute_s, 4)
            secs["aggregates"] = round(timer.aggregates, 4)
            secs["results"] = round(max(results_s - timer.aggregates, 0.0), 4)
            jobs.enqueue_on_commit(jobs.EVALUATE_ALERTS, workspace_id)  # as a committed compute run does
        elif counts.get("accounts_new") or counts.get("follows_new"):
            # new accounts or follows, no cascade changed: neither did the all-time sums (the ranking's snapshot
            # carries on from the version before instead of reading them whole)
            record_all_time_delta(workspace_id, bump_data_version(workspace_id), AllTimeDelta.empty())
        out["cascades"] = len(tweet_pks)
        t = time.perf_counter()
        applied = _mark(workspace_id, events, result, now)
        out.update(applied=applied, waiting=len(result.waiting), dead=len(result.dead))
        _tick(secs, "mark", t)
    secs["total"] = round(time.perf_counter() - t0, 4)
    out["seconds"] = secs
    return out


def sweep_waiting(*, workspace_id: int, now=None, limit: int = 10_000, backend: str = "cpu") -> dict:
    """Apply the workspace's waiting retweets whose original is stored now, and turn those past their
    ``wait_until`` into dead letters ("original <id> never arrived"). For a periodic task: a retweet whose
    original was applied by another consumer (or in a transaction that had not committed when the original's
    micro-batch looked for waiting retweets) is applied here, at the latest."""
    now = now or timezone.now()
    waiting = StreamEvent.objects.filter(workspace_id=workspace_id, status=StreamEvent.Status.WAITING)
    due = list(waiting.filter(wait_until__lte=now).order_by("pk").values_list("pk", flat=True)[:limit])
    keys = set(waiting.exclude(cascade_key=None).values_list("cascade_key", flat=True).distinct()[:limit])
    if keys:
        stored = set(
            Tweet.objects.filter(workspace_id=workspace_id, tweet_id__in=keys).values_list("tweet_id", flat=True)
        )
        if stored:
            due += list(waiting.filter(cascade_key__in=stored).order_by("pk").values_list("pk", flat=True)[:limit])
    if not due:
        return {"events": 0, "applied": 0, "waiting": 0, "dead": 0}
    return apply_events(workspace_id=workspace_id, event_ids=due, backend=backend, now=now)


# --- steps -----------------------------------------------------------------------------------------------------


def _tick(secs: dict, name: str, t: float) -> float:
    now = time.perf_counter()
    secs[name] = round(secs.get(name, 0.0) + now - t, 4)
    return now


def _parse(events: list[_Event], max_record: int) -> Parsed:
    """The events read from the rows the intake kept, else their bodies (:func:`parse_events`). Rows in a layout
    this code does not read (written by another version of the intake) are dropped and the body read instead:
    the lock did not read the bodies of events with rows, so those are read here."""
    try:
        return parse_events([e.body for e in events], [e.rows for e in events], [e.pk for e in events],
                            max_record=max_record)  # fmt: skip
    except UnreadableRows as exc:
        pks = [events[i].pk for i in exc.indices]
        bodies = dict(StreamEvent.objects.filter(pk__in=pks).values_list("pk", "body"))
        for i in exc.indices:
            events[i].body, events[i].rows = bodies[events[i].pk], None
        log.warning("stream events %s: rows in another layout, read from their bodies", pks[:10])
        return _parse(events, max_record)


def _lock(ws: int, ids: list[int]) -> list[_Event]:
    """The open events among ``ids``, locked (skipping those another transaction holds), in arrival order."""
    if connection.vendor == "postgresql":
        # one array parameter rather than an IN list of thousands: the statement stays small
        with connection.cursor() as cur:
            # driven from the ids through the primary key (``id = ANY(array)`` lets the planner scan the table
            # and test each row against the whole array: 22 s for 10K ids on a 100K-event table)
            cur.execute(
                f"""SELECT {_EVENT_SQL}
                   FROM unnest(%s::bigint[]) AS x(id) JOIN monitor_streamevent e ON e.id = x.id
                   WHERE e.workspace_id = %s AND e.status IN (%s, %s)
                   ORDER BY e.id FOR UPDATE OF e SKIP LOCKED""",
                [int_array_param(ids), ws, *_OPEN],
            )
            return [_Event(*r) for r in cur.fetchall()]
    rows = (
        StreamEvent.objects.select_for_update(skip_locked=True)
        .filter(workspace_id=ws, pk__in=ids, status__in=_OPEN)
        .order_by("pk")
        .values_list(*_EVENT_COLUMNS)
    )
    return [_Event.from_orm_row(r) for r in rows]


def _waiting_for(ws: int, parsed: Parsed, *, exclude: list[int]) -> list[_Event]:
    """Waiting events of the originals this micro-batch brings (their ``cascade_key``), locked."""
    t = parsed.tweets
    originals = unique(t.tweet_id[(t.retweeted_tweet_id == NO_TWEET) & (t.tweet_id > 0)])
    if not len(originals):
        return []
    if connection.vendor == "postgresql":
        # arrays, not IN lists: the micro-batch's own events (``exclude``) are up to SPREADWATCH_STREAM_BATCH ids,
        # and Django building that list cost 0.2 s of a 10,000-event micro-batch
        with connection.cursor() as cur:
            cur.execute(
                f"""SELECT {_EVENT_SQL} FROM monitor_streamevent e
                   WHERE e.workspace_id = %s AND e.status = %s AND e.cascade_key = ANY(%s::bigint[])
                       AND NOT e.id = ANY(%s::bigint[])
                   ORDER BY e.id FOR UPDATE OF e SKIP LOCKED""",
                [ws, StreamEvent.Status.WAITING, int_array_param(originals), int_array_param(exclude)],
            )
            return [_Event(*r) for r in cur.fetchall()]
    rows = (
        StreamEvent.objects.select_for_update(skip_locked=True)
        .filter(workspace_id=ws, status=StreamEvent.Status.WAITING, cascade_key__in=originals.tolist())
        .exclude(pk__in=exclude)
        .order_by("pk")
        .values_list(*_EVENT_COLUMNS)
    )
    return [_Event.from_orm_row(r) for r in rows]


def _append(a: Parsed, b: Parsed, shift: int) -> Parsed:
    """``b`` (events numbered from ``shift``) after ``a``."""
    bt = b.tweets
    tweets = TweetTable(
        *(np.concatenate([getattr(a.tweets, c), getattr(bt, c)]) for c in
          ("tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count")),
        **{c: _cat_obj(getattr(a.tweets, c), getattr(bt, c), len(a.tweets), len(bt)) for c in
           ("screen_name", "text", "label", "hashtags", "urls")},
        lines=np.concatenate([a.tweets.lines, bt.lines + shift]),
    )  # fmt: skip
    follows = FollowTable(
        np.concatenate([a.follows.follower_id, b.follows.follower_id]),
        np.concatenate([a.follows.followee_id, b.follows.followee_id]),
    )
    return Parsed(
        tweets,
        follows,
        np.concatenate([a.follow_event, b.follow_event + shift]),
        {**a.bad, **{i + shift: m for i, m in b.bad.items()}},
        a.empty | {i + shift for i in b.empty},
    )


def _in_arrival_order(events: list[_Event], parsed: Parsed) -> tuple[list[_Event], Parsed]:
    """Events (and their rows) renumbered in arrival (primary key) order: a picked-up waiting retweet arrived
    before the micro-batch that brings its original, and the merge's first-row-wins rules must see it first."""
    order = np.argsort(np.array([e.pk for e in events], np.int64), kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    t = parsed.tweets
    t.lines = rank[t.lines]
    tweets = t.take(np.argsort(t.lines, kind="stable"))
    return [events[i] for i in order.tolist()], Parsed(
        tweets,
        parsed.follows,
        rank[parsed.follow_event],
        {int(rank[i]): m for i, m in parsed.bad.items()},
        {int(rank[i]) for i in parsed.empty},
    )


def _cat_obj(x, y, nx: int, ny: int):
    if x is None and y is None:
        return None
    x = np.full(nx, None, dtype=object) if x is None else x
    y = np.full(ny, None, dtype=object) if y is None else y
    return np.concatenate([x, y])


def _check_unit(ws: int, events: list[_Event], t: TweetTable, res: _Outcome) -> TweetTable:
    """The rows to merge, under the workspace's unit (:mod:`monitor.services.units`), checked under the store lock:
    fixed by these rows when they are the workspace's first tweets (the rows to be stored: a retweet set aside to
    wait for its original fixes nothing, as an upload skips it); where it counts retweeters, an event carrying a
    follower count is a dead letter naming the field and its rows are left out (the intake refuses such a body with
    a 400; this catches events queued before it did)."""
    if not len(t):
        return t
    counted = ~np.isnan(t.followers_count)
    unit = unit_of(ws)
    if not unit:
        unit = unit_fix(ws, has_counts=bool(counted.any()))
    if unit != RETWEETERS or not counted.any():
        return t
    refused = unique(t.lines[counted]).tolist()
    for i in refused:
        res.dead[i] = f"field '{_count_field(events[i])}': {refusal()}"
    return t.take(~np.isin(t.lines, refused))


def _count_field(e: _Event) -> str:
    """The field of an event's follower count, for its dead letter: from the rows the intake read, else (the
    tweets CSV's fields) ``followers_count``."""
    if e.rows is not None:
        try:
            id_field = counted_id_field(e.rows)
        except (msgspec.DecodeError, TypeError, IndexError):
            id_field = None
        if id_field is not None:
            return count_field(id_field, e.body)
    if e.body is not None and ("user" in e.body and "id_str" in e.body):
        return "user.followers_count"
    return "followers_count"


def _set_aside_orphans(ws: int, events: list[_Event], parsed: Parsed, res: _Outcome, now):
    """The rows to merge: without the events of retweets whose original is neither stored nor in this
    micro-batch (they wait, or die past their ``wait_until``)."""
    t = parsed.tweets
    is_rt = t.retweeted_tweet_id != NO_TWEET
    here = set(t.tweet_id[~is_rt].tolist())
    wanted = set(unique(t.retweeted_tweet_id[is_rt]).tolist()) - here
    missing: set[int] = set()
    if wanted:
        stored = Tweet.objects.filter(workspace_id=ws, tweet_id__in=list(wanted)).values_list("tweet_id", flat=True)
        missing = wanted - set(stored)
    keep = np.ones(len(t), bool)
    if missing:
        orphan_rows = np.flatnonzero(is_rt & np.isin(t.retweeted_tweet_id, list(missing)))
        wait = orphan_wait_seconds()
        for i in unique(t.lines[orphan_rows]).tolist():
            original = int(t.retweeted_tweet_id[orphan_rows[t.lines[orphan_rows] == i][0]])
            e = events[i]
            until = e.wait_until if e.wait_until is not None else now + datetime.timedelta(seconds=wait)
            if until <= now:
                res.dead[i] = f"original {original} never arrived (waited until {until.isoformat()})"
            else:
                res.waiting[i] = (until, original)
        keep = ~np.isin(t.lines, list(res.waiting) + list(res.dead))
    f_keep = ~np.isin(parsed.follow_event, list(res.waiting) + list(res.dead))
    follows = FollowTable(parsed.follows.follower_id[f_keep], parsed.follows.followee_id[f_keep])
    return (t if keep.all() else t.take(keep)), follows


def _store(ws: int, events: list[_Event], tweets: TweetTable, follows: FollowTable, res: _Outcome):
    """Stage and merge the rows as an upload does; returns (Tweet pks whose cascades may have changed, counts)."""
    if not len(tweets) and not len(follows):
        return [], {}
    with connection.cursor() as cur:
        st = Stager(cur, mode="skip-bad", report=ReadReport(max_shown=len(events) + 10))
        st.names.append("stream")  # ``where`` lines are event indices
        if len(tweets):
            st.add_tweets(tweets)
        if len(follows):
            st.add_follows(follows)
        # rows contradicting a stored tweet: left out as an upload in skip-bad mode leaves them out; the event is
        # dead when nothing of it is left, else applied with the reason as its note
        staged = st.tweets()
        # checked here, under the merge's lock (so no import can store a conflicting tweet before the merge), and
        # not again by the merge
        lock_workspace(cur, ws)
        drop = stored_conflicts(st, ws, staged)
        if drop.any():
            _note_conflicts(st, staged, drop, res)
            kept = ~drop
            st.tweet_parts = [staged.take(kept)]
            src, line = st.where()
            st.where_parts = [(src[kept], line[kept])]
            st.rows = int(kept.sum())
        try:
            counts = merge(cur, st, ws, None, conflicts_checked=True)
            counts["conflicts_with_stored"] = int(np.count_nonzero(drop))
        finally:
            st.drop()
    return list(st.affected), counts


def _note_conflicts(st: Stager, staged, drop: np.ndarray, res: _Outcome) -> None:
    """Each event with rows left out by the stored-tweet check: dead when nothing of it is left, else a note.
    The check reports each conflicting tweet id once (at its first row): other events with that id get its
    reason."""
    _, line = st.where()
    by_tweet: dict[int, str] = {}
    for r in st.report.shown:
        if r.line is not None:
            for tid in unique(staged.tweet_id[drop & (line == r.line)]).tolist():
                by_tweet.setdefault(tid, r.reason)
    for i in unique(line[drop]).tolist():
        tid = int(staged.tweet_id[drop & (line == i)][0])
        why = by_tweet.get(tid, f"conflicts with a stored tweet: tweet {tid}")
        if (line[~drop] == i).any():
            res.notes[i] = f"applied without a row: {why}"
        else:
            res.dead[i] = why


def _recompute(
    ws: int, tweet_pks: list[int], backend: str, *, follows_written: bool, analyze_later=None
) -> tuple[int, int, float, float]:
    """Compute and store the cascades ``tweet_pks`` with the influence algorithm, as one batch of a compute run
    stores them (no run row: ``Tweet.compute_run`` stays empty for cascades last computed from the stream). The
    follower graph this process keeps is used unless this micro-batch wrote follows (then the follows among the
    participants are read: see ``monitor.algorithms.influence._compute``). ``analyze_later``: see
    :func:`apply_events`."""
    algo = get_algorithm("influence")
    run = ComputeRun(workspace_id=ws, algorithm=algo.name, orphans=settings.SPREADWATCH_ORPHANS, backend=backend)
    run.keep_graph = not follows_written  # not a field: read by the influence algorithm's compute
    run.store_changes = True  # not a field: the algorithm's store rewrites only the rows that changed
    if analyze_later is not None:  # not a field: the store hands its statistics refresh over, to run after the commit
        run.analyze_later = lambda tables, rows: transaction.on_commit(lambda: analyze_later(tables, rows))
    batch = ComputeBatch(run=run, tweet_pks=tweet_pks, n_cascades=len(tweet_pks))
    t = time.perf_counter()
    res = algo.compute(run=run, batch=batch, backend=resolve_backend(backend), stop=lambda: False)
    compute_s = time.perf_counter() - t
    batch.n_nodes = int(sum(int(o.nodes.sum()) for o in res.outcomes))
    t = time.perf_counter()
    algo.store(run=run, batch=batch, result=res)
    return int(res.n_edges), batch.n_nodes, compute_s, time.perf_counter() - t


def _mark(ws: int, events: list[_Event], res: _Outcome, now) -> int:
    """Count the applied events into :class:`StreamArrival` and delete those applied cleanly; write the others'
    status (applied with a note, waiting, dead). Returns how many were applied (see ``StreamEvent``)."""
    done = set(res.dead) | set(res.waiting) | set(res.notes)
    clean = [e for i, e in enumerate(events) if i not in done]
    _count_arrivals(ws, clean + [events[i] for i in res.notes], now)
    applied = [e.pk for e in clean]
    if applied and connection.vendor == "postgresql":
        with connection.cursor() as cur:
            cur.execute(
                "DELETE FROM monitor_streamevent e USING unnest(%s::bigint[]) AS x(id) WHERE e.id = x.id",
                [int_array_param(applied)],
            )
    else:
        for a in range(0, len(applied), _UPDATE_CHUNK):
            StreamEvent.objects.filter(pk__in=applied[a : a + _UPDATE_CHUNK]).delete()
    changed = []

    def row(i: int, status: str, error: str, *, applied_at=None, wait_until=None, cascade_key=None) -> None:
        e = events[i]
        changed.append(
            StreamEvent(
                pk=e.pk,
                status=status,
                applied_at=applied_at,
                error=error[:2000],
                wait_until=e.wait_until if wait_until is None else wait_until,
                cascade_key=e.cascade_key if cascade_key is None else cascade_key,
            )
        )

    for i, msg in res.notes.items():
        row(i, StreamEvent.Status.APPLIED, msg, applied_at=now)
    for i, msg in res.dead.items():
        row(i, StreamEvent.Status.DEAD, msg)
    for i, (until, original) in res.waiting.items():
        # cascade_key: what the original's micro-batch looks the waiting retweets up by
        row(i, StreamEvent.Status.WAITING, f"waiting for original {original} until {until.isoformat()}",
            wait_until=until, cascade_key=original)  # fmt: skip
    if changed:
        # attempts: one more for every event handled here (bulk_update cannot add, so it is bumped apart)
        StreamEvent.objects.filter(pk__in=[e.pk for e in changed]).update(attempts=F("attempts") + 1)
        StreamEvent.objects.bulk_update(
            changed, ["status", "applied_at", "error", "wait_until", "cascade_key"], batch_size=1000
        )
    return len(applied) + len(res.notes)


def _count_arrivals(ws: int, events: list[_Event], now) -> None:
    """Add ``events`` (applied now) to the workspace's per-second arrival counts, one upsert; and drop the
    counts older than ``StreamArrival.KEEP_SECONDS``."""
    if not events:
        return
    buckets: dict[tuple[int, int], list[int]] = {}
    retweet = StreamEvent.Kind.RETWEET
    for e in events:  # (cascade, arrival second) -> [events, retweets]
        b = buckets.setdefault((e.cascade_key or 0, e.received_s), [0, 0])
        b[0] += 1
        b[1] += e.kind == retweet
    oldest = now - datetime.timedelta(seconds=StreamArrival.KEEP_SECONDS)
    if connection.vendor == "postgresql":
        keys, seconds = zip(*buckets)
        counts, retweets = zip(*buckets.values())
        with connection.cursor() as cur:
            cur.execute(
                """INSERT INTO monitor_streamarrival (workspace_id, cascade_key, second, events, retweets, applied_at)
                   SELECT %s, a.k, to_timestamp(a.s), a.n, a.r, %s
                   FROM unnest(%s::bigint[], %s::bigint[], %s::int[], %s::int[]) AS a(k, s, n, r)
                   ON CONFLICT (workspace_id, second, cascade_key) DO UPDATE SET
                       events = monitor_streamarrival.events + EXCLUDED.events,
                       retweets = monitor_streamarrival.retweets + EXCLUDED.retweets,
                       applied_at = EXCLUDED.applied_at""",
                [ws, now, *(int_array_param(c) for c in (keys, seconds, counts, retweets))],
            )
            cur.execute("DELETE FROM monitor_streamarrival WHERE workspace_id = %s AND second < %s", [ws, oldest])
        return
    utc = datetime.UTC
    for (key, sec), (n, r) in buckets.items():
        at = datetime.datetime.fromtimestamp(sec, utc)
        found = StreamArrival.objects.filter(workspace_id=ws, second=at, cascade_key=key)
        if not found.update(events=F("events") + n, retweets=F("retweets") + r, applied_at=now):
            StreamArrival.objects.create(workspace_id=ws, cascade_key=key, second=at, events=n, retweets=r,
                                         applied_at=now)  # fmt: skip
    StreamArrival.objects.filter(workspace_id=ws, second__lt=oldest).delete()


def sweep_waiting_all() -> dict[str, dict]:
    """:func:`sweep_waiting` for every workspace that has waiting stream events (the beat task's body)."""
    workspaces = (
        StreamEvent.objects.filter(status=StreamEvent.Status.WAITING).values_list("workspace_id", flat=True).distinct()
    )
    return {str(ws): sweep_waiting(workspace_id=ws) for ws in workspaces}
