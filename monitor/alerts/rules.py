"""Evaluating one rule: which accounts (and tweets) satisfy its condition now. Pure reads; nothing is written.

Windows are inclusive ranges of UTC days that end at the newest day with data in the rule's scope
(``selectors.data_span``: the publisher's, or the workspace's): collections are historical, so "the last 7
days" means the last 7 days of data. The current window is ``[end - w + 1, end]``; the previous one, which
``top_k`` and ``rank_rise`` compare with, is ``[end - 2w + 1, end - w]``. Rankings come from
``selectors.ranking`` with the rule's aggregate, so an alert matches what the ranking page shows.

* ``top_k``: in the top K of the current window and not in the top K of the previous one.
* ``influence_threshold``: score (the rule's aggregate) in the current window > ``threshold``.
* ``rank_rise``: ranked in both windows and ``previous rank - rank >= places``. Only the first
  :data:`SCAN_LIMIT` ranks of each window are read; an account outside them is not compared.
* ``cascade_reach``: every computed tweet of the publisher (``None``: of any *monitored* publisher) posted in
  the current window whose ``reach`` > ``reach``; one alert per tweet (its window is the tweet's day).
* ``false_spreader``: accounts that took part, other than as the publisher, in at least ``count`` cascades
  labelled false (of the scope's publishers) posted in the current window.
* ``coordinated_cluster``: a co-retweet cluster (each pair retweeted at least 2 of the same tweets within 60 s,
  the Coordination page's defaults) of at least ``members`` accounts among those who retweeted the publisher's
  tweets posted in the current window (``None``: each *monitored* publisher's), whose members were mostly (half
  or more) not in a cluster of the previous window: a *new* cluster. One alert per cluster, named by its member
  with the most partners; largest first. A window whose retweets make more than :data:`CLUSTER_MAX_PAIRS` pairs
  is not evaluated (logged).
* ``watchlist_spreader``: accounts on the publisher's watch list (``selectors.wtf_watchlist``: its top spreaders'
  likely next amplifiers, as last computed) that took part, other than as the publisher, in a cascade of the
  publisher posted in the current window and in none posted before it (they *start* spreading it). Without a
  publisher: every publisher of the workspace that has a watch list. Most cascades first.
* ``claim_tracked_spreader``: accounts the rule's claim tracks that published or retweeted one of its tweets
  (of the rule's publisher, if it names one) in the current window and never before it: they *start* spreading
  the claim. The claim's windows end at the newest day with one of its tweets or a retweet of one.
* ``claim_reach_doubles``: the reach of the claim's tweets posted in the current window is at least twice that
  of the previous window (which must have some): one alert, named by the publisher whose tweets reached most.

Every function returns :class:`Candidate` rows, most notable first (the rate limit keeps the first ones).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Count, Max, Min, Sum

from compute.algorithms.coordination import coordination, coordination_cost
from compute.results import DEFAULT_MIN_COUNT, DEFAULT_WINDOW
from monitor import selectors
from monitor.algorithms.coordination import read_retweets
from monitor.models import Account, CascadeInfluence, Label, Publisher, Retweet, Tweet
from monitor.numbers import account_display, readable

from .kinds import KINDS
from .models import AlertRule

log = logging.getLogger(__name__)

SCAN_LIMIT = 5000  # ranks read per window by rank_rise and influence_threshold
PAGE = 500


@dataclass(frozen=True)
class Candidate:
    account_id: int
    window_start: dt.date
    window_end: dt.date
    value: float
    message: str
    tweet_id: int | None = None
    previous_value: float | None = None
    rank: int | None = None
    previous_rank: int | None = None

    @property
    def key(self) -> tuple:
        return (self.account_id, self.window_start, self.window_end, self.tweet_id)


def windows(rule: AlertRule) -> tuple[selectors.Window, selectors.Window] | None:
    """(current, previous) windows of the rule, or None when its scope has no data yet."""
    _, end = selectors.data_span(rule.workspace, rule.publisher)
    if end is None:
        return None
    w = rule.window_days
    current = selectors.Window(end - dt.timedelta(days=w - 1), end)
    previous = selectors.Window(end - dt.timedelta(days=2 * w - 1), end - dt.timedelta(days=w))
    return current, previous


def _scope(rule: AlertRule) -> str:
    return account_name(rule.publisher) if rule.publisher_id else "all publishers"


def account_name(row_or_account) -> str:
    """An account as the alert texts name it: ``@screen_name``, else its bare Twitter id."""
    if isinstance(row_or_account, dict):
        return account_display(row_or_account["twitter_id"], row_or_account["screen_name"])
    return account_display(row_or_account.twitter_id, row_or_account.screen_name)


def _span(w: selectors.Window) -> str:
    return f"{w.start:%Y-%m-%d}..{w.end:%Y-%m-%d}"


def _rows(rule: AlertRule, window: selectors.Window, limit: int):
    """The first ``limit`` ranking rows of the window, best first, read a page at a time (lazily: a caller that
    stops early reads no further page)."""
    offset = 0
    while offset < limit:
        want = min(PAGE, limit - offset)
        page = selectors.ranking(
            rule.workspace,
            publisher=rule.publisher,
            aggregate=rule.aggregate,
            window=window,
            limit=want,
            offset=offset,
        )
        yield from page.rows
        offset += len(page.rows)
        if len(page.rows) < want or offset >= page.total_rows:
            return


def _ranks(rule: AlertRule, window: selectors.Window, limit: int) -> list[dict]:
    return list(_rows(rule, window, limit))


def top_k(rule: AlertRule) -> list[Candidate]:
    ws = windows(rule)
    if ws is None:
        return []
    cur, prev = ws
    now = _ranks(rule, cur, rule.k)
    before = {r["account"]: r for r in _ranks(rule, prev, rule.k)}
    return [
        Candidate(
            account_id=r["account"],
            window_start=cur.start,
            window_end=cur.end,
            value=r["score"],
            rank=r["rank"],
            message=f"{account_name(r)} entered the top {rule.k} for {_scope(rule)} ({rule.aggregate}): "
            f"rank {r['rank']}, {readable(r['score'])} in {_span(cur)}",
        )
        for r in now
        if r["account"] not in before
    ]


def influence_threshold(rule: AlertRule) -> list[Candidate]:
    ws = windows(rule)
    if ws is None:
        return []
    cur, _ = ws
    out: list[Candidate] = []
    for r in _rows(rule, cur, SCAN_LIMIT):
        # total and mean are ordered by Σ influence, participation by its own ratio: all descending
        if r["score"] <= rule.threshold:
            break
        out.append(
            Candidate(
                account_id=r["account"],
                window_start=cur.start,
                window_end=cur.end,
                value=r["score"],
                rank=r["rank"],
                message=f"{account_name(r)}'s influence for {_scope(rule)} ({rule.aggregate}) is "
                f"{readable(r['score'])} in {_span(cur)}, above {readable(rule.threshold)}",
            )
        )
    return out


def rank_rise(rule: AlertRule) -> list[Candidate]:
    ws = windows(rule)
    if ws is None:
        return []
    cur, prev = ws
    before = {r["account"]: r for r in _ranks(rule, prev, SCAN_LIMIT)}
    out = []
    for r in _ranks(rule, cur, SCAN_LIMIT):
        p = before.get(r["account"])
        if p is None or p["rank"] - r["rank"] < rule.places:
            continue
        out.append(
            Candidate(
                account_id=r["account"],
                window_start=cur.start,
                window_end=cur.end,
                value=r["score"],
                previous_value=p["score"],
                rank=r["rank"],
                previous_rank=p["rank"],
                message=f"{account_name(r)} rose {p['rank'] - r['rank']} places for {_scope(rule)} ({rule.aggregate}): "
                f"rank {p['rank']} in {_span(prev)} -> {r['rank']} in {_span(cur)}",
            )
        )
    out.sort(key=lambda c: (c.rank - c.previous_rank, c.rank))  # biggest rise first
    return out


def cascade_reach(rule: AlertRule) -> list[Candidate]:
    ws = windows(rule)
    if ws is None:
        return []
    cur, _ = ws
    start = dt.datetime.combine(cur.start, dt.time.min, tzinfo=dt.UTC)
    stop = dt.datetime.combine(cur.end + dt.timedelta(days=1), dt.time.min, tzinfo=dt.UTC)
    tweets = Tweet.objects.filter(
        workspace=rule.workspace,
        compute_status=Tweet.ComputeStatus.COMPUTED,
        reach__gt=rule.reach,
        created_at__gte=start,
        created_at__lt=stop,
    )
    if rule.publisher_id:
        tweets = tweets.filter(author_id=rule.publisher_id)
    else:
        monitored = Publisher.objects.filter(workspace=rule.workspace, monitored=True).values("account_id")
        tweets = tweets.filter(author_id__in=monitored)
    out = []
    for t in tweets.select_related("author").order_by("-reach", "tweet_id")[:SCAN_LIMIT]:
        day = t.created_at.astimezone(dt.UTC).date()
        out.append(
            Candidate(
                account_id=t.author_id,
                tweet_id=t.pk,
                window_start=day,
                window_end=day,
                value=float(t.reach),
                message=f"a cascade of {account_name(t.author)} (tweet {t.tweet_id}, {day:%Y-%m-%d}) reached "
                f"{readable(t.reach)} {t.unit}, above {readable(rule.reach)}",
            )
        )
    return out


def false_spreader(rule: AlertRule) -> list[Candidate]:
    ws = windows(rule)
    if ws is None:
        return []
    cur, _ = ws
    rows = CascadeInfluence.objects.filter(
        cur.filter("day"), workspace_id=rule.workspace_id, tweet__label=Label.FALSE
    ).exclude(role=CascadeInfluence.Role.PUBLISHER)
    if rule.publisher_id:  # through the publisher's tweets: the per-cascade rows have no publisher index
        rows = rows.filter(tweet__in=Tweet.objects.filter(workspace=rule.workspace, author_id=rule.publisher_id))
    else:
        rows = rows.filter(tweet__workspace=rule.workspace)
    found = list(
        rows.values("account_id")
        .annotate(n=Count("tweet_id", distinct=True), influence=Sum("influence"))
        .filter(n__gte=rule.count)
        .order_by("-n", "-influence", "account_id")[:SCAN_LIMIT]
    )
    accounts = Account.objects.in_bulk([r["account_id"] for r in found])
    return [
        Candidate(
            account_id=r["account_id"],
            window_start=cur.start,
            window_end=cur.end,
            value=float(r["n"]),
            message=f"{account_name(accounts[r['account_id']])} spread {r['n']} cascades labelled false for "
            f"{_scope(rule)} in {_span(cur)} (at least {rule.count})",
        )
        for r in found
    ]


def watchlist_spreader(rule: AlertRule) -> list[Candidate]:
    publishers = [rule.publisher] if rule.publisher_id else selectors.wtf_watchlist_publishers(rule.workspace)
    out: list[Candidate] = []
    for publisher in publishers:
        ws = _publisher_windows(rule, publisher)
        if ws is None:
            continue
        cur, _ = ws
        watched = {r["account"]: r for r in selectors.wtf_watchlist(rule.workspace, publisher)["rows"]}
        if not watched:
            continue
        spread = (
            CascadeInfluence.objects.of_accounts(list(watched), rule.workspace_id)
            .filter(publisher=publisher)
            .exclude(role=CascadeInfluence.Role.PUBLISHER)
        )
        before = set(spread.filter(day__lt=cur.start).values_list("account_id", flat=True).distinct())
        found = (
            spread.filter(cur.filter("day"))
            .exclude(account_id__in=before)
            .values("account_id")
            .annotate(n=Count("tweet_id", distinct=True), influence=Sum("influence"), first=Min("day"))
            .order_by("-n", "-influence", "account_id")[:SCAN_LIMIT]
        )
        for r in found:
            w = watched[r["account_id"]]
            by = ", ".join(account_name(p) for p in w["pointed_by"][:3]) + (", ..." if len(w["pointed_by"]) > 3 else "")
            out.append(
                Candidate(
                    account_id=r["account_id"],
                    window_start=cur.start,
                    window_end=cur.end,
                    value=float(r["n"]),
                    message=f"{account_name(w)}, on the watch list of {account_name(publisher)} "
                    f"(a likely next amplifier of {by}), "
                    f"started spreading it: {r['n']} cascade{'s' if r['n'] != 1 else ''} in {_span(cur)}, the first "
                    f"on {r['first']:%Y-%m-%d}",
                )
            )
    out.sort(key=lambda c: -c.value)  # stable: each publisher's own order kept among equal counts
    return out


#: the co-retweet test of ``coordinated_cluster``: the command line's and the Coordination page's defaults
CLUSTER_WINDOW_S, CLUSTER_MIN_COUNT = DEFAULT_WINDOW, DEFAULT_MIN_COUNT
#: the pairs one publisher's window may make the rule count (about a second and 120 MB on one CPU core,
#: compute/costs.py): beyond, that publisher is skipped, logged, and its Coordination page is the way to look
CLUSTER_MAX_PAIRS = 5_000_000


def _clusters(rule: AlertRule, publisher: Account, window: selectors.Window) -> list[list[int]] | None:
    """The co-retweet clusters among the accounts that retweeted ``publisher``'s tweets posted in ``window``, as
    account pks, most partners first, the largest cluster first; None when they would count more than
    :data:`CLUSTER_MAX_PAIRS` pairs."""
    start = dt.datetime.combine(window.start, dt.time(), tzinfo=dt.UTC).timestamp()
    end = dt.datetime.combine(window.end + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC).timestamp()
    rt = read_retweets(rule.workspace_id, author=publisher.pk, since=int(start), until=int(end))
    if not len(rt):
        return []
    pairs = coordination_cost(rt.tweet, rt.twitter_id, rt.time, window=CLUSTER_WINDOW_S)
    if pairs > CLUSTER_MAX_PAIRS:
        log.warning(
            "alert rule %s: %s's retweets in %s make %d co-retweet pairs, more than %d: not evaluated",
            rule.pk, publisher.pk, _span(window), pairs, CLUSTER_MAX_PAIRS,
        )  # fmt: skip
        return None
    found = coordination(rt.tweet, rt.twitter_id, rt.time, window=CLUSTER_WINDOW_S, min_count=CLUSTER_MIN_COUNT,
                         backend="cpu")  # fmt: skip
    if not len(found):
        return []
    a, b = rt.pks_of(found.a), rt.pks_of(found.b)
    degree: dict[int, int] = {}
    members: dict[int, set[int]] = {}
    for x, y, k in zip(a.tolist(), b.tolist(), found.cluster.tolist(), strict=True):
        degree[x] = degree.get(x, 0) + 1
        degree[y] = degree.get(y, 0) + 1
        members.setdefault(k, set()).update((x, y))
    return [sorted(members[k], key=lambda pk: (-degree[pk], pk)) for k in sorted(members)]


def coordinated_cluster(rule: AlertRule) -> list[Candidate]:
    publishers = (
        [rule.publisher]
        if rule.publisher_id
        else [
            p.account
            for p in Publisher.objects.filter(workspace=rule.workspace, monitored=True).select_related("account")
        ]
    )
    out: list[Candidate] = []
    for publisher in publishers:
        ws = _publisher_windows(rule, publisher)
        if ws is None:
            continue
        cur, prev = ws
        now = _clusters(rule, publisher, cur)
        if not now:
            continue
        big = [m for m in now if len(m) >= rule.members]
        if not big:
            continue
        before = {pk for m in (_clusters(rule, publisher, prev) or []) for pk in m}
        names = Account.objects.in_bulk({pk for m in big for pk in m[:3]})
        for m in big:
            if 2 * len(before.intersection(m)) >= len(m):
                continue  # most of them were coordinated in the previous window already: not a new cluster
            shown = ", ".join(account_name(names[pk]) for pk in m[:3]) + (
                f" and {len(m) - 3} more" if len(m) > 3 else ""
            )
            out.append(
                Candidate(
                    account_id=m[0],
                    window_start=cur.start,
                    window_end=cur.end,
                    value=float(len(m)),
                    message=f"A new coordinated cluster of {len(m)} accounts ({shown}) spread "
                    f"{account_name(publisher)} in {_span(cur)}: each pair retweeted at least {CLUSTER_MIN_COUNT} of "
                    f"its tweets within {CLUSTER_WINDOW_S:g} s of each other (at least {rule.members} accounts)",
                )
            )
    out.sort(key=lambda c: -c.value)
    return out


def _publisher_windows(rule: AlertRule, publisher: Account) -> tuple[selectors.Window, selectors.Window] | None:
    """The rule's windows over one publisher's data (a rule without a publisher reads each watch list over its own
    publisher's days, as a rule scoped to it would)."""
    _, end = selectors.data_span(rule.workspace, publisher)
    if end is None:
        return None
    w = rule.window_days
    return (
        selectors.Window(end - dt.timedelta(days=w - 1), end),
        selectors.Window(end - dt.timedelta(days=2 * w - 1), end - dt.timedelta(days=w)),
    )


def _claim_scope(rule: AlertRule):
    """The claim's tweets now (of the rule's publisher, if it names one) and its (current, previous) windows, which
    end at the newest day with one of its tweets or a retweet of one; None when the claim has none, or its query
    no longer reads or matches too much (logged: the claim's page says why)."""
    try:
        tweets = selectors.claim_tweets(rule.workspace, rule.claim.query)
    except (selectors.QueryError, selectors.ClaimTooBroad) as e:
        log.warning("alert rule %s: claim %s not evaluated: %s", rule.pk, rule.claim_id, e)
        return None
    if rule.publisher_id:
        tweets = tweets.filter(author_id=rule.publisher_id)
    newest = [
        tweets.aggregate(t=Max("created_at"))["t"],
        Retweet.objects.filter(workspace=rule.workspace_id, tweet__in=tweets.values("pk")).aggregate(
            t=Max("created_at")
        )["t"],
    ]
    newest = [t for t in newest if t is not None]
    if not newest:
        return None
    end = max(newest).astimezone(dt.UTC).date()
    w = rule.window_days
    current = selectors.Window(end - dt.timedelta(days=w - 1), end)
    previous = selectors.Window(end - dt.timedelta(days=2 * w - 1), end - dt.timedelta(days=w))
    return tweets, current, previous


def claim_tracked_spreader(rule: AlertRule) -> list[Candidate]:
    found = _claim_scope(rule)
    tracked = [int(pk) for pk in rule.claim.tracked or []]
    if found is None or not tracked:
        return []
    tweets, cur, _ = found
    start = dt.datetime.combine(cur.start, dt.time(), tzinfo=dt.UTC)
    end = dt.datetime.combine(cur.end + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
    acts: dict[int, list[dt.datetime]] = {}  # each tracked account's publications and retweets of the claim
    for author, at in tweets.filter(author_id__in=tracked).values_list("author_id", "created_at"):
        acts.setdefault(author, []).append(at)
    for who, at in Retweet.objects.filter(
        workspace=rule.workspace_id, retweeter_id__in=tracked, tweet__in=tweets.values("pk")
    ).values_list("retweeter_id", "created_at"):
        acts.setdefault(who, []).append(at)
    accounts = Account.objects.in_bulk(list(acts))
    out = []
    for pk, times in acts.items():
        now = [t for t in times if start <= t < end]
        if not now or any(t < start for t in times):
            continue  # nothing in the window, or it spread the claim before: not a start
        out.append(
            Candidate(
                account_id=pk,
                window_start=cur.start,
                window_end=cur.end,
                value=float(len(now)),
                message=f"{account_name(accounts[pk])}, tracked for the claim “{rule.claim.name}”, started spreading "
                f"it: {len(now)} tweet{'s' if len(now) != 1 else ''} or retweet{'s' if len(now) != 1 else ''} in "
                f"{_span(cur)}, the first on {min(now):%Y-%m-%d %H:%M} UTC",
            )
        )
    out.sort(key=lambda c: (-c.value, c.account_id))
    return out


def claim_reach_doubles(rule: AlertRule) -> list[Candidate]:
    found = _claim_scope(rule)
    if found is None:
        return []
    tweets, cur, prev = found
    reach = {}
    for name, w in (("cur", cur), ("prev", prev)):
        reach[name] = tweets.filter(w.filter("created_at__date")).aggregate(r=Sum("reach"))["r"] or 0.0
    if reach["prev"] <= 0 or reach["cur"] < 2 * reach["prev"]:
        return []
    top = (
        tweets.filter(cur.filter("created_at__date"))
        .values("author_id")
        .annotate(r=Sum("reach"))
        .order_by("-r", "author_id")
        .first()
    )
    publisher = Account.objects.get(pk=top["author_id"])
    days = f"{rule.window_days} day{'s' if rule.window_days != 1 else ''}"
    return [
        Candidate(
            account_id=publisher.pk,
            window_start=cur.start,
            window_end=cur.end,
            value=float(reach["cur"]),
            previous_value=float(reach["prev"]),
            message=f"The claim “{rule.claim.name}” reached {readable(reach['cur'])} in {_span(cur)}, "
            f"{reach['cur'] / reach['prev']:.1f}× its {readable(reach['prev'])} of the {days} before; "
            f"most of it through {account_name(publisher)}",
        )
    ]


#: each kind's evaluator: the function of this module named like the kind (a kind without one fails here, at
#: import, rather than at its first evaluation)
EVALUATORS: dict[str, Callable[[AlertRule], list[Candidate]]] = {k.value: globals()[k.value] for k in KINDS}


def evaluate(rule: AlertRule) -> list[Candidate]:
    return EVALUATORS[rule.kind](rule)
