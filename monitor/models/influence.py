"""The influence measure's result tables (``monitor.algorithms.influence`` writes them, the ranking, account
and cascade selectors read them): per cascade and participant, each cascade's spreading graph, and the daily
aggregates rankings read. Loaded set-based like the big tables of :mod:`.core` (see its docstring)."""

from __future__ import annotations

from django.db import models

from .core import Account, Label, Retweet, Tweet, Workspace, bulk_fk

# tweet ids an account's read names in its statement at most; beyond, they are read by a subquery
_PARTICIPATIONS_INLINE = 50_000


class CascadeInfluenceQuerySet(models.QuerySet):
    def of_accounts(self, account_ids, workspace: int | None = None) -> models.QuerySet:
        """The rows of these accounts (an account, ids, or a queryset of accounts), found through the cascades they
        took part in. ``workspace``: the accounts' workspace where the caller knows it (an account gives its own),
        so that their retweets are read from its partition alone (``monitor/partitions.py``).

        The table has no index that leads with the account: one cost about a third of writing its rows (58 ms of
        174 per 20,000 rows written, benchmarks/stream_web.md), and every compute run and stream micro-batch
        writes them. An account has a row only in the cascades it published or retweeted (the participants of a
        cascade are its publisher and its retweeters; given spreading graphs may name no one else), so its rows
        are those tweets' rows, each one probe of the (tweet, account) key.

        The tweets are read first (one query, by ``retweet_by_account`` and the author index) and named in the
        returned queryset's statement, so the planner knows how few probes it makes whatever its statistics say:
        given them as a subquery, with the retweets' statistics stale, it read an account's 45 retweets as 1,192
        and scanned the whole per-cascade table instead. More than ``_PARTICIPATIONS_INLINE`` tweets are left to
        a subquery."""
        if isinstance(account_ids, models.QuerySet):  # of accounts
            ids = list(account_ids.values_list("pk", flat=True))
        elif isinstance(account_ids, (int, models.Model)):
            ids = [getattr(account_ids, "pk", account_ids)]
            workspace = getattr(account_ids, "workspace_id", workspace)
        else:
            ids = [getattr(a, "pk", a) for a in account_ids]
        # the retweets' partition of the accounts' workspace where it is known (monitor/partitions.py), every
        # workspace's otherwise
        retweets = Retweet.objects.filter(workspace=workspace) if workspace is not None else Retweet.objects.all()
        took_part = (
            retweets.filter(retweeter_id__in=ids)
            .values_list("tweet_id", flat=True)
            .union(Tweet.objects.filter(author_id__in=ids).values_list("id", flat=True))
        )
        tweets = list(took_part[: _PARTICIPATIONS_INLINE + 1])
        # and the per-cascade rows from the workspace's partition alone, where it is known
        rows = self.filter(workspace_id=workspace) if workspace is not None else self
        if len(tweets) > _PARTICIPATIONS_INLINE:
            return rows.filter(account_id__in=ids, tweet_id__in=took_part)
        return rows.filter(account_id__in=ids, tweet_id__in=tweets)


