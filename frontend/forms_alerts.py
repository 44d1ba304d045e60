"""The alert rule form: kind, scope (a publisher of the workspace, or any; a claim for the claim kinds), the kind's
parameters, channels."""

from __future__ import annotations

from django import forms
from django.db import models

from monitor.alerts.kinds import CLAIM_KINDS, PARAM_NAMES, PARAMS, Param, kinds_reading
from monitor.alerts.models import AlertRule
from monitor.models import Account, Claim, Publisher


def _param_field(param: Param) -> forms.Field:
    """The form field of one rule parameter (``monitor.alerts.kinds.PARAMS``), typed like its model field."""
    field = AlertRule._meta.get_field(param.name)
    common = {"initial": field.default, "help_text": param.help}
    if param.label is not None:
        common["label"] = param.label
    if field.choices:
        return forms.ChoiceField(choices=field.choices, **common)
    if isinstance(field, models.FloatField):
        return forms.FloatField(min_value=param.minimum, **common)
    return forms.IntegerField(min_value=param.minimum, **common)


#: one form field per parameter, derived from the registry (a base class, so they are declared fields)
_ParamFields = type("_ParamFields", (forms.Form,), {p.name: _param_field(p) for p in PARAMS})


class AlertRuleForm(_ParamFields):
    """The rule form; the kind's parameters come from ``monitor.alerts.kinds`` (see ``_ParamFields``)."""

    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=AlertRule.Kind.choices)
    publisher = forms.ChoiceField(
        required=False,
        help_text="Rank within one publisher's cascades, or over every publisher of the workspace. "
        "Type a screen name or an id in the box above the list to narrow it.",
        # picker.js adds a filter box: a workspace may have hundreds of publishers
        widget=forms.Select(attrs={"data-searchable": "publishers"}),
    )
    claim = forms.ChoiceField(
        required=False,
        help_text="The claim a claim rule follows (its saved search); the other kinds leave it out.",
    )
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
            (str(a.twitter_id), f"@{a.screen_name} ({a.twitter_id})" if a.screen_name else str(a.twitter_id))
            for a in (p.account for p in pubs)
        ]
        self.fields["claim"].choices = [("", "No claim")] + [
            (str(c.pk), c.name) for c in Claim.objects.filter(workspace=workspace).order_by("name", "pk")
        ]

    @classmethod
    def initial_for(cls, rule: AlertRule) -> dict:
        d = {f: getattr(rule, f) for f in ("name", "kind", *PARAM_NAMES, "inbox", "email", "webhook_url")}
        d["publisher"] = str(rule.publisher.twitter_id) if rule.publisher_id else ""
        d["claim"] = str(rule.claim_id) if rule.claim_id else ""
        return d

    def clean_claim(self) -> Claim | None:
        raw = self.cleaned_data.get("claim")
        if not raw:
            return None
        claim = Claim.objects.filter(workspace=self.workspace, pk=int(raw)).first()
        if claim is None:
            raise forms.ValidationError("Not a claim of this workspace.")
        return claim

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
        if d and d.get("kind") in CLAIM_KINDS and not d.get("claim") and "claim" not in self.errors:
            self.add_error("claim", "Choose the claim this rule follows.")
        if d and d.get("kind") not in CLAIM_KINDS:
            d["claim"] = None  # only the claim kinds read it
        return d

    def rule_fields(self) -> dict:
        """Keyword arguments for ``rule_create`` / ``rule_update``."""
        d = self.cleaned_data
        return {f: d[f] for f in ("name", "kind", "publisher", "claim", *PARAM_NAMES, "inbox", "email")} | {
            "webhook_url": d.get("webhook_url") or ""
        }

    def param_rows(self):
        """(bound field, the kinds that read it) for the template."""
        for name in PARAM_NAMES:
            kinds = kinds_reading(name)
            yield self[name], " ".join(k.value for k in kinds), ", ".join(k.label for k in kinds)
