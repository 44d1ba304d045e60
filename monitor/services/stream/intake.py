"""Intake: a batch of NDJSON lines becomes :class:`~monitor.models.StreamEvent` rows, all or nothing.

``POST /api/v1/stream/`` (``monitor.api.stream``) and ``manage.py follow_stream`` both come here. The lines are
checked first (:func:`.records.read_lines`: the first bad one is an :class:`InputError` naming line and field,
and nothing of the batch is stored); then, if the workspace's backlog leaves room (else :class:`Backpressure`,
with a Retry-After estimated from the recent apply rate), every event is written in one transaction (COPY on
PostgreSQL). A record is *accepted* when that transaction has committed: from then on it is applied exactly
once, whatever dies (docs/live.md). After the commit, one wake-up per touched partition goes to Redis and the
accepted count to the rate counters; both are optional (the consumers also poll).
"""

from __future__ import annotations

import datetime as dt
import math
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Sum
from django.utils import timezone

from compute.formats._report import BadRecord

from ...db import copy_text, reserve_ids
from ...models import StreamArrival, StreamEvent, Workspace
from . import channel, in_process
from ._gc import collector_paused
from .records import InputError, Record, partition_of, read_lines
from .unit_check import check_unit

__all__ = [
    "Accepted",
    "Backpressure",
    "BodyTooLarge",
    "InputError",
    "StreamRefused",
    "body_lines",
    "queued_bound",
    "retry_after_s",
    "stream_accept",
    "stream_accept_body",
    "stream_backlog",
]


class StreamRefused(Exception):
    """A batch refused whole, with the HTTP status that says why."""

    status = 400


class BodyTooLarge(StreamRefused):
    status = 413


class Backpressure(StreamRefused):
    """The workspace's queued backlog is over ``SPREADWATCH_STREAM_MAX_BACKLOG``: nothing was stored; try again
    in ``retry_after`` seconds."""

    status = 429

    def __init__(self, *, backlog: int, limit: int, retry_after: int) -> None:
        super().__init__(
            f"the stream's backlog is full ({backlog:,} queued events, the limit is {limit:,}): nothing was "
            f"stored; send again in {retry_after} s"
        )
        self.backlog, self.limit, self.retry_after = backlog, limit, retry_after


@dataclass
class Accepted:
    """What a batch added: ``n_events`` rows with ids ``first_id``..``last_id`` (ascending in line order, not
    necessarily contiguous), by kind, and ``n_skipped`` lines that carried no event (stream notices)."""

    n_events: int = 0
    n_skipped: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    first_id: int | None = None
    last_id: int | None = None
    partitions: dict[int, tuple[int, int]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "accepted": self.n_events,
            "skipped": self.n_skipped,
            "tweets": self.by_kind.get("tweet", 0),
            "retweets": self.by_kind.get("retweet", 0),
            "follows": self.by_kind.get("follow", 0),
            "first_id": self.first_id,
            "last_id": self.last_id,
        }


def body_lines(body: bytes, *, path: str = "body") -> list[tuple[int, str]]:
    """The lines of a request body, numbered from 1, within the size and line limits (``BodyTooLarge``
    otherwise); bytes that are not UTF-8 are an :class:`InputError` on their line."""
    limit = settings.SPREADWATCH_STREAM_MAX_BODY_BYTES
    if len(body) > limit:
        raise BodyTooLarge(
            f"the body is {len(body):,} bytes, over the limit of {limit:,} (SPREADWATCH_STREAM_MAX_BODY_BYTES): "
            "send it in several requests; nothing was stored"
        )
    raw = body.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    max_lines = settings.SPREADWATCH_STREAM_MAX_LINES
    if len(raw) > max_lines:
        raise BodyTooLarge(
            f"the body has {len(raw):,} lines, over the limit of {max_lines:,} (SPREADWATCH_STREAM_MAX_LINES): "
            "send it in several requests; nothing was stored"
        )
    out = []
    for i, b in enumerate(raw, 1):
        try:
            out.append((i, b.decode("utf-8").rstrip("\r")))
        except UnicodeDecodeError:
            raise InputError(BadRecord(path, i, None, "undecodable bytes (not UTF-8)", "undecodable bytes")) from None
    return out


def stream_backlog(workspace_id: int, *, limit: int | None = None) -> int:
    """Queued events of the workspace, counted up to ``limit`` (bounded work per request)."""
    qs = StreamEvent.objects.filter(workspace_id=workspace_id, status=StreamEvent.Status.QUEUED)
    if limit is not None:
        return qs.order_by()[:limit].count()
    return qs.count()


