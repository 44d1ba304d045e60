from __future__ import annotations

import numpy as np

from compute.build import build_cascades
from compute.tables import TweetTable


def _build(rows, **kw):
    return build_cascades(TweetTable.from_rows(rows), **kw)


def test_it_puts_the_publisher_first_and_retweeters_in_time_order():
    c, rep = _build([(1, None, 10, 0.0, 5), (0, 1, 30, 9.0, 1), (0, 1, 20, 4.0, 2), (0, 1, 40, 4.0, 3)])
    assert c.user_ids.tolist() == [10, 20, 40, 30]
    assert c.times.tolist() == [0, 4, 4, 9]
    assert c.publisher.tolist() == [0]
    assert rep.n_retweets_used == 3


def test_it_keeps_the_earliest_retweet_of_a_user():
    c, rep = _build([(1, None, 10, 0.0, 5), (0, 1, 20, 9.0, 7), (0, 1, 20, 3.0, 6)])
    assert c.user_ids.tolist() == [10, 20]
    assert c.times.tolist() == [0, 3]
    assert c.followers.tolist() == [5, 6]  # the count observed with the kept retweet
    assert rep.duplicate_retweets == 1


def test_it_drops_self_retweets_and_retweets_of_unknown_tweets():
    c, rep = _build([(1, None, 10, 0.0, 5), (0, 1, 10, 2.0, 5), (0, 99, 20, 2.0, 5)])
    assert c.user_ids.tolist() == [10]
    assert rep.self_retweets == 1 and rep.retweets_of_unknown_tweets == 1
    assert any("self-retweets" in line for line in rep.lines())


def test_it_treats_a_repeated_original_as_one_tweet_and_reports_conflicts():
    c, rep = _build([(1, None, 10, 0.0, 5), (1, None, 10, 0.0, 5), (1, None, 11, 0.0, 5)])
    assert c.n_cascades == 1 and c.user_ids.tolist() == [10]
    assert rep.duplicate_originals == 2 and rep.conflicting_originals == 1


def test_it_switches_to_retweeters_reached_when_no_counts_are_known():
    c, rep = _build([(1, None, 10, 0.0, None), (0, 1, 20, 1.0, None)])
    assert c.unit == "retweeters" and c.followers.tolist() == [1, 1]
    assert rep.unit == "retweeters"


def test_it_fills_a_missing_count_from_the_users_latest_known_one_else_zero():
    c, rep = _build(
        [
            (1, None, 10, 0.0, 5),
            (0, 1, 20, 1.0, None),
            (0, 1, 30, 2.0, None),
            (2, None, 20, 5.0, 40),
            (3, None, 20, 7.0, 70),
        ]
    )
    first = dict(zip(c.user_ids[:3].tolist(), c.followers[:3].tolist()))
    assert first == {10: 5, 20: 70, 30: 0}
    assert rep.followers_filled == 1 and rep.followers_unknown_as_zero == 1
    assert c.unit == "followers"


def test_it_attaches_labels_to_cascades():
    c, _ = _build([(1, None, 10, 0.0, 5), (2, None, 11, 0.0, 5)], labels={2: "false"})
    assert c.labels.tolist() == [None, "false"]


def test_it_builds_nothing_from_nothing():
    c, _ = build_cascades(TweetTable.empty())
    assert c.n_cascades == 0 and c.n_nodes == 0
    assert np.array_equal(c.node_offsets, [0])
