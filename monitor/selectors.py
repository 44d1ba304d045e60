"""Every read the dashboard and the API make. Each takes the workspace it reads from, so an object of another
workspace cannot leak through a forgotten filter; :func:`workspace_for_user` is the one place access is
decided (404, not 403, for a workspace the user is not in: its existence is not revealed)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.db import connection, models
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
    Label,
    Membership,
    Publisher,
    PublisherDay,
    Retweet,
    Tweet,
    Workspace,
)

AGGREGATES = ("total", "mean", "participation")
SORTS = (*AGGREGATES, "cascades")  # what a ranking can be ordered by: an aggregate, or T_v


# --- caching of the aggregate reads ----------------------------------------------------------------------------
#
# Rankings, rank histories and the overview's sums read the daily aggregates, which change only when a compute
# batch commits (or an import or purge changes the counts). Their results are cached per workspace under a
# *data version* that those writes bump (``bump_data_version``), so a cached page is never staler than the last
# commit; the TTL only bounds memory. The workspace's creation time is part of the key, so a recreated
# database (tests, a restored dump) never meets an old entry. ``SPREADWATCH_READ_CACHE_SECONDS=0`` turns it off.


def _version_key(ws_id: int) -> str:
    # the database's name is part of it: two databases (two deployments, or two test runs) sharing one Redis
    # must not share the counters of their workspaces with the same id
    return f"sw:data-version:{connection.settings_dict['NAME']}:{ws_id}"


def bump_data_version(ws_id: int) -> None:
    """Called after a write that changes what the cached reads return (on commit)."""
    from django.core.cache import cache

    try:
        cache.incr(_version_key(ws_id))
    except ValueError:  # no version yet: nothing cached under the old one either
        cache.set(_version_key(ws_id), 1, timeout=None)


def _cache_arg(v) -> str:
    if isinstance(v, models.Model):
        return f"{type(v).__name__}:{v.pk}"
    if isinstance(v, Window):
        return f"W:{v.start}:{v.end}"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_cache_arg(x) for x in v) + "]"
    return repr(v)


def _cached(fn):
    """Cache ``fn(ws, ...)`` under the workspace's data version (see above)."""
    import functools
    import hashlib
    import time

    def key_for(ws, *args, **kwargs) -> str:
        """The cache key of ``fn(ws, *args, **kwargs)`` under the workspace's current data version."""
        raw = "|".join(
            [fn.__name__, _current_version(ws)]
            + [_cache_arg(a) for a in args]
            + [f"{k}={_cache_arg(v)}" for k, v in sorted(kwargs.items())]
        )
        return "sw:read:" + hashlib.sha1(raw.encode()).hexdigest()

    @functools.wraps(fn)
    def wrapper(ws, *args, **kwargs):
        from django.conf import settings
        from django.core.cache import cache

        ttl = getattr(settings, "SPREADWATCH_READ_CACHE_SECONDS", 300)
        if ttl <= 0:
            return fn(ws, *args, **kwargs)
        key = key_for(ws, *args, **kwargs)
        hit = cache.get(key)
        if hit is not None:
            return hit
        # one process computes a missing value; the others asking for it meanwhile wait for its result (up to
        # SPREADWATCH_READ_CACHE_WAIT seconds, then compute it themselves) instead of all doing the same work
        # at once: the first minute after a compute run, when every page is cold, stays within what 2 cores do
        lock = key + ":building"
        if not cache.add(lock, 1, timeout=60):
            deadline = time.monotonic() + getattr(settings, "SPREADWATCH_READ_CACHE_WAIT", 10)
            while time.monotonic() < deadline:
                time.sleep(0.05)
                hit = cache.get(key)
                if hit is not None:
                    return hit
        try:
            value = fn(ws, *args, **kwargs)
            cache.set(key, value, timeout=ttl)
        finally:
            cache.delete(lock)
        return value

    wrapper.key_for = key_for
    return wrapper


