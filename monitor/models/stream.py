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
    not arrived (until ``wait_until``); ``applied``; ``dead`` with ``error`` when it can never apply (a
    retweet whose original never came, a record that cannot be read)."""

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