# the oldest queued event's id of each workspace, as a process last probed it: (monotonic time, the id, or the
# next id the sequence gives where none was queued). Events arrive with higher ids, so an older floor only makes
# the bound looser, never too low; it is probed again after ``_FLOOR_TTL_S``
_FLOOR_TTL_S = 1.0
_floors: dict[tuple[str, int], tuple[float, int]] = {}


def queued_bound(workspace_id: int) -> int:
    """An upper bound on the workspace's queued events, in a few index probes whatever the backlog: the ids from
    its oldest queued event to the newest event of any workspace (every queued event's id lies in that range).
    Exact on SQLite (a count). Intake counts the backlog only when this bound reaches the limit, so a stream that
    keeps up pays a probe per partition a second and the newest id per request, not a count of its backlog.

    The oldest queued event is probed at most once a second per process (``_FLOOR_TTL_S``); between probes the
    bound grows with every id allocated since. A probe walks the queue index from the head of each partition,
    where the events applied and deleted leave dead entries until a vacuum or a later scan clears them; while
    another consumer's transaction is open they cannot be cleared, and with two consumers each probe took about
    51 ms (10 requests a second: half a core; ``benchmarks/stream_web.md``)."""
    if connection.vendor != "postgresql":
        return stream_backlog(workspace_id)
    key = (connection.settings_dict["NAME"], workspace_id)
    now = time.monotonic()
    with connection.cursor() as cur:
        seen = _floors.get(key)
        if seen is None or now - seen[0] > _FLOOR_TTL_S:
            floor = _probe_floor(cur, workspace_id)
            _floors[key] = (now, floor)
        else:
            floor = seen[1]
        cur.execute("SELECT max(id) FROM monitor_streamevent")
        newest = cur.fetchone()[0] or 0
    return max(newest - floor + 1, 0)


def _probe_floor(cur, workspace_id: int) -> int:
    """The id of the workspace's oldest queued event, or where none is, the next id the sequence gives (the
    newest event may have been applied and deleted)."""
    n = settings.SPREADWATCH_STREAM_PARTITIONS
    oldest = """(SELECT e.id FROM monitor_streamevent e WHERE e.workspace_id = %s AND e.partition {} AND e.status = %s
                 ORDER BY e.id LIMIT 1)"""
    # the oldest queued event of each partition (the consumers' index), and of any partition outside the
    # configured ones (left by an earlier SPREADWATCH_STREAM_PARTITIONS: still queued, still counted)
    cur.execute(
        f"""SELECT min(q.id) FROM (
                SELECT q.id FROM generate_series(0, %s) AS p(n) CROSS JOIN LATERAL {oldest.format("= p.n")} q(id)
                UNION ALL SELECT {oldest.format(">= %s")}
                UNION ALL SELECT COALESCE(pg_sequence_last_value(
                    pg_get_serial_sequence('monitor_streamevent', 'id')::regclass), 0) + 1) q""",
        [n - 1, workspace_id, StreamEvent.Status.QUEUED, workspace_id, n, StreamEvent.Status.QUEUED],
    )
    return int(cur.fetchone()[0] or 1)


def applied_rate(workspace_id: int, *, seconds: int = 60) -> float:
    """Events applied per second over the last ``seconds``: the consumers' counters in Redis, else PostgreSQL."""
    n = channel.counted(workspace_id, "applied", seconds)
    if n is None:  # the arrival counts an apply touched in the window (of events received up to a window before)
        since = timezone.now() - dt.timedelta(seconds=seconds)
        n = (
            StreamArrival.objects.filter(
                workspace_id=workspace_id,
                second__gte=(since - dt.timedelta(seconds=seconds)).replace(microsecond=0),
                applied_at__gte=since,
            ).aggregate(n=Sum("events"))["n"]
            or 0
        )
    return n / seconds


def retry_after_s(workspace_id: int, excess: int) -> int:
    """Seconds until ``excess`` events have been applied at the recent rate: 1 to 300 (5 when nothing was applied
    lately: the consumers may be starting)."""
    rate = applied_rate(workspace_id)
    if rate <= 0:
        return 5
    return max(1, min(300, math.ceil(excess / rate)))


def stream_accept_body(*, workspace: Workspace, body: bytes, source: str = "") -> Accepted:
    return stream_accept(workspace=workspace, lines=body_lines(body), source=source)