def _current_version(ws: Workspace) -> str:
    """The workspace (its creation time included: a recreated database never meets old entries) and its data
    version counter."""
    from django.core.cache import cache

    return f"{ws.pk}:{ws.created_at.isoformat()}:{cache.get_or_set(_version_key(ws.pk), 1, timeout=None)}"


def data_version(ws: Workspace) -> str | None:
    """A name for the workspace's data as it is now (it changes with every compute commit and import), for
    caching what is derived from it; None while the read cache is off."""
    from django.conf import settings

    if getattr(settings, "SPREADWATCH_READ_CACHE_SECONDS", 300) <= 0:
        return None
    return _current_version(ws)


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


@_cached
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


@_cached
def ranking(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    aggregate: str = "total",
    window: Window = Window(),
    labels: list[str] | None = None,
    limit: int = 50,
    offset: int = 0,
    sort: str | None = None,
) -> RankingPage:
    """Accounts ranked by combined influence over the window's computed tweets (of one publisher, or of all
    publishers of the workspace). Four or five queries whatever the page size: T, the page with the number of
    ranked accounts, the page's accounts, and the unit. All time across publishers the page comes from the
    process's snapshot of the per-account sums (see below); otherwise one pass groups the daily aggregates (the
    count is a window function over the grouped rows). Ties are broken by the account's first appearance in the
    workspace.

    ``sort`` orders the rows by another column than ``aggregate`` (one of :data:`SORTS`; ``cascades`` is T_v,
    ties by total); ``score`` stays the aggregate's value."""
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    sort = sort or aggregate
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    days = PublisherDay.objects.filter(Q(workspace=ws) & window.filter())
    if publisher is not None:
        days = days.filter(publisher=publisher)
    if labels:
        days = days.filter(label__in=labels)
    where, params = _daily_where(ws, publisher, window, labels)
    tweets = days.aggregate(n=Sum("tweets"))["n"] or 0
    snap = _all_time(ws) if publisher is None and _covers_all_time(ws, window) else None
    if snap is not None:
        found, total_rows = snap.page(labels, sort, limit, offset)
    else:
        found, total_rows = _ranked_from_days(where, params, sort, limit, offset)
    accounts = {a.pk: a for a in Account.objects.filter(pk__in=[r[0] for r in found]).only("twitter_id", "screen_name")}
    rows = []
    for i, (pk, total, tv) in enumerate(found):
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


def _ranked_from_days(where: list[str], params: list, sort: str, limit: int, offset: int) -> tuple[list, int]:
    """A page of ``(account, Σ influence, T_v)`` grouped from the daily aggregates, and the number ranked."""
    order = {
        "participation": "SUM(d.influence) / SUM(d.cascades)",
        "cascades": "SUM(d.cascades) DESC, SUM(d.influence)",
    }.get(sort, "SUM(d.influence)")
    with connection.cursor() as cur:
        cur.execute(
            f"""SELECT d.account_id, SUM(d.influence), SUM(d.cascades), COUNT(*) OVER ()
                FROM monitor_dailyinfluence d WHERE {" AND ".join(where)}
                GROUP BY d.account_id ORDER BY {order} DESC, d.account_id LIMIT %s OFFSET %s""",
            [*params, limit, offset],
        )
        found = cur.fetchall()
    total_rows = int(found[0][3]) if found else (0 if offset == 0 else _count_ranked(where, params))
    return [r[:3] for r in found], total_rows


def _covers_all_time(ws: Workspace, window: Window) -> bool:
    """Whether the window holds every day with data (an open window, or a preset reaching past both ends)."""
    if not window.start and not window.end:
        return True
    lo, hi = data_span(ws)
    return lo is None or ((not window.start or window.start <= lo) and (not window.end or window.end >= hi))


