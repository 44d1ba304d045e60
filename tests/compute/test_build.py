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


def test_many_retweets_with_wide_user_ids_keep_each_users_earliest_in_time_then_id_order():
    """Enough retweets for the packed, radix-sorted order (compute.arrays: from 65,536 values), Twitter-sized user
    ids, repeated retweets and equal times: each cascade is its publisher, then each user's earliest retweet
    (the first row of equal times), by time then user id."""
    rng = np.random.default_rng(7)
    n_tweets, n_rt = 300, 80_000
    users = rng.integers(10**17, 2 * 10**18, 5_000)
    rows = [(t + 1, None, int(users[t]), 0.0, 1) for t in range(n_tweets)]
    tweet = rng.integers(1, n_tweets + 1, n_rt)
    user = users[rng.integers(0, len(users), n_rt)]
    when = rng.integers(0, 500, n_rt).astype(float)  # whole seconds, many ties
    rows += [(0, int(t), int(u), float(w), int(k)) for k, (t, u, w) in enumerate(zip(tweet, user, when), 10)]
    c, rep = _build(rows)
    earliest: dict[tuple[int, int], tuple[float, int]] = {}  # (tweet, user) -> (time, count) of the first earliest
    for _, t, u, w, k in rows[n_tweets:]:
        if u != users[t - 1] and ((t, u) not in earliest or w < earliest[(t, u)][0]):
            earliest[(t, u)] = (w, k)
    for i in range(c.n_cascades):
        lo, hi = c.node_offsets[i], c.node_offsets[i + 1]
        tid = i + 1  # the originals sort by tweet id
        want = sorted((w, u, k) for (t, u), (w, k) in earliest.items() if t == tid)
        got = list(zip(c.times[lo + 1 : hi].tolist(), c.user_ids[lo + 1 : hi].tolist(), c.followers[lo + 1 : hi]))
        assert c.user_ids[lo] == users[i]
        assert [(w, u, int(k)) for w, u, k in got] == want, tid
    assert rep.duplicate_retweets == n_rt - rep.self_retweets - len(earliest)
