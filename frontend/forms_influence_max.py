"""The counter-campaign planner's form: a run's parameters (``monitor.algorithms.influence_max``) and its
backend. The algorithm validates them again (``clean_params``); the form gives the page its fields and errors."""

from __future__ import annotations

from django import forms

from monitor.algorithms.influence_max import BATCHES_MAX, EVALUATE_MAX, K_MAX
from monitor.models import ComputeRun

MODEL_CHOICES = [
    ("uniform", "Uniform p"),
    ("wc", "Weighted cascade"),
    ("estimated", "Estimated from retweets"),
]
METHOD_CHOICES = [
    ("imm", "IMM"),
    ("imgpu", "IMGPU traversal"),
    ("degree", "Most followers"),
    ("influence", "Most influence"),
    ("random", "Random"),
]
METHOD_LABELS = {
    "imm": "IMM",
    "imgpu": "IMGPU's traversal",
    "degree": "most followers",
    "influence": "most influence",
    "random": "random draw",
}
UNIT_CHOICES = [("accounts", "Accounts"), ("followers", "Their followers")]


class CounterCampaignForm(forms.Form):
    """K, the model and its probabilities, the method, and how the run is computed and evaluated."""

    k = forms.IntegerField(
        label="Accounts (K)", min_value=1, max_value=K_MAX, initial=50, help_text="How many accounts to reach."
    )
    model = forms.ChoiceField(
        label="Probabilities",
        choices=MODEL_CHOICES,
        initial="uniform",
        help_text="Weighted cascade: 1 / accounts the follower follows.",
    )
    p = forms.FloatField(
        label="p", min_value=1e-6, max_value=1.0, initial=0.01, required=False, help_text="Uniform only (paper: 0.01)."
    )
    strength = forms.FloatField(
        label="Prior strength",
        min_value=1e-6,
        max_value=1e6,
        initial=20.0,
        required=False,
        help_text="Estimated only: pseudo-exposures of the prior.",
    )
    method = forms.ChoiceField(
        choices=METHOD_CHOICES, initial="imm", help_text="IMM carries the guarantee; the others compare."
    )
    eps = forms.FloatField(
        label="ε", min_value=0.01, max_value=1.0, initial=0.1, help_text="IMM: within 1 − 1/e − ε of the best."
    )
    unit = forms.ChoiceField(
        label="Reach counts", choices=UNIT_CHOICES, initial="accounts", help_text="Accounts reached, or followers."
    )
    evaluate = forms.IntegerField(
        label="Evaluation cascades",
        min_value=100,
        max_value=EVALUATE_MAX,
        initial=20_000,
        help_text="Monte-Carlo runs behind the reach and its interval.",
    )
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0, help_text="Same seed, same plan.")
    batches = forms.IntegerField(
        min_value=1, max_value=BATCHES_MAX, initial=4, help_text="IMM: RR sets split across this many tasks."
    )
    backend = forms.ChoiceField(choices=ComputeRun.Backend.choices, initial=ComputeRun.Backend.AUTO)

    def clean(self):
        d = super().clean()
        if d.get("model") == "uniform" and d.get("p") is None:
            self.add_error("p", "A uniform model needs p.")
        if d.get("model") == "estimated" and d.get("strength") is None:
            self.add_error("strength", "The estimated model needs the prior's strength.")
        return d

    def params(self, publisher_pk: int) -> dict:
        """The run's parameters as ``compute_run_start`` takes them."""
        d = self.cleaned_data
        params = {
            "publisher": publisher_pk,
            **{name: d[name] for name in ("k", "model", "method", "eps", "unit", "evaluate", "seed")},
        }
        if d["model"] == "uniform":
            params["p"] = d["p"]
        if d["model"] == "estimated":
            params["strength"] = d["strength"]
        if d["method"] == "imm":
            params["batches"] = d["batches"]
        return params