class CascadeInfluence(models.Model):
    """I_t(v): the audience ``account`` helped ``tweet`` reach. ``publisher``, ``day`` (the tweet's UTC day)
    and ``label`` (its truth label) are copied from the tweet so the daily aggregates refresh with one GROUP
    BY. An account's rows are read with :meth:`CascadeInfluenceQuerySet.of_accounts` (no index leads with the
    account)."""

    class Role(models.TextChoices):
        PUBLISHER = "publisher", "Publisher"
        SPREADER = "spreader", "Retweeter that passed it on"
        LEAF = "leaf", "Retweeter nobody saw it from"
        ORPHAN = "orphan", "Retweeter not reached through the follower graph"

    # the tweet's workspace: on PostgreSQL the table is partitioned by it (``monitor/partitions.py``, migration 0048)
    workspace = bulk_fk(Workspace, related_name="+")
    tweet = bulk_fk(Tweet, related_name="influence")
    account = bulk_fk(Account, related_name="+")
    publisher = bulk_fk(Account, related_name="+")
    day = models.DateField()
    label = models.CharField(max_length=16, choices=Label.choices, default=Label.UNKNOWN)
    influence = models.FloatField()
    followers = models.FloatField(help_text="n_v used by the backward phase")
    role = models.CharField(max_length=10, choices=Role.choices)

    objects = CascadeInfluenceQuerySet.as_manager()

    class Meta:
        # the unique key is the only index: every compute run and stream micro-batch writes these rows, and each
        # index more costs every write (migration 0023). An account's rows are read through the cascades it took
        # part in (``CascadeInfluenceQuerySet.of_accounts``), a publisher's and a day's through its tweets. On
        # PostgreSQL not even ``id`` has one (migration 0044): rows are found by this key, never by ``id``; and
        # the key is one index per workspace's partition (migration 0048), which a workspace's first run builds
        # once its rows are in
        constraints = [models.UniqueConstraint(fields=["tweet", "account"], name="cascadeinfluence_unique")]


class CascadeGraph(models.Model):
    """The spreading graph of one computed cascade, as the backward phase used it: edge ``(src, dst)`` means
    ``src`` could have seen the tweet from ``dst`` and passed its share to it (the thesis' ``(v, u)``, docs/measure.md).

    One row per tweet, the edges packed as little-endian int64 ``Account`` primary keys ``src0, dst0, src1,
    dst1, ...``: 1M retweets make ~1.7M edges, which as rows would cost more to write than the rest of a
    batch's results; as 27K blobs they cost almost nothing, and every reader wants a whole cascade anyway.
    Rejected cascades (cycles without times) have none."""

    tweet = models.OneToOneField(
        Tweet, on_delete=models.CASCADE, primary_key=True, db_constraint=False, related_name="graph"
    )
    n_edges = models.IntegerField()
    edges = models.BinaryField()

    def edge_arrays(self):
        import numpy as np

        a = np.frombuffer(bytes(self.edges), dtype="<i8").astype(np.int64)
        return a[0::2], a[1::2]


class DailyInfluence(models.Model):
    """Σ_t I_t(v) and T_v over the computed tweets of one publisher, with one truth label, on one UTC day:
    what rankings read (a label filter is a WHERE, not a recomputation)."""

    workspace = bulk_fk(Workspace, related_name="+")
    publisher = bulk_fk(Account, related_name="+")
    account = bulk_fk(Account, related_name="+")
    day = models.DateField()
    label = models.CharField(max_length=16, choices=Label.choices, default=Label.UNKNOWN)
    influence = models.FloatField()
    cascades = models.IntegerField(help_text="T_v: the day's tweets the account took part in")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "publisher", "day", "label", "account"], name="daily_unique"),
        ]
        # no index leading with the account: an account's page reads its per-cascade rows (``of_accounts``);
        # one here cost a third of every aggregate refresh (random inserts into a 1M-entry B-tree, issue 20). On
        # PostgreSQL ``id`` has no index (migration 0044): rows are found by the unique key, never by ``id``
        indexes = [models.Index(fields=["workspace", "day"], name="daily_for_workspace_ranking")]


class PublisherDay(models.Model):
    """T: how many computed tweets with one truth label a publisher posted on a UTC day (the denominator of
    ``mean``), and their summed reach."""

    workspace = bulk_fk(Workspace, related_name="+")
    publisher = bulk_fk(Account, related_name="+")
    day = models.DateField()
    label = models.CharField(max_length=16, choices=Label.choices, default=Label.UNKNOWN)
    tweets = models.IntegerField()
    reach = models.FloatField(default=0.0, help_text="Σ of the tweets' reach")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "publisher", "day", "label"], name="publisherday_unique")
        ]
