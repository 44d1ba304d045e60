"""Data builders for the alert tests."""

from __future__ import annotations

import datetime as dt

from monitor.models import Account, DailyInfluence, PublisherDay
from tests.webapp import daily_partition

# two days of a synthetic publisher "p": the day-1 order x1 > x2 > ... > x6 turns into x6 > x5 > x1 > ... on day 2
DAY1, DAY2 = dt.date(2020, 3, 1), dt.date(2020, 3, 2)
RISING = {
    DAY1: {"x1": 60.0, "x2": 50.0, "x3": 40.0, "x4": 30.0, "x5": 20.0, "x6": 10.0},
    DAY2: {"x6": 100.0, "x5": 55.0, "x1": 50.0, "x2": 40.0, "x3": 30.0, "x4": 20.0},
}


def rising_ranks(ws) -> dict[str, Account]:
    """Writes the daily aggregates of :data:`RISING` directly; returns the accounts by name (``p`` too)."""
    names = ["p", *RISING[DAY1]]
    accounts = {
        n: Account.objects.create(workspace=ws, twitter_id=9000 + i, screen_name=n) for i, n in enumerate(names)
    }
    p = accounts["p"]
    daily_partition(ws)
    for day, scores in RISING.items():
        PublisherDay.objects.create(workspace=ws, publisher=p, day=day, tweets=1, reach=sum(scores.values()))
        DailyInfluence.objects.bulk_create(
            DailyInfluence(workspace=ws, publisher=p, account=accounts[n], day=day, influence=v, cascades=1)
            for n, v in scores.items()
        )
    return accounts
