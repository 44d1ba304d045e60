"""API representations. Twitter ids are strings: JavaScript numbers lose digits past 2**53."""

from __future__ import annotations

from rest_framework import serializers

from compute.formats.registry import AUTO, FORMATS
from monitor.alerts.kinds import PARAM_NAMES
from monitor.alerts.models import AlertRule

from ..algorithms.network import DEFAULT_SAMPLES
from ..algorithms.network import RESOLUTION_MAX as NETWORK_RESOLUTION_MAX
from ..models import Account, Claim, Collection, ComputeRun, Workspace


class WorkspaceSerializer(serializers.ModelSerializer):
    class Meta:
        model = Workspace
        # unit: what the workspace's reach counts ("followers", "retweeters"; "" before its first tweets), fixed by
        # its first data; a feeder can ask it before sending counts that would be refused (docs/measure.md)
        fields = ["slug", "name", "created_at", "unit"]


class CollectionSerializer(serializers.ModelSerializer):
    files = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Collection
        fields = [
            "id",
            "name",
            "status",
            "format",
            "mode",
            "validate_only",
            "compute",
            "counts",
            "report",
            "error",
            "timings",
            "files",
            "progress",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_files(self, obj: Collection) -> list[dict]:
        return [{"name": f.original_name, "size": f.size, "format": f.format} for f in obj.files.all()]

    def get_progress(self, obj: Collection) -> dict:
        from ..selectors import collection_progress

        return collection_progress(obj)


class CollectionUploadSerializer(serializers.Serializer):
    files = serializers.ListField(child=serializers.FileField(), allow_empty=False)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    mode = serializers.ChoiceField(choices=Collection.Mode.choices, default=Collection.Mode.STRICT)
    validate_only = serializers.BooleanField(default=False)
    compute = serializers.BooleanField(default=True)
    format = serializers.ChoiceField(choices=[AUTO, *FORMATS], default=AUTO)  # the input formats' registry


class ComputeRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = ComputeRun
        fields = [
            "id",
            "algorithm",
            "params",
            "status",
            "aggregate",
            "orphans",
            "backend",
            "n_batches",
            "batches_done",
            "n_cascades",
            "n_nodes",
            "n_edges",
            "devices",
            "timings",
            "notes",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "collection",
            "estimate",
        ]


class RankingRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField()
    total = serializers.FloatField()
    mean = serializers.FloatField()
    participation = serializers.FloatField()
    cascades = serializers.IntegerField()


class RankingPageSerializer(serializers.Serializer):
    publisher = serializers.CharField(allow_null=True)
    aggregate = serializers.ChoiceField(choices=ComputeRun.Aggregate.choices)
    unit = serializers.CharField()
    tweets = serializers.IntegerField(help_text="T: computed tweets in the group and window")
    count = serializers.IntegerField(help_text="ranked accounts")
    results = RankingRowSerializer(many=True)


class ComparePairSerializer(serializers.Serializer):
    a = serializers.CharField(help_text="a publisher's Twitter id")
    b = serializers.CharField(help_text="the other publisher's Twitter id")
    overlap = serializers.IntegerField(help_text="accounts in both top-N lists")
    jaccard = serializers.FloatField(allow_null=True, help_text="overlap / accounts in either list (null: both empty)")


class CompareColumnSerializer(serializers.Serializer):
    publisher = serializers.CharField(help_text="the publisher's Twitter id")
    screen_name = serializers.CharField(allow_blank=True)
    unit = serializers.CharField()
    tweets = serializers.IntegerField(help_text="T: the publisher's computed tweets in the window")
    count = serializers.IntegerField(help_text="accounts that spread its tweets in the window")
    results = RankingRowSerializer(many=True, help_text="its top N spreaders (the publisher itself left out)")


class CompareCellSerializer(serializers.Serializer):
    publisher = serializers.CharField()
    rank = serializers.IntegerField(allow_null=True, help_text="null: outside this publisher's top N")
    score = serializers.FloatField(allow_null=True, help_text="the aggregate's value (null: spread none of its tweets)")


class CompareSharedSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    in_top = serializers.IntegerField(help_text="how many of the publishers' top-N lists it is in (2 or more)")
    cells = CompareCellSerializer(many=True)


class CompareSerializer(serializers.Serializer):
    aggregate = serializers.ChoiceField(choices=ComputeRun.Aggregate.choices)
    top = serializers.IntegerField()
    columns = CompareColumnSerializer(many=True)
    pairs = ComparePairSerializer(many=True)
    shared = CompareSharedSerializer(many=True)


# --- publishers, accounts, cascades ------------------------------------------------------------------------------


class AccountRefSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)


