"""The overview's counts and sums: what a workspace holds, and its publishers with their reach."""

from __future__ import annotations

from django.db.models import Max, Min, Sum

from ..cache import cached
from ..models import Account, Publisher, PublisherDay, Retweet, Tweet, Workspace
from .history import publishers_reach_weeks
from .rankings import ranking
from .windows import data_span


@cached
def workspace_counts(ws: Workspace) -> dict:
    return {
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "computed": Tweet.objects.filter(workspace=ws, compute_status=Tweet.ComputeStatus.COMPUTED).count(),
        "retweets": Retweet.objects.filter(workspace=ws).count(),
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


def overview_page(ws: Workspace) -> dict:
    """The overview's data reads (each cached under the data version): the counts, the 25 busiest publishers,
    their reach week over week, the top 10 spreaders and the span of days with data. One function for the page
    and for the warm-up after a compute run (``monitor.services.warmup``), so both ask for the same cache keys.

    The top spreaders follow the publisher pages' rule (``spreaders_only``): a publisher's influence on its own
    tweets is their reach, not spreading, so it is not its own #1."""
    span = data_span(ws)
    return {
        "counts": workspace_counts(ws),
        "publishers": publishers_summary(ws, limit=25),
        "weeks": publishers_reach_weeks(ws, 10, end=span[1]),
        "top": ranking(ws, limit=10, spreaders_only=True),
        "span": span,
    }
