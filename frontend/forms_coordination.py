"""The form that starts a coordinated-accounts run (docs/coordination.md): the method and its parameters. Bounds
and defaults are the algorithm's (``monitor.algorithms.coordination``), which validates the run's parameters
again and keeps only the chosen method's."""

from __future__ import annotations

from django import forms

from compute.results import DEFAULT_MIN_COUNT, DEFAULT_MIN_RETWEETS, DEFAULT_THRESHOLD, DEFAULT_WINDOW
from monitor.algorithms.coordination import METHODS, WINDOW_MAX
from monitor.models import ComputeRun

METHOD_LABELS = {"co-retweet": "Co-retweet (same tweets within a window)", "similarity": "Similarity (Pacheco et al.)"}


class CoordinationRunForm(forms.Form):
    method = forms.ChoiceField(
        choices=[(m, METHOD_LABELS[m]) for m in METHODS],
        initial="co-retweet",
        help_text="Co-retweet counts the tweets two accounts retweeted within the window of each other; similarity "
        "compares what they retweeted (idf-weighted cosine).",
    )
    window = forms.FloatField(
        min_value=0,
        max_value=WINDOW_MAX,
        initial=DEFAULT_WINDOW,
        required=False,
        label="Window (seconds)",
        help_text="Co-retweet: how close in time two retweets of a tweet must be.",
    )
    min_count = forms.IntegerField(
        min_value=1,
        max_value=10**6,
        initial=DEFAULT_MIN_COUNT,
        required=False,
        label="Minimum tweets",
        help_text="Co-retweet: the tweets a pair must share within the window to be an edge.",
    )
    min_retweets = forms.IntegerField(
        min_value=1,
        max_value=10**6,
        initial=DEFAULT_MIN_RETWEETS,
        required=False,
        label="Minimum retweets",
        help_text="Similarity: accounts with fewer tweets retweeted are not compared.",
    )
    threshold = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=DEFAULT_THRESHOLD,
        required=False,
        label="Threshold",
        help_text="Similarity: the cosine from which a pair is an edge.",
    )
    backend = forms.ChoiceField(choices=ComputeRun.Backend.choices, initial=ComputeRun.Backend.AUTO)

    def clean_threshold(self):
        v = self.cleaned_data["threshold"]
        if v is not None and v <= 0:
            raise forms.ValidationError("Must be above 0.")
        return v

    def params(self) -> dict:
        """The run's parameters: the method and its own, those left empty taking the algorithm's defaults."""
        d = self.cleaned_data
        own = ("window", "min_count") if d["method"] == "co-retweet" else ("min_retweets", "threshold")
        return {"method": d["method"], **{k: d[k] for k in own if d.get(k) is not None}}
