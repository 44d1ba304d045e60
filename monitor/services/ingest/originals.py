"""The merge's originals (``monitor.services.ingest.merge``): the tweet ids an upload names, its original tweets
upserted into ``monitor_tweet`` in time order, and the stored tweets it names, for its retweets."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from compute.arrays import unique
from compute.tables import NO_TWEET

from ...db import copy_out
from .columns import AccountKeys, TweetKeys, TweetRows, first_of_runs, in_sorted

#: the merge under way (``merge._Merge``: its cursor, dialect, workspace, stager and counts), not imported here:
#: ``merge`` imports this module
_Merge = Any


class Originals(NamedTuple):
    """The upload's originals, one row per tweet id (the first row wins)."""

    rows: np.ndarray  # indices into the staged tweet rows
    author_pk: np.ndarray


def stage_named_tweets(m: _Merge, tweets: TweetRows) -> tuple[str, np.ndarray]:
    """Stage every tweet id the upload names (as an original or as retweeted); returns that staging table and
    the keys of those already stored before this merge, sorted."""
    is_rt = tweets.retweeted_id != NO_TWEET
    named = unique(np.concatenate([tweets.tweet_id[~is_rt], tweets.retweeted_id[is_rt]]))
    nt_stage = m.st.stage("named", [("tweet_id", "bigint")], [named])
    (old,) = copy_out(
        m.cur,
        f"""SELECT t.id FROM {nt_stage} s {m.d.join} monitor_tweet t
            ON t.workspace_id = %s AND t.tweet_id = s.tweet_id ORDER BY t.id""",
        [m.ws],
        [("id", "bigint")],
    )
    return nt_stage, old


def merge_originals(m: _Merge, tweets: TweetRows, accounts: AccountKeys) -> Originals:
    """Originals: one per tweet id, the first row wins; a stored tweet gains a label, text or follower count
    it lacked, and keeps the rest."""
    d, st = m.d, m.st
    rows = np.flatnonzero(tweets.retweeted_id == NO_TWEET)
    rows = rows[np.argsort(tweets.tweet_id[rows], kind="stable")]
    first = first_of_runs(tweets.tweet_id[rows])
    m.counts["tweets_in_upload"] = int(first.sum())
    rows = rows[first]
    originals = Originals(rows, accounts.of(tweets.user_id[rows]))
    ids = tweets.tweet_id[rows]
    n = len(rows)
    if st.given:
        given = np.array([st.given.get(int(x), None) is not None for x in ids], bool).astype(np.int64)
        times_known = np.array([bool(st.given.get(int(x), True)) for x in ids], bool).astype(np.int64)
    else:
        given, times_known = np.zeros(n, np.int64), np.ones(n, np.int64)
    orig_cols = [
        ("tweet_id", "bigint"),
        ("author", "bigint"),
        ("created_at", "float"),
        ("followers", "float"),
        ("given", "int"),
        ("times_known", "int"),
    ]
    earlier = in_sorted(st.originals_counted, ids) if m.in_parts else np.zeros(n, bool)
    write, followers = _offered(st, ids, earlier, tweets.followers[rows])
    orig_stage = st.stage(
        "orig",
        orig_cols,
        [col[write] for col in (ids, originals.author_pk, tweets.created_at[rows], followers, given, times_known)],
    )
    texts = st.stage_text(
        "texts",
        "tweet_id bigint, text text, label varchar(16), hashtags text, urls text, domains text",
        ("tweet_id", "text", "label", "hashtags", "urls", "domains"),
        [(k, *v) for k, v in st.texts_seen.items()],
    )
    if m.in_parts:  # an original counted by an earlier part of this upload is not counted again
        m.counts["tweets_in_upload"] = int(np.count_nonzero(~earlier))
        st.originals_counted = np.union1d(st.originals_counted, ids)
    count_sql = "SELECT count(*) FROM monitor_tweet WHERE workspace_id = %s"
    before = m.count(count_sql, [m.ws])
    # (an original whose text an earlier part of this upload stored is not in ``texts``: the first one wins)
    # In time order: an upload's tweets then lie in the table's pages as they lie in time, so that the reads that
    # walk the time index newest first (the tweet search, the newest tweets) read neighbouring rows, not rows
    # scattered over the whole upload (benchmarks/claims.md: a phrase of two common words by relevance at 10M
    # tweets took 460 ms in tweets scattered in time, 87 ms in tweets written in time order)
    m.run(
        f"""INSERT INTO monitor_tweet (workspace_id, tweet_id, author_id, created_at, text, label, author_followers,
                graph_source, times_known, collection_id, compute_status, n_participants, n_edges, n_orphans, unit,
                hashtags, urls, domains)
            SELECT %s, o.tweet_id, o.author, {d.epoch_to_ts("o.created_at")}, COALESCE(tx.text, ''),
                COALESCE(tx.label, 'unknown'), {d.nan_to_null("o.followers")},
                CASE WHEN o.given = 1 THEN 'given' ELSE 'follows' END, o.times_known = 1,
                %s, 'pending', 0, 0, 0, 'followers',
                COALESCE(tx.hashtags, ''), COALESCE(tx.urls, ''), COALESCE(tx.domains, '')
            FROM {orig_stage} o LEFT JOIN {texts} tx ON tx.tweet_id = o.tweet_id
            WHERE true
            ORDER BY o.created_at, o.tweet_id
            ON CONFLICT (workspace_id, tweet_id) DO UPDATE SET
                label = CASE WHEN excluded.label <> 'unknown' THEN excluded.label ELSE monitor_tweet.label END,
                text = CASE WHEN excluded.text <> '' THEN excluded.text ELSE monitor_tweet.text END,
                hashtags = CASE WHEN excluded.hashtags <> '' THEN excluded.hashtags ELSE monitor_tweet.hashtags END,
                urls = CASE WHEN excluded.urls <> '' THEN excluded.urls ELSE monitor_tweet.urls END,
                domains = CASE WHEN excluded.urls <> '' THEN excluded.domains ELSE monitor_tweet.domains END,
                author_followers = COALESCE(monitor_tweet.author_followers, excluded.author_followers)
            WHERE {_UPSERT_CHANGES}""",
        [m.ws, m.coll],
    )
    m.counts["tweets_new"] = m.count(count_sql, [m.ws]) - before
    return originals