# --- the all-time ranking across publishers, from a per-process snapshot -----------------------------------------
#
# Ranking every account over all time and all publishers groups every daily row (1.02M rows at the 1M-retweet
# benchmark: about 1.2 s on PostgreSQL here), and each sort, label filter and page is another such query. So each
# process keeps, per workspace and data version, the daily rows summed per (account, label) as NumPy columns
# (about 21 bytes a pair: 9 MB for 429K accounts), read once by binary COPY, and ranks any sort, label filter
# and page from them in milliseconds, with the SQL's order (score descending, ties by account). A compute commit
# bumps the data version, so a snapshot is never staler than the read cache. It is used only while the read
# cache is on (``SPREADWATCH_READ_CACHE_SECONDS`` > 0); the newest ``_ALL_TIME_KEEP`` stay in memory.

_ALL_TIME_KEEP = 4
_ALL_TIME: dict[str, _AllTime] = {}
_LABEL_CODES = {value: code for code, (value, _) in enumerate(Label.choices)}


class _AllTime:
    def __init__(self, account, label, influence, cascades):
        self.account, self.label, self.influence, self.cascades = account, label, influence, cascades
        self._orders: dict[tuple, tuple] = {}

    def ordered(self, labels: list[str] | None, sort: str):
        """Every ranked account of the label filter in ``sort``'s order: (accounts, totals, T_v)."""
        import numpy as np

        key = (tuple(sorted(labels)) if labels else None, sort)
        if key in self._orders:
            return self._orders[key]
        if labels:
            mask = np.isin(self.label, [_LABEL_CODES.get(x, -1) for x in labels])
            acc, inf, tv = self.account[mask], self.influence[mask], self.cascades[mask]
        else:
            acc, inf, tv = self.account, self.influence, self.cascades
        ids, inv = np.unique(acc, return_inverse=True)
        total = np.bincount(inv, weights=inf, minlength=len(ids))
        t_v = np.bincount(inv, weights=tv, minlength=len(ids)).astype(np.int64)
        if sort == "cascades":
            order = np.lexsort((ids, -total, -t_v))
        elif sort == "participation":
            order = np.lexsort((ids, -(total / np.maximum(t_v, 1))))
        else:
            order = np.lexsort((ids, -total))
        out = (ids[order], total[order], t_v[order])
        self._orders[key] = out
        return out

    def page(self, labels: list[str] | None, sort: str, limit: int, offset: int) -> tuple[list, int]:
        ids, total, t_v = self.ordered(labels, sort)
        sl = slice(offset, offset + limit)
        return list(zip(ids[sl].tolist(), total[sl].tolist(), t_v[sl].tolist(), strict=True)), len(ids)


def _all_time(ws: Workspace) -> _AllTime | None:
    from .db import copy_out

    key = data_version(ws)
    if key is None:
        return None
    snap = _ALL_TIME.get(key)
    if snap is None:
        codes = " ".join(f"WHEN '{value}' THEN {code}" for value, code in _LABEL_CODES.items())
        with connection.cursor() as cur:
            cols = copy_out(
                cur,
                f"""SELECT account_id, CASE label {codes} ELSE -1 END, SUM(influence), SUM(cascades)
                    FROM monitor_dailyinfluence WHERE workspace_id = %s GROUP BY account_id, label""",
                [ws.pk],
                [("account", "bigint"), ("label", "int"), ("influence", "float"), ("cascades", "bigint")],
            )
        snap = _AllTime(*cols)
        _ALL_TIME[key] = snap
        while len(_ALL_TIME) > _ALL_TIME_KEEP:
            _ALL_TIME.pop(next(iter(_ALL_TIME)))
    return snap


@_cached
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


@_cached
def workspace_counts(ws: Workspace) -> dict:
    return {
        "tweets": Tweet.objects.filter(workspace=ws).count(),
        "computed": Tweet.objects.filter(workspace=ws, compute_status=Tweet.ComputeStatus.COMPUTED).count(),
        "retweets": Retweet.objects.filter(tweet__workspace=ws).count(),
        "accounts": Account.objects.filter(workspace=ws).count(),
        "publishers": Publisher.objects.filter(workspace=ws).count(),
    }


