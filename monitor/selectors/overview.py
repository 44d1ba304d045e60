"""The overview's counts and sums: what a workspace holds, and its publishers with their reach."""

from __future__ import annotations

from ..cache import cached
from ..models import Account, Publisher, Retweet, Tweet, Workspace
from .history import publishers_reach_weeks
from .rankings import ranking
from .topn import top_named
from .windows import as_date, data_span


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
    """Publishers with their computed tweets and reach, busiest first (ties by Twitter id).

    The day totals are summed per publisher first, and only the publishers up to the page's last (with any tied
    with it) are joined to their accounts, by key: joined before the sums, PostgreSQL hashed the whole account
    table to name every publisher (at the 10M-retweet benchmark 4.3M accounts for 159,495 publishers: about 1 s
    of the overview)."""
    rows = top_named(
        """SELECT publisher_id, SUM(tweets) AS k1, SUM(reach) AS k2, MIN(day), MAX(day)
           FROM monitor_publisherday WHERE workspace_id = %s GROUP BY publisher_id""",
        [ws.pk],
        max(int(offset), 0) + max(int(limit), 0),
    )
    out = [
        {
            "twitter_id": tid,
            "screen_name": name,
            "tweets": tweets,
            "reach": reach,
            "first": as_date(f),
            "last": as_date(la),
        }
        for (_pk, tweets, reach, f, la), (tid, name) in rows
    ]
    return out[offset : offset + limit]


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
