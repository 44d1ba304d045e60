"""Spreadwatch's data model: what every algorithm shares (workspaces, accounts, tweets, the follower graph,
collections, compute runs). Each algorithm's result tables are a module of their own beside this one.

Everything an analyst uploads, and everything computed from it, belongs to one :class:`Workspace`; accounts
are per workspace too, so two teams never see each other's data, not even screen names. Twitter ids are
64-bit snowflakes (< 2**63) stored as ``bigint`` and shown as strings in the API (JavaScript loses digits
past 2**53).

Writes go through ``monitor.services``, reads through ``monitor.selectors``. The big tables (retweets,
follows, follower counts, given edges, per-cascade influence, daily aggregates) are loaded with set-based SQL
(PostgreSQL COPY into staging tables, then ``INSERT ... SELECT ... ON CONFLICT``), so their invariants live in
database constraints (unique keys, checks), not in ``save()``. Their foreign keys are *not* database
constraints (``db_constraint=False``): PostgreSQL checks each one with a per-row trigger at commit, which cost
~50 s of a 1M-retweet import, while the loader only ever inserts ids it has just joined from the referenced
table in the same transaction. Deleting goes through ``services.workspace_purge`` (set-based, in dependency
order). Foreign-key indexes that a composite unique key already covers are dropped (``db_index=False``).
Index names say which query they serve.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from ..algorithm_registry import choices as algorithm_choices
from ..numbers import account_display


def bulk_fk(to, *, index: bool = False, on_delete=models.CASCADE, **kw) -> models.ForeignKey:
    """A foreign key of a bulk-loaded table: no database constraint (see the module docstring) and, unless
    ``index``, no index of its own (a composite unique key or named index covers it)."""
    return models.ForeignKey(to, on_delete=on_delete, db_constraint=False, db_index=index, **kw)


def new_token() -> str:
    """A value never used before (128 random bits as hex)."""
    return uuid.uuid4().hex


WORKSPACE_UNITS = [
    ("", "not fixed yet (no tweets)"),
    ("followers", "followers reached"),
    ("retweeters", "retweeters reached"),
]


class Workspace(models.Model):
    """A team. Owns collections, accounts and everything derived from them."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=60, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # bumped in the transaction of every write that changes what the cached reads return (monitor/cache.py): the
    # read cache's key, kept in PostgreSQL so that a bump made while Redis is down is not lost
    data_version = models.BigIntegerField(default=0)
    # a new value in the transaction of every write to the workspace's follows (the import's merge, a purge): the
    # follower graph's files and the graphs processes keep are per token (monitor/graph_files.py). Never
    # reused, even by a write that rolls back, so a graph read inside such a transaction is never taken for
    # the committed one
    follows_token = models.CharField(max_length=32, default=new_token, editable=False)
    # what every cascade's reach counts, fixed by the first tweets stored or streamed in (carrying follower counts:
    # followers; none: retweeters) and never changed by later data (monitor/services/units.py); "" until then
    unit = models.CharField(max_length=12, blank=True, default="", choices=WORKSPACE_UNITS)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="workspaces")
    # cost budgets (monitor/services/budgets.py): empty = the deployment's default (SPREADWATCH_BUDGET_*,
    # SPREADWATCH_MAX_RUNS_IN_FLIGHT); set per workspace by an admin
    budget_run_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="longest estimated worker time of one run, in seconds (empty: the default)"
    )
    budget_run_memory_mb = models.PositiveIntegerField(
        null=True, blank=True, help_text="largest estimated peak memory of one batch, in MB (empty: the default)"
    )
    max_runs_in_flight = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="runs queued to workers at once; the rest wait (empty: the default)"
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """A user's access to a workspace. Owners may manage members; analysts upload, compute and read."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        ANALYST = "analyst", "Analyst"

    #: the roles that may invite, change roles and remove members (monitor/services/workspaces.py)
    MANAGER_ROLES = (Role.OWNER,)

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANALYST)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="membership_unique_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"


class Invitation(models.Model):
    """An invitation to join a workspace, sent to an e-mail address that has no account yet (or whose owner
    prefers the link). The link's token is the capability: only its SHA-256 is stored; it is single use
    (``accepted_at``), expires (``expires_at``) and can be revoked by the workspace's owners."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Membership.Role.choices, default=Membership.Role.ANALYST)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.email} to {self.workspace}"

    def problem(self, now) -> str:
        """Why this invitation can no longer be accepted at ``now``, or "" if it can."""
        if self.accepted_at is not None:
            return "this invitation has been used already; ask the workspace's owner for a new one"
        if self.revoked_at is not None:
            return "this invitation was withdrawn by the workspace's owner"
        if self.expires_at <= now:
            return (
                f"this invitation expired on {self.expires_at:%Y-%m-%d %H:%M} UTC; ask the workspace's owner for a "
                "new one"
            )
        return ""