class PublisherSerializer(serializers.Serializer):
    account = AccountRefSerializer()
    tweets = serializers.IntegerField(help_text="computed tweets")
    reach = serializers.FloatField(allow_null=True, help_text="Σ reach of its computed tweets")
    first_day = serializers.DateField(allow_null=True)
    last_day = serializers.DateField(allow_null=True)


class PerPublisherSerializer(serializers.Serializer):
    publisher = AccountRefSerializer()
    total = serializers.FloatField()
    cascades = serializers.IntegerField()


class PerDaySerializer(serializers.Serializer):
    day = serializers.DateField()
    total = serializers.FloatField()
    cascades = serializers.IntegerField()


class FollowerCountSerializer(serializers.Serializer):
    observed_at = serializers.DateTimeField()
    count = serializers.IntegerField()


class AccountCascadeSerializer(serializers.Serializer):
    tweet_id = serializers.CharField()
    publisher = serializers.CharField(help_text="the publisher's Twitter id")
    day = serializers.DateField()
    label = serializers.CharField()
    influence = serializers.FloatField()
    role = serializers.CharField()


class AmplificationRowSerializer(serializers.Serializer):
    account = AccountRefSerializer()
    cascades = serializers.IntegerField()


class AmplificationSerializer(serializers.Serializer):
    amplified = AmplificationRowSerializer(many=True, help_text="accounts it retweeted from")
    amplified_by = AmplificationRowSerializer(many=True, help_text="accounts that retweeted from it")
    cascades_read = serializers.IntegerField()


class PublishedSerializer(serializers.Serializer):
    tweets = serializers.IntegerField()
    reach = serializers.FloatField(allow_null=True)


class AccountDetailSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    total = serializers.FloatField(help_text="Σ influence over every publisher and day")
    cascades = serializers.IntegerField(help_text="cascades it took part in")
    published = PublishedSerializer()
    per_publisher = PerPublisherSerializer(many=True)
    per_day = PerDaySerializer(many=True)
    top_cascades = AccountCascadeSerializer(many=True)
    follower_counts = FollowerCountSerializer(many=True)
    amplification = AmplificationSerializer()


class ParticipantSerializer(serializers.Serializer):
    account = AccountRefSerializer()
    influence = serializers.FloatField()
    followers = serializers.FloatField(help_text="n_v used by the backward phase")
    role = serializers.CharField()


class TweetDetailSerializer(serializers.Serializer):
    tweet_id = serializers.CharField()
    author = AccountRefSerializer()
    created_at = serializers.DateTimeField()
    text = serializers.CharField(allow_blank=True)
    label = serializers.CharField()
    compute_status = serializers.CharField()
    graph_source = serializers.CharField()
    n_participants = serializers.IntegerField()
    n_edges = serializers.IntegerField()
    n_orphans = serializers.IntegerField()
    reach = serializers.FloatField(allow_null=True)
    unit = serializers.CharField()
    participants = ParticipantSerializer(many=True)
    edges = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(), min_length=2, max_length=2),
        help_text="spreading edges [src, dst] as Twitter ids: src could have seen the tweet from dst",
    )


# --- alerts ----------------------------------------------------------------------------------------------------


class AlertRuleSerializer(serializers.ModelSerializer):
    """A rule of the caller's. ``publisher`` is a Twitter id of the workspace (null: any publisher); the webhook
    secret is only returned when the rule is created (``webhook_secret``), never afterwards."""

    id = serializers.CharField(read_only=True)
    publisher = serializers.CharField(
        allow_null=True, required=False, help_text="a publisher's Twitter id; null: any publisher"
    )
    claim = serializers.IntegerField(
        allow_null=True, required=False, help_text="the claim's id: required by the claim kinds, unused by the others"
    )
    state = serializers.SerializerMethodField()

    class Meta:
        model = AlertRule
        fields = [
            "id",
            "name",
            "kind",
            "publisher",
            "claim",
            *PARAM_NAMES,  # the kinds' parameters, from the registry
            "inbox",
            "email",
            "webhook_url",
            "max_alerts_per_day",
            "is_active",
            "muted_until",
            "state",
            "suppressed_count",
            "last_evaluated_at",
            "created_at",
        ]
        read_only_fields = ["suppressed_count", "last_evaluated_at", "created_at"]

    def get_state(self, obj) -> str:
        from django.utils import timezone

        if not obj.is_active:
            return "muted"
        if obj.muted_until is not None and obj.muted_until > timezone.now():
            return "snoozed"
        return "active"

    def to_representation(self, obj):
        data = super().to_representation(obj)
        data["publisher"] = str(obj.publisher.twitter_id) if obj.publisher_id else None
        data["claim"] = obj.claim_id
        return data

    def validate_claim(self, value):
        if value is None:
            return None
        claim = Claim.objects.filter(workspace=self.context["workspace"], pk=value).first()
        if claim is None:
            raise serializers.ValidationError("no such claim in this workspace")
        return claim

    def validate_publisher(self, value):
        if value in (None, ""):
            return None
        try:
            tid = int(value)
        except ValueError:
            raise serializers.ValidationError("not a Twitter id") from None
        acc = Account.objects.filter(workspace=self.context["workspace"], twitter_id=tid).first()
        if acc is None:
            raise serializers.ValidationError("no such account in this workspace")
        return acc


