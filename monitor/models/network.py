"""Network analytics' result tables (``monitor.algorithms.network`` writes them, ``monitor.selectors.network``
reads them): per run and account, per run a summary, and the betweenness partial vectors of a run whose sources
are split across batches.

Every row belongs to one compute run of the ``network`` algorithm, so a new run never mixes with an older one:
pages read the latest finished run of a workspace (or collection) and graph kind. The graph's nodes are the
workspace's ``Account`` rows (the engine's external ids are their primary keys), so the per-account table joins
the influence rankings directly."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from .core import Account, ComputeRun, bulk_fk


class NetworkAccount(models.Model):
    """One account's numbers in one network run's graph. Degrees count distinct neighbours of the directed graph
    (follower -> followee, or retweeter -> retweeted author); components number 0 for the largest; core,
    clustering, triangles and betweenness are on the undirected view, as networkx defines them
    (``betweenness``: ``normalized=False``, sampled runs hold the unbiased estimate; null until the run's last
    batch adds the partial sums up). ``conversation_degree`` counts the accounts it interacts with both ways;
    ``conversation_component`` is its component in the conversation graph (null: it is not in that graph)."""

    run = bulk_fk(ComputeRun, related_name="+")
    account = bulk_fk(Account, related_name="+")
    in_degree = models.BigIntegerField()
    out_degree = models.BigIntegerField()
    component = models.IntegerField(help_text="weakly connected component, 0 = the largest")
    strong_component = models.IntegerField(help_text="strongly connected component, 0 = the largest")
    core = models.IntegerField(help_text="core number on the undirected view")
    clustering = models.FloatField(help_text="local clustering coefficient on the undirected view")
    triangles = models.BigIntegerField()
    betweenness = models.FloatField(null=True, blank=True)
    conversation_degree = models.BigIntegerField(default=0)
    conversation_component = models.IntegerField(null=True, blank=True)
    community = models.IntegerField(
        null=True, blank=True, help_text="modularity community, 1 = the largest (null: the run found none)"
    )

    class Meta:
        constraints = [
            # also the index of a run's rows and of an account's row in a run (the neighbourhood's numbers)
            models.UniqueConstraint(fields=["run", "account"], name="networkaccount_unique"),
            models.CheckConstraint(
                condition=Q(in_degree__gte=0, out_degree__gte=0, triangles__gte=0, conversation_degree__gte=0),
                name="networkaccount_counts_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(component__gte=0, strong_component__gte=0, core__gte=0),
                name="networkaccount_numbers_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(clustering__gte=0.0, clustering__lte=1.0), name="networkaccount_clustering_in_0_1"
            ),
            models.CheckConstraint(
                condition=Q(betweenness__isnull=True) | Q(betweenness__gte=0.0),
                name="networkaccount_betweenness_not_negative",
            ),
        ]
        indexes = [
            models.Index(fields=["run", "-betweenness", "account"], name="network_brokers"),
            models.Index(fields=["run", "component", "account"], name="network_component_members"),
            models.Index(fields=["run", "-core", "account"], name="network_by_core"),
            models.Index(fields=["run", "community", "account"], name="network_community_members"),
        ]


class NetworkSummary(models.Model):
    """What one network run found of the graph as a whole: sizes, the component-size distributions, degree
    statistics with log-binned histograms, the k-core shells, transitivity, how much the conversation filter
    shrank the graph (and the conversation graph's edges, packed like ``CascadeGraph``'s: little-endian int64
    ``Account`` pks ``u0, v0, u1, v1, ...`` with u < v, and their weights), the betweenness sampling and its
    stability indicator, and notes. Written by the run's structural batch; ``betweenness`` is completed by the
    run's last batch."""

    run = models.OneToOneField(ComputeRun, on_delete=models.CASCADE, primary_key=True, related_name="network_summary")
    graph = models.CharField(max_length=16, help_text="follows or interactions")
    n_nodes = models.BigIntegerField()
    n_edges = models.BigIntegerField(help_text="directed edges (distinct pairs, self loops included)")
    n_undirected_edges = models.BigIntegerField(help_text="edges of the undirected simple view")
    components = models.JSONField(default=dict, help_text="weak components: count, largest sizes, size distribution")
    strong_components = models.JSONField(default=dict)
    degrees = models.JSONField(default=dict, help_text="in / out: mean, variance, max, histogram, log bins")
    cores = models.JSONField(default=dict, help_text="max core and the shells: [[k, accounts], ...]")
    transitivity = models.FloatField(default=0.0)
    average_clustering = models.FloatField(default=0.0)
    conversations = models.JSONField(default=dict, help_text="nodes and edges before and after, component sizes")
    conversation_edges = models.BinaryField(default=b"")
    conversation_weights = models.BinaryField(default=b"", help_text="float64 per conversation edge (interactions)")
    betweenness = models.JSONField(default=dict, help_text="exact or sampled, sources, scale, notes")
    stability = models.JSONField(default=dict, help_text="top 1 % / top 5 % overlap of two independent samples")
    communities = models.JSONField(
        default=dict,
        blank=True,
        help_text="count, modularity, resolution, seed, the largest with their modularity terms; empty: none found",
    )
    notes = models.JSONField(default=list, blank=True)
    fingerprint = models.CharField(max_length=64, help_text="the graph the run computed (sha1 of its arrays)")

    class Meta:
        verbose_name_plural = "network summaries"
        constraints = [
            models.CheckConstraint(
                condition=Q(n_nodes__gte=0, n_edges__gte=0, n_undirected_edges__gte=0),
                name="networksummary_sizes_not_negative",
            ),
            models.CheckConstraint(condition=Q(graph__in=["follows", "interactions"]), name="networksummary_graph"),
        ]

    def conversation_arrays(self):
        """The conversation graph's edges as ``(u, v, weight)`` arrays of Account pks (weight: float64)."""
        import numpy as np

        pairs = np.frombuffer(bytes(self.conversation_edges), dtype="<i8").astype(np.int64)
        weights = np.frombuffer(bytes(self.conversation_weights), dtype="<f8").astype(np.float64)
        if len(weights) != len(pairs) // 2:
            weights = np.ones(len(pairs) // 2)
        return pairs[0::2], pairs[1::2], weights


class NetworkPartial(models.Model):
    """One block of a run's betweenness sources (``compute.graphs.SOURCE_BLOCK`` of them): its contribution per
    node as a little-endian float64 vector in the run's node order (the graph's ids ascending). The run's last
    batch adds the blocks in block order, which gives bitwise the same values as one worker computing every
    block, and deletes them."""

    run = bulk_fk(ComputeRun, related_name="+")
    block = models.IntegerField()
    values = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "block"], name="networkpartial_unique_block"),
            models.CheckConstraint(condition=Q(block__gte=0), name="networkpartial_block_not_negative"),
        ]
