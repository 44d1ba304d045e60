"""The influence measure's result tables (``monitor.algorithms.influence`` writes them, the ranking, account
and cascade selectors read them): per cascade and participant, each cascade's spreading graph, and the daily
aggregates rankings read. Loaded set-based like the big tables of :mod:`.core` (see its docstring)."""

from __future__ import annotations

from django.db import models

from .core import Account, Label, Tweet, Workspace, bulk_fk


class CascadeInfluence(models.Model):
    """I_t(v): the audience ``account`` helped ``tweet`` reach. ``publisher``, ``day`` (the tweet's UTC day)
    and ``label`` (its truth label) are copied from the tweet so the daily aggregates refresh with one GROUP
    BY."""

    class Role(models.TextChoices):
        PUBLISHER = "publisher", "Publisher"
        SPREADER = "spreader", "Retweeter that passed it on"
        LEAF = "leaf", "Retweeter nobody saw it from"
        ORPHAN = "orphan", "Retweeter not reached through the follower graph"

    tweet = bulk_fk(Tweet, related_name="influence")
    account = bulk_fk(Account, related_name="+")
    publisher = bulk_fk(Account, related_name="+")
    day = models.DateField()
    label = models.CharField(max_length=16, choices=Label.choices, default=Label.UNKNOWN)
    influence = models.FloatField()
    followers = models.FloatField(help_text="n_v used by the backward phase")
    role = models.CharField(max_length=10, choices=Role.choices)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tweet", "account"], name="cascadeinfluence_unique")]
        indexes = [
            models.Index(fields=["account"], name="influence_by_account"),
            models.Index(fields=["publisher", "day"], name="influence_for_refresh"),
        ]


class CascadeGraph(models.Model):
    """The spreading graph of one computed cascade, as the backward phase used it: edge ``(src, dst)`` means
    ``src`` could have seen the tweet from ``dst`` and passed its share to it (DESIGN §1's ``(v, u)``).

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
        # no index leading with the account: an account's page reads its per-cascade rows (``influence_by_account``);
        # one here cost a third of every aggregate refresh (random inserts into a 1M-entry B-tree, issue 20)
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
