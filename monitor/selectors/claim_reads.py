"""A claim's page reads (``selectors.claims`` finds the claim's tweets): its timeline, provenance, spreaders,
publishers and tracked accounts, each cached per data version."""

from __future__ import annotations

import datetime as dt

from django.db.models import Count, Max, Q, Sum
from django.db.models.functions import TruncDate

from ..cache import cached
from ..models import Account, CascadeInfluence, Claim, Label, Retweet, Tweet, Workspace
from .claims import ClaimTooBroad, QueryError, claim_tweets
from .windows import ALL_TIME, Window


@cached
def _claim_groups(ws: Workspace, text: str) -> list[tuple]:
    """The claim's tweets grouped by (UTC day, label, graph source, compute status): (day, label, source, status,
    tweets, reach) rows, reach None where none is computed. The timeline and the provenance are both sums of these
    rows, so a claim page reads its tweets once for the two (at 10M tweets a claim of 43,478 tweets took 360-420 ms
    a read, its rows lying all over the table: benchmarks/claims.md)."""
    return [
        (r["d"], r["label"], r["graph_source"], r["compute_status"], r["n"], r["reach"])
        for r in claim_tweets(ws, text)
        .annotate(d=TruncDate("created_at", tzinfo=dt.UTC))
        .values("d", "label", "graph_source", "compute_status")
        .annotate(n=Count("pk"), reach=Sum("reach"))
        .order_by()
    ]


@cached
def claim_timeline(ws: Workspace, text: str) -> list[dict]:
    """Per UTC day with any: the claim's tweets by truth label, its retweets (by the retweet's day) and the reach
    of its computed tweets, oldest first."""
    groups = _claim_groups(ws, text)
    days: dict[dt.date, dict] = {}

    def day(d: dt.date) -> dict:
        if d not in days:
            days[d] = {"day": d, "tweets": 0, "retweets": 0, "reach": 0.0, "by_label": {v: 0 for v in Label.values}}
        return days[d]

    for d, label, _, _, n, reach in groups:
        row = day(d)
        row["tweets"] += n
        row["reach"] += float(reach or 0.0)
        row["by_label"][label] += n
    for r in (
        Retweet.objects.filter(workspace=ws, tweet__in=claim_tweets(ws, text).values("pk"))
        .annotate(d=TruncDate("created_at", tzinfo=dt.UTC))
        .values("d")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        day(r["d"])["retweets"] += r["n"]
    return [days[d] for d in sorted(days)]


@cached
def claim_provenance(ws: Workspace, text: str) -> dict:
    """Where the spreaders of the claim whose query is ``text`` come from: its tweets computed with a spreading
    graph rebuilt from the follower graph (``follows``) or given by the input (``given``), and those not computed
    (``pending``: they count in no ranking yet)."""
    out = {"follows": 0, "given": 0, "pending": 0}
    for _, _, source, status, n, _ in _claim_groups(ws, text):
        if status == Tweet.ComputeStatus.COMPUTED:
            out[source] += n
        else:
            out["pending"] += n
    return out


@cached
def claim_spreaders(ws: Workspace, text: str, *, window: Window = ALL_TIME, limit: int = 50) -> list[dict]:
    """The influence ranking restricted to the tweets ``text`` finds (a claim's query), those computed and of
    ``window`` (by the tweet's day): each account's total influence over them and the number of them it spread,
    publishers' own rows left out (as the ranking pages do), largest first, ties by account."""
    rows = list(
        CascadeInfluence.objects.filter(
            window.filter("day"), workspace=ws, tweet__in=claim_tweets(ws, text).values("pk")
        )
        .exclude(role=CascadeInfluence.Role.PUBLISHER)
        .values("account_id")
        .annotate(total=Sum("influence"), cascades=Count("tweet_id", distinct=True))
        .order_by("-total", "account_id")[:limit]
    )
    accounts = Account.objects.in_bulk([r["account_id"] for r in rows])
    return [
        {
            "rank": i + 1,
            "account": r["account_id"],
            "twitter_id": accounts[r["account_id"]].twitter_id,
            "screen_name": accounts[r["account_id"]].screen_name,
            "total": float(r["total"]),
            "cascades": int(r["cascades"]),
            "participation": float(r["total"]) / r["cascades"] if r["cascades"] else 0.0,
        }
        for i, r in enumerate(rows)
    ]


@cached
def claim_publishers(ws: Workspace, text: str, *, window: Window = ALL_TIME, limit: int = 50) -> list[dict]:
    """The accounts that published the claim's tweets of ``window``: tweets, reach, and the tweets labelled
    false, most reach first."""
    rows = list(
        claim_tweets(ws, text)
        .filter(window.filter("created_at__date"))
        .values("author_id")
        .annotate(tweets=Count("pk"), reach=Sum("reach"), false=Count("pk", filter=Q(label=Label.FALSE)))
        .order_by("-reach", "-tweets", "author_id")[:limit]
    )
    accounts = Account.objects.in_bulk([r["author_id"] for r in rows])
    return [
        {
            "account": r["author_id"],
            "twitter_id": accounts[r["author_id"]].twitter_id,
            "screen_name": accounts[r["author_id"]].screen_name,
            "tweets": r["tweets"],
            "reach": float(r["reach"] or 0.0),
            "false": r["false"],
        }
        for r in rows
    ]


def claim_tracked(claim: Claim) -> list[dict]:
    """The accounts the claim tracks that still exist, in the order they were added, each with how much of the
    claim it spread: its tweets of the claim published, retweeted, and the time of the last one (None: none yet).
    An empty list when the claim's query cannot be read (its page says why)."""
    found = Account.objects.filter(workspace=claim.workspace, pk__in=list(claim.tracked or [])).in_bulk()
    accounts = [found[pk] for pk in claim.tracked or [] if pk in found]
    if not accounts:
        return []
    try:
        tweets = claim_tweets(claim.workspace, claim.query)
    except (QueryError, ClaimTooBroad):
        tweets = None
    pks = [a.pk for a in accounts]
    published, retweeted = {}, {}
    if tweets is not None:
        published = {
            r["author_id"]: r
            for r in tweets.filter(author_id__in=pks)
            .values("author_id")
            .annotate(n=Count("pk"), last=Max("created_at"))
        }
        retweeted = {
            r["retweeter_id"]: r
            for r in Retweet.objects.filter(
                workspace=claim.workspace, retweeter_id__in=pks, tweet__in=tweets.values("pk")
            )
            .values("retweeter_id")
            .annotate(n=Count("pk"), last=Max("created_at"))
        }
    out = []
    for a in accounts:
        p, r = published.get(a.pk), retweeted.get(a.pk)
        lasts = [x["last"] for x in (p, r) if x]
        out.append({"account": a, "published": p["n"] if p else 0, "retweeted": r["n"] if r else 0,
                    "last": max(lasts) if lasts else None})  # fmt: skip
    return out
