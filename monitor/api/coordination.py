"""REST API v1 of coordinated accounts (docs/coordination.md): start a coordination run and list them, read a
run's summary, its clusters (paged), one cluster with its members and shared tweets, and its edges (paged, in the
engine's order: the command line's JSON rows). Runs and collections are looked up through the caller's workspace:
another workspace's answer 404 like missing ones. Twitter ids are strings."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param

from compute.results import DEFAULT_MIN_COUNT, DEFAULT_MIN_RETWEETS, DEFAULT_THRESHOLD, DEFAULT_WINDOW

from .. import selectors
from ..algorithms.coordination import METHODS, WINDOW_MAX
from ..models import ComputeRun
from .analysis_runs import runs_page, start_run
from .paging import PARAMETERS as PAGINATION
from .paging import page_bounds
from .serializers import ComputeRunSerializer, PaginatedComputeRunList, paginated
from .views import _int_param


class CoordinationRunStartSerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=list(METHODS), default="co-retweet")
    collection = serializers.IntegerField(
        required=False, allow_null=True, help_text="a collection's retweets instead of the workspace's"
    )
    window = serializers.FloatField(
        default=DEFAULT_WINDOW, min_value=0, max_value=WINDOW_MAX, help_text="co-retweet: seconds between retweets"
    )
    min_count = serializers.IntegerField(
        default=DEFAULT_MIN_COUNT, min_value=1, help_text="co-retweet: tweets a pair shares within the window"
    )
    min_retweets = serializers.IntegerField(
        default=DEFAULT_MIN_RETWEETS, min_value=1, help_text="similarity: tweets an account retweeted to be compared"
    )
    threshold = serializers.FloatField(
        default=DEFAULT_THRESHOLD, min_value=0, max_value=1, help_text="similarity: the cosine of an edge, above 0"
    )
    backend = serializers.ChoiceField(choices=ComputeRun.Backend.choices, default=ComputeRun.Backend.AUTO)

    def validate_threshold(self, v: float) -> float:
        if v <= 0:
            raise serializers.ValidationError("must be above 0")
        return v


class CoordinationSummarySerializer(serializers.Serializer):
    method = serializers.CharField()
    accounts = serializers.IntegerField(help_text="accounts the method compared")
    tweets = serializers.IntegerField(help_text="original tweets retweeted")
    pairs = serializers.IntegerField(help_text="pairs counted before the cut")
    n_edges = serializers.IntegerField()
    n_clusters = serializers.IntegerField()
    backend = serializers.CharField()
    notes = serializers.ListField(child=serializers.CharField())


class CoordinationRunResultSerializer(serializers.Serializer):
    run = ComputeRunSerializer()
    summary = CoordinationSummarySerializer(allow_null=True, help_text="null until the run is done")


class ClusterAccountSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    influence_rank = serializers.IntegerField(allow_null=True, help_text="all-time rank across publishers")


class ClusterPublisherSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField(allow_blank=True)
    shared_tweets = serializers.IntegerField()


class ClusterSerializer(serializers.Serializer):
    cluster = serializers.IntegerField(help_text="1 = the largest")
    size = serializers.IntegerField()
    share = serializers.FloatField(help_text="of the accounts compared")
    edges = serializers.IntegerField()
    mean_weight = serializers.FloatField()
    shared_tweets = serializers.IntegerField(help_text="original tweets two or more members retweeted")
    first_at = serializers.DateTimeField(allow_null=True)
    last_at = serializers.DateTimeField(allow_null=True)
    spread_median_s = serializers.FloatField(
        allow_null=True, help_text="median seconds from the first to the last member's retweet of a shared tweet"
    )
    timeline = serializers.ListField(
        child=serializers.ListField(),
        help_text='the members\' retweets of the shared tweets per UTC hour: [["YYYY-MM-DDTHH", retweets], ...]',
    )
    members = ClusterAccountSerializer(many=True, help_text="the first members, most partners first")
    publishers = ClusterPublisherSerializer(many=True, help_text="whose tweets they shared, most first")


class ClusterMemberSerializer(ClusterAccountSerializer):
    degree = serializers.IntegerField(help_text="coordinated partners")
    shared_retweets = serializers.IntegerField(help_text="retweets of the cluster's shared tweets")


class SharedTweetSerializer(serializers.Serializer):
    tweet_id = serializers.CharField()
    author = serializers.CharField(help_text="the publisher's Twitter id")
    text = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    label = serializers.CharField()
    members = serializers.IntegerField(help_text="members who retweeted it")


class ClusterDetailSerializer(ClusterSerializer):
    members = ClusterMemberSerializer(many=True, help_text="most partners first, up to `limit`")
    tweets = SharedTweetSerializer(many=True, help_text="the most shared tweets")


class CoordinationEdgeSerializer(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    weight = serializers.FloatField(help_text="co-retweet: tweets shared within the window; similarity: cosine")
    cluster = serializers.IntegerField()


def _envelope(request, rows: list, count: int, limit: int, offset: int) -> dict:
    """The paged lists' envelope (``count``, ``next``, ``previous``, ``results``) with limit/offset links."""
    url = remove_query_param(remove_query_param(request.build_absolute_uri(), "page"), "page_size")

    def at(o: int) -> str:
        return replace_query_param(replace_query_param(url, "limit", limit), "offset", o)

    return {
        "count": count,
        "next": at(offset + limit) if offset + limit < count else None,
        "previous": at(max(offset - limit, 0)) if offset > 0 else None,
        "results": rows,
    }