class Account(models.Model):
    """A Twitter account as seen in one workspace's data."""

    # bulk-loaded by the merge like the tables above (no constraint: its check per row at commit took 1.1 s of a
    # 1M-retweet import's 429K accounts; no index of its own: the unique key leads with the workspace)
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, related_name="accounts", db_constraint=False, db_index=False
    )
    twitter_id = models.BigIntegerField(help_text="Twitter user id (snowflake)")
    screen_name = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "twitter_id"], name="account_unique_twitter_id"),
        ]
        # no index on screen_name: search matches names case-insensitively (UPPER(screen_name) LIKE ...), which a
        # btree over the column cannot serve, and every rename wrote an entry into it (migration 0021)

    def __str__(self) -> str:
        return account_display(self.twitter_id, self.screen_name)


class FollowerCount(models.Model):
    """A snapshot of an account's follower count; the count embedded in every tweet is one. ``workspace`` is the
    account's. On PostgreSQL the table is partitioned by workspace, as the follows and retweets are
    (``monitor/partitions.py``)."""

    workspace = bulk_fk(Workspace, related_name="+")
    account = bulk_fk(Account, related_name="follower_counts")
    observed_at = models.DateTimeField()
    count = models.BigIntegerField()
    collection = bulk_fk("Collection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "observed_at"], name="followercount_unique_snapshot"),
            models.CheckConstraint(condition=Q(count__gte=0), name="followercount_not_negative"),
        ]


class Follow(models.Model):
    """``follower`` follows ``followee``: tweets flow followee -> follower. ``collection`` is where the edge
    was first seen. On PostgreSQL the table is partitioned by workspace and each partition holds the pair's
    unique index, none on ``id`` (``monitor/partitions.py``): the import's merge creates a workspace's partition
    before its first follows; code that writes rows another way into a workspace without follows calls
    ``partitions.create`` first."""

    workspace = bulk_fk(Workspace, related_name="+")
    follower = bulk_fk(Account, related_name="+")
    followee = bulk_fk(Account, related_name="+")
    collection = bulk_fk("Collection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [
            # also the index of the compute batch's "follows among these participants" query
            models.UniqueConstraint(fields=["follower", "followee"], name="follow_unique_pair"),
            models.CheckConstraint(condition=~Q(follower=F("followee")), name="follow_not_self"),
        ]


class Publisher(models.Model):
    """An account whose tweets the workspace monitors. Every author of an uploaded original becomes one."""

    # written by the merge with the tweets; no database constraints (the module's docstring): for every account a
    # purge deleted, PostgreSQL checked at commit that no publisher named it (2.2 s of purging a 1M-retweet workspace)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="publishers", db_constraint=False)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    monitored = models.BooleanField(default=True, help_text="shown on the overview")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "account"], name="publisher_unique_account")]

    def __str__(self) -> str:
        return str(self.account)


