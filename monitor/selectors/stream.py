"""Reads of the live stream: its state per workspace (backlog, lag, waiting, dead letters, rates, consumers), what
the Live page shows (the cascades growing now, the rising spreaders), the stream tokens, and ``/healthz``'s
summary of every workspace's stream.

**"Now" is arrival time.** A retweet's own ``created_at`` is the tweet's time, which a replay, a late record or
a clock far away can put anywhere; the Live page is about what *arrives*, so "growing now" counts the retweet
events *received* in the window that are already applied (visible in the rankings); their tweet times are not
used. Applied events are deleted as they are applied; their arrivals are counted per cascade and second in
``StreamArrival`` (kept two hours), which these reads sum. **Rising spreaders**: the influence (I_t) accounts
hold in the cascades that received stream retweets in the last hour, summed; no history of influence is kept,
so for a cascade older than the hour this includes what the account had gained before it (docs/live.md).
"""

from __future__ import annotations

import datetime as dt

from django.db import DatabaseError, connection
from django.db.models import Count, Min, Sum
from django.utils import timezone

from ..models import Account, CascadeInfluence, StreamArrival, StreamEvent, StreamToken, Tweet, Workspace
from ..services.stream import channel, in_process
from ..services.stream.consumer import PRESENCE_SPACE

__all__ = [
    "consumers_running",
    "stream_applier",
    "stream_state",
    "stream_health",
    "cascades_growing",
    "rising_spreaders",
    "stream_tokens",
    "live_page",
]

S = StreamEvent.Status


def _rate(ws_id: int, seconds: int, now) -> float:
    """Accepted records per second over the last ``seconds``: Redis counters, else counted in PostgreSQL."""
    n = channel.counted(ws_id, "accepted", seconds)
    if n is None:
        # an applied event is deleted and counted in StreamArrival instead (one applied with a note is both: it
        # is counted there only); the others (queued, waiting, dead) are still rows
        since = now - dt.timedelta(seconds=seconds)
        open_or_dead = (S.QUEUED, S.WAITING, S.DEAD)
        n = StreamEvent.objects.filter(workspace_id=ws_id, received_at__gte=since, status__in=open_or_dead).count()
        arrived = StreamArrival.objects.filter(workspace_id=ws_id, second__gte=since.replace(microsecond=0))
        n += arrived.aggregate(n=Sum("events"))["n"] or 0
    return n / seconds


def consumers_running(ws_id: int, live: list[str] | None = None) -> int | None:
    """How many ``manage.py stream_consume`` processes serve this workspace now: the live names of the Redis
    heartbeats (``live``, read here when not given), else, on PostgreSQL, the sessions holding a consumer's
    presence lock (``consumer.PRESENCE_SPACE``: one per running consumer, of this workspace or of every one);
    None only where neither can say (SQLite without Redis)."""
    if live is None:
        live = channel.live_consumers(ws_id)
    if live is not None:
        return len(live)
    if connection.vendor != "postgresql":
        return None
    try:
        with connection.cursor() as cur:
            cur.execute(
                """SELECT count(DISTINCT pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
                   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND classid = %s::oid AND objid IN (0, %s::oid) AND objsubid = 2""",
                [PRESENCE_SPACE, ws_id],
            )
            return int(cur.fetchone()[0])
    except DatabaseError:
        return None


_COMMAND = "manage.py stream_consume"


def _seg(text: str, code: bool = False) -> dict:
    return {"text": text, "code": code}


def stream_applier(count: int | None) -> dict:
    """Who applies the records, as the Live page says it, given the consumers running (``count``, None: not
    known): ``mode`` (``web``: this web process applies them, the embedded default; ``consumers``; ``none``: no
    consumer runs, records wait; ``unknown``), ``count``, the card's ``value`` and ``label``, and ``note``, a
    sentence as segments ``{"text", "code"}`` (the page sets them as text, never as markup)."""
    src = [_seg("Records arriving through the stream API or "), _seg("follow_stream", True)]
    if in_process.enabled():
        label = "applies the records" if not count else f"applies the records, with {count} consumer(s)"
        note = [*src, _seg(" are applied by this web process as they arrive: no "), _seg(_COMMAND, True),
                _seg(" is needed here.")]  # fmt: skip
        return {"mode": "web", "count": count, "value": "Web process", "label": label, "note": note}
    if count is None:
        note = [_seg("Consumers cannot be counted here (no Redis to hear them): records are applied only while "),
                _seg(_COMMAND, True), _seg(" runs.")]  # fmt: skip
        return {"mode": "unknown", "count": None, "value": "Not counted", "label": "consumers (no Redis)", "note": note}
    if count == 0:
        note = [_seg("No consumer is running: records wait, queued, until one is started with "),
                _seg(_COMMAND, True), _seg(".")]  # fmt: skip
        return {"mode": "none", "count": 0, "value": "0", "label": "consumers running", "note": note}
    plural = "consumer" if count == 1 else "consumers"
    note = [*src, _seg(f" are applied by {count} running {plural} ("), _seg(_COMMAND, True), _seg(").")]
    return {"mode": "consumers", "count": count, "value": str(count), "label": "consumers running", "note": note}