def _ids(rows: list[dict], *keys: str) -> list[dict]:
    for r in rows:
        for k in keys:
            r[k] = str(r[k])
    return rows


@extend_schema(methods=["GET"], operation_id="workspaces_coordination_runs_list", parameters=PAGINATION,
               responses=PaginatedComputeRunList)  # fmt: skip
@extend_schema(
    methods=["POST"],
    request=CoordinationRunStartSerializer,
    responses={201: ComputeRunSerializer},
    description="Start a coordination run over the workspace's (or a collection's) retweets; only the chosen "
    "method's parameters are used. Refused with 400 naming the parameter beyond the workspace's budget.",
)
@api_view(["GET", "POST"])
def coordination_runs(request, ws: str):
    """The coordination runs of a workspace (GET, paged), or start one (POST)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    if request.method == "GET":
        return runs_page(request, selectors.coordination_runs(workspace, limit=10_000))
    ser = CoordinationRunStartSerializer(data=request.data)
    ser.is_valid(raise_exception=True)
    v = dict(ser.validated_data)
    own = ("window", "min_count") if v["method"] == "co-retweet" else ("min_retweets", "threshold")
    params = {"method": v["method"], **{k: v[k] for k in own}}
    return start_run(request, workspace, v, algorithm="coordination", params=params)


@extend_schema(responses=CoordinationRunResultSerializer)
@api_view(["GET"])
def coordination_run(request, ws: str, pk: int):
    """A coordination run and its summary (null until it is done)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.coordination_run_get(workspace, pk)
    summary = selectors.coordination_summary(run)
    return Response(
        {
            "run": ComputeRunSerializer(run).data,
            "summary": CoordinationSummarySerializer(summary).data if summary is not None else None,
        }
    )


@extend_schema(
    operation_id="workspaces_coordination_runs_clusters_list",
    parameters=PAGINATION,
    responses=paginated(ClusterSerializer, "PaginatedCoordinationClusterList"),
)
@api_view(["GET"])
def coordination_clusters(request, ws: str, pk: int):
    """The run's clusters from the largest, each with its first members and their influence rank and the
    publishers of its shared tweets."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.coordination_run_get(workspace, pk)
    limit, offset = page_bounds(request)
    rows, count = selectors.coordination_clusters(workspace, run, limit=limit, offset=offset)
    for r in rows:
        _ids(r["members"], "twitter_id")
        _ids(r["publishers"], "twitter_id")
    return Response(_envelope(request, ClusterSerializer(rows, many=True).data, count, limit, offset))


@extend_schema(
    operation_id="workspaces_coordination_runs_clusters_retrieve",
    parameters=[OpenApiParameter("limit", int, description="members returned, 1 to 10000 (default 1000)")],
    responses=ClusterDetailSerializer,
)
@api_view(["GET"])
def coordination_cluster(request, ws: str, pk: int, cluster: int):
    """One cluster: its numbers, members (most partners first), the publishers and the most shared tweets."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.coordination_run_get(workspace, pk)
    got = selectors.coordination_cluster(workspace, run, cluster, limit=_int_param(request, "limit", 1000, 1, 10_000))
    _ids(got["members"], "twitter_id")
    _ids(got["publishers"], "twitter_id")
    for t in got["tweets"]:
        t["tweet_id"], t["author"] = str(t["tweet_id"]), str(t["author"].twitter_id)
    return Response(ClusterDetailSerializer(got).data)


@extend_schema(
    parameters=[*PAGINATION, OpenApiParameter("cluster", int, description="one cluster's edges only")],
    responses=paginated(CoordinationEdgeSerializer, "PaginatedCoordinationEdgeList"),
)
@api_view(["GET"])
def coordination_edges(request, ws: str, pk: int):
    """The run's edges in the engine's order (weight descending, then ``a``, then ``b`` as strings): page by
    page, the rows ``python -m compute coordination --output json`` prints for the same retweets."""
    workspace = selectors.workspace_for_user(request.user, ws)
    run = selectors.coordination_run_get(workspace, pk)
    limit, offset = page_bounds(request)
    cluster = _int_param(request, "cluster", 0, 1, 2**31 - 1) if "cluster" in request.query_params else None
    rows, count = selectors.coordination_edges(run, cluster=cluster, limit=limit, offset=offset)
    method = run.params.get("method")
    for r in rows:
        r["a"], r["b"] = str(r["a"]), str(r["b"])
        if method == "co-retweet":
            r["weight"] = int(r["weight"])
    return Response(_envelope(request, rows, count, limit, offset))
