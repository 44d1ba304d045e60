"""Coordinated accounts: both methods against a direct transcription of their formulas (a loop over every pair of
accounts), on hand examples and on random retweets; the clusters, the order of the rows and the checks."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from compute.algorithms.coordination import (
    coordination,
    coordination_cost,
    coordination_cpu,
    number_clusters,
)

pytest.importorskip("hypothesis")
from hypothesis import given, settings
from hypothesis import strategies as st


def firsts(tweet, account, time) -> dict[tuple[int, int], float]:
    """(account, tweet) -> time of the account's first retweet of the tweet (the earliest; ties: the first row)."""
    out: dict[tuple[int, int], float] = {}
    for tw, a, t in zip(tweet, account, time):
        if (a, tw) not in out or t < out[(a, tw)]:
            out[(int(a), int(tw))] = float(t)
    return out


def co_retweet_by_hand(tweet, account, time, window, min_count) -> dict[tuple[str, str], float]:
    f = firsts(tweet, account, time)
    accounts = sorted({a for a, _ in f})
    tweets = sorted({tw for _, tw in f})
    out = {}
    for a, b in combinations(accounts, 2):
        c = sum(1 for tw in tweets if (a, tw) in f and (b, tw) in f and abs(f[(a, tw)] - f[(b, tw)]) <= window)
        if c >= min_count:
            out[tuple(sorted((str(a), str(b))))] = float(c)
    return out


def similarity_by_hand(tweet, account, time, min_retweets, threshold) -> dict[tuple[str, str], float]:
    f = firsts(tweet, account, time)
    per: dict[int, set[int]] = {}
    for a, tw in f:
        per.setdefault(a, set()).add(tw)
    kept = sorted(a for a, tws in per.items() if len(tws) >= min_retweets)
    n = len(kept)
    df: dict[int, int] = {}
    for a in kept:
        for tw in per[a]:
            df[tw] = df.get(tw, 0) + 1
    vec = {a: {tw: math.log(n / df[tw]) for tw in per[a]} for a in kept}
    out = {}
    for a, b in combinations(kept, 2):
        na = math.sqrt(sum(v * v for v in vec[a].values()))
        nb = math.sqrt(sum(v * v for v in vec[b].values()))
        if na == 0 or nb == 0:
            continue
        cos = sum(vec[a][tw] * vec[b].get(tw, 0.0) for tw in vec[a]) / (na * nb)
        if cos >= threshold - 1e-12:
            out[tuple(sorted((str(a), str(b))))] = min(cos, 1.0)
    return out


def as_dict(res) -> dict[tuple[str, str], float]:
    return {(r["a"], r["b"]): r["weight"] for r in res.rows()}


def test_co_retweet_counts_the_tweets_two_accounts_retweeted_within_the_window():
    # tweet 1: accounts 10, 11 at 0 and 30 s, 12 at 200 s; tweet 2: 10 and 11 at 0 and 61 s; tweet 3: 10, 11 together
    tweet = [1, 1, 1, 2, 2, 3, 3, 3]
    account = [10, 11, 12, 10, 11, 10, 11, 10]
    time = [0, 30, 200, 0, 61, 5, 5, 1]  # 10's second retweet of tweet 3 (5 s) is not its first (1 s)
    res = coordination_cpu(tweet, account, time, method="co-retweet", window=60, min_count=1)
    assert res.rows() == [{"a": "10", "b": "11", "weight": 2, "cluster": 1}]
    assert coordination_cpu(tweet, account, time, window=60, min_count=3).rows() == []
    assert as_dict(coordination_cpu(tweet, account, time, window=61, min_count=3)) == {("10", "11"): 3.0}
    assert res.pairs == coordination_cost(tweet, account, time, window=60) == 2


def test_similarity_is_the_cosine_of_idf_vectors_of_the_accounts_with_enough_retweets():
    # 1 and 2 retweet the same three tweets; 3 shares two of them; 4 retweeted one tweet only (not kept at 2)
    tweet = [100, 101, 102, 100, 101, 102, 100, 101, 103, 100]
    account = [1, 1, 1, 2, 2, 2, 3, 3, 3, 4]
    time = np.zeros(len(tweet))
    res = coordination_cpu(tweet, account, time, method="similarity", min_retweets=2, threshold=0.1)
    want = similarity_by_hand(tweet, account, time, 2, 0.1)
    assert as_dict(res) == pytest.approx(want)
    assert res.rows()[0]["a"] == "1" and res.rows()[0]["b"] == "2" and res.rows()[0]["weight"] == pytest.approx(1.0)
    assert res.accounts == 3  # N: 4 retweeted one tweet


