"""Reads over time: the top accounts' rank per day, week or month (the bump chart), and each publisher's reach
this week against last week."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from django.db import connection

from ..cache import cached
from ..models import Account, Workspace
from .rankings import AGGREGATES, without_publisher
from .topn import top_named
from .windows import ALL_TIME, Window, as_date, covers_all_time, daily_where, data_span, period_sql


class _HistoryRow(NamedTuple):
    """One row of the rank-history query: an account's sums and rank in one period."""

    period: object  # a date, datetime or ISO string, as the database returns it (``as_date`` reads it)
    account: int
    influence: float
    cascades: int
    rank: int  # in the period
    ranked: int  # accounts ranked in the period
    overall_rank: int | None  # over the window; None: not among the top, read for the period's count only
    twitter_id: int | None  # None: not among the top (its name is not read)
    screen_name: str


def _history_sql(period: str, where: str, aggregate: str) -> str:
    """The one query: every (period, account) sum ranked within its period, kept for the window's top accounts
    (``o``) and for each period's first row, which carries the period's count of ranked accounts. The accounts'
    names are read after it (:func:`_named`): joined here, PostgreSQL joined every ranked row before the filter
    and so hashed the whole account table (428,923 rows, 70 of a publisher's 104 ms at the 1M benchmark)."""
    if aggregate == "participation":
        score_g = "CASE WHEN g.tv > 0 THEN g.inf / g.tv ELSE 0 END"
        score_o = "SUM(d.influence) / SUM(d.cascades)"
    else:
        score_g, score_o = "g.inf", "SUM(d.influence)"
    return f"""
        WITH g AS (
            SELECT {period} AS period, d.account_id AS account_id,
                   SUM(d.influence) AS inf, SUM(d.cascades) AS tv
            FROM monitor_dailyinfluence d WHERE {where}
            GROUP BY {period}, d.account_id
        ), r AS (
            SELECT g.period, g.account_id, g.inf, g.tv,
                   ROW_NUMBER() OVER (PARTITION BY g.period ORDER BY {score_g} DESC, g.account_id) AS rk,
                   COUNT(*) OVER (PARTITION BY g.period) AS n
            FROM g
        ), o AS (
            SELECT d.account_id, ROW_NUMBER() OVER (ORDER BY {score_o} DESC, d.account_id) AS orank
            FROM monitor_dailyinfluence d WHERE {where}
            GROUP BY d.account_id ORDER BY {score_o} DESC, d.account_id LIMIT %s
        )
        SELECT r.period, r.account_id, r.inf, r.tv, r.rk, r.n, o.orank
        FROM r LEFT JOIN o ON o.account_id = r.account_id
        WHERE o.orank IS NOT NULL OR r.rk = 1
        ORDER BY r.period, r.rk"""


def _named(rows: list[tuple]) -> list[_HistoryRow]:
    """The query's rows with the top accounts' Twitter ids and screen names, read by primary key (a few dozen)."""
    top = {row[1] for row in rows if row[6] is not None}
    names = {
        pk: (tid, name)
        for pk, tid, name in Account.objects.filter(pk__in=top).values_list("pk", "twitter_id", "screen_name")
    }
    return [_HistoryRow(*row, *names.get(row[1], (None, ""))) for row in rows]


def _periods(found: list[_HistoryRow]) -> tuple[list[dt.date], list[int], dict[dt.date, int]]:
    """The periods with influence in order, the accounts ranked in each, and each period's position."""
    periods: list[dt.date] = []
    ranked: list[int] = []
    pos: dict[dt.date, int] = {}
    for row in found:
        day = as_date(row.period)
        if day not in pos:
            pos[day] = len(periods)
            periods.append(day)
            ranked.append(int(row.ranked))
    return periods, ranked, pos


def _tweets_per_period(period: str, where: str, params: list) -> dict[dt.date, int]:
    """T of every period (the computed tweets), which ``mean`` divides by."""
    with connection.cursor() as cur:  # the same filter columns exist on PublisherDay
        cur.execute(
            f"SELECT {period}, SUM(d.tweets) FROM monitor_publisherday d WHERE {where} GROUP BY {period}", params
        )
        return {as_date(p): int(t or 0) for p, t in cur.fetchall()}


def _series(
    found: list[_HistoryRow], pos: dict[dt.date, int], aggregate: str, tweets_per_period: dict[dt.date, int]
) -> list[dict]:
    """One series per top account: its rank and score in every period (``None`` where it has no influence)."""
    series: dict[int, dict] = {}
    for row in found:
        if row.overall_rank is None:
            continue
        s = series.setdefault(
            row.account,
            {
                "account": row.account,
                "twitter_id": row.twitter_id,
                "screen_name": row.screen_name,
                "rank": int(row.overall_rank),
                "ranks": [None] * len(pos),
                "scores": [None] * len(pos),
            },
        )
        day = as_date(row.period)
        inf, tv = float(row.influence), int(row.cascades)
        if aggregate == "participation":
            score = inf / tv if tv else 0.0
        elif aggregate == "mean":
            t = tweets_per_period.get(day, 0)
            score = inf / t if t else 0.0
        else:
            score = inf
        s["ranks"][pos[day]] = int(row.rank)
        s["scores"][pos[day]] = score
    return sorted(series.values(), key=lambda s: s["rank"])