def stream_accept(
    *, workspace: Workspace, lines: list[tuple[int, str]], source: str = "", path: str = "body"
) -> Accepted:
    """Check ``lines`` (``(number, text)``), then store them as events in one transaction, or raise (and store
    nothing): :class:`InputError` for a bad line, :class:`Backpressure` when the backlog is full.

    Python's cyclic collector is paused while the lines are read and stored (:mod:`._gc`): a request's decoded
    records otherwise set off full collections of the web process's heap."""
    with collector_paused():
        return _accept(workspace, lines, source, path)


def _accept(workspace: Workspace, lines: list[tuple[int, str]], source: str, path: str) -> Accepted:
    got = read_lines(lines, path=path)
    records = got.records
    acc = Accepted(n_skipped=got.n_skipped)
    if not records:
        return acc
    limit = settings.SPREADWATCH_STREAM_MAX_BACKLOG
    # on PostgreSQL counted only when it may be full (a count of 40,000 queued events took 25-37 ms per request);
    # SQLite's bound would be the count itself, unbounded: it counts once, up to the limit, as before
    backlog = 0
    if connection.vendor != "postgresql" or queued_bound(workspace.pk) >= limit:
        backlog = stream_backlog(workspace.pk, limit=limit + 1)
    if backlog >= limit:
        raise Backpressure(
            backlog=backlog, limit=limit, retry_after=retry_after_s(workspace.pk, backlog - limit + len(records))
        )
    n_parts = settings.SPREADWATCH_STREAM_PARTITIONS
    partitions = [partition_of(r.key, n_parts) for r in records]
    now = timezone.now()
    with transaction.atomic():
        check_unit(workspace, records, lines, path)  # a follower count where the workspace counts retweeters: 400
        ids = _insert(workspace.pk, records, partitions, now, source)
        parts: dict[int, tuple[int, int]] = {}
        for r, p, i in zip(records, partitions, ids):
            first, last = parts.get(p, (i, i))
            parts[p] = (min(first, i), max(last, i))
            acc.by_kind[r.kind] = acc.by_kind.get(r.kind, 0) + 1
        acc.n_events = len(records)
        acc.first_id, acc.last_id = ids[0], ids[-1]
        acc.partitions = parts
        ws_id, n = workspace.pk, len(records)
        transaction.on_commit(lambda: (channel.publish_wakeups(ws_id, parts), channel.count(ws_id, "accepted", n)))
        # the embedded default runs no consumer: the web process applies its records (a no-op elsewhere)
        transaction.on_commit(lambda: in_process.wake(ws_id))
    return acc


def _source(source: str, line: int) -> str:
    s = f"{source}:{line}" if source else f"line {line}"
    return s if len(s) <= 200 else s[:97] + "…" + s[-102:]


def _insert(ws_id: int, records: list[Record], partitions: list[int], now, source: str) -> list[int]:
    """Write the events; their ids, ascending in record order."""
    queued = StreamEvent.Status.QUEUED
    if connection.vendor == "postgresql":
        table = StreamEvent._meta.db_table
        with connection.cursor() as cur:
            # ids first, so COPY can write them and the caller knows them in line order
            ids = reserve_ids(cur, table, len(records)).tolist()
            cols = (
                "id, workspace_id, partition, kind, cascade_key, body, rows, source, received_at, status, attempts, "
                "error"
            )
            at, nul, q = now.isoformat(), "\\N", str(queued.value)
            text = "".join(
                f"{i}\t{ws_id}\t{p}\t{r.kind}\t{nul if r.cascade_key is None else r.cascade_key}\t"
                f"{copy_text(r.body)}\t{nul if r.rows is None else copy_text(r.rows)}\t"
                f"{copy_text(_source(source, r.line))}\t{at}\t{q}\t0\t\n"
                for i, r, p in zip(ids, records, partitions)
            )
            with cur.cursor.copy(f"COPY {table} ({cols}) FROM STDIN") as cp:
                cp.write(text)
        return ids
    rows = StreamEvent.objects.bulk_create(
        [
            StreamEvent(
                workspace_id=ws_id,
                partition=p,
                kind=r.kind,
                cascade_key=r.cascade_key,
                body=r.body,
                rows=r.rows,
                source=_source(source, r.line),
                received_at=now,
                status=queued,
            )
            for r, p in zip(records, partitions)
        ]
    )
    if rows and rows[0].pk is None:  # a backend that does not return ids: they are the last ones written
        last = list(
            StreamEvent.objects.filter(workspace_id=ws_id).order_by("-pk").values_list("pk", flat=True)[: len(rows)]
        )
        return sorted(last)
    return [r.pk for r in rows]
