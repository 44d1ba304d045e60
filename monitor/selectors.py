"""Every read the dashboard and the API make. Each takes the workspace it reads from, so an object of another
workspace cannot leak through a forgotten filter; :func:`workspace_for_user` is the one place access is
decided (404, not 403, for a workspace the user is not in: its existence is not revealed)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Max, Min, Q, Sum
from django.http import Http404

from .models import (
    Account,
    CascadeGraph,
    CascadeInfluence,
    Collection,
    ComputeRun,
    DailyInfluence,
    FollowerCount,
    Membership,
    Publisher,
    PublisherDay,
    Retweet,
    Tweet,
    Workspace,
)

AGGREGATES = ("total", "mean", "participation")


def workspaces_for_user(user):
    if not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    return Workspace.objects.filter(memberships__user=user)


def workspace_for_user(user, slug: str) -> Workspace:
    ws = workspaces_for_user(user).filter(slug=slug).first()
    if ws is None:
        raise Http404("no such workspace")
    return ws


def membership_role(user, ws: Workspace) -> str | None:
    if user.is_superuser:
        return Membership.Role.OWNER
    return Membership.objects.filter(user=user, workspace=ws).values_list("role", flat=True).first()


def account_get(ws: Workspace, twitter_id: int) -> Account:
    acc = Account.objects.filter(workspace=ws, twitter_id=twitter_id).first()
    if acc is None:
        raise Http404("no such account in this workspace")
    return acc


def collection_get(ws: Workspace, pk: int) -> Collection:
    c = Collection.objects.filter(workspace=ws, pk=pk).select_related("uploaded_by").first()
    if c is None:
        raise Http404("no such collection in this workspace")
    return c


def run_get(ws: Workspace, pk: int) -> ComputeRun:
    r = ComputeRun.objects.filter(workspace=ws, pk=pk).select_related("collection", "created_by").first()
    if r is None:
        raise Http404("no such compute run in this workspace")
    return r


def tweet_get(ws: Workspace, tweet_id: int) -> Tweet:
    t = Tweet.objects.filter(workspace=ws, tweet_id=tweet_id).select_related("author").first()
    if t is None:
        raise Http404("no such tweet in this workspace")
    return t


# --- time windows -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """An inclusive range of UTC days; ``None`` ends are open."""

    start: dt.date | None = None
    end: dt.date | None = None

    def filter(self, field: str = "day") -> Q:
        q = Q()
        if self.start:
            q &= Q(**{f"{field}__gte": self.start})
        if self.end:
            q &= Q(**{f"{field}__lte": self.end})
        return q


def data_span(ws: Workspace, publisher: Account | None = None) -> tuple[dt.date | None, dt.date | None]:
    qs = PublisherDay.objects.filter(workspace=ws)
    if publisher is not None:
        qs = qs.filter(publisher=publisher)
    agg = qs.aggregate(lo=Min("day"), hi=Max("day"))
    return agg["lo"], agg["hi"]


# --- rankings -----------------------------------------------------------------------------------------------------


@dataclass
class RankingPage:
    rows: list[dict]
    tweets: int  # T: computed tweets in the group and window
    total_rows: int
    aggregate: str
    unit: str


def ranking(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    aggregate: str = "total",
    window: Window = Window(),
    labels: list[str] | None = None,
    limit: int = 50,
    offset: int = 0,
) -> RankingPage:
    """Accounts ranked by combined influence over the window's computed tweets (of one publisher, or of all
    publishers of the workspace). Four queries whatever the page size: T, the page with the number of ranked
    accounts (one pass over the daily aggregates: the count is a window function over the grouped rows), the
    page's accounts, and the unit. Ties are broken by the account's first appearance in the workspace."""
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    days = PublisherDay.objects.filter(Q(workspace=ws) & window.filter())
    where = ["d.workspace_id = %s"]
    params: list = [ws.pk]
    if publisher is not None:
        days = days.filter(publisher=publisher)
        where.append("d.publisher_id = %s")
        params.append(publisher.pk)
    if window.start:
        where.append("d.day >= %s")
        params.append(window.start)
    if window.end:
        where.append("d.day <= %s")
        params.append(window.end)
    if labels:
        days = days.filter(label__in=labels)
        where.append("d.label IN (" + ", ".join(["%s"] * len(labels)) + ")")
        params.extend(labels)
    tweets = days.aggregate(n=Sum("tweets"))["n"] or 0
    order = "SUM(d.influence) / SUM(d.cascades)" if aggregate == "participation" else "SUM(d.influence)"
    with connection.cursor() as cur:
        cur.execute(
            f"""SELECT d.account_id, SUM(d.influence), SUM(d.cascades), COUNT(*) OVER ()
                FROM monitor_dailyinfluence d WHERE {" AND ".join(where)}
                GROUP BY d.account_id ORDER BY {order} DESC, d.account_id LIMIT %s OFFSET %s""",
            [*params, limit, offset],
        )
        found = cur.fetchall()
    total_rows = int(found[0][3]) if found else (0 if offset == 0 else _count_ranked(where, params))
    accounts = {a.pk: a for a in Account.objects.filter(pk__in=[r[0] for r in found]).only("twitter_id", "screen_name")}
    rows = []
    for i, (pk, total, tv, _) in enumerate(found):
        acc = accounts[pk]
        total, tv = float(total), int(tv)
        row = {
            "rank": offset + i + 1,
            "account": pk,
            "twitter_id": acc.twitter_id,
            "screen_name": acc.screen_name,
            "total": total,
            "cascades": tv,
            "mean": total / tweets if tweets else 0.0,
            "participation": total / tv if tv else 0.0,
        }
        row["score"] = row[aggregate]
        rows.append(row)
    unit = _unit(ws, publisher)
    return RankingPage(rows=rows, tweets=tweets, total_rows=total_rows, aggregate=aggregate, unit=unit)


def reach_by_label(ws: Workspace, *, publisher: Account | None = None, window: Window = Window()) -> list[dict]:
    """The computed tweets and their summed reach per truth label (one query): whose claims travel."""
    qs = PublisherDay.objects.filter(Q(workspace=ws) & window.filter())
    if publisher is not None:
        qs = qs.filter(publisher=publisher)
    rows = list(qs.values("label").annotate(tweets=Sum("tweets"), reach=Sum("reach")).order_by("-reach", "label"))
    total = sum(r["reach"] or 0.0 for r in rows) or 1.0
    for r in rows:
        r["share"] = (r["reach"] or 0.0) / total
    return rows


def _count_ranked(where: list[str], params: list) -> int:
    """Ranked accounts when the page asked for is past the end (so the page query returned no row)."""
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT COUNT(DISTINCT d.account_id) FROM monitor_dailyinfluence d WHERE {' AND '.join(where)}", params
        )
        return int(cur.fetchone()[0])


def _unit(ws: Workspace, publisher: Account | None) -> str:
    qs = Tweet.objects.filter(workspace=ws, compute_status=Tweet.ComputeStatus.COMPUTED)
    if publisher is not None:
        qs = qs.filter(author=publisher)
    units = set(qs.values_list("unit", flat=True).distinct()[:2])
    if units == {"retweeters"}:
        return "retweeters reached"
    if len(units) > 1:
        return "mixed: followers reached, and retweeters reached where counts are unknown"
    return "followers reached"


# --- overview and pages -------------------------------------------------------------------------------------------


def workspace_counts(ws: Workspace) -> dict:
    return {
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "computed": Tweet.objects.filter(workspace=ws, compute_status=Tweet.ComputeStatus.COMPUTED).count(),
        "retweets": Retweet.objects.filter(tweet__workspace=ws).count(),
        "accounts": Account.objects.filter(workspace=ws).count(),
        "publishers": Publisher.objects.filter(workspace=ws).count(),
    }


def publishers_summary(ws: Workspace, *, limit: int = 100) -> list[dict]:
    """Publishers with their computed tweets and reach, busiest first (one query)."""
    rows = (
        PublisherDay.objects.filter(workspace=ws)
        .values("publisher", "publisher__twitter_id", "publisher__screen_name")
        .annotate(tweets=Sum("tweets"), reach=Sum("reach"), first=Min("day"), last=Max("day"))
        .order_by("-tweets", "-reach", "publisher__twitter_id")[:limit]
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


def collections_list(ws: Workspace, *, limit: int = 100):
    return Collection.objects.filter(workspace=ws).select_related("uploaded_by").order_by("-created_at")[:limit]


def runs_list(ws: Workspace, *, limit: int = 100):
    return ComputeRun.objects.filter(workspace=ws).select_related("collection", "created_by").order_by("-pk")[:limit]


def account_summary(ws: Workspace, account: Account, *, window: Window = Window()) -> dict:
    """An account's influence per publisher, per day, its cascades and follower-count history."""
    per_pub = list(
        DailyInfluence.objects.filter(Q(workspace=ws, account=account) & window.filter())
        .values("publisher__twitter_id", "publisher__screen_name")
        .annotate(total=Sum("influence"), n_cascades=Sum("cascades"))
        .order_by("-total")[:50]
    )
    per_day = list(
        DailyInfluence.objects.filter(Q(workspace=ws, account=account) & window.filter())
        .values("day")
        .annotate(total=Sum("influence"), n_cascades=Sum("cascades"))
        .order_by("day")
    )
    cascades = list(
        CascadeInfluence.objects.filter(Q(account=account) & window.filter())
        .select_related("tweet", "publisher")
        .order_by("-influence", "tweet__tweet_id")[:50]
    )
    published = Tweet.objects.filter(workspace=ws, author=account).aggregate(n=Count("pk"), reach=Sum("reach"))
    counts = list(FollowerCount.objects.filter(account=account).order_by("-observed_at")[:20])
    totals = DailyInfluence.objects.filter(Q(workspace=ws, account=account) & window.filter()).aggregate(
        total=Sum("influence"), n_cascades=Sum("cascades")
    )
    return {
        "per_publisher": per_pub,
        "per_day": per_day,
        "cascades": cascades,
        "published": published,
        "follower_counts": counts,
        "total": totals["total"] or 0.0,
        "n_cascades": totals["n_cascades"] or 0,
    }


