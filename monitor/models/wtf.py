"""Who amplifies whom's result tables (``monitor.algorithms.wtf`` writes them, ``monitor.selectors.wtf`` reads
them): one row per seed account and set of parameters, and its two ranked lists.

A result is the latest computation for its key (workspace, seed, direction, circle, top): a recompute with the
same parameters replaces it (and its entries), so a page reads one result per seed and direction without
choosing among runs. It records the run that computed it and the fingerprint of the follower graph it was
computed on; a later run finding the same graph reuses it instead of computing it again (docs/app.md).
The graph's nodes are the workspace's ``Account`` rows (the engine's external ids are their primary keys)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from compute.results import WTF_METHODS

from .core import Account, ComputeRun, Workspace, bulk_fk

#: the walk's directions (docs/wtf.md): ``follows`` walks from an account to the accounts it follows (the paper's
#: who-to-follow; its *similar* accounts are look-alikes), ``followers`` to its followers (its *relevant* accounts
#: are the likely next amplifiers)
DIRECTIONS = ("follows", "followers")


class WtfResult(models.Model):
    """One seed account's circle of trust and Money iteration in one direction, as last computed.

    ``ppr_iterations`` and ``ppr_converged`` say how the personalized PageRank stopped (L1 change < 1e-10, or the
    cap of ``max_iter`` iterations, 100 unless the run asked for another); ``money_iterations`` and
    ``money_converged`` how many hub/authority rounds ran and whether they stopped before that cap; ``circle_size``
    how many accounts the circle of trust holds (at most ``circle``: fewer when the seed reaches fewer). ``in_graph`` is
    false when the seed has no follow edge in the workspace: nothing could be computed and the lists are empty."""

    class Direction(models.TextChoices):
        FOLLOWS = "follows", "Follows (look-alike accounts)"
        FOLLOWERS = "followers", "Followers (likely next amplifiers)"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    run = models.ForeignKey(ComputeRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    seed = bulk_fk(Account, related_name="+")
    direction = models.CharField(max_length=10, choices=Direction.choices)
    circle = models.PositiveIntegerField(help_text="the circle of trust's size asked for (top accounts by PPR)")
    top = models.PositiveIntegerField(help_text="K: accounts kept per list")
    in_graph = models.BooleanField(default=True, help_text="false: the seed has no follow edge in the workspace")
    circle_size = models.PositiveIntegerField(default=0)
    ppr_iterations = models.PositiveIntegerField(default=0)
    ppr_converged = models.BooleanField(default=True)
    money_iterations = models.PositiveIntegerField(default=0)
    money_converged = models.BooleanField(default=True)
    max_iter = models.PositiveIntegerField(default=100, help_text="the iteration cap of PageRank and Money")
    n_nodes = models.BigIntegerField(default=0, help_text="accounts of the follower graph it was computed on")
    n_edges = models.BigIntegerField(default=0, help_text="follows of that graph")
    fingerprint = models.CharField(max_length=64, help_text="sha1 of the follower graph's arrays")
    backend = models.CharField(max_length=4, default="cpu")
    method = models.CharField(
        max_length=8, default="exact", help_text="how the PPR was computed: exact, push, fora or walks (docs/wtf.md)"
    )
    epsilon = models.FloatField(null=True, blank=True, help_text="push and fora: the push threshold per out-edge")
    walks = models.FloatField(
        null=True, blank=True, help_text="fora: random walks per unit of the push's residual; walks: from the seed"
    )
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            # also the index of a seed's results (the account page) and of a publisher's spreaders' results
            models.UniqueConstraint(
                fields=["workspace", "seed", "direction", "circle", "top"], name="wtfresult_unique_params"
            ),
            models.CheckConstraint(condition=Q(direction__in=DIRECTIONS), name="wtfresult_direction"),
            models.CheckConstraint(condition=Q(method__in=WTF_METHODS), name="wtfresult_method"),
            models.CheckConstraint(condition=Q(circle__gte=1, top__gte=1), name="wtfresult_sizes_positive"),
            models.CheckConstraint(condition=Q(circle_size__lte=models.F("circle")), name="wtfresult_circle_le"),
        ]
        indexes = [models.Index(fields=["workspace", "-computed_at"], name="wtfresult_latest")]


class WtfEntry(models.Model):
    """One account of a result's ranked list: ``relevance`` (Money's authorities: accounts to follow in the
    walk's direction) or ``similarity`` (its hubs: accounts that point where the seed does). ``rank`` is 1-based,
    in the engine's order (score descending, then account); ``ppr`` is the account's personalized PageRank from
    the seed (0 outside the circle of trust)."""

    class List(models.TextChoices):
        RELEVANCE = "relevance", "Relevant (authorities)"
        SIMILARITY = "similarity", "Similar (hubs)"

    result = models.ForeignKey(WtfResult, on_delete=models.CASCADE, related_name="entries")
    list = models.CharField(max_length=10, choices=List.choices)
    rank = models.PositiveIntegerField()
    account = bulk_fk(Account, related_name="+", index=True)
    score = models.FloatField()
    ppr = models.FloatField(default=0.0)

    class Meta:
        verbose_name_plural = "WTF entries"
        constraints = [
            # also the index that reads a result's list in order
            models.UniqueConstraint(fields=["result", "list", "rank"], name="wtfentry_unique_rank"),
            models.UniqueConstraint(fields=["result", "list", "account"], name="wtfentry_unique_account"),
            models.CheckConstraint(condition=Q(rank__gte=1), name="wtfentry_rank_positive"),
            models.CheckConstraint(condition=Q(list__in=["relevance", "similarity"]), name="wtfentry_list"),
            models.CheckConstraint(condition=Q(score__gte=0.0, ppr__gte=0.0), name="wtfentry_not_negative"),
        ]