def _offered(st, ids: np.ndarray, earlier: np.ndarray, followers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The originals the upsert is given (positions in ``ids``) and their follower counts. An original an earlier
    part of this upload stored (``earlier``) is given again only for a text, label or links no earlier part gave
    (the part's ``texts_seen`` holds only those), and never with a follower count: in one merge of the whole
    upload its first row's count (or none) is final. The others would change nothing, yet ON CONFLICT DO UPDATE
    locks every row it finds, whatever its WHERE says: a write to the row's page and a WAL record each (200K
    originals given again: 2.3-2.6 s for no row written, benchmarks/data_layer.md, 2026-12-05 (fourth))."""
    if not earlier.any():
        return np.arange(len(ids)), followers
    gives = np.fromiter(
        (k for k, (text, label, tags, urls, _) in st.texts_seen.items() if text or tags or urls or label != "unknown"),
        np.int64,
    )
    return np.flatnonzero(~earlier | np.isin(ids, gives)), np.where(earlier, np.nan, followers)


# an original given again is rewritten only when it changes the stored row: a rewrite of the same values is a new row
# version, its search vector computed again, new entries in every index (the 10M benchmark's parts: 100-200K each)
_UPSERT_CHANGES = """(excluded.label <> 'unknown' AND excluded.label <> monitor_tweet.label)
    OR (excluded.text <> '' AND excluded.text <> monitor_tweet.text)
    OR (excluded.hashtags <> '' AND excluded.hashtags <> monitor_tweet.hashtags)
    OR (excluded.urls <> '' AND (excluded.urls <> monitor_tweet.urls OR excluded.domains <> monitor_tweet.domains))
    OR (monitor_tweet.author_followers IS NULL AND excluded.author_followers IS NOT NULL)"""


def named_tweets(m: _Merge, nt_stage: str) -> TweetKeys:
    """The workspace's tweets this upload names (as originals or as retweeted), for the retweets."""
    return TweetKeys(
        *copy_out(
            m.cur,
            f"""SELECT t.tweet_id, t.id, t.author_id FROM {nt_stage} s {m.d.join} monitor_tweet t
                ON t.workspace_id = %s AND t.tweet_id = s.tweet_id ORDER BY t.tweet_id""",
            [m.ws],
            [("tweet_id", "bigint"), ("id", "bigint"), ("author", "bigint")],
        )
    )
