from __future__ import annotations

from django import forms

from compute.formats.registry import format_choices
from monitor import selectors
from monitor.algorithms.network import DEFAULT_SAMPLES as DEFAULT_BETWEENNESS_SAMPLES
from monitor.algorithms.network import RESOLUTION_MAX
from monitor.models import Collection, ComputeRun, Label

FORMAT_CHOICES = format_choices()  # from the input formats' registry


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented pattern for ``<input multiple>``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class UploadForm(forms.Form):
    files = MultipleFileField(help_text="Tweets and follows files; archives (.zip, .tar.gz) are unpacked.")
    name = forms.CharField(required=False, max_length=200, help_text="Defaults to the file names.")
    format = forms.ChoiceField(choices=FORMAT_CHOICES, initial="auto")
    mode = forms.ChoiceField(choices=Collection.Mode.choices, initial=Collection.Mode.STRICT, widget=forms.RadioSelect)
    validate_only = forms.BooleanField(required=False, help_text="Check every record and report; store nothing.")
    compute = forms.BooleanField(required=False, initial=True, help_text="Compute influence after the import.")


class RankingForm(forms.Form):
    aggregate = forms.ChoiceField(choices=ComputeRun.Aggregate.choices, required=False)
    window = forms.ChoiceField(
        choices=[
            ("all", "All time"),
            ("7d", "Last 7 days of data"),
            ("30d", "Last 30 days of data"),
            ("90d", "Last 90 days of data"),
            ("365d", "Last year of data"),
            ("custom", "From ... to ..."),
        ],
        required=False,
    )
    start = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    labels = forms.MultipleChoiceField(
        choices=Label.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Truth labels",
        help_text="None ticked: every label.",
    )
    sort = forms.ChoiceField(
        choices=[
            ("total", "Total"),
            ("mean", "Mean"),
            ("participation", "Participation"),
            ("cascades", "Cascades"),
        ],
        required=False,
    )
    top = forms.TypedChoiceField(
        choices=[(5, "Top 5"), (10, "Top 10"), (20, "Top 20")], coerce=int, required=False, empty_value=10
    )
    bucket = forms.ChoiceField(
        choices=[("auto", "Automatic"), ("day", "Day"), ("week", "Week"), ("month", "Month")],
        required=False,
        label="Per",
    )
    page = forms.IntegerField(required=False, min_value=1)

    def clean(self):
        d = super().clean()
        if d.get("start") and d.get("end") and d["start"] > d["end"]:
            raise forms.ValidationError("The window's start is after its end.")
        return d


class CompareForm(forms.Form):
    """The compare page's options: the publishers (``p``, repeated: 2 to 5 Twitter ids, read by ``clean``) and
    the ranking pages' window and aggregate, with how many top spreaders to compare. ``publishers`` (after
    ``is_valid``) is the list of accounts; fewer than two is not an error here (the page asks for more), the
    selector's other refusals are (unknown, repeated, too many)."""

    aggregate = RankingForm.base_fields["aggregate"]
    window = RankingForm.base_fields["window"]
    start = RankingForm.base_fields["start"]
    end = RankingForm.base_fields["end"]
    labels = RankingForm.base_fields["labels"]
    top = forms.TypedChoiceField(
        choices=[(5, "Top 5"), (10, "Top 10"), (20, "Top 20"), (50, "Top 50")],
        coerce=int,
        required=False,
        empty_value=10,
        label="Spreaders",
    )

    def __init__(self, *args, workspace, **kwargs):
        super().__init__(*args, **kwargs)
        self.workspace = workspace
        self.publishers: list = []

    def clean(self):
        d = super().clean()
        if d.get("start") and d.get("end") and d["start"] > d["end"]:
            raise forms.ValidationError("The window's start is after its end.")
        raw = [v.strip() for v in self.data.getlist("p") if v.strip()] if hasattr(self.data, "getlist") else []
        bad = [v for v in raw if not v.isdigit()]
        if bad:
            self.add_error(None, f"“{bad[0]}” is not a publisher id: a publisher is named by its Twitter id (p=123).")
            return d
        ids = [int(v) for v in raw]
        try:
            # fewer than two: the page is still being filled in (it offers the picker), not an error
            self.publishers = selectors.compare_publishers_get(self.workspace, ids, partial=True)
        except selectors.CompareError as e:
            self.add_error(None, str(e))
        return d


class RecomputeForm(forms.Form):
    orphans = forms.ChoiceField(choices=ComputeRun.Orphans.choices, initial=ComputeRun.Orphans.STRICT)
    backend = forms.ChoiceField(choices=ComputeRun.Backend.choices, initial=ComputeRun.Backend.AUTO)


class NetworkRunForm(forms.Form):
    """A network run's parameters (``monitor.algorithms.network``: graph, spreading, samples, seed, communities,
    resolution) and its backend."""

    graph = forms.ChoiceField(
        choices=[("follows", "Follower graph"), ("interactions", "Interaction graph (retweets)")], initial="follows"
    )
    spreading = forms.BooleanField(
        required=False, label="Add spreading edges", help_text="Interaction graph only: the computed cascades' edges."
    )
    samples = forms.IntegerField(
        min_value=0,
        max_value=2**31 - 1,
        initial=DEFAULT_BETWEENNESS_SAMPLES,  # python -m compute network's default too
        help_text="Betweenness sources; 0 = exact (every account).",
    )
    seed = forms.IntegerField(
        min_value=0, max_value=2**32 - 2, initial=0, help_text="Which sample: same seed, same result."
    )
    backend = forms.ChoiceField(choices=ComputeRun.Backend.choices, initial=ComputeRun.Backend.AUTO)
    communities = forms.BooleanField(
        required=False,
        initial=True,
        label="Find communities",
        help_text="Modularity communities (Louvain with refinement, on the CPU): a table, and the drawings' colours.",
    )
    resolution = forms.FloatField(
        min_value=0.0,
        max_value=RESOLUTION_MAX,
        initial=1.0,
        required=False,
        help_text="Communities' modularity resolution: above 1 finds smaller communities, below 1 larger ones.",
    )

    def clean_resolution(self):
        v = self.cleaned_data["resolution"]
        if v is None:
            return 1.0
        if v <= 0:
            raise forms.ValidationError("Must be above 0.")
        return v

    def clean(self):
        d = super().clean()
        if d.get("spreading") and d.get("graph") != "interactions":
            self.add_error("spreading", "Spreading edges join the interaction graph only.")
        return d


class NeighbourhoodForm(forms.Form):
    """Which neighbourhood of an account to draw: the graph, how many hops, along which edges."""

    graph = forms.ChoiceField(
        choices=[("follows", "Follower graph"), ("interactions", "Interaction graph")],
        initial="follows",
        required=False,
    )
    depth = forms.TypedChoiceField(
        choices=[(1, "1 hop"), (2, "2 hops"), (3, "3 hops")], coerce=int, initial=1, empty_value=1, required=False
    )
    direction = forms.ChoiceField(
        choices=[
            ("both", "Either direction"),
            ("out", "Out: whom it follows / retweets"),
            ("in", "In: its followers / retweeters"),
        ],
        initial="both",
        required=False,
    )
