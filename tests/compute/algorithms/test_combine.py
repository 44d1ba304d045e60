from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.backward import backward
from compute.algorithms.combine import bucket_start, combine
from compute.algorithms.forward import forward

from ..helpers import worked_example


@pytest.fixture
def example():
    cascades, graph, expected = worked_example()
    influence = backward(forward(cascades, graph, backend="cpu"), backend="cpu").influence
    return cascades, influence, expected


@pytest.mark.parametrize("aggregate", ["total", "mean", "participation"])
def test_it_reproduces_the_worked_example_aggregates(example, aggregate):
    cascades, influence, expected = example
    r = combine(cascades, influence, aggregate=aggregate)
    assert {str(u): float(v) for u, v in zip(r.user_id, r.score)} == expected[aggregate]


def test_it_sorts_by_score_then_user_id(example):
    cascades, influence, _ = example
    r = combine(cascades, influence, aggregate="participation")
    # b=59, e=48, f=32, a=8, c=16, d=8: a (101) and d (104) tie at 8 and sort by id
    assert r.user_id.tolist() == [102, 105, 106, 103, 101, 104]
    assert r.cascades.tolist() == [2, 2, 2, 2, 2, 1]


def test_it_ranks_per_day_with_each_days_own_tweet_count(example):
    cascades, influence, _ = example
    r = combine(cascades, influence, aggregate="mean", bucket="day")
    days = [str(d) for d in r.bucket.astype("datetime64[D]")]
    assert days[:6] == ["2020-01-01"] * 6 and days[6:] == ["2020-01-02"] * 5
    assert r.group_tweets.tolist() == [1] * 11
    first_day = dict(zip(r.user_id[:6].tolist(), r.mean[:6].tolist()))
    assert first_day == {101: 15, 102: 63, 103: 28, 104: 8, 105: 48, 106: 32}


def test_it_groups_by_publisher_and_filters_one(example):
    cascades, influence, _ = example
    r = combine(cascades, influence, by_publisher=True)
    assert set(r.publisher_id.tolist()) == {102}
    assert len(combine(cascades, influence, publisher=999)) == 0


def test_it_leaves_rejected_cascades_out_of_every_count(example):
    cascades, influence, _ = example
    influence = influence.copy()
    influence[cascades.node_offsets[1] : cascades.node_offsets[2]] = np.nan
    r = combine(cascades, influence, aggregate="mean")
    assert r.group_tweets.tolist() == [1] * 6
    assert dict(zip(r.user_id.tolist(), r.total.tolist()))[102] == 63


def test_it_keeps_the_top_n_of_each_group(example):
    cascades, influence, _ = example
    r = combine(cascades, influence, bucket="day").top(2)
    assert len(r) == 4
    assert r.rows()[0]["user_id"] == "102" and r.rows()[2]["bucket"] == "2020-01-02"


@pytest.mark.parametrize(
    ("when", "kind", "start"),
    [
        ("2020-03-04T15:16:17", "day", "2020-03-04T00:00:00"),
        ("2020-03-04T15:16:17", "week", "2020-03-02T00:00:00"),  # a Wednesday; ISO weeks start Monday
        ("2020-03-01T00:00:00", "week", "2020-02-24T00:00:00"),  # a Sunday
        ("2020-03-02T00:00:00", "week", "2020-03-02T00:00:00"),  # a Monday
        ("2020-03-31T23:59:59", "month", "2020-03-01T00:00:00"),
    ],
)
def test_it_starts_buckets_on_utc_days_mondays_and_months(when, kind, start):
    t = np.datetime64(when, "s").astype(np.int64).astype(float)
    assert str(bucket_start(np.array([t]), kind)[0]) == start


def test_it_rejects_an_unknown_aggregate(example):
    cascades, influence, _ = example
    with pytest.raises(ValueError, match="aggregate must be one of"):
        combine(cascades, influence, aggregate="median")
