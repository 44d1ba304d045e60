"""The counter-campaign planner's result tables (``monitor.algorithms.influence_max`` writes them,
``monitor.selectors.influence_max`` reads them): per run its outcome and the chosen accounts, and, while an IMM
run's batches are going, the reverse-reachable sets each batch sampled.

Every row belongs to one compute run of the ``influence_max`` algorithm, so a new plan never mixes with an older
one: the planner page of a publisher reads that publisher's newest finished run. Accounts are the workspace's
``Account`` rows (the engine's external ids are their primary keys)."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from .core import Account, ComputeRun, bulk_fk


class InfluenceMaxResult(models.Model):
    """What one run found for a publisher's audience (docs/influence_max.md).

    The graph is the publisher's *audience*: every account that can see what the publisher posts through the
    follower graph (its followers, their followers, ...), the publisher itself left out, with influence flowing
    followee -> follower under the Independent Cascade model whose edge probabilities ``model`` names.
    ``spread`` is the joint expected reach of the chosen accounts (in ``unit``: accounts, or their followers) from
    an independent Monte-Carlo evaluation of ``evaluate_runs`` cascades, with its 95 % interval; ``estimate`` is
    the method's own estimate of the same (the RR-set coverage for IMM) and ``curve`` its estimate for the first
    1, 2, ... K accounts. ``baseline`` is the same evaluation of the publisher's top spreaders by the influence
    measure (as many as were chosen): accounts, spread and interval, overlap with the chosen ones."""

    run = models.OneToOneField(
        ComputeRun, on_delete=models.CASCADE, primary_key=True, related_name="influence_max_result"
    )
    publisher = bulk_fk(Account, related_name="+")
    method = models.CharField(max_length=16, help_text="imm, imgpu, degree, influence or random")
    k = models.IntegerField(help_text="accounts asked for")
    model = models.CharField(max_length=16, help_text="uniform, wc or estimated")
    model_description = models.CharField(max_length=200, blank=True, default="")
    unit = models.CharField(max_length=16, default="accounts", help_text="what the spread counts")
    n_nodes = models.BigIntegerField(help_text="accounts in the publisher's audience")
    n_edges = models.BigIntegerField(help_text="follow edges among them")
    total_weight = models.FloatField(help_text="the whole audience in the spread's unit")
    estimated = models.JSONField(default=dict, blank=True, help_text="the estimator's prior, strength and counts")
    spread = models.FloatField(help_text="Monte-Carlo mean of the chosen accounts' joint reach")
    spread_std = models.FloatField(default=0.0, help_text="standard deviation of one cascade's reach")
    spread_ci_low = models.FloatField()
    spread_ci_high = models.FloatField()
    evaluate_runs = models.IntegerField()
    estimate = models.FloatField(help_text="the method's own estimate of the joint reach")
    curve = models.JSONField(default=list, help_text="the method's estimate for the first 1, 2, ... accounts")
    rr_sets = models.BigIntegerField(default=0, help_text="RR sets behind the gains (IMM: theta)")
    sampling_rr_sets = models.BigIntegerField(default=0, help_text="RR sets of IMM's sampling phase")
    lower_bound = models.FloatField(null=True, blank=True, help_text="IMM's lower bound of the optimum")
    snapshots = models.IntegerField(default=0, help_text="live-edge snapshots (imgpu)")
    edges_touched = models.BigIntegerField(default=0, help_text="edges examined while sampling the RR sets")
    baseline = models.JSONField(default=dict, blank=True, help_text="the top spreaders by influence, evaluated")
    notes = models.JSONField(default=list, blank=True)
    fingerprint = models.CharField(max_length=64, help_text="the model the run computed (sha1 of its arrays)")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(k__gte=1), name="imresult_k_positive"),
            models.CheckConstraint(
                condition=Q(n_nodes__gte=0, n_edges__gte=0, evaluate_runs__gte=1, rr_sets__gte=0),
                name="imresult_counts_not_negative",
            ),
            models.CheckConstraint(
                condition=Q(spread_ci_low__lte=F("spread"), spread__lte=F("spread_ci_high"), spread__gte=0.0),
                name="imresult_spread_in_its_interval",
            ),
            models.CheckConstraint(
                condition=Q(method__in=["imm", "imgpu", "degree", "influence", "random"]), name="imresult_method"
            ),
            models.CheckConstraint(condition=Q(model__in=["uniform", "wc", "estimated"]), name="imresult_model"),
        ]


class InfluenceMaxSeed(models.Model):
    """One chosen account of a run, in the order the method chose it: its marginal gain (the reach it adds to
    the accounts chosen before it, the method's estimate), the estimate of the first ``rank`` accounts together,
    its rank among the publisher's spreaders by the influence measure, the publisher itself left out (null: it
    never spread the publisher), and whether it is among the baseline's top spreaders."""

    run = bulk_fk(ComputeRun, related_name="+")
    rank = models.IntegerField()
    account = bulk_fk(Account, related_name="+")
    gain = models.FloatField()
    cumulative = models.FloatField()
    influence_rank = models.IntegerField(null=True, blank=True)
    in_baseline = models.BooleanField(default=False)

    class Meta:
        constraints = [
            # also the index of a run's seeds in order
            models.UniqueConstraint(fields=["run", "rank"], name="imseed_unique_rank"),
            models.UniqueConstraint(fields=["run", "account"], name="imseed_unique_account"),
            models.CheckConstraint(condition=Q(rank__gte=1), name="imseed_rank_positive"),
            models.CheckConstraint(
                condition=Q(influence_rank__isnull=True) | Q(influence_rank__gte=1), name="imseed_influence_rank"
            ),
        ]


class InfluenceMaxPartial(models.Model):
    """The RR sets one batch of an IMM run sampled (indices ``start`` to ``stop``, ``compute.algorithms.
    influence_max.RRSets.to_bytes``) and what IMM's sampling phase said (``facts``: theta, lower bound...). The
    run's last batch merges the parts, chooses the accounts and deletes them."""

    run = bulk_fk(ComputeRun, related_name="+")
    part = models.IntegerField()
    start = models.BigIntegerField()
    stop = models.BigIntegerField()
    edges_touched = models.BigIntegerField(default=0)
    facts = models.JSONField(default=dict)
    sets = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "part"], name="impartial_unique_part"),
            models.CheckConstraint(
                condition=Q(part__gte=0, start__gte=0, stop__gte=F("start")), name="impartial_range"
            ),
        ]