@_cached
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


@_cached
def account_summary(ws: Workspace, account: Account, *, window: Window = Window()) -> dict:
    """An account's influence per publisher, per day, its cascades and follower-count history (cached under the
    workspace's data version, which imports bump too, so new follower counts show at once)."""
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


TIMELINE_POINTS = 512  # the explorer's retweet timeline is drawn from at most this many (delay, count) points


@_cached
def cascade_explorer_data(ws: Workspace, tweet: Tweet, *, limit: int = 400) -> dict:
    """What the cascade explorer draws: the publisher and the ``limit`` - 1 most influential other participants
    (chosen in SQL: a cascade may have tens of thousands), the spreading edges among them, the drawn retweeters'
    delays after the tweet, the cumulative retweet timeline (every retweet, sampled to at most
    ``TIMELINE_POINTS`` points), and how much was left out. Cached under the workspace's data version."""
    import numpy as np

    cols = ("account_id", "account__twitter_id", "account__screen_name", "influence", "followers", "role")
    base = CascadeInfluence.objects.filter(tweet=tweet)
    pub = tweet.author_id
    keep = list(base.filter(account_id=pub).values(*cols)) + list(
        base.exclude(account_id=pub).order_by("-influence", "account_id").values(*cols)[: max(limit - 1, 0)]
    )
    n_nodes = base.count() if tweet.n_participants == 0 else tweet.n_participants
    kept = np.array([n["account_id"] for n in keep], dtype=np.int64)
    g = CascadeGraph.objects.filter(tweet=tweet).first()
    src, dst = g.edge_arrays() if g is not None else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    mask = np.isin(src, kept) & np.isin(dst, kept)
    t0 = tweet.created_at
    times = Retweet.objects.filter(tweet=tweet)
    delays = {
        acc: (when - t0).total_seconds()
        for acc, when in times.filter(retweeter_id__in=kept.tolist()).values_list("retweeter_id", "created_at")
    }
    return {
        "tweet": str(tweet.tweet_id),
        "label": tweet.label,
        "unit": tweet.unit,
        "nodes": [
            {
                "id": n["account_id"],
                "tid": str(n["account__twitter_id"]),
                "name": n["account__screen_name"],
                "inf": n["influence"],
                "n": n["followers"],
                "role": n["role"],
                "delay": 0.0 if n["account_id"] == pub else delays.get(n["account_id"]),
            }
            for n in keep
        ],
        "edges": np.stack([src[mask], dst[mask]], axis=1).tolist(),
        "hidden": {"nodes": max(n_nodes - len(keep), 0), "edges": int(len(src) - mask.sum())},
        "timeline": _timeline(np.array([(w - t0).total_seconds() for w in times.values_list("created_at", flat=True)])),
    }


def _timeline(delays, points: int = TIMELINE_POINTS) -> dict:
    """The cumulative retweet curve as ``[delay, retweets so far]`` pairs: every retweet when there are at most
    ``points``, else ``points`` evenly spaced ranks (the first and the last included), which draws the same curve."""
    import numpy as np

    d = np.sort(np.asarray(delays, dtype=np.float64))
    n = len(d)
    ranks = np.arange(1, n + 1) if n <= points else np.unique(np.linspace(1, n, points).round().astype(np.int64))
    return {"n": n, "points": [[float(d[r - 1]), int(r)] for r in ranks]}


@_cached
def account_amplification(ws: Workspace, account: Account, *, cascades: int = 1000, top: int = 20) -> dict:
    """Whom ``account`` amplified (the accounts it retweeted from: its share flowed to them) and who amplified
    it (the accounts that retweeted from it), counted over its ``cascades`` most influential cascades. Cached
    under the workspace's data version (it reads up to ``cascades`` packed edge lists)."""
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