def stream_state(ws: Workspace | int) -> dict:
    """The stream of one workspace: ``backlog`` (queued), ``waiting``, ``dead``, ``lag_s`` (age of the oldest
    queued event; 0 when none), ``rate_1m`` / ``rate_10m`` (accepted per second), ``applied_1m`` (applied per
    second), ``consumers`` (live names, or None when Redis cannot say), ``consumers_running`` (their number,
    counted on PostgreSQL when Redis cannot say: :func:`consumers_running`) and ``applier`` (who applies the
    records: :func:`stream_applier`)."""
    ws_id = ws if isinstance(ws, int) else ws.pk
    now = timezone.now()
    qs = StreamEvent.objects.filter(workspace_id=ws_id, status__in=(S.QUEUED, S.WAITING, S.DEAD))
    counts = dict(qs.values_list("status").annotate(n=Count("pk")).values_list("status", "n"))
    oldest = (
        StreamEvent.objects.filter(workspace_id=ws_id, status=S.QUEUED).aggregate(t=Min("received_at"))["t"]
        if counts.get(S.QUEUED)
        else None
    )
    applied = channel.counted(ws_id, "applied", 60)
    live = channel.live_consumers(ws_id)
    running = consumers_running(ws_id, live)
    return {
        "backlog": counts.get(S.QUEUED, 0),
        "waiting": counts.get(S.WAITING, 0),
        "dead": counts.get(S.DEAD, 0),
        "lag_s": round((now - oldest).total_seconds(), 1) if oldest else 0.0,
        "rate_1m": round(_rate(ws_id, 60, now), 1),
        "rate_10m": round(_rate(ws_id, 600, now), 1),
        "applied_1m": None if applied is None else round(applied / 60, 1),
        "consumers": live,
        "consumers_running": running,
        "applier": stream_applier(running),
    }


def stream_health() -> dict:
    """``/healthz``'s ``stream``: per workspace id (numbers only, no names), the workspaces with anything queued,
    waiting or dead."""
    busy = (
        StreamEvent.objects.filter(status__in=(S.QUEUED, S.WAITING, S.DEAD))
        .values_list("workspace_id", flat=True)
        .distinct()
    )
    out = {}
    for ws_id in sorted(busy):
        st = stream_state(ws_id)
        out[str(ws_id)] = {
            "backlog": st["backlog"],
            "lag_s": st["lag_s"],
            "waiting": st["waiting"],
            "dead": st["dead"],
            "consumers": st["consumers_running"],
        }
    return out


def _arrived(ws: Workspace, window: dt.timedelta):
    """The per-second arrival counts of retweets received within ``window`` and applied (a count's second is
    that of its events' arrival, truncated: the window's first second counts whole)."""
    since = (timezone.now() - window).replace(microsecond=0)
    return StreamArrival.objects.filter(workspace=ws, second__gte=since, retweets__gt=0)


def cascades_growing(ws: Workspace, *, minutes: int = 10, limit: int = 10) -> list[dict]:
    """The cascades with the most retweets *received* in the last ``minutes`` and applied: ``tweet_id``,
    ``new`` (those retweets), ``total`` (its retweets stored), ``author`` and ``text`` where the original is
    stored."""
    top = list(
        _arrived(ws, dt.timedelta(minutes=minutes))
        .values("cascade_key")
        .annotate(new=Sum("retweets"))
        .order_by("-new", "cascade_key")[:limit]
    )
    keys = [r["cascade_key"] for r in top]
    tweets = {
        t.tweet_id: t
        for t in Tweet.objects.filter(workspace=ws, tweet_id__in=keys)
        .select_related("author")
        .annotate(n_rt=Count("retweets"))
    }
    out = []
    for r in top:
        t = tweets.get(r["cascade_key"])
        out.append(
            {
                "tweet_id": r["cascade_key"],
                "new": r["new"],
                "total": t.n_rt if t else None,
                "author": (t.author.screen_name or str(t.author.twitter_id)) if t else "",
                "text": (t.text[:140] if t else ""),
                "stored": t is not None,
            }
        )
    return out


def rising_spreaders(ws: Workspace, *, hours: int = 1, limit: int = 10) -> list[dict]:
    """Spreaders ranked by the influence they hold in the cascades that received stream retweets in the last
    ``hours`` (see the module): ``twitter_id``, ``screen_name``, ``influence``, ``cascades``."""
    keys = _arrived(ws, dt.timedelta(hours=hours)).values_list("cascade_key", flat=True).distinct()
    tweets = Tweet.objects.filter(workspace=ws, tweet_id__in=keys).values_list("pk", flat=True)
    rows = list(
        CascadeInfluence.objects.filter(workspace=ws, tweet__in=tweets, role=CascadeInfluence.Role.SPREADER)
        .values("account")
        .annotate(influence=Sum("influence"), cascades=Count("tweet"))
        .filter(influence__gt=0)
        .order_by("-influence", "account")[:limit]
    )
    accounts = {a.pk: a for a in Account.objects.filter(pk__in=[r["account"] for r in rows])}
    return [
        {
            "twitter_id": accounts[r["account"]].twitter_id,
            "screen_name": accounts[r["account"]].screen_name,
            "influence": r["influence"],
            "cascades": r["cascades"],
        }
        for r in rows
        if r["account"] in accounts
    ]


def stream_tokens(ws: Workspace):
    return StreamToken.objects.filter(workspace=ws).select_related("created_by").order_by("-created_at", "-pk")


def live_page(ws: Workspace) -> dict:
    """Everything the Live page shows, in one read (its JSON endpoint returns the same)."""
    return {
        "state": stream_state(ws),
        "growing": cascades_growing(ws),
        "rising": rising_spreaders(ws),
        "dead_recent": list(
            StreamEvent.objects.filter(workspace=ws, status=S.DEAD)
            .order_by("-pk")
            .values("pk", "kind", "cascade_key", "source", "error", "received_at")[:5]
        ),
        "at": timezone.now(),
    }