def tweet_participants(tweet: Tweet, *, limit: int = 200) -> list[CascadeInfluence]:
    return list(
        CascadeInfluence.objects.filter(tweet=tweet)
        .select_related("account")
        .order_by("-influence", "account__twitter_id")[:limit]
    )


def cascade_graph(tweet: Tweet) -> dict:
    """One cascade as nodes (participants with influence, n_v, role, account) and spreading edges
    ``(src, dst)`` as Account pks: ``src`` could have seen the tweet from ``dst`` (DESIGN §1's (v, u))."""
    import numpy as np

    nodes = tweet_participants(tweet, limit=10**9)
    g = CascadeGraph.objects.filter(tweet=tweet).first()
    src, dst = g.edge_arrays() if g is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    return {"nodes": nodes, "src": src, "dst": dst}


def cascade_explorer_data(tweet: Tweet, *, limit: int = 400) -> dict:
    """What the cascade explorer draws: the publisher and the ``limit`` - 1 most influential other participants,
    the spreading edges among them, each retweet's delay after the tweet, and how much was left out."""
    import numpy as np

    g = cascade_graph(tweet)
    nodes = g["nodes"]
    pub = tweet.author_id
    keep = [n for n in nodes if n.account_id == pub] + [n for n in nodes if n.account_id != pub][: max(limit - 1, 0)]
    kept = {n.account_id for n in keep}
    src, dst = g["src"], g["dst"]
    mask = np.isin(src, list(kept)) & np.isin(dst, list(kept)) if len(src) else np.zeros(0, bool)
    t0 = tweet.created_at
    delays = {
        r["retweeter_id"]: (r["created_at"] - t0).total_seconds()
        for r in Retweet.objects.filter(tweet=tweet).values("retweeter_id", "created_at")
    }
    all_delays = sorted(d for d in delays.values() if d is not None)
    return {
        "tweet": str(tweet.tweet_id),
        "label": tweet.label,
        "unit": tweet.unit,
        "nodes": [
            {
                "id": n.account_id,
                "tid": str(n.account.twitter_id),
                "name": n.account.screen_name,
                "inf": n.influence,
                "n": n.followers,
                "role": n.role,
                "delay": 0.0 if n.account_id == pub else delays.get(n.account_id),
            }
            for n in keep
        ],
        "edges": np.stack([src[mask], dst[mask]], axis=1).tolist() if len(src) else [],
        "hidden": {"nodes": len(nodes) - len(keep), "edges": int(len(src) - mask.sum())},
        "timeline": all_delays,
    }


