"""From tweet records to flat cascades (docs/measure.md), with a report of everything set aside.

Rules, in the order they apply:

* An original is a row with ``retweeted_tweet_id == -1``; the same tweet id seen again (a v1.1 retweet embeds
  its original, so this is normal) is one tweet. A repeated id whose author differs is reported as a conflict
  and the first row wins.
* A retweet of a tweet that is not in the input cannot be placed (its publisher and time are unknown): it is
  set aside and counted (``retweets_of_unknown_tweets``).
* A user retweeting their own tweet is not a retweeter (``self_retweets``).
* A user retweeting the same tweet several times keeps the earliest time (``duplicate_retweets``).
* Rows without a time (NaN) are set aside (``missing_times``); the readers already fall back to the snowflake
  time of the id, so this is rare.
* Follower counts (n_v): each participant gets the count observed with its own row (the retweet, or the
  original for the publisher). A missing count is filled with the same user's most recent known count
  elsewhere in the input. If the input has no counts at all (Twitter15/16 trees), every n_v is 1 and the unit
  becomes ``"retweeters"`` (docs/measure.md). If only some are missing and cannot be filled, those users count 0
  followers (they still pass on what reaches them) and the report says how many — a partial, honest score
  rather than a unit that silently changes.

Within a cascade the publisher is node 0 and the retweeters follow in time order (ties by user id), so the
spreading edges of the forward phase always point from a higher local index to a lower one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .arrays import lexorder, unique_inverse
from .structures import Cascades
from .tables import NO_TWEET, TweetTable

__all__ = ["BuildReport", "build_cascades"]


@dataclass
class BuildReport:
    n_tweets: int = 0
    n_retweets_used: int = 0
    retweets_of_unknown_tweets: int = 0
    self_retweets: int = 0
    duplicate_retweets: int = 0
    duplicate_originals: int = 0
    conflicting_originals: int = 0
    missing_times: int = 0
    retweets_before_original: int = 0
    followers_filled: int = 0
    followers_unknown_as_zero: int = 0
    unit: str = "followers"

    def to_dict(self) -> dict:
        return asdict(self)

    def lines(self) -> list[str]:
        """Human-readable notes for whatever was set aside or changed (empty when nothing was)."""
        notes = {
            "retweets_of_unknown_tweets": "retweets of tweets not in the input were skipped",
            "self_retweets": "self-retweets were dropped",
            "duplicate_retweets": "repeated retweets by the same user kept their earliest time",
            "conflicting_originals": "tweet ids appeared with different authors; the first row was kept",
            "missing_times": "rows without a time were skipped",
            "retweets_before_original": "retweets are timed before their original (they cannot get edges)",
            "followers_filled": "missing follower counts were filled from the same user's other rows",
            "followers_unknown_as_zero": "participants have no known follower count and count 0",
        }
        out = [f"{getattr(self, k):,} {text}" for k, text in notes.items() if getattr(self, k)]
        if self.unit == "retweeters":
            out.append("no follower counts in the input: n_v = 1, scores count retweeters reached")
        return out


def build_cascades(tweets: TweetTable, *, labels: dict[int, str] | None = None) -> tuple[Cascades, BuildReport]:
    """Group tweet rows into cascades. ``labels`` maps an original's tweet id to its truth label (it
    overrides the table's ``label`` column)."""
    rep = BuildReport()
    n_rows = len(tweets)
    has_time = ~np.isnan(tweets.created_at)
    rep.missing_times = int(n_rows - has_time.sum())
    is_rt = tweets.retweeted_tweet_id != NO_TWEET

    # --- originals: one per tweet id, the first row wins --------------------------------------------
    orig_rows = np.flatnonzero(~is_rt & has_time)
    oid = tweets.tweet_id[orig_rows]
    order = np.argsort(oid, kind="stable")
    orig_rows, oid = orig_rows[order], oid[order]
    first = np.ones(len(oid), dtype=bool)
    first[1:] = oid[1:] != oid[:-1]
    if len(oid):
        grp = np.cumsum(first) - 1
        authors = tweets.user_id[orig_rows]
        first_author = authors[first][grp]
        rep.conflicting_originals = int(np.count_nonzero(authors != first_author))
    rep.duplicate_originals = int(len(oid) - first.sum())
    orig_rows, oid = orig_rows[first], oid[first]
    n_casc = len(oid)
    rep.n_tweets = n_casc

    # --- retweets: attach to their original ---------------------------------------------------------
    rt_rows = np.flatnonzero(is_rt & has_time)
    target = tweets.retweeted_tweet_id[rt_rows]
    c = np.searchsorted(oid, target)
    c_clip = np.minimum(c, max(n_casc - 1, 0))
    known = (c < n_casc) & (oid[c_clip] == target) if n_casc else np.zeros(len(target), bool)
    rep.retweets_of_unknown_tweets = int(np.count_nonzero(~known))
    rt_rows, c = rt_rows[known], c[known]
    pub_user = tweets.user_id[orig_rows]
    selfrt = tweets.user_id[rt_rows] == pub_user[c]
    rep.self_retweets = int(np.count_nonzero(selfrt))
    rt_rows, c = rt_rows[~selfrt], c[~selfrt]

    # earliest time per (cascade, user): sort by cascade, user, time, row and keep the first of each run. The
    # users by their rank among the batch's users (the same order as their ids, in ~22 bits instead of Twitter ids'
    # 60), so that the keys pack into one integer (compute.arrays.lexorder): a 1M-retweet batch's two sorts 0.7-0.9
    # s by np.lexsort, 0.2-0.3 s so (benchmarks/data_layer.md, 2026-12-04 (third))
    rt_user = tweets.user_id[rt_rows]
    rt_time = tweets.created_at[rt_rows]
    u_rank = unique_inverse(rt_user)[1]
    order = lexorder((rt_rows, rt_time, u_rank, c))
    rt_rows, c, rt_user, rt_time, u_rank = rt_rows[order], c[order], rt_user[order], rt_time[order], u_rank[order]
    keep = np.ones(len(rt_rows), dtype=bool)
    keep[1:] = (c[1:] != c[:-1]) | (rt_user[1:] != rt_user[:-1])
    rep.duplicate_retweets = int(len(keep) - keep.sum())
    rt_rows, c, rt_user, rt_time, u_rank = rt_rows[keep], c[keep], rt_user[keep], rt_time[keep], u_rank[keep]
    rep.n_retweets_used = len(rt_rows)
    pub_time = tweets.created_at[orig_rows]
    rep.retweets_before_original = int(np.count_nonzero(rt_time < pub_time[c]))

    # --- node order: per cascade the publisher, then retweeters by (time, user id) ------------------
    order = lexorder((u_rank, rt_time, c))
    rt_rows, c = rt_rows[order], c[order]
    sizes = np.bincount(c, minlength=n_casc) + 1
    node_offsets = np.zeros(n_casc + 1, dtype=np.int64)
    np.cumsum(sizes, out=node_offsets[1:])
    n_nodes = int(node_offsets[-1])
    rows = np.empty(n_nodes, dtype=np.int64)  # the tweet row that describes each node
    publisher = node_offsets[:-1].copy()
    rows[publisher] = orig_rows
    is_pub = np.zeros(n_nodes, dtype=bool)
    is_pub[publisher] = True
    rows[~is_pub] = rt_rows  # rt_rows is grouped by cascade in the same order as the slots

    user_ids = tweets.user_id[rows]
    times = tweets.created_at[rows]
    followers = tweets.followers_count[rows].copy()
    followers, rep.unit, rep.followers_filled, rep.followers_unknown_as_zero = _fill_followers(
        tweets, user_ids, followers
    )

    cascade_labels = None
    if labels or tweets.label is not None:
        cascade_labels = np.full(n_casc, None, dtype=object)
        if tweets.label is not None:
            cascade_labels[:] = tweets.label[orig_rows]
        if labels:
            for k, tid in enumerate(oid.tolist()):
                if tid in labels:
                    cascade_labels[k] = labels[tid]
    casc = Cascades(
        node_offsets=node_offsets,
        user_ids=user_ids,
        followers=followers,
        publisher=publisher,
        tweet_ids=oid,
        times=times,
        unit=rep.unit,
        labels=cascade_labels,
    )
    return casc, rep


def _fill_followers(tweets: TweetTable, user_ids: np.ndarray, followers: np.ndarray):
    known_rows = ~np.isnan(tweets.followers_count)
    if not known_rows.any():
        return np.ones_like(followers), "retweeters", 0, 0
    missing = np.isnan(followers)
    filled = 0
    if missing.any():
        # the most recent known count of each user anywhere in the input
        ku = tweets.user_id[known_rows]
        kt = np.nan_to_num(tweets.created_at[known_rows], nan=-np.inf)
        kf = tweets.followers_count[known_rows]
        order = np.lexsort((kt, ku))
        ku, kf = ku[order], kf[order]
        last = np.ones(len(ku), dtype=bool)
        last[:-1] = ku[1:] != ku[:-1]
        ku, kf = ku[last], kf[last]
        mu = user_ids[missing]
        pos = np.minimum(np.searchsorted(ku, mu), len(ku) - 1)
        hit = ku[pos] == mu
        vals = np.where(hit, kf[pos], np.nan)
        followers[missing] = vals
        filled = int(hit.sum())
    still = np.isnan(followers)
    followers[still] = 0.0
    return followers, "followers", filled, int(still.sum())
