"""REST API v1 of the tweet search and claims (docs/claims.md): search a workspace's tweets (paged, in one of the
search's orders); list, save, read, change and delete claims; a claim's timeline, spreaders (over a window of UTC
days) and publishers; the accounts it tracks. Claims are looked up through the caller's workspace: another
workspace's answer 404 like missing ones. Twitter ids are strings."""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import api_view
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from .. import selectors, services
from ..models import Claim, Label
from .coordination import _envelope
from .paging import PARAMETERS as PAGINATION
from .paging import page_bounds
from .serializers import paginated
from .views import _int_param
from .views import _window as api_window


class TweetHitSerializer(serializers.Serializer):
    tweet_id = serializers.CharField()
    author = serializers.CharField(help_text="the publisher's Twitter id")
    screen_name = serializers.CharField()
    created_at = serializers.DateTimeField()
    text = serializers.CharField()
    label = serializers.CharField()
    hashtags = serializers.ListField(child=serializers.CharField())
    domains = serializers.ListField(child=serializers.CharField())
    reach = serializers.FloatField(allow_null=True, help_text="null until a compute run has rebuilt its cascade")


class ClaimSerializer(serializers.ModelSerializer):
    tracked = serializers.SerializerMethodField(help_text="the Twitter ids of the accounts the claim tracks")
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)

    class Meta:
        model = Claim
        fields = ["id", "name", "query", "tracked", "created_by", "created_at"]
        read_only_fields = ["id", "created_at"]

    def get_tracked(self, claim: Claim) -> list[str]:
        return [str(t["account"].twitter_id) for t in selectors.claim_tracked(claim)]


class ClaimWriteSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    query = serializers.CharField(max_length=500, required=False)


class TimelineDaySerializer(serializers.Serializer):
    day = serializers.DateField()
    tweets = serializers.IntegerField()
    retweets = serializers.IntegerField(help_text="retweets of the claim's tweets made that day")
    reach = serializers.FloatField(help_text="Σ reach of the day's computed tweets")
    by_label = serializers.DictField(child=serializers.IntegerField(), help_text="the day's tweets per truth label")


class ClaimSpreaderSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField()
    total = serializers.FloatField(help_text="Σ influence over the claim's computed tweets of the window")
    cascades = serializers.IntegerField(help_text="the claim's tweets it spread")
    participation = serializers.FloatField()


class ClaimPublisherSerializer(serializers.Serializer):
    twitter_id = serializers.CharField()
    screen_name = serializers.CharField()
    tweets = serializers.IntegerField()
    reach = serializers.FloatField()
    false = serializers.IntegerField(help_text="its tweets of the claim labelled false")


class TrackSerializer(serializers.Serializer):
    account = serializers.CharField(help_text="the Twitter id of an account of the workspace")


_WINDOW = [
    OpenApiParameter("start", dt.date, description="first UTC day (inclusive); open when left out"),
    OpenApiParameter("end", dt.date, description="last UTC day (inclusive); open when left out"),
]


def _window(request) -> selectors.Window:
    window = api_window(request, ("start", "end"))
    if window.start and window.end and window.start > window.end:
        raise ValidationError({"end": "before start"})
    return window


def _claim(workspace, pk: int) -> Claim:
    claim = selectors.claim_get(workspace, pk)
    if claim is None:
        raise Http404("no such claim in this workspace")
    return claim


def _read(fn, *args, **kwargs):
    """A claim's read; a query that no longer parses or matches too much is a 400 naming ``query``."""
    try:
        return fn(*args, **kwargs)
    except (selectors.QueryError, selectors.ClaimTooBroad) as e:
        raise ValidationError({"query": str(e)}) from None


def _service(fn, **kwargs):
    try:
        return fn(**kwargs)
    except DjangoValidationError as e:
        raise ValidationError(e.message_dict if hasattr(e, "error_dict") else {"detail": e.messages}) from None


@extend_schema(
    parameters=[
        OpenApiParameter(
            "q",
            str,
            required=True,
            description='the search (docs/claims.md: words, "phrase", #hashtag, domain, URL, OR, -exclusion)',
        ),
        OpenApiParameter("sort", str, enum=list(selectors.claims_sorts()), description="default relevance"),
        OpenApiParameter("label", str, many=True, enum=Label.values, description="only tweets with these labels"),
        *_WINDOW,
        *PAGINATION,
    ],
    responses=paginated(TweetHitSerializer, "PaginatedTweetHitList"),
    description="The workspace's tweets the search finds. Relevance and reach rank the 1,000 newest matches; a "
    "search matching more has `count` 1,000 and `capped` true (newest and oldest still page through every match).",
)
@api_view(["GET"])
def tweet_search(request, ws: str):
    """Search the workspace's tweets by words, phrases, hashtags, domains and URLs."""
    workspace = selectors.workspace_for_user(request.user, ws)
    sort = request.query_params.get("sort", "relevance")
    if sort not in selectors.claims_sorts():
        raise ValidationError({"sort": f"one of {', '.join(selectors.claims_sorts())}"})
    labels = request.query_params.getlist("label")
    bad = [v for v in labels if v not in Label.values]
    if bad:
        raise ValidationError({"label": f"unknown label {bad[0]!r}: one of {', '.join(Label.values)}"})
    limit, offset = page_bounds(request)
    hits = selectors.tweet_search(
        workspace, request.query_params.get("q", ""), sort=sort, window=_window(request), labels=labels or None,
        limit=limit, offset=offset,
    )  # fmt: skip
    if hits.error:
        raise ValidationError({"q": hits.error})
    rows = [
        {
            "tweet_id": str(t.tweet_id),
            "author": str(t.author.twitter_id),
            "screen_name": t.author.screen_name,
            "created_at": t.created_at,
            "text": t.text,
            "label": t.label,
            "hashtags": t.hashtags.split(),
            "domains": t.domains.split(),
            "reach": t.reach,
        }
        for t in hits.rows
    ]
    body = _envelope(request, TweetHitSerializer(rows, many=True).data, hits.total, limit, offset)
    body["capped"] = hits.capped
    body["query"] = hits.query.describe()
    return Response(body)


