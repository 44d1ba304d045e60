"""The forms that start who-amplifies-whom runs (docs/wtf.md): an account's two panels, a publisher's watch list.
Bounds and defaults are the algorithm's (``monitor.algorithms.wtf``), which validates the run's parameters again."""

from __future__ import annotations

from django import forms

from monitor.algorithms.wtf import (
    DEFAULT_CIRCLE,
    DEFAULT_MAX_ITER,
    DEFAULT_SPREADERS,
    DEFAULT_TOP,
    MAX_CIRCLE,
    MAX_MAX_ITER,
    MAX_SEEDS,
    MAX_TOP,
)


class WtfForm(forms.Form):
    """An account's run: both directions, with the circle of trust's size, K and the iteration cap."""

    circle = forms.IntegerField(
        min_value=1,
        max_value=MAX_CIRCLE,
        initial=DEFAULT_CIRCLE,
        required=False,
        label="Circle of trust",
        help_text="Accounts kept by personalized PageRank.",
    )
    top = forms.IntegerField(
        min_value=1, max_value=MAX_TOP, initial=DEFAULT_TOP, required=False, label="K", help_text="Accounts per list."
    )
    max_iter = forms.IntegerField(
        min_value=1,
        max_value=MAX_MAX_ITER,
        initial=DEFAULT_MAX_ITER,
        required=False,
        label="Iteration cap",
        help_text="Of PageRank and Money. Raise it when a list says “not converged”: 150 always converges PageRank.",
    )

    def params(self) -> dict:
        """The run's parameters that the analyst set (the algorithm fills in the rest)."""
        return {k: v for k, v in self.cleaned_data.items() if v is not None}


class WatchListForm(WtfForm):
    """A publisher's watch list: its top spreaders' likely next amplifiers."""

    spreaders = forms.IntegerField(
        min_value=1,
        max_value=MAX_SEEDS,
        initial=DEFAULT_SPREADERS,
        required=False,
        label="Top spreaders",
        help_text="By total influence, all time.",
    )
