"""Upload rows that contradict a tweet already stored in the workspace (see the package docstring's policy)."""

from __future__ import annotations

import time

import numpy as np

from compute.arrays import sorted_positions, unique
from compute.formats import InputError
from compute.formats._report import BadRecord
from compute.formats.limits import fmt_time
from compute.tables import NO_TWEET

from ...db import ARRAY_LOOKUP_MAX, copy_out, int_array
from .columns import StoredTweets, TweetRows
from .stager import Stager, add_timing

__all__ = ["stored_conflicts"]


def stored_conflicts(st: Stager, ws: int, tweets: TweetRows) -> np.ndarray:
    """Rows that contradict a tweet already stored in the workspace (its author, its time to the second, or
    being an original): strict mode raises ``InputError`` on the first, in upload order; skip-bad reports each
    such tweet id once (at its first row) and returns the mask of its rows, which the merge leaves out."""
    drop = np.zeros(len(tweets.tweet_id), bool)
    rows = np.flatnonzero(tweets.tweet_id != 0)  # 0: a retweet whose own id is unknown (trees, TUDataset)
    if not len(rows):
        return drop
    stored = _stored(st, ws, _could_be_stored(st, unique(tweets.tweet_id[rows])))
    if not len(stored.tweet_id):
        return drop
    pos, hit = sorted_positions(stored.tweet_id, tweets.tweet_id[rows])
    rows, pos = rows[hit], pos[hit]
    stored_sec = np.floor(np.round(stored.created_at[pos], 3))
    is_rt = tweets.retweeted_id[rows] != NO_TWEET
    bad = is_rt | (tweets.user_id[rows] != stored.author_id[pos]) | (np.floor(tweets.created_at[rows]) != stored_sec)
    rows, pos, is_rt = rows[bad], pos[bad], is_rt[bad]
    if not len(rows):
        return drop
    where = st.where()
    for k in _first_per_tweet(where, tweets.tweet_id, rows):
        rec = _conflict(st, where, tweets, stored, int(rows[k]), int(pos[k]), bool(is_rt[k]), tweets.tweet_id[rows])
        if st.mode == "strict":
            raise InputError(rec)
        st.report.add(rec)
    drop[rows] = True
    return drop


def _could_be_stored(st: Stager, ids: np.ndarray) -> np.ndarray:
    """The ``ids`` (sorted) that can be stored tweets. A later part of an import into a workspace that had no
    account before it (``st.created``) can only meet the originals of the earlier parts (the merge lock keeps
    other writers out): the 10M-retweet benchmark's later parts staged and joined 2-3M ids each, the retweets'
    own among them, for 100-200K originals given again (6-8 s of its merge)."""
    if st.part and st.created is not None:
        return ids[sorted_positions(st.originals_counted, ids)[1]] if len(st.originals_counted) else ids[:0]
    return ids


def _stored(st: Stager, ws: int, ids: np.ndarray) -> StoredTweets:
    """The stored tweets among ``ids`` (sorted), with their authors' Twitter ids and their times."""
    d = st.d
    t0 = time.perf_counter()
    if d.postgres and len(ids) <= ARRAY_LOOKUP_MAX:
        # a small upload (a stream micro-batch): the tweets by an array, each author by its key. Joined (from a
        # staging table, or from the array alike), the authors were read by a hash of every account of the
        # workspace: 23-30 ms per micro-batch at 210,000 accounts and growing with them, against 8 ms
        sql = f"""SELECT t.tweet_id, (SELECT a.twitter_id FROM monitor_account a WHERE a.id = t.author_id),
                      {d.ts_to_epoch("t.created_at")}
                  FROM monitor_tweet t WHERE t.workspace_id = %s AND t.tweet_id = ANY({int_array(ids)})
                  ORDER BY t.tweet_id"""
    elif not len(ids) or not _has_tweets(st, ws):  # a workspace's first upload: nothing to stage and join
        z = np.zeros(0, np.int64)
        return StoredTweets(z, z, z.astype(np.float64))
    else:
        chk = st.stage("chk", [("tweet_id", "bigint")], [ids])
        sql = f"""SELECT t.tweet_id, a.twitter_id, {d.ts_to_epoch("t.created_at")} FROM {chk} s
                  {d.join} monitor_tweet t ON t.workspace_id = %s AND t.tweet_id = s.tweet_id
                  JOIN monitor_account a ON a.id = t.author_id ORDER BY t.tweet_id"""
    stored = StoredTweets(*copy_out(st.cur, sql, [ws], [("tweet_id", "bigint"), ("author", "bigint"), ("t", "float")]))
    add_timing(st.timings, "check stored tweets", t0)
    return stored


def _first_per_tweet(where: tuple[np.ndarray, np.ndarray], tweet_id: np.ndarray, rows: np.ndarray) -> list[int]:
    """Positions in ``rows`` of each conflicting tweet id's first row, in upload order (file, then line);
    ``where``: (file index, line) of every staged row."""
    src, line = where
    order = np.lexsort((line[rows], src[rows], tweet_id[rows]))
    first = np.ones(len(order), bool)
    first[1:] = tweet_id[rows][order][1:] != tweet_id[rows][order][:-1]
    firsts = order[first]
    return firsts[np.lexsort((line[rows][firsts], src[rows][firsts]))].tolist()


def _conflict(
    st: Stager,
    where: tuple[np.ndarray, np.ndarray],
    tweets: TweetRows,
    stored: StoredTweets,
    i: int,
    p: int,
    is_rt: bool,
    bad_ids: np.ndarray,
) -> BadRecord:
    """The bad record of upload row ``i`` against stored tweet ``p``; ``bad_ids``: the ids of every bad row."""
    src, line = where
    said = f"by user {int(stored.author_id[p])} at {fmt_time(float(stored.created_at[p]))}"
    tid = int(tweets.tweet_id[i])
    if is_rt:
        here = f"here it is a retweet of {int(tweets.retweeted_id[i])}"
    elif int(tweets.user_id[i]) != int(stored.author_id[p]):
        here = f"here by user {int(tweets.user_id[i])}"
    else:
        here = f"here at {fmt_time(float(tweets.created_at[i]))}"
    n_rows = int(np.count_nonzero(bad_ids == tid))
    more = f" ({n_rows:,} rows of this upload left out)" if n_rows > 1 and st.mode != "strict" else ""
    return BadRecord(
        st.names[int(src[i])],
        int(line[i]) if line[i] >= 0 else None,
        None,
        f"conflicts with a stored tweet: tweet {tid} is stored as an original {said}; {here}{more}",
        "conflicts with a stored tweet",
    )


def _has_tweets(st: Stager, ws: int) -> bool:
    st.cur.execute("SELECT EXISTS (SELECT 1 FROM monitor_tweet WHERE workspace_id = %s)", [ws])
    return bool(st.cur.fetchone()[0])