# --- analyst pages: rank over time, label split, week over week ---------------------------------------------------

BUCKETS = ("day", "week", "month")


def _period_sql(bucket: str) -> str:
    """SQL for the first day of ``d.day``'s period (weeks start on Monday, like ISO weeks)."""
    if bucket not in BUCKETS:
        raise ValueError(f"bucket must be one of {', '.join(BUCKETS)}")
    if bucket == "day":
        return "d.day"
    if connection.vendor == "postgresql":
        return f"CAST(date_trunc('{bucket}', d.day) AS date)"
    if connection.vendor == "sqlite":
        # 'weekday 0' moves forward to the Sunday ending the ISO week (or stays on it); 6 days back is its Monday
        return "date(d.day, 'weekday 0', '-6 days')" if bucket == "week" else "date(d.day, 'start of month')"
    raise NotImplementedError(f"rank_history: no period expression for {connection.vendor}")


def _as_date(value) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value)[:10])


def _daily_where(
    ws: Workspace, publisher: Account | None, window: Window, labels: list[str] | None
) -> tuple[list[str], list]:
    where = ["d.workspace_id = %s"]
    params: list = [ws.pk]
    if publisher is not None:
        where.append("d.publisher_id = %s")
        params.append(publisher.pk)
    if window.start:
        where.append("d.day >= %s")
        params.append(window.start)
    if window.end:
        where.append("d.day <= %s")
        params.append(window.end)
    if labels:
        where.append("d.label IN (" + ", ".join(["%s"] * len(labels)) + ")")
        params.extend(labels)
    return where, params


@_cached
def rank_history(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    aggregate: str = "total",
    window: Window = Window(),
    labels: list[str] | None = None,
    top: int = 10,
    bucket: str = "week",
) -> dict:
    """The rank of the window's top ``top`` accounts (by ``aggregate``, as :func:`ranking` orders them) in each
    day, week (from Monday) or month of the window: what a bump chart draws.

    In every period the accounts are ranked among all accounts with influence in that period (so one of the
    top can be 37th one week), ties by first appearance like :func:`ranking`; a period where an account has
    no influence has ``None``. Periods without any computed influence are left out. ``mean`` ranks like
    ``total`` within a period (T is the same for everyone); its values divide by the period's T. One query
    (two for ``mean``) whatever the window.

    Returns ``{"bucket", "periods": [date], "ranked": [accounts ranked per period], "series": [{"account",
    "twitter_id", "screen_name", "rank" (over the window), "ranks": [int | None], "scores": [float | None]}]}``.
    """
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    period = _period_sql(bucket)
    where, params = _daily_where(ws, publisher, window, labels)
    w = " AND ".join(where)
    if aggregate == "participation":
        score_g = "CASE WHEN g.tv > 0 THEN g.inf / g.tv ELSE 0 END"
        score_o = "SUM(d.influence) / SUM(d.cascades)"
    else:
        score_g, score_o = "g.inf", "SUM(d.influence)"
    sql = f"""
        WITH g AS (
            SELECT {period} AS period, d.account_id AS account_id,
                   SUM(d.influence) AS inf, SUM(d.cascades) AS tv
            FROM monitor_dailyinfluence d WHERE {w}
            GROUP BY {period}, d.account_id
        ), r AS (
            SELECT g.period, g.account_id, g.inf, g.tv,
                   ROW_NUMBER() OVER (PARTITION BY g.period ORDER BY {score_g} DESC, g.account_id) AS rk,
                   COUNT(*) OVER (PARTITION BY g.period) AS n
            FROM g
        ), o AS (
            SELECT d.account_id, ROW_NUMBER() OVER (ORDER BY {score_o} DESC, d.account_id) AS orank
            FROM monitor_dailyinfluence d WHERE {w}
            GROUP BY d.account_id ORDER BY {score_o} DESC, d.account_id LIMIT %s
        )
        SELECT r.period, r.account_id, r.inf, r.tv, r.rk, r.n, o.orank, a.twitter_id, a.screen_name
        FROM r LEFT JOIN o ON o.account_id = r.account_id JOIN monitor_account a ON a.id = r.account_id
        WHERE o.orank IS NOT NULL OR r.rk = 1
        ORDER BY r.period, r.rk"""
    with connection.cursor() as cur:
        cur.execute(sql, [*params, *params, int(top)])
        found = cur.fetchall()
    periods: list[dt.date] = []
    ranked: list[int] = []
    pos: dict[dt.date, int] = {}
    for p, *_rest, n, _orank, _tid, _name in found:
        day = _as_date(p)
        if day not in pos:
            pos[day] = len(periods)
            periods.append(day)
            ranked.append(int(n))
    t_per_period: dict[dt.date, int] = {}
    if aggregate == "mean" and found:
        with connection.cursor() as cur:  # the same filter columns exist on PublisherDay
            cur.execute(
                f"SELECT {period}, SUM(d.tweets) FROM monitor_publisherday d WHERE {w} GROUP BY {period}",
                params,
            )
            t_per_period = {_as_date(p): int(t or 0) for p, t in cur.fetchall()}
    series: dict[int, dict] = {}
    for p, acc, inf, tv, rk, _n, orank, tid, name in found:
        if orank is None:
            continue
        s = series.setdefault(
            acc,
            {
                "account": acc,
                "twitter_id": tid,
                "screen_name": name,
                "rank": int(orank),
                "ranks": [None] * len(periods),
                "scores": [None] * len(periods),
            },
        )
        i = pos[_as_date(p)]
        inf, tv = float(inf), int(tv)
        if aggregate == "participation":
            score = inf / tv if tv else 0.0
        elif aggregate == "mean":
            t = t_per_period.get(_as_date(p), 0)
            score = inf / t if t else 0.0
        else:
            score = inf
        s["ranks"][i] = int(rk)
        s["scores"][i] = score
    return {
        "bucket": bucket,
        "aggregate": aggregate,
        "periods": periods,
        "ranked": ranked,
        "series": sorted(series.values(), key=lambda s: s["rank"]),
    }