def account_amplification(ws: Workspace, account: Account, *, cascades: int = 1000, top: int = 20) -> dict:
    """Whom ``account`` amplified (the accounts it retweeted from: its share flowed to them) and who amplified
    it (the accounts that retweeted from it), counted over its ``cascades`` most influential cascades."""
    import numpy as np

    tweet_ids = list(
        CascadeInfluence.objects.filter(account=account, tweet__workspace=ws)
        .order_by("-influence")
        .values_list("tweet_id", flat=True)[:cascades]
    )
    amplified: dict[int, int] = {}
    amplified_by: dict[int, int] = {}
    for g in CascadeGraph.objects.filter(tweet_id__in=tweet_ids).only("edges"):
        src, dst = g.edge_arrays()
        for acc in np.unique(dst[src == account.pk]).tolist():
            amplified[acc] = amplified.get(acc, 0) + 1
        for acc in np.unique(src[dst == account.pk]).tolist():
            amplified_by[acc] = amplified_by.get(acc, 0) + 1

    def rows(counts: dict[int, int]) -> list[dict]:
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        accs = Account.objects.in_bulk([k for k, _ in best])
        return [{"account": accs[k], "cascades": n} for k, n in best if k in accs]

    return {"amplified": rows(amplified), "amplified_by": rows(amplified_by), "cascades_read": len(tweet_ids)}


def run_batches(run: ComputeRun):
    return run.batches.order_by("index").only(
        "index",
        "n_cascades",
        "n_nodes",
        "status",
        "attempts",
        "device",
        "timings",
        "error",
        "started_at",
        "finished_at",
        "run_id",
    )


__all__ = [
    "AGGREGATES",
    "RankingPage",
    "Window",
    "account_amplification",
    "account_get",
    "account_summary",
    "cascade_explorer_data",
    "cascade_graph",
    "collection_get",
    "collections_list",
    "data_span",
    "membership_role",
    "publishers_summary",
    "ranking",
    "reach_by_label",
    "run_batches",
    "run_get",
    "runs_list",
    "tweet_get",
    "tweet_participants",
    "workspace_counts",
    "workspace_for_user",
    "workspaces_for_user",
]
