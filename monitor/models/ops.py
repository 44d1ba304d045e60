"""The models of running the service rather than of its data: heartbeats of the work a worker holds, the
outbox of tasks the broker refused, API tokens, and notices for an analyst.

* :class:`Lease` — a worker holding a compute batch or an import beats its heartbeat here every few seconds
  (``monitor.services.recovery``). A periodic task re-queues work whose heartbeat stopped. A table of its own,
  not a column of the batch or the collection: an import holds its collection's row lock for its whole
  transaction and a batch holds its row lock while it stores, and a heartbeat must not wait for either.
* :class:`OutboxTask` — a task that could not be sent because the broker was unreachable (``monitor.jobs``);
  a periodic task sends it once the broker is back, so nothing committed waits forever.
* :class:`ApiToken` — a REST API credential: only a hash of the key is stored, it expires, it may be limited
  to one workspace, and it stops working when its user's password changes.
* :class:`Notice` — something an analyst must know that no alert rule covers (their run or import failed for
  good after its workers kept dying): shown on every page of the workspace until dismissed.
* :class:`DerivedRowsMark` — one row in an unlogged table beside the engine's unlogged derived rows: PostgreSQL
  empties them all together after a crash, so a missing mark says the results must be computed again
  (``monitor.services.derived_rows``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from .core import Workspace


class Lease(models.Model):
    """Who holds a piece of work, and when it last said so."""

    class Kind(models.TextChoices):
        BATCH = "batch", "Compute batch"
        IMPORT = "import", "Import"

    kind = models.CharField(max_length=8, choices=Kind.choices)
    object_id = models.BigIntegerField(help_text="the ComputeBatch or Collection primary key")
    holder = models.CharField(max_length=200, help_text="host:pid of the worker process")
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField(help_text="last heartbeat")
    # PostgreSQL: the session the work's transaction runs on, named for sure by its pid and start time. A worker
    # killed while another process keeps its socket (a forked child) leaves that session open, holding the work's
    # locks: the sweep ends it once the heartbeat is stale (monitor.services.recovery)
    backend_pid = models.IntegerField(null=True, blank=True, help_text="pg_backend_pid() of the work's session")
    backend_started_at = models.DateTimeField(
        null=True, blank=True, help_text="when that session started (pg_stat_activity.backend_start)"
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "object_id"], name="lease_unique_work")]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id} held by {self.holder}"


class OutboxTask(models.Model):
    """A task (registered name and integer arguments) whose sending failed; deleted once it is sent."""

    name = models.CharField(max_length=200)
    args = models.JSONField(default=list)
    error = models.TextField(blank=True, default="", help_text="why the broker refused it, the last time")
    attempts = models.IntegerField(default=1, help_text="tries to send it")
    created_at = models.DateTimeField(auto_now_add=True)
    last_tried_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.name}{tuple(self.args)}"


class ApiToken(models.Model):
    """A REST API token. ``key_hash`` is SHA-256 of the key, which is shown once when the token is created."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True, default="")
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8, help_text="the key's first characters, to tell tokens apart")
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, null=True, blank=True, related_name="+", help_text="empty: every one"
    )
    # the user's session hash (which covers the password hash) when the token was made: a password change or
    # reset makes it differ, and the token stops working (the same rule that logs out the user's sessions)
    auth_hash = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


class Notice(models.Model):
    """A message for one user in one workspace, shown until they dismiss it."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    message = models.TextField()
    url = models.CharField(max_length=300, blank=True, default="", help_text="the page it is about")
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "user", "read_at"], name="notice_unread")]
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.message[:80]


class DerivedRowsMark(models.Model):
    """One row, in an UNLOGGED table on PostgreSQL (migration 0043), as the per-cascade influence, the spreading
    graphs and the daily aggregates are: crash recovery (or a restore from a base backup, which leaves unlogged
    tables out) empties every unlogged table, so a missing row says those results are gone
    (``monitor.services.derived_rows``). Never written but by the migration and that recovery."""

    class Meta:
        verbose_name = "derived rows mark"
