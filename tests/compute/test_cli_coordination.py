"""``python -m compute coordination`` end to end: every edge as the issue's JSON, the table of clusters, and bad
input exiting 2 with what is wrong."""

from __future__ import annotations

import json

import numpy as np

from compute.algorithms.coordination import coordination

from .test_cli import DATA, run_cli


def _tweets(tmp_path, n: int = 400, seed: int = 5):
    """Random retweets of 12 tweets by 30 accounts over 10 minutes, as a tweets CSV."""
    rng = np.random.default_rng(seed)
    tweet, account, time = rng.integers(0, 12, n), rng.integers(0, 30, n), rng.integers(0, 600, n)
    lines = ["tweet_id,retweeted_tweet_id,user_id,created_at,followers_count"]
    lines += [f"{1000 + t},,{900 + t},2020-01-01T00:00:00Z,5" for t in range(12)]
    lines += [
        f"{5000 + i},{1000 + t},{100 + a},2020-01-01T00:{s // 60:02d}:{s % 60:02d}Z,3"
        for i, (t, a, s) in enumerate(zip(tweet, account, time, strict=True))
    ]
    path = tmp_path / "tweets.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, (1000 + tweet, 100 + account, time.astype(float))


def test_co_retweet_json_is_every_edge_as_the_engine_computes_it(tmp_path):
    path, (tweet, account, time) = _tweets(tmp_path)
    res = run_cli(
        "coordination", str(path), "--window", "30", "--min-count", "2", "--backend", "cpu", "--output", "json"
    )
    rows = json.loads(res.stdout)
    want = coordination(tweet, account, time, window=30, min_count=2, backend="cpu")
    assert rows == want.rows() and len(rows) > 10
    assert all(set(r) == {"a", "b", "weight", "cluster"} and r["a"] < r["b"] for r in rows)
    assert [r["weight"] for r in rows] == sorted((r["weight"] for r in rows), reverse=True)


def test_similarity_table_names_the_method_its_parameters_and_the_clusters(tmp_path):
    path, _ = _tweets(tmp_path)
    out = run_cli(
        "coordination", str(path), "--method", "similarity", "--min-retweets", "5", "--threshold", "0.3",
        "--backend", "cpu",
    ).stdout  # fmt: skip
    first = out.splitlines()[0]
    assert first.startswith("similarity (min_retweets 5, threshold 0.3); backend cpu: ")
    assert "cluster  accounts    edges  members" in out and "weight  cluster" in out


def test_bad_input_exits_2_saying_what_is_missing_or_wrong(tmp_path):
    follows = run_cli("coordination", str(DATA / "thesis_example" / "follows.csv"), check=False)
    assert follows.returncode == 2 and "no tweets" in follows.stderr
    only_tweets = tmp_path / "originals.csv"
    only_tweets.write_text(
        "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count\n1,,2,2020-01-01T00:00:00Z,3\n"
    )
    none = run_cli("coordination", str(only_tweets), check=False)
    assert none.returncode == 2 and "no retweets" in none.stderr
    path, _ = _tweets(tmp_path)
    bad = run_cli("coordination", str(path), "--method", "similarity", "--threshold", "2", check=False)
    assert bad.returncode == 2 and "threshold: a cosine in (0, 1], got 2.0" in bad.stderr