@_cached
def top_spreaders(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    window: Window = Window(),
    labels: list[str] | None = None,
    limit: int = 5,
) -> list[dict]:
    """The ``limit`` accounts with the most total influence over the window's tweets with these labels (one
    query, or the all-time snapshot across publishers; the order of :func:`ranking` by ``total``): e.g. who
    carries a publisher's false claims."""
    snap = _all_time(ws) if publisher is None and _covers_all_time(ws, window) else None
    if snap is not None:
        found, _ = snap.page(labels, "total", int(limit), 0)
        accs = Account.objects.only("twitter_id", "screen_name").in_bulk([r[0] for r in found])
        return [
            {
                "rank": i + 1,
                "account": pk,
                "twitter_id": accs[pk].twitter_id,
                "screen_name": accs[pk].screen_name,
                "total": float(total),
                "cascades": int(tv),
            }
            for i, (pk, total, tv) in enumerate(found)
        ]
    where, params = _daily_where(ws, publisher, window, labels)
    with connection.cursor() as cur:
        cur.execute(
            f"""SELECT d.account_id, a.twitter_id, a.screen_name, SUM(d.influence), SUM(d.cascades)
                FROM monitor_dailyinfluence d JOIN monitor_account a ON a.id = d.account_id
                WHERE {" AND ".join(where)}
                GROUP BY d.account_id, a.twitter_id, a.screen_name
                ORDER BY SUM(d.influence) DESC, d.account_id LIMIT %s""",
            [*params, int(limit)],
        )
        return [
            {
                "rank": i + 1,
                "account": pk,
                "twitter_id": tid,
                "screen_name": name,
                "total": float(total),
                "cascades": int(tv),
            }
            for i, (pk, tid, name, total, tv) in enumerate(cur.fetchall())
        ]