class AlertRuleCreatedSerializer(AlertRuleSerializer):
    webhook_secret = serializers.CharField(read_only=True, help_text="shown this once")

    class Meta(AlertRuleSerializer.Meta):
        fields = [*AlertRuleSerializer.Meta.fields, "webhook_secret"]


class AlertSerializer(serializers.Serializer):
    id = serializers.CharField()
    rule = serializers.CharField(source="rule_id")
    rule_name = serializers.CharField(source="rule.name")
    kind = serializers.CharField(source="rule.kind")
    account = AccountRefSerializer()
    tweet_id = serializers.SerializerMethodField()
    window_start = serializers.DateField()
    window_end = serializers.DateField()
    value = serializers.FloatField()
    previous_value = serializers.FloatField(allow_null=True)
    rank = serializers.IntegerField(allow_null=True)
    previous_rank = serializers.IntegerField(allow_null=True)
    message = serializers.CharField()
    created_at = serializers.DateTimeField()
    read_at = serializers.DateTimeField(allow_null=True)

    def get_tweet_id(self, obj) -> str | None:
        return str(obj.tweet.tweet_id) if obj.tweet_id else None


# --- network analytics ---------------------------------------------------------------------------------------------


class NetworkRunStartSerializer(serializers.Serializer):
    graph = serializers.ChoiceField(choices=["follows", "interactions"], default="follows")
    collection = serializers.IntegerField(
        required=False, allow_null=True, help_text="a collection's graph instead of the workspace's"
    )
    spreading = serializers.BooleanField(
        default=False, help_text="interactions only: add the cascades' spreading edges"
    )
    samples = serializers.IntegerField(default=DEFAULT_SAMPLES, min_value=0, help_text="betweenness sources; 0 = exact")
    seed = serializers.IntegerField(default=0, min_value=0)
    communities = serializers.BooleanField(
        default=True, help_text="find modularity communities (networkit's PLM on the CPU, seeded with seed)"
    )
    resolution = serializers.FloatField(
        default=1.0,
        min_value=0.0,
        max_value=NETWORK_RESOLUTION_MAX,
        help_text="the communities' modularity resolution, above 0: above 1 finds smaller communities",
    )
    backend = serializers.ChoiceField(choices=ComputeRun.Backend.choices, default=ComputeRun.Backend.AUTO)

    def validate_resolution(self, v: float) -> float:
        if v <= 0:
            raise serializers.ValidationError("must be above 0")
        return v


class NetworkAccountSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    in_degree = serializers.IntegerField()
    out_degree = serializers.IntegerField()
    component = serializers.IntegerField(help_text="weakly connected component, 0 = the largest")
    strong_component = serializers.IntegerField()
    core = serializers.IntegerField()
    clustering = serializers.FloatField()
    triangles = serializers.IntegerField()
    betweenness = serializers.FloatField(allow_null=True, help_text="null until the run is done")
    conversation_degree = serializers.IntegerField()
    conversation_component = serializers.IntegerField(allow_null=True)
    community = serializers.IntegerField(
        allow_null=True, help_text="modularity community, 1 = the largest; null when the run found none"
    )


class NetworkAccountPageSerializer(serializers.Serializer):
    sort = serializers.CharField()
    count = serializers.IntegerField()
    results = NetworkAccountSerializer(many=True)


