"""A tweets CSV with a planted coordinated group, shared by the coordination tests of every floor: random retweets
of 12 tweets (by 3 publishers) by 40 accounts over a day, and 5 accounts (twitter ids 501..505) that retweet the
same 4 tweets within 10 seconds of each other."""

from __future__ import annotations

import numpy as np

PLANTED = tuple(range(501, 506))
PLANTED_TWEETS = (1000, 1003, 1006, 1009)


def coordinated_csv(path, seed: int = 3, first_tweet: int = 1000, date: str = "2020-01-01"):
    """Write the CSV at ``path``; return it and the retweets as the engine reads them (tweet ids, account ids,
    seconds since the day's start). ``first_tweet`` moves the tweet ids (another collection's tweets; the planted
    group's tweets move with it), ``date`` the day it all happens on."""
    rng = np.random.default_rng(seed)
    n = 300
    tweet = rng.integers(0, 12, n) + first_tweet
    account = rng.integers(0, 40, n) + 100
    time = rng.integers(0, 86_000, n)
    planted = [
        (t - 1000 + first_tweet, a, 3600 * (t - 999) + rng.integers(0, 10)) for t in PLANTED_TWEETS for a in PLANTED
    ]
    tweet = np.r_[tweet, [p[0] for p in planted]]
    account = np.r_[account, [p[1] for p in planted]]
    time = np.r_[time, [p[2] for p in planted]]

    def at(s: int) -> str:
        s = int(s)
        return f"{date}T{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}Z"

    lines = ["tweet_id,retweeted_tweet_id,user_id,created_at,followers_count"]
    lines += [f"{first_tweet + t},,{900 + t % 3},{date}T00:00:00Z,50" for t in range(12)]
    lines += [f"{5000 + i},{t},{a},{at(s)},3" for i, (t, a, s) in enumerate(zip(tweet, account, time, strict=True))]
    path.write_text("\n".join(lines) + "\n")
    return path, (tweet.astype(np.int64), account.astype(np.int64), time.astype(np.float64))
