"""The overview's publisher reads sum the day totals per publisher first and name only the rows they keep: the
order (tweets, then reach, then Twitter id), the ties at a page's edge and the week totals are those of one query
over every publisher."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from monitor import selectors
from monitor.models import Account, PublisherDay

DAY = dt.date(2020, 3, 2)


@pytest.fixture
def days(ws_a):
    """40 publishers over 14 days, many tied in tweets and reach (ids in shuffled order, so the Twitter id decides
    the ties, not the key)."""
    rng = random.Random(7)
    tids = list(range(1000, 1040))
    rng.shuffle(tids)
    accounts = [Account.objects.create(workspace=ws_a, twitter_id=t, screen_name=f"p{t}") for t in tids]
    rows = []
    for i, a in enumerate(accounts):
        for d in range(14):
            if (i + d) % 3 == 0:
                continue
            tweets, reach = (1, 5.0) if i % 4 else (1 + d % 2, float(10 * (i % 5)))
            rows.append(
                PublisherDay(workspace=ws_a, publisher=a, day=DAY + dt.timedelta(days=d), tweets=tweets, reach=reach)
            )
    PublisherDay.objects.bulk_create(rows)
    return rows


def _expected_summary(rows) -> list[tuple]:
    per: dict[int, list] = {}
    for r in rows:
        p = per.setdefault(r.publisher.twitter_id, [0, 0.0, r.day, r.day])
        p[0] += r.tweets
        p[1] += r.reach
        p[2], p[3] = min(p[2], r.day), max(p[3], r.day)
    return sorted(((t, *v) for t, v in per.items()), key=lambda x: (-x[1], -x[2], x[0]))


@pytest.mark.parametrize("limit, offset", [(1, 0), (5, 0), (7, 3), (25, 0), (10, 30), (100, 0), (5, 40)])
def test_the_publishers_summary_pages_like_one_ordered_query(ws_a, days, limit, offset):
    want = _expected_summary(days)[offset : offset + limit]
    got = selectors.publishers_summary.__wrapped__(ws_a, limit=limit, offset=offset)
    assert [(r["twitter_id"], r["tweets"], r["reach"], r["first"], r["last"]) for r in got] == [
        (t, n, pytest.approx(reach), first, last) for t, n, reach, first, last in want
    ]
    assert all(r["screen_name"] == f"p{r['twitter_id']}" for r in got)


def test_the_weeks_rank_by_this_weeks_reach_and_count_every_publisher(ws_a, days):
    end = DAY + dt.timedelta(days=13)
    this_start, last_start = end - dt.timedelta(days=6), end - dt.timedelta(days=13)
    per: dict[int, list] = {}
    for r in days:
        p = per.setdefault(r.publisher.twitter_id, [0.0, 0.0, 0, 0])
        this = r.day >= this_start
        p[0 if this else 1] += r.reach
        p[2 if this else 3] += r.tweets
    order = sorted(per.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
    weeks = selectors.publishers_reach_weeks.__wrapped__(ws_a, 12, end=end)
    assert weeks["last"][0] == last_start
    assert [
        (r["twitter_id"], r["this_reach"], r["last_reach"], r["this_tweets"], r["last_tweets"]) for r in weeks["rows"]
    ] == [(t, pytest.approx(v[0]), pytest.approx(v[1]), v[2], v[3]) for t, v in order[:12]]
    assert weeks["publishers"] == len(per)
    assert weeks["this_reach"] == pytest.approx(sum(v[0] for v in per.values()))
    assert weeks["last_reach"] == pytest.approx(sum(v[1] for v in per.values()))
