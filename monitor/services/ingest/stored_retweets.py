"""Retweets stored before a merge that the upload gives again: moved to the upload's time where it is earlier,
and counted as one merge of the whole upload counts them, however many parts give them.

One merge keeps the earliest of an upload's repeats (the others count as ``duplicate_retweets``) and moves the
stored retweet to it when it is earlier (one of ``retweets_stored``). An import merged in parts
(``SPREADWATCH_IMPORT_PART_ROWS``) may meet a retweet stored before the import in several parts: the second part
that gives it gives a repeat, and the retweet was moved at most once, by whichever part gave a time earlier than
the stored one first. A stored row does not say which part met it (a moved retweet keeps the collection that
stored it), so the import keeps, per part, 64-bit hashes (``earlier_parts.pair_hashes``) of the (tweet,
retweeter) keys it gave and of those it moved. Two keys with one hash would count one repeat or one move wrongly
(about one chance in 2**64 / n for n such keys); the rows stored are exact whatever the hashes say."""

from __future__ import annotations

import numpy as np

from .earlier_parts import StoredKeys, pair_hashes

__all__ = ["StoredBefore", "move_stored_earlier", "update_retweets_sql"]


class StoredBefore:
    """An import in parts: the retweets stored before it that its earlier parts gave, and those they moved."""

    def __init__(self) -> None:
        self.given, self.moved = StoredKeys(), StoredKeys()

    def clear(self) -> None:
        self.given.clear()
        self.moved.clear()


def move_stored_earlier(m, upd: str, tweet_pk: np.ndarray, account_pk: np.ndarray) -> tuple[int, int]:
    """Stored retweets (none of them this import's) that the staging table ``upd`` (rows ``tweet_pk``,
    ``account_pk``, in its order) says happened earlier take its time; ``m``: the merge. Returns how many were
    moved and had not been moved by an earlier part of the import, and how many rows an earlier part gave too
    (repeats, as one merge counts them)."""
    sql = update_retweets_sql(m.d, m.ws, upd)
    if not m.in_parts:
        return m.run(sql), 0
    before: StoredBefore = m.st.stored_before
    given = pair_hashes(tweet_pk, account_pk)
    again = before.given.maybe(given)
    m.timed(sql + " RETURNING tweet_id, retweeter_id")
    keys = np.array(m.cur.fetchall(), np.int64).reshape(-1, 2)
    moved = pair_hashes(keys[:, 0], keys[:, 1])
    first = ~before.moved.maybe(moved)
    if m.st.final:
        before.clear()
    else:
        before.given.add(given[~again])
        before.moved.add(moved[first])
    return int(np.count_nonzero(first)), int(np.count_nonzero(again))


def update_retweets_sql(d, ws: int, upd: str) -> str:
    """Stored retweets that ``upd`` (a staging table of retweets) says happened earlier take its time, count
    and id. On SQLite too as UPDATE ... FROM (3.33+), a join its planner drives from the staging table through
    the retweets' (tweet, retweeter) key: correlated subqueries instead scanned the staging table once per stored
    retweet, and a re-upload of the 818 Twitter16 trees (347K retweets) did not finish in ten minutes."""
    if d.postgres:
        return f"""UPDATE monitor_retweet r SET created_at = to_timestamp(u.created_at),
                       followers_count = NULLIF(u.followers, 'NaN'::double precision),
                       retweet_id = CASE WHEN u.rid > 0 THEN u.rid END
                   FROM {upd} u WHERE r.workspace_id = {int(ws)} AND r.tweet_id = u.tweet AND r.retweeter_id = u.account
                       AND to_timestamp(u.created_at) < r.created_at"""
    ts = d.epoch_to_ts("u.created_at")
    return f"""UPDATE monitor_retweet SET created_at = {ts}, followers_count = u.followers,
                   retweet_id = CASE WHEN u.rid > 0 THEN u.rid END
               FROM {upd} u WHERE u.tweet = monitor_retweet.tweet_id AND u.account = monitor_retweet.retweeter_id
                   AND {ts} < monitor_retweet.created_at"""