class NetworkSummarySerializer(serializers.Serializer):
    graph = serializers.CharField()
    n_nodes = serializers.IntegerField()
    n_edges = serializers.IntegerField()
    n_undirected_edges = serializers.IntegerField()
    components = serializers.JSONField()
    strong_components = serializers.JSONField()
    degrees = serializers.JSONField()
    cores = serializers.JSONField()
    transitivity = serializers.FloatField()
    average_clustering = serializers.FloatField()
    conversations = serializers.JSONField()
    betweenness = serializers.JSONField()
    stability = serializers.JSONField()
    communities = serializers.JSONField(
        help_text="count, modularity, resolution, seed, method, singletons, the largest as [community, size, edges "
        "inside, degree sum, modularity term] and the size distribution; {} when the run found none"
    )
    notes = serializers.ListField(child=serializers.CharField())


class InferredCollectionSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class InferredGraphSerializer(serializers.Serializer):
    """``monitor.selectors.provenance.InferredGraph``: the follows of the result's follower graph that an upload
    of cascade trees inferred (each retweeter taken to follow the account it retweeted from)."""

    inferred_follows = serializers.IntegerField(help_text="follow edges inferred from cascade trees")
    uploaded_follows = serializers.IntegerField(help_text="follow edges uploaded to the workspace, those included")
    share = serializers.FloatField(help_text="inferred_follows / uploaded_follows")
    collections = InferredCollectionSerializer(many=True, help_text="the uploads of cascade trees they came from")


INFERRED_GRAPH_HELP = (
    "null when the follower graph the result read holds only uploaded follows; otherwise it was (partly) inferred "
    "from cascade trees, so the result partly restates the cascades themselves"
)


def inferred_graph_data(run: ComputeRun | None, ws: Workspace) -> dict | None:
    """:class:`InferredGraphSerializer`'s data for what ``run`` read (None: the workspace's graph now)."""
    from .. import selectors

    inferred = selectors.run_graph_inferred(run, ws)
    return inferred.to_json() if inferred is not None else None


class NetworkRunResultSerializer(serializers.Serializer):
    run = ComputeRunSerializer()
    summary = NetworkSummarySerializer(allow_null=True, help_text="null until the run's structural batch is stored")
    inferred_graph = InferredGraphSerializer(allow_null=True, help_text=INFERRED_GRAPH_HELP)


class NetworkComponentSerializer(serializers.Serializer):
    component = serializers.IntegerField()
    size = serializers.IntegerField()
    members = NetworkAccountSerializer(many=True, help_text="by betweenness, up to `limit`")


class NetworkCommunitySerializer(serializers.Serializer):
    community = serializers.IntegerField(help_text="1 = the largest")
    size = serializers.IntegerField()
    inside = serializers.IntegerField(allow_null=True, help_text="edges with both ends in it (undirected view)")
    contribution = serializers.FloatField(allow_null=True, help_text="its term of the partition's modularity")
    members = NetworkAccountSerializer(many=True, help_text="by betweenness, up to `limit`")


class CommunitySpreaderSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    influence_rank = serializers.IntegerField(help_text="all-time rank in the ranking across publishers")


class NetworkCommunityRowSerializer(serializers.Serializer):
    community = serializers.IntegerField(help_text="1 = the largest")
    size = serializers.IntegerField()
    share = serializers.FloatField(help_text="of the graph's accounts")
    inside = serializers.IntegerField(help_text="edges with both ends in it (undirected view)")
    degree_sum = serializers.IntegerField()
    contribution = serializers.FloatField(help_text="its term of the partition's modularity")
    spreaders = serializers.IntegerField(help_text="members with an influence rank")
    top = CommunitySpreaderSerializer(many=True, help_text="its members best ranked by influence")


class NeighbourNodeSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    distance = serializers.IntegerField(help_text="hops from the account")
    in_degree = serializers.IntegerField()
    out_degree = serializers.IntegerField()


class NeighbourhoodSerializer(serializers.Serializer):
    account = serializers.CharField()
    graph = serializers.CharField()
    depth = serializers.IntegerField()
    direction = serializers.CharField()
    nodes = NeighbourNodeSerializer(many=True)
    edges = serializers.ListField(
        child=serializers.ListField(), help_text="[src, dst] or [src, dst, weight]: Twitter ids, src -> dst"
    )
    hidden = serializers.JSONField(help_text="accounts and edges left out by `limit`")