@_cached
def publishers_reach_weeks(ws: Workspace, limit: int = 25, *, end: dt.date | None = None) -> dict:
    """Each publisher's reach (and computed tweets) "this week" — the 7 days ending at ``end``, by default the
    newest day with data in the workspace — and "last week", the 7 days before; the publishers active in
    either, most reach this week first. One query (two when ``end`` is not given: :func:`data_span`).

    Returns ``{"this": (start, end), "last": (start, end), "rows": [...], "publishers": active publishers,
    "this_reach", "last_reach"}`` (totals over every active publisher, not only the ``limit`` shown); a row has
    ``change``, the relative change (``None`` when last week had no reach)."""
    if end is None:
        end = data_span(ws)[1]
    if end is None:
        return {"this": None, "last": None, "rows": [], "publishers": 0, "this_reach": 0.0, "last_reach": 0.0}
    this_start = end - dt.timedelta(days=6)
    last_start, last_end = end - dt.timedelta(days=13), end - dt.timedelta(days=7)
    with connection.cursor() as cur:
        cur.execute(
            """SELECT d.publisher_id, a.twitter_id, a.screen_name,
                      SUM(CASE WHEN d.day >= %s THEN d.reach ELSE 0 END) AS this_reach,
                      SUM(CASE WHEN d.day < %s THEN d.reach ELSE 0 END) AS last_reach,
                      SUM(CASE WHEN d.day >= %s THEN d.tweets ELSE 0 END) AS this_tweets,
                      SUM(CASE WHEN d.day < %s THEN d.tweets ELSE 0 END) AS last_tweets,
                      SUM(SUM(CASE WHEN d.day >= %s THEN d.reach ELSE 0 END)) OVER () AS all_this,
                      SUM(SUM(CASE WHEN d.day < %s THEN d.reach ELSE 0 END)) OVER () AS all_last,
                      COUNT(*) OVER () AS n
               FROM monitor_publisherday d JOIN monitor_account a ON a.id = d.publisher_id
               WHERE d.workspace_id = %s AND d.day >= %s AND d.day <= %s
               GROUP BY d.publisher_id, a.twitter_id, a.screen_name
               ORDER BY this_reach DESC, last_reach DESC, a.twitter_id
               LIMIT %s""",
            [this_start] * 6 + [ws.pk, last_start, end, int(limit)],
        )
        found = cur.fetchall()
    rows = []
    for _pk, tid, name, this_r, last_r, this_t, last_t, _all_this, _all_last, _n in found:
        this_r, last_r = float(this_r or 0.0), float(last_r or 0.0)
        rows.append(
            {
                "twitter_id": tid,
                "screen_name": name,
                "this_reach": this_r,
                "last_reach": last_r,
                "this_tweets": int(this_t or 0),
                "last_tweets": int(last_t or 0),
                "change": (this_r - last_r) / last_r if last_r else None,
            }
        )
    all_this = float(found[0][7] or 0.0) if found else 0.0
    all_last = float(found[0][8] or 0.0) if found else 0.0
    return {
        "this": (this_start, end),
        "last": (last_start, last_end),
        "rows": rows,
        "publishers": int(found[0][9]) if found else 0,
        "this_reach": all_this,
        "last_reach": all_last,
        "change": (all_this - all_last) / all_last if all_last else None,
    }


__all__ = [
    "AGGREGATES",
    "BUCKETS",
    "SORTS",
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
    "data_version",
    "membership_role",
    "publishers_reach_weeks",
    "publishers_summary",
    "rank_history",
    "ranking",
    "reach_by_label",
    "run_batches",
    "run_get",
    "runs_list",
    "top_spreaders",
    "tweet_get",
    "tweet_participants",
    "workspace_counts",
    "workspace_for_user",
    "workspaces_for_user",
]
