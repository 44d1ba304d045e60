"""The live stream (issue 17): what arrives through ``POST /api/v1/stream/`` or ``manage.py follow_stream`` and
the credentials that may append to it.

A record is *accepted* once its :class:`StreamEvent` row is committed: PostgreSQL is the durable queue, and
Redis Streams only carry the wake-ups that partition the work between consumers (a consumer that dies leaves
its events ``queued``; they are claimed again, and applying an event twice changes nothing). Events are
partitioned by cascade (the original tweet's id), so one cascade is always applied by one consumer in arrival
order; follows go to every partition's consumer through the apply step (see ``monitor/services/stream``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .core import Workspace, bulk_fk


class StreamToken(models.Model):
    """A workspace's append-only stream credential: it may add records to this workspace's stream and nothing
    else (no reads, no other workspace). ``key_hash`` is SHA-256 of the key, shown once at creation."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="stream_tokens")
    name = models.CharField(max_length=100, blank=True, default="")
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=12, help_text="the key's first characters, to tell tokens apart")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.workspace})"


class StreamEvent(models.Model):
    """One accepted stream record (one NDJSON line, or one line of a followed file), kept as received.

    ``partition`` is chosen at intake from the cascade key (see the module docstring); ``cascade_key`` is the
    original tweet's status id (for an original, its own; for a retweet, the retweeted one; null for a
    follow). ``status``: ``queued`` until a consumer applies it; ``waiting`` for a retweet whose original has
    not arrived (until ``wait_until``); ``dead`` with ``error`` when it can never apply (a retweet whose
    original never came, a record that cannot be read); ``applied`` only for an event applied *with a note*
    in ``error`` (a row of it the merge left out).

    **An event applied cleanly is deleted** in the transaction that applies it: what it carried is stored in
    the workspace from then on (its tweet, retweet, follow, follower count), and the Live page's arrival counts
    are kept per second in :class:`StreamArrival`. So this table holds the backlog, the waiting retweets and
    the dead letters, not the stream's whole history: kept, the bodies grew it by ~5 MB/s at 10,000 events/s,
    and rewriting each ~550-byte row to mark it applied cost 124-252 ms per 10,000 events against 28-67 ms
    for the delete (benchmarks/stream_web.md)."""

    class Kind(models.TextChoices):
        TWEET = "tweet", "Original tweet"
        RETWEET = "retweet", "Retweet"
        FOLLOW = "follow", "Follow"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        WAITING = "waiting", "Waiting for its original"
        APPLIED = "applied", "Applied"
        DEAD = "dead", "Dead letter"

    workspace = bulk_fk(Workspace, related_name="+")
    partition = models.SmallIntegerField(default=0)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    cascade_key = models.BigIntegerField(null=True, blank=True)
    body = models.TextField(help_text="the record as received (one JSON object)")
    rows = models.TextField(
        null=True,
        blank=True,
        help_text="the tweet rows the intake read from the body, so the consumer does not read it again "
        "(monitor.services.stream._rows); null for follows, the tweets CSV's fields and older events",
    )
    source = models.CharField(max_length=200, blank=True, default="", help_text="token name or file, and line")
    received_at = models.DateTimeField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    attempts = models.SmallIntegerField(default=0)
    wait_until = models.DateTimeField(null=True, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [
            # a consumer's next micro-batch: its partition's queued events in arrival order. Only the open
            # events (queued, waiting) are in it: it stays the size of the backlog, not of the stream's whole
            # history, and marking an event applied or dead writes no entry into it
            models.Index(
                fields=["workspace", "partition", "status", "id"],
                name="streamevent_next",
                condition=models.Q(status__in=["queued", "waiting"]),
            ),
            models.Index(fields=["workspace", "status", "received_at"], name="streamevent_health"),
        ]


class StreamArrival(models.Model):
    """The applied stream events of one cascade that arrived in one second: what the Live page counts ("the
    cascades growing now", "rising spreaders") once the events themselves are deleted (see
    :class:`StreamEvent`).

    ``second`` is the events' ``received_at`` truncated to the second (arrival time, not the tweets' own
    times); ``cascade_key`` the original tweet's status id (0 for events of no cascade: follows). Written by the
    apply step in the transaction that applies the events (one upsert per micro-batch: a micro-batch of 10,000
    events makes about a thousand rows), and pruned there once older than ``KEEP_SECONDS``."""

    KEEP_SECONDS = 2 * 3600  # the Live page looks back one hour at most

    workspace = bulk_fk(Workspace, related_name="+")
    cascade_key = models.BigIntegerField()
    second = models.DateTimeField()
    events = models.IntegerField(help_text="events of this cascade received in this second and applied")
    retweets = models.IntegerField(help_text="of which retweets")
    applied_at = models.DateTimeField(help_text="when the last of them was applied")

    class Meta:
        constraints = [
            # the upsert's key; by workspace and time it also serves the Live page's window and the pruning
            models.UniqueConstraint(fields=["workspace", "second", "cascade_key"], name="streamarrival_unique"),
        ]