class CounterCampaignStartSerializer(serializers.Serializer):
    """A counter-campaign plan's parameters (``monitor.algorithms.influence_max``, docs/influence_max.md)."""

    k = serializers.IntegerField(default=50, min_value=1, max_value=500, help_text="accounts to choose")
    model = serializers.ChoiceField(choices=["uniform", "wc", "estimated"], default="uniform")
    p = serializers.FloatField(required=False, help_text="uniform only: the probability of every edge (0.01)")
    strength = serializers.FloatField(required=False, help_text="estimated only: the prior's pseudo-exposures (20)")
    method = serializers.ChoiceField(choices=["imm", "imgpu", "degree", "influence", "random"], default="imm")
    eps = serializers.FloatField(default=0.1, help_text="IMM's epsilon")
    unit = serializers.ChoiceField(choices=["accounts", "followers"], default="accounts")
    evaluate = serializers.IntegerField(default=20_000, help_text="Monte-Carlo cascades of the evaluation")
    seed = serializers.IntegerField(default=0, min_value=0)
    batches = serializers.IntegerField(required=False, help_text="IMM: tasks the RR sets are split across (4)")
    backend = serializers.ChoiceField(choices=ComputeRun.Backend.choices, default=ComputeRun.Backend.AUTO)


class CounterCampaignSeedSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    marginal_gain = serializers.FloatField(
        help_text="reach added to the accounts chosen before (the method's estimate)"
    )
    cumulative = serializers.FloatField(help_text="estimated reach of the first `rank` accounts together")
    influence_rank = serializers.IntegerField(allow_null=True, help_text="rank among the publisher's spreaders")
    top_by_influence = serializers.BooleanField()


class CounterCampaignBaselineSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    influence = serializers.FloatField()
    chosen = serializers.BooleanField()


class CounterCampaignPlanSerializer(serializers.Serializer):
    publisher = serializers.CharField(help_text="the publisher's Twitter id")
    method = serializers.CharField()
    k = serializers.IntegerField()
    model = serializers.CharField()
    model_description = serializers.CharField()
    unit = serializers.CharField()
    audience = serializers.JSONField(help_text="accounts, follow edges and total weight of the audience")
    spread = serializers.FloatField(help_text="joint expected reach, Monte-Carlo mean")
    spread_ci = serializers.ListField(child=serializers.FloatField(), help_text="95 % confidence interval")
    evaluate_runs = serializers.IntegerField()
    estimate = serializers.FloatField(help_text="the method's own estimate of the reach")
    curve = serializers.ListField(child=serializers.FloatField(), help_text="estimated reach of the first 1..K")
    rr_sets = serializers.IntegerField()
    estimated = serializers.JSONField(help_text="the estimator's prior and counts (estimated model)")
    seeds = CounterCampaignSeedSerializer(many=True)
    baseline = CounterCampaignBaselineSerializer(many=True, help_text="the publisher's top spreaders by influence")
    baseline_spread = serializers.FloatField(allow_null=True)
    baseline_spread_ci = serializers.ListField(child=serializers.FloatField(), allow_null=True)
    overlap = serializers.IntegerField(help_text="chosen accounts that are also top spreaders")
    notes = serializers.ListField(child=serializers.CharField())


class CounterCampaignRunSerializer(serializers.Serializer):
    run = ComputeRunSerializer()
    plan = CounterCampaignPlanSerializer(allow_null=True, help_text="null until the run is done")
    inferred_graph = InferredGraphSerializer(allow_null=True, help_text=INFERRED_GRAPH_HELP)


def paginated(child: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """The envelope of ``LimitOffsetPagination`` around ``child`` (for the schema of function views)."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": child(many=True),
            "__module__": __name__,
        },
    )


PaginatedCollectionList = paginated(CollectionSerializer, "PaginatedCollectionList")
PaginatedComputeRunList = paginated(ComputeRunSerializer, "PaginatedComputeRunList")
PaginatedAlertRuleList = paginated(AlertRuleSerializer, "PaginatedAlertRuleList")
PaginatedAlertList = paginated(AlertSerializer, "PaginatedAlertList")


# --- API tokens ----------------------------------------------------------------------------------------------


class ApiTokenSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(required=False, allow_blank=True, max_length=100)
    prefix = serializers.CharField(read_only=True, help_text="the key's first characters")
    workspace = serializers.SlugField(
        required=False, allow_null=True, help_text="the one workspace it may read (slug); null: all of yours"
    )
    days = serializers.IntegerField(required=False, write_only=True, min_value=1, max_value=366)
    created_at = serializers.DateTimeField(read_only=True)
    expires_at = serializers.DateTimeField(read_only=True)
    last_used_at = serializers.DateTimeField(read_only=True)
    revoked_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, obj):
        data = super().to_representation(obj)
        data["workspace"] = obj.workspace.slug if obj.workspace_id else None
        return data


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    key = serializers.CharField(read_only=True, help_text="shown this once")