class Label(models.TextChoices):
    """Truth label of a tweet (Twitter15/16's four, plus unknown)."""

    FALSE = "false", "False"
    TRUE = "true", "True"
    UNVERIFIED = "unverified", "Unverified"
    NON_RUMOR = "non-rumor", "Non-rumor"
    UNKNOWN = "unknown", "Unknown"


class Tweet(models.Model):
    """An original tweet: the publisher's post and the root of one cascade."""

    class GraphSource(models.TextChoices):
        FOLLOWS = "follows", "Rebuilt from the follower graph"
        GIVEN = "given", "Spreading graph given by the input"

    class ComputeStatus(models.TextChoices):
        PENDING = "pending", "Not computed"
        COMPUTED = "computed", "Computed"
        REJECTED = "rejected", "Rejected (cycle without times)"

    # bulk-loaded by the merge, so no database constraints on its foreign keys either (the module's docstring): at
    # commit PostgreSQL checked all four for every tweet written (4.8 s of a 10M-retweet import's 270K tweets) and,
    # for every account a purge deleted, that no tweet named it (half of the 4.3 s commit of purging a 1M-retweet
    # workspace; the publishers' check below the other half)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="tweets", db_constraint=False)
    tweet_id = models.BigIntegerField(help_text="Twitter status id")
    author = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="tweets", db_constraint=False)
    created_at = models.DateTimeField()
    text = models.TextField(blank=True, default="")
    # the tweet's entities, as the readers give them (``compute.tables.TweetTable``): what the claim search reads
    hashtags = models.TextField(blank=True, default="", help_text="hashtags, lowercased, without '#', space-separated")
    urls = models.TextField(blank=True, default="", help_text="linked URLs, expanded, space-separated")
    domains = models.TextField(
        blank=True, default="", help_text="the URLs' hosts and their parent domains, without 'www.', space-separated"
    )
    label = models.CharField(max_length=16, choices=Label.choices, default=Label.UNKNOWN)
    author_followers = models.FloatField(null=True, blank=True, help_text="author's follower count at tweet time")
    graph_source = models.CharField(max_length=8, choices=GraphSource.choices, default=GraphSource.FOLLOWS)
    times_known = models.BooleanField(default=True, help_text="false for given graphs without times (TUDataset)")
    collection = models.ForeignKey(
        "Collection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+", db_constraint=False
    )
    # written by the compute service
    compute_status = models.CharField(max_length=10, choices=ComputeStatus.choices, default=ComputeStatus.PENDING)
    n_participants = models.IntegerField(default=0)
    n_edges = models.IntegerField(default=0)
    n_orphans = models.IntegerField(default=0)
    reach = models.FloatField(null=True, blank=True, help_text="the publisher's influence: audience reached")
    unit = models.CharField(max_length=12, default="followers")
    computed_at = models.DateTimeField(null=True, blank=True)
    # no index: nothing reads tweets by run, and an indexed column the compute writes would make every batch's
    # update of its tweets a non-HOT one, new entries in each of the table's indexes, the search's GIN among them
    # (migration 0036: with the table's fillfactor, 0.49-0.92 s -> 83-111 ms for 27K tweets, benchmarks/data_layer.md)
    compute_run = models.ForeignKey(
        "ComputeRun",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
        db_constraint=False,
    )

    #: what a compute writes into its tweets (none of them indexed, so that its update is made in place: HOT)
    OUTCOME_FIELDS = (
        "compute_status",
        "n_participants",
        "n_edges",
        "n_orphans",
        "reach",
        "unit",
        "computed_at",
        "compute_run",
    )

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "tweet_id"], name="tweet_unique_status_id")]
        indexes = [
            models.Index(fields=["workspace", "author", "created_at"], name="tweet_by_publisher_time"),
            models.Index(fields=["workspace", "created_at"], name="tweet_by_time"),
        ]

    def __str__(self) -> str:
        return str(self.tweet_id)


