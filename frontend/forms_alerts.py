"""The alert rule form: kind, scope (a publisher of the workspace, or any), the kind's parameters, channels."""

from __future__ import annotations

from django import forms

from monitor.alerts.models import AlertRule
from monitor.models import Account, ComputeRun, Publisher

#: which parameters each kind reads (the form shows the others too without JavaScript, marked as unused)
KIND_PARAMS: dict[str, tuple[str, ...]] = {
    AlertRule.Kind.TOP_K: ("k", "window_days", "aggregate"),
    AlertRule.Kind.INFLUENCE_THRESHOLD: ("threshold", "window_days", "aggregate"),
    AlertRule.Kind.RANK_RISE: ("places", "window_days", "aggregate"),
    AlertRule.Kind.CASCADE_REACH: ("reach", "window_days"),
    AlertRule.Kind.FALSE_SPREADER: ("count", "window_days"),
}
PARAMS = ("k", "threshold", "places", "reach", "count", "window_days", "aggregate")

HELP = {
    "k": "Enters the top K: alert when an account enters the top K of the ranking.",
    "threshold": "Influence threshold: alert when an account's score over the window exceeds it.",
    "places": "Rank rise: alert when an account's rank rises by at least this many places between two windows.",
    "reach": "Cascade reach: alert when a new cascade of the publisher reaches more than this.",
    "count": "False spreader: alert when an account spreads at least this many false-labelled cascades.",
    "window_days": "Every kind: the rolling window, in UTC days of data (ending at the newest day with data).",
    "aggregate": "Top K, threshold and rank rise: the ranking's aggregate.",
}


class AlertRuleForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=AlertRule.Kind.choices)
    publisher = forms.ChoiceField(
        required=False, help_text="Rank within one publisher's cascades, or over every publisher of the workspace."
    )
    k = forms.IntegerField(label="K", min_value=1, initial=10, help_text=HELP["k"])
    threshold = forms.FloatField(min_value=0, initial=0.0, help_text=HELP["threshold"])
    places = forms.IntegerField(min_value=1, initial=5, help_text=HELP["places"])
    reach = forms.FloatField(min_value=0, initial=0.0, help_text=HELP["reach"])
    count = forms.IntegerField(min_value=1, initial=1, help_text=HELP["count"])
    window_days = forms.IntegerField(label="Window (days)", min_value=1, initial=7, help_text=HELP["window_days"])
    aggregate = forms.ChoiceField(choices=ComputeRun.Aggregate.choices, initial="total", help_text=HELP["aggregate"])
    inbox = forms.BooleanField(required=False, initial=True, label="In-app inbox")
    email = forms.BooleanField(required=False, label="Email me")
    webhook_url = forms.URLField(
        required=False,
        max_length=500,
        label="Webhook URL",
        assume_scheme="https",
        help_text="Each alert is POSTed as JSON signed with HMAC-SHA256 (X-Spreadwatch-Signature).",
    )

    def __init__(self, *args, workspace, **kwargs):
        super().__init__(*args, **kwargs)
        self.workspace = workspace
        pubs = (
            Publisher.objects.filter(workspace=workspace)
            .select_related("account")
            .order_by("account__screen_name", "account__twitter_id")
        )
        self.fields["publisher"].choices = [("", "Any publisher")] + [
            (str(a.twitter_id), f"@{a.screen_name}" if a.screen_name else str(a.twitter_id))
            for a in (p.account for p in pubs)
        ]

    @classmethod
    def initial_for(cls, rule: AlertRule) -> dict:
        d = {f: getattr(rule, f) for f in ("name", "kind", *PARAMS, "inbox", "email", "webhook_url")}
        d["publisher"] = str(rule.publisher.twitter_id) if rule.publisher_id else ""
        return d

    def clean_publisher(self) -> Account | None:
        raw = self.cleaned_data.get("publisher")
        if not raw:
            return None
        acc = Account.objects.filter(workspace=self.workspace, twitter_id=int(raw)).first()
        if acc is None:
            raise forms.ValidationError("Not a publisher of this workspace.")
        return acc

    def clean(self):
        d = super().clean()
        if d and not (d.get("inbox") or d.get("email") or d.get("webhook_url")):
            raise forms.ValidationError("Choose at least one channel: inbox, email or a webhook URL.")
        return d

    def rule_fields(self) -> dict:
        """Keyword arguments for ``rule_create`` / ``rule_update``."""
        d = self.cleaned_data
        return {f: d[f] for f in ("name", "kind", "publisher", *PARAMS, "inbox", "email")} | {
            "webhook_url": d.get("webhook_url") or ""
        }

    def param_rows(self):
        """(bound field, the kinds that read it) for the template."""
        labels = dict(AlertRule.Kind.choices)
        for name in PARAMS:
            kinds = [k for k, ps in KIND_PARAMS.items() if name in ps]
            yield self[name], " ".join(kinds), ", ".join(str(labels[k]) for k in kinds)
