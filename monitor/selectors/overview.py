"""The overview's counts and sums: what a workspace holds, and its publishers with their reach."""

from __future__ import annotations

from django.db.models import Max, Min, Sum

from ..cache import cached
from ..models import Account, Publisher, PublisherDay, Retweet, Tweet, Workspace


@cached
def workspace_counts(ws: Workspace) -> dict:
    return {
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "computed": Tweet.objects.filter(workspace=ws, compute_status=Tweet.ComputeStatus.COMPUTED).count(),
        "retweets": Retweet.objects.filter(tweet__workspace=ws).count(),
        "accounts": Account.objects.filter(workspace=ws).count(),
        "publishers": Publisher.objects.filter(workspace=ws).count(),
    }


@cached
def publishers_summary(ws: Workspace, *, limit: int = 100, offset: int = 0) -> list[dict]:
    """Publishers with their computed tweets and reach, busiest first (one query)."""
    rows = (
        PublisherDay.objects.filter(workspace=ws)
        .values("publisher", "publisher__twitter_id", "publisher__screen_name")
        .annotate(tweets=Sum("tweets"), reach=Sum("reach"), first=Min("day"), last=Max("day"))
        .order_by("-tweets", "-reach", "publisher__twitter_id")[offset : offset + limit]
    )
    return [
        {
            "twitter_id": r["publisher__twitter_id"],
            "screen_name": r["publisher__screen_name"],
            "tweets": r["tweets"],
            "reach": r["reach"],
            "first": r["first"],
            "last": r["last"],
        }
        for r in rows
    ]