@cached
def _history_found(
    ws: Workspace,
    *,
    publisher: Account | None,
    window: Window,
    labels: list[str] | None,
    top: int,
    bucket: str,
    spreaders_only: bool,
    order: str,
) -> list[_HistoryRow]:
    """:func:`rank_history`'s query, its rows named: ranked by ``order`` (``total`` or ``participation``)."""
    where, params = daily_where(ws, publisher, window, labels)
    if spreaders_only:
        where, params = without_publisher(where, params, publisher)
    with connection.cursor() as cur:
        cur.execute(_history_sql(period_sql(bucket), " AND ".join(where), order), [*params, *params, int(top)])
        return _named(cur.fetchall())


@cached
def rank_history(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    aggregate: str = "total",
    window: Window = ALL_TIME,
    labels: list[str] | None = None,
    top: int = 10,
    bucket: str = "week",
    spreaders_only: bool = False,
) -> dict:
    """The rank of the window's top ``top`` accounts (by ``aggregate``, as :func:`ranking` orders them) in each
    day, week (from Monday) or month of the window: what a bump chart draws.

    In every period the accounts are ranked among all accounts with influence in that period (so one of the
    top can be 37th one week), ties by first appearance like :func:`ranking`; a period where an account has
    no influence has ``None``. Periods without any computed influence are left out. ``mean`` ranks like
    ``total`` within a period (T is the same for everyone); its values divide by the period's T. One query
    (two for ``mean``) whatever the window.

    ``spreaders_only``: each publisher's own rows are left out (of one publisher or all), as :func:`ranking` does.

    Returns ``{"bucket", "periods": [date], "ranked": [accounts ranked per period], "series": [{"account",
    "twitter_id", "screen_name", "rank" (over the window), "ranks": [int | None], "scores": [float | None]}]}``.
    """
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    period = period_sql(bucket)
    where, params = daily_where(ws, publisher, window, labels)
    # ``mean`` ranks like ``total`` (T is the same for everyone in a period): one query serves both
    found = _history_found(
        ws,
        publisher=publisher,
        window=ALL_TIME if covers_all_time(ws, window) else window,  # the same rows: the same query
        labels=labels,
        top=top,
        bucket=bucket,
        spreaders_only=spreaders_only,
        order="participation" if aggregate == "participation" else "total",
    )
    periods, ranked, pos = _periods(found)
    tweets_per_period = _tweets_per_period(period, " AND ".join(where), params) if aggregate == "mean" and found else {}
    return {
        "bucket": bucket,
        "aggregate": aggregate,
        "periods": periods,
        "ranked": ranked,
        "series": _series(found, pos, aggregate, tweets_per_period),
    }


class _WeekRow(NamedTuple):
    """One publisher's row of the week-over-week query; ``all_*`` and ``publishers`` are over every active
    publisher (window functions), the same on every row."""

    publisher: int
    twitter_id: int
    screen_name: str
    this_reach: float | None
    last_reach: float | None
    this_tweets: int | None
    last_tweets: int | None
    all_this_reach: float | None
    all_last_reach: float | None
    publishers: int


@cached
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
    # summed per publisher first, named by key after the cut (joined before, PostgreSQL hashed every account of
    # the workspace to name each publisher: about 1 s of the overview at the 10M-retweet benchmark)
    top = top_named(
        """SELECT d.publisher_id,
                  SUM(CASE WHEN d.day >= %s THEN d.reach ELSE 0 END) AS k1,
                  SUM(CASE WHEN d.day < %s THEN d.reach ELSE 0 END) AS k2,
                  SUM(CASE WHEN d.day >= %s THEN d.tweets ELSE 0 END),
                  SUM(CASE WHEN d.day < %s THEN d.tweets ELSE 0 END),
                  SUM(SUM(CASE WHEN d.day >= %s THEN d.reach ELSE 0 END)) OVER (),
                  SUM(SUM(CASE WHEN d.day < %s THEN d.reach ELSE 0 END)) OVER (),
                  COUNT(*) OVER ()
           FROM monitor_publisherday d
           WHERE d.workspace_id = %s AND d.day >= %s AND d.day <= %s
           GROUP BY d.publisher_id""",
        [this_start] * 6 + [ws.pk, last_start, end],
        max(int(limit), 0),
    )
    found = [_WeekRow(r[0], tid, name, *r[1:]) for r, (tid, name) in top]
    rows = []
    for row in found:
        this_r, last_r = float(row.this_reach or 0.0), float(row.last_reach or 0.0)
        rows.append(
            {
                "twitter_id": row.twitter_id,
                "screen_name": row.screen_name,
                "this_reach": this_r,
                "last_reach": last_r,
                "this_tweets": int(row.this_tweets or 0),
                "last_tweets": int(row.last_tweets or 0),
                "change": (this_r - last_r) / last_r if last_r else None,
            }
        )
    all_this = float(found[0].all_this_reach or 0.0) if found else 0.0
    all_last = float(found[0].all_last_reach or 0.0) if found else 0.0
    return {
        "this": (this_start, end),
        "last": (last_start, last_end),
        "rows": rows,
        "publishers": int(found[0].publishers) if found else 0,
        "this_reach": all_this,
        "last_reach": all_last,
        "change": (all_this - all_last) / all_last if all_last else None,
    }