class Retweet(models.Model):
    """A retweet of ``tweet`` by ``retweeter``: one per user and tweet, the earliest kept (docs/measure.md).
    ``workspace`` is the tweet's. On PostgreSQL the table is partitioned by workspace and each partition holds the
    indexes (``monitor/partitions.py``): the import's merge creates a workspace's partition before its first
    retweets; code that writes rows another way into a workspace without retweets calls ``partitions.create``
    first."""

    workspace = bulk_fk(Workspace, related_name="+")
    tweet = bulk_fk(Tweet, related_name="retweets")
    retweeter = bulk_fk(Account, related_name="retweets")
    retweet_id = models.BigIntegerField(null=True, blank=True, help_text="the retweet's own status id")
    created_at = models.DateTimeField()
    followers_count = models.FloatField(null=True, blank=True, help_text="retweeter's follower count then")
    collection = bulk_fk("Collection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tweet", "retweeter"], name="retweet_one_per_user")]
        indexes = [models.Index(fields=["retweeter"], name="retweet_by_account")]


class GivenEdge(models.Model):
    """A spreading edge given directly by the input (TUDataset, spreading-graph archive): ``dst`` receives
    ``src``'s share. Only tweets with ``graph_source="given"`` have them."""

    tweet = bulk_fk(Tweet, related_name="given_edges")
    src = bulk_fk(Account, related_name="+", index=True)
    dst = bulk_fk(Account, related_name="+", index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tweet", "src", "dst"], name="givenedge_unique")]


class Collection(models.Model):
    """One upload: its files, how it was read, what it brought and what went wrong."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        INGESTING = "ingesting", "Importing"
        COMPUTING = "computing", "Computing"
        DONE = "done", "Done"
        VALIDATED = "validated", "Validated (nothing stored)"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled (nothing stored)"

    class Mode(models.TextChoices):
        STRICT = "strict", "Strict: any bad record stores nothing"
        SKIP_BAD = "skip-bad", "Skip bad records and report them"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="collections")
    name = models.CharField(max_length=200)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    format = models.CharField(max_length=16, blank=True, default="", help_text="detected format(s)")
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.STRICT)
    validate_only = models.BooleanField(default=False)
    compute = models.BooleanField(default=True, help_text="compute the touched cascades after the import")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    counts = models.JSONField(default=dict, blank=True, help_text="records read, stored and set aside")
    report = models.JSONField(default=dict, blank=True, help_text="validation report: bad records and notes")
    error = models.TextField(blank=True, default="")
    timings = models.JSONField(default=dict, blank=True)
    attempts = models.IntegerField(default=0, help_text="deliveries that started the import (a redelivery adds one)")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"], name="collection_list")]

    def __str__(self) -> str:
        return self.name

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.INGESTING, self.Status.COMPUTING)


class CollectionFile(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="files")
    file = models.FileField(upload_to="uploads/%Y/%m/%d/", max_length=500)
    original_name = models.CharField(max_length=255)
    size = models.BigIntegerField(default=0)
    format = models.CharField(max_length=16, blank=True, default="", help_text="format, detected or given")

    def __str__(self) -> str:
        return self.original_name


class ComputeRun(models.Model):
    """One computation of an algorithm (``monitor.algorithms``) over a set of cascades, split into batches that run
    on the cpu or gpu queue.

    Each batch commits its cascades' rows and the aggregates they touch in one transaction, so whatever state a
    run ends in (done, failed, cancelled) the stored rows are whole batches and the aggregates agree with them.
    A failed or cancelled run can be retried: its unfinished batches are queued again. An analysis run started
    while its workspace already has its limit of runs in flight waits (its batches not sent to workers) until one
    of them ends (``services.runs``)."""

    class Status(models.TextChoices):
        # held back: the workspace has its limit of runs in flight; released, in order, as they end
        WAITING = "waiting", "Waiting for the workspace's earlier runs"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        # stopped by an analyst: the batches that had finished keep their (correct) rows, the rest stored nothing
        CANCELLED = "cancelled", "Cancelled"

    class Aggregate(models.TextChoices):
        TOTAL = "total", "Total"
        MEAN = "mean", "Mean"
        PARTICIPATION = "participation", "Participation mean"

    class Orphans(models.TextChoices):
        STRICT = "strict", "Strict (the thesis): orphans stay isolated"
        ATTACH = "attach", "Attach orphans to the publisher"

    class Backend(models.TextChoices):
        AUTO = "auto", "Auto"
        CPU = "cpu", "CPU"
        GPU = "gpu", "GPU"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="compute_runs")
    collection = models.ForeignKey(
        Collection, on_delete=models.SET_NULL, null=True, blank=True, related_name="compute_runs"
    )
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    # choices from the registry, read when validated: adding an algorithm needs no migration of this field
    algorithm = models.CharField(
        max_length=32, choices=algorithm_choices, default="influence", help_text="what the run computes"
    )
    aggregate = models.CharField(
        max_length=16,
        choices=Aggregate.choices,
        default=Aggregate.TOTAL,
        help_text="the aggregate the run's summary ranks by; the stored sums serve all three",
    )
    orphans = models.CharField(max_length=8, choices=Orphans.choices, default=Orphans.STRICT)
    backend = models.CharField(max_length=4, choices=Backend.choices, default=Backend.AUTO)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    n_batches = models.IntegerField(default=0)
    batches_done = models.IntegerField(default=0)
    n_cascades = models.IntegerField(default=0)
    n_nodes = models.BigIntegerField(default=0)
    n_edges = models.BigIntegerField(default=0)
    params = models.JSONField(
        default=dict, blank=True, help_text="the algorithm's own parameters (seed, sample size...) as it validated them"
    )
    devices = models.JSONField(default=list, blank=True, help_text="where the batches ran")
    timings = models.JSONField(default=dict, blank=True, help_text="seconds per phase, summed over batches")
    notes = models.JSONField(default=list, blank=True)
    estimate = models.JSONField(
        default=dict,
        blank=True,
        help_text="the cost estimated before it was queued (seconds on one CPU worker, peak bytes of a batch, what "
        "drives them, the budget it was held to: monitor.services.budgets)",
    )
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["workspace", "-created_at"], name="computerun_list")]
        constraints = [
            models.CheckConstraint(condition=Q(batches_done__lte=F("n_batches")), name="computerun_done_le_batches")
        ]

    def __str__(self) -> str:
        return f"run {self.pk}"

    @property
    def progress(self) -> float:
        return (
            1.0 if self.status == self.Status.DONE else (self.batches_done / self.n_batches if self.n_batches else 0.0)
        )

    @property
    def is_active(self) -> bool:
        return self.status in (self.Status.WAITING, self.Status.QUEUED, self.Status.RUNNING)

    @property
    def counts_in_flight(self) -> bool:
        """Whether the run counts toward its workspace's runs in flight: every run but an upload's own (an
        upload's influence run is never held back behind the workspace's analyses)."""
        return self.collection_id is None


class ComputeBatch(models.Model):
    """One task's share of a run: a group of cascades (``tweet_pks``: ``Tweet`` primary keys) for the influence
    measure, or, for a graph-wide analysis, the part of the work named in ``params`` (a range of sources, a block
    of seeds...)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled (nothing stored)"

    run = models.ForeignKey(ComputeRun, on_delete=models.CASCADE, related_name="batches")
    index = models.IntegerField()
    tweet_pks = models.JSONField(default=list)
    params = models.JSONField(default=dict, blank=True, help_text="the batch's share of a graph-wide run")
    n_cascades = models.IntegerField(default=0)
    n_nodes = models.BigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    attempts = models.IntegerField(default=0, help_text="deliveries that started it (a redelivery adds one)")
    device = models.CharField(max_length=200, blank=True, default="")
    timings = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="computebatch_unique_index")]
        ordering = ["run", "index"]
        verbose_name_plural = "compute batches"
