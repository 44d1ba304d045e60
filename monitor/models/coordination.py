"""Coordinated accounts' result tables (``monitor.algorithms.coordination`` writes them,
``monitor.selectors.coordination`` reads them): per run a summary, its edges in the engine's order, its clusters
with what their members share, and each member's place in its cluster.

Every row belongs to one compute run of the ``coordination`` algorithm, so a new run never mixes with an older
one: pages read the latest finished run of a workspace (or collection) and method. Accounts are the workspace's
``Account`` rows; the engine compared them by their Twitter ids (as strings, docs/coordination.md), so the edges'
``a``/``b`` and their order are those of ``python -m compute coordination`` on the same retweets."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from .core import Account, ComputeRun, bulk_fk


class CoordinationSummary(models.Model):
    """What one coordination run compared and found: the accounts and original tweets compared, the pairs counted
    before the cut (the cost), the edges and clusters, and the engine that ran."""

    run = models.OneToOneField(
        ComputeRun, on_delete=models.CASCADE, primary_key=True, related_name="coordination_summary"
    )
    method = models.CharField(max_length=16, help_text="co-retweet or similarity")
    accounts = models.BigIntegerField(help_text="accounts the method compared")
    tweets = models.BigIntegerField(help_text="original tweets retweeted")
    pairs = models.BigIntegerField(help_text="pairs counted before the cut (within the window, or sharing a tweet)")
    n_edges = models.BigIntegerField()
    n_clusters = models.IntegerField()
    backend = models.CharField(max_length=8, help_text="the engine that computed it: cpu or gpu")
    notes = models.JSONField(default=list, blank=True)

    class Meta:
        verbose_name_plural = "coordination summaries"
        constraints = [
            models.CheckConstraint(
                condition=Q(accounts__gte=0, tweets__gte=0, pairs__gte=0, n_edges__gte=0, n_clusters__gte=0),
                name="coordinationsummary_counts_not_negative",
            ),
        ]


class CoordinationEdge(models.Model):
    """Two coordinated accounts, ``a < b`` as Twitter id strings; ``weight`` the co-retweet count or the cosine;
    ``position`` the row's place in the engine's order (weight descending, then ``a``, then ``b`` as strings),
    from 0."""

    run = bulk_fk(ComputeRun, related_name="+")
    position = models.BigIntegerField()
    a = bulk_fk(Account, related_name="+")
    b = bulk_fk(Account, related_name="+")
    weight = models.FloatField()
    cluster = models.IntegerField(help_text="1 = the largest")

    class Meta:
        constraints = [
            # also the index of the edges in order, and of a page of them
            models.UniqueConstraint(fields=["run", "position"], name="coordinationedge_unique_position"),
            models.CheckConstraint(condition=Q(weight__gt=0.0, cluster__gte=1), name="coordinationedge_valid"),
            models.CheckConstraint(condition=~Q(a=models.F("b")), name="coordinationedge_not_self"),
        ]
        indexes = [models.Index(fields=["run", "cluster", "position"], name="coordination_cluster_edges")]


class CoordinationCluster(models.Model):
    """One cluster (a connected component of the edges) of a run: its size, edges, mean weight; the original
    tweets at least two members retweeted (``shared_tweets``), when their members' retweets of them fell
    (``first_at``, ``last_at``) and how far apart (the median over those tweets of the seconds between the first
    and the last member's retweet), the ``top_tweets`` most shared ``[[tweet pk, members], ...]``, the publishers
    of the shared tweets ``[[account pk, shared tweets], ...]`` (most first) and the members' retweets of the shared
    tweets per UTC hour ``[["YYYY-MM-DDTHH", retweets], ...]``."""

    run = bulk_fk(ComputeRun, related_name="+")
    cluster = models.IntegerField(help_text="1 = the largest")
    size = models.IntegerField()
    edges = models.BigIntegerField()
    mean_weight = models.FloatField()
    shared_tweets = models.IntegerField()
    first_at = models.DateTimeField(null=True, blank=True)
    last_at = models.DateTimeField(null=True, blank=True)
    spread_median_s = models.FloatField(null=True, blank=True)
    top_tweets = models.JSONField(default=list, blank=True)
    publishers = models.JSONField(default=list, blank=True)
    timeline = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "cluster"], name="coordinationcluster_unique"),
            models.CheckConstraint(
                condition=Q(cluster__gte=1, size__gte=2, edges__gte=1, shared_tweets__gte=0),
                name="coordinationcluster_valid",
            ),
        ]


class CoordinationMember(models.Model):
    """An account of a run's cluster: how many edges it has in the run (``degree``) and how many of the cluster's
    shared tweets it retweeted."""

    run = bulk_fk(ComputeRun, related_name="+")
    account = bulk_fk(Account, related_name="+", index=True)
    cluster = models.IntegerField()
    degree = models.IntegerField()
    shared_retweets = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "account"], name="coordinationmember_unique"),
            models.CheckConstraint(condition=Q(cluster__gte=1, degree__gte=1), name="coordinationmember_valid"),
        ]
        indexes = [models.Index(fields=["run", "cluster", "-degree", "account"], name="coordination_members")]