@extend_schema(methods=["GET"], responses=ClaimSerializer(many=True))
@extend_schema(methods=["POST"], request=ClaimWriteSerializer, responses={201: ClaimSerializer})
@api_view(["GET", "POST"])
def claims(request, ws: str):
    """The workspace's claims (GET), or save one (POST: ``name`` and ``query``)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    if request.method == "GET":
        return Response(ClaimSerializer(selectors.claims_of(workspace), many=True).data)
    body = ClaimWriteSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    claim = _service(services.claim_create, workspace=workspace, user=request.user,
                     name=body.validated_data.get("name", ""), query=body.validated_data.get("query", ""))  # fmt: skip
    return Response(ClaimSerializer(claim).data, status=status.HTTP_201_CREATED)


@extend_schema(methods=["PATCH"], request=ClaimWriteSerializer)
@extend_schema(responses=ClaimSerializer)
@api_view(["GET", "PATCH", "DELETE"])
def claim(request, ws: str, pk: int):
    """One claim (GET), change its name or query (PATCH), or delete it (DELETE: 204)."""
    workspace = selectors.workspace_for_user(request.user, ws)
    claim = _claim(workspace, pk)
    if request.method == "DELETE":
        services.claim_delete(claim=claim)
        return Response(status=status.HTTP_204_NO_CONTENT)
    if request.method == "PATCH":
        body = ClaimWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        claim = _service(services.claim_update, claim=claim, **body.validated_data)
    return Response(ClaimSerializer(claim).data)


@extend_schema(responses=TimelineDaySerializer(many=True))
@api_view(["GET"])
def claim_timeline(request, ws: str, pk: int):
    """Per UTC day with any: the claim's tweets by truth label, the retweets of them, their reach; oldest first."""
    workspace = selectors.workspace_for_user(request.user, ws)
    claim = _claim(workspace, pk)
    return Response(TimelineDaySerializer(_read(selectors.claim_timeline, workspace, claim.query), many=True).data)


def _claim_rows(request, ws: str, pk: int, read, serializer) -> Response:
    """A claim's rows of the window (``start``, ``end``) from ``read(ws, query, window=, limit=)``."""
    workspace = selectors.workspace_for_user(request.user, ws)
    claim = _claim(workspace, pk)
    limit = _int_param(request, "limit", 50, 1, 1000)
    rows = _read(read, workspace, claim.query, window=_window(request), limit=limit)
    return Response(serializer(rows, many=True).data)


_ROWS = [*_WINDOW, OpenApiParameter("limit", int, description="rows, 1 to 1000 (default 50)")]


@extend_schema(parameters=_ROWS, responses=ClaimSpreaderSerializer(many=True))
@api_view(["GET"])
def claim_spreaders(request, ws: str, pk: int):
    """The influence ranking over the claim's computed tweets of the window (publishers' own rows left out)."""
    return _claim_rows(request, ws, pk, selectors.claim_spreaders, ClaimSpreaderSerializer)


@extend_schema(parameters=_ROWS, responses=ClaimPublisherSerializer(many=True))
@api_view(["GET"])
def claim_publishers(request, ws: str, pk: int):
    """The accounts that published the claim's tweets of the window, most reach first."""
    return _claim_rows(request, ws, pk, selectors.claim_publishers, ClaimPublisherSerializer)


@extend_schema(methods=["POST"], request=TrackSerializer, responses=ClaimSerializer)
@extend_schema(methods=["DELETE"], request=TrackSerializer, responses=ClaimSerializer)
@api_view(["POST", "DELETE"])
def claim_tracked(request, ws: str, pk: int):
    """Track an account for the claim (POST) or stop tracking it (DELETE); ``account`` is its Twitter id."""
    workspace = selectors.workspace_for_user(request.user, ws)
    claim = _claim(workspace, pk)
    body = TrackSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    raw = body.validated_data["account"].strip()
    account = workspace.accounts.filter(twitter_id=int(raw)).first() if raw.isdigit() else None
    if account is None:
        raise ValidationError({"account": f"no account with Twitter id {raw!r} in this workspace"})
    if request.method == "POST":
        claim = _service(services.claim_track, claim=claim, account=account)
    else:
        claim = services.claim_untrack(claim=claim, account_pk=account.pk)
    return Response(ClaimSerializer(claim).data)