def test_edges_are_ordered_by_weight_then_ids_as_strings_and_clusters_by_size():
    # ids 9 and 10: as strings "10" < "9"
    tweet = [1, 1, 2, 2, 3, 3, 4, 4, 4, 5, 5, 5]
    account = [9, 10, 9, 10, 7, 8, 20, 21, 22, 20, 21, 22]
    time = np.zeros(len(tweet))
    rows = coordination_cpu(tweet, account, time, window=0, min_count=1).rows()
    assert rows == [
        {"a": "10", "b": "9", "weight": 2, "cluster": 2},
        {"a": "20", "b": "21", "weight": 2, "cluster": 1},
        {"a": "20", "b": "22", "weight": 2, "cluster": 1},
        {"a": "21", "b": "22", "weight": 2, "cluster": 1},
        {"a": "7", "b": "8", "weight": 1, "cluster": 3},  # size 2 like cluster 2, whose smallest member "10" < "7"
    ]
    clusters = coordination_cpu(tweet, account, time, window=0, min_count=1).clusters()
    assert [(c["cluster"], c["size"], c["members"]) for c in clusters] == [
        (1, 3, ["20", "21", "22"]),
        (2, 2, ["10", "9"]),
        (3, 2, ["7", "8"]),
    ]


def test_number_clusters_of_no_edges_is_empty():
    assert len(number_clusters(np.zeros(0, np.int64), np.zeros(0, np.int64))) == 0


retweets = st.lists(st.tuples(st.integers(0, 6), st.integers(100, 112), st.integers(0, 300)), min_size=0, max_size=120)


@settings(max_examples=80, deadline=None)
@given(rows=retweets, window=st.sampled_from([0, 10, 60, 500]), min_count=st.integers(1, 3))
def test_co_retweet_equals_the_formula_on_random_retweets(rows, window, min_count):
    tweet, account, time = (np.array([r[i] for r in rows], dtype=np.int64) for i in range(3))
    res = coordination(tweet, account, time, method="co-retweet", window=window, min_count=min_count, backend="cpu")
    assert as_dict(res) == co_retweet_by_hand(tweet, account, time, window, min_count)
    weights = [r["weight"] for r in res.rows()]
    assert weights == sorted(weights, reverse=True)


@settings(max_examples=80, deadline=None)
@given(rows=retweets, min_retweets=st.integers(1, 4), threshold=st.sampled_from([0.05, 0.5, 0.9, 1.0]))
def test_similarity_equals_the_formula_on_random_retweets(rows, min_retweets, threshold):
    tweet, account, time = (np.array([r[i] for r in rows], dtype=np.int64) for i in range(3))
    res = coordination(
        tweet, account, time, method="similarity", min_retweets=min_retweets, threshold=threshold, backend="cpu"
    )
    got, want = as_dict(res), similarity_by_hand(tweet, account, time, min_retweets, threshold)
    # a cosine within rounding of the threshold may fall either way in two summation orders
    near = {k for k, v in {**got, **want}.items() if abs(v - threshold) < 1e-9}
    assert {k: v for k, v in got.items() if k not in near} == pytest.approx(
        {k: v for k, v in want.items() if k not in near}
    )


def test_it_refuses_parameters_outside_their_meaning_naming_them():
    one = ([1], [2], [0.0])
    with pytest.raises(ValueError, match="method"):
        coordination_cpu(*one, method="louvain")
    with pytest.raises(ValueError, match="window"):
        coordination_cpu(*one, window=-1)
    with pytest.raises(ValueError, match="min_count"):
        coordination_cpu(*one, min_count=0)
    with pytest.raises(ValueError, match="threshold"):
        coordination_cpu(*one, method="similarity", threshold=1.5)
    with pytest.raises(ValueError, match="differ in length"):
        coordination_cpu([1, 2], [3], [0.0])
    with pytest.raises(ValueError, match="finite time"):
        coordination_cpu([1], [2], [float("nan")])
