"""The registry of alert rule kinds: every kind, its label and the parameters it reads, in one list.

Everything else derives from :data:`KINDS` and :data:`PARAMS`: the model's ``AlertRule.Kind`` choices and its
parameter fields' help, the editable fields of ``services.rule_update``, the API serializer's fields, the rule
form's parameter fields and "used by" notes, and ``rules.EVALUATORS`` (the evaluator of a kind is the function
of :mod:`monitor.alerts.rules` named like the kind's value). Adding a kind touches this list and its evaluator
(docs/adding-an-alert-rule.md).

This module imports no model: ``models`` reads it to build its choices, so it must not read ``models``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Param:
    """A parameter of a rule: a field of ``AlertRule`` that one or more kinds read."""

    name: str  # the AlertRule field
    help: str  # what the form shows under the field
    field_help: str  # the model field's help_text (as the migrations have it)
    label: str | None = None  # the form's label (None: Django's, from the name)
    minimum: float | None = None  # the form's lowest value (None: no bound; choices have none)


@dataclass(frozen=True)
class Kind:
    """A kind of rule: its value (stored in ``AlertRule.kind``, and the name of its evaluator in
    :mod:`monitor.alerts.rules`), its label and the parameters its evaluator reads."""

    value: str
    label: str
    params: tuple[str, ...]
    claim: bool = False  # the rule follows a claim (``AlertRule.claim``, required) instead of a publisher

    @property
    def constant(self) -> str:
        """The name of its ``AlertRule.Kind`` member (``TOP_K``)."""
        return self.value.upper()


#: every parameter field, in the order the form and the API show them
PARAMS: tuple[Param, ...] = (
    Param(
        "k",
        "Enters the top K: alert when an account enters the top K of the ranking.",
        "top_k: the top K",
        label="K",
        minimum=1,
    ),
    Param(
        "threshold",
        "Influence threshold: alert when an account's score over the window exceeds it.",
        "influence_threshold: alert when the score exceeds it",
        minimum=0,
    ),
    Param(
        "places",
        "Rank rise: alert when an account's rank rises by at least this many places between two windows.",
        "rank_rise: alert when the rank rises this much",
        minimum=1,
    ),
    Param(
        "reach",
        "Cascade reach: alert when a new cascade of the publisher reaches more than this.",
        "cascade_reach: alert when a cascade's reach exceeds it",
        minimum=0,
    ),
    Param(
        "count",
        "False spreader: alert when an account spreads at least this many false-labelled cascades.",
        "false_spreader: at least this many false cascades",
        minimum=1,
    ),
    Param(
        "members",
        "Coordinated cluster: alert when a new cluster of at least this many accounts retweets the publisher's tweets "
        "together (co-retweet within 60 s, at least 2 tweets).",
        "coordinated_cluster: at least this many accounts",
        label="Cluster size",
        minimum=2,
    ),
    Param(
        "window_days",
        "Every kind: the rolling window, in UTC days of data (ending at the newest day with data).",
        "the rolling window, in UTC days of data",
        label="Window (days)",
        minimum=1,
    ),
    Param("aggregate", "Top K, threshold and rank rise: the ranking's aggregate.", ""),
)

#: every kind, in the order of the choices
KINDS: tuple[Kind, ...] = (
    Kind("top_k", "Enters the top K", ("k", "window_days", "aggregate")),
    Kind("influence_threshold", "Influence exceeds a threshold", ("threshold", "window_days", "aggregate")),
    Kind("rank_rise", "Rank rises by at least N places", ("places", "window_days", "aggregate")),
    Kind("cascade_reach", "A new cascade reaches more than R", ("reach", "window_days")),
    Kind("false_spreader", "Spreads cascades labelled false", ("count", "window_days")),
    Kind(
        "watchlist_spreader",
        "An account on the publisher's watch list starts spreading it",
        ("window_days",),
    ),
    Kind("coordinated_cluster", "A new coordinated cluster spreads the publisher", ("members", "window_days")),
    Kind("claim_tracked_spreader", "A tracked account spreads a claim", ("window_days",), claim=True),
    Kind("claim_reach_doubles", "A claim's daily reach doubles", ("window_days",), claim=True),
)

#: the kind the publisher page's watch list subscribes to with one button (``frontend.views.wtf``)
WATCHLIST_KIND = "watchlist_spreader"

PARAM_NAMES: tuple[str, ...] = tuple(p.name for p in PARAMS)
PARAMS_BY_NAME: dict[str, Param] = {p.name: p for p in PARAMS}
KINDS_BY_VALUE: dict[str, Kind] = {k.value: k for k in KINDS}
#: the kinds that follow a claim (their rules name one)
CLAIM_KINDS: frozenset[str] = frozenset(k.value for k in KINDS if k.claim)
#: the kind a claim page's "Set up an alert" link selects first
CLAIM_KIND_DEFAULT: str = next(k.value for k in KINDS if k.claim)
#: which parameters each kind reads
KIND_PARAMS: dict[str, tuple[str, ...]] = {k.value: k.params for k in KINDS}


def kinds_reading(param: str) -> list[Kind]:
    """The kinds whose evaluator reads ``param``."""
    return [k for k in KINDS if param in k.params]
