"""The merge: the staged upload into the workspace's tables, one step per table, in one transaction.

Merging the same upload twice stores each record once: every step keys its rows by natural ids. The big tables
(accounts, retweets, follower counts, follows) are not merged row by row with ``INSERT ... ON CONFLICT`` (on
PostgreSQL that costs about twice a plain insert: each row probes the unique index, inserts, then checks again);
instead each step finds, set-based in one pass, which of its rows can already be stored, and inserts the rest
with a plain ``INSERT ... SELECT`` (follows: a COPY straight into the table). A row can only be stored already
when every key it hangs on existed before this merge (a retweet of a tweet or by an account this upload
created is new by construction), so a first import checks nothing and a re-upload checks only the rows on old
keys. That is safe only while no other writer adds rows to the same workspace meanwhile: the merge holds a
per-workspace advisory lock (PostgreSQL; SQLite has one writer) from its first read until the import commits,
so two imports of one workspace merge one after the other (their reading still runs side by side). Every
writer of these tables must take it (:func:`lock_workspace`).

The steps run in the order the foreign keys need: accounts, tweets (originals) and their publishers, retweets
and follower counts, follows, given edges; each takes the staging area's partitions one at a time (a
partition holds every row of the groups it deduplicates: see :mod:`.stager`), so the merge holds one
partition, not the upload. The keys of the tweets whose cascades may have changed are collected on the way,
for the compute planner.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from compute.tables import NO_TWEET

from ...db import copy_in, copy_out, dialect
from .columns import EdgeRows, FollowRows, TweetRows, first_of_runs, lookup
from .conflicts import stored_conflicts
from .stager import Stager

__all__ = ["lock_workspace", "merge"]

# the class of the per-workspace advisory lock the merge holds (two-int key space: not the compute's one-key lock)
MERGE_LOCK_CLASS = 20_001

ProgressFn = Callable[[str, float], None]


@dataclass
class _Merge:
    """One merge's connection, staging area, target workspace and collection, and the counts it keeps."""

    cur: object
    st: Stager
    ws: int
    coll: int
    counts: dict[str, int] = field(default_factory=dict)
    old_account: int = 0  # the largest account key before this merge: keys above it are this merge's
    old_tweet: int = 0  # the same for tweets

    @property
    def d(self):
        return self.st.d

    def timed(self, sql: str, params=()) -> None:
        t = time.perf_counter()
        self.cur.execute(sql, params)
        key = " ".join(sql.split()[:3]).lower()[:40]  # e.g. "insert into monitor_retweet"
        timings = self.st.timings
        timings[key] = round(timings.get(key, 0.0) + time.perf_counter() - t, 3)

    def run(self, sql: str, params=()) -> int:
        """Execute a write and return its row count."""
        self.timed(sql, params)
        return max(self.cur.rowcount, 0)

    def count(self, sql: str, params) -> int:
        self.cur.execute(sql, params)
        return int(self.cur.fetchone()[0] or 0)


def lock_workspace(cur, ws: int) -> None:
    """Hold workspace ``ws``'s merge lock until the transaction ends (PostgreSQL; SQLite has one writer)."""
    if dialect().postgres:
        cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", [MERGE_LOCK_CLASS, ws])


def merge(cur, st: Stager, ws: int, coll: int, progress: ProgressFn | None = None) -> dict[str, int]:
    """Merge everything staged in ``st`` into workspace ``ws`` for collection ``coll``, one partition at a time;
    returns the counts and leaves the primary keys of the tweets whose cascades may have changed in
    ``st.affected``."""
    step = progress or (lambda stage, frac: None)
    m = _Merge(cur, st, ws, coll)
    step("waiting for other imports into this workspace", 0.85)
    t = time.perf_counter()
    lock_workspace(cur, ws)
    st.timings["merge lock wait"] = round(time.perf_counter() - t, 3)
    step("checking against the stored tweets", 0.855)
    m.counts["conflicts_with_stored"] = stored_conflicts(st, ws)
    # a row stored before this merge has a key no greater than the largest key now (keys only grow, and no
    # other writer adds to this workspace while the lock is held): "old" is a comparison, not a set in memory
    m.old_account = m.count("SELECT COALESCE(max(id), 0) FROM monitor_account", [])
    m.old_tweet = m.count("SELECT COALESCE(max(id), 0) FROM monitor_tweet", [])
    affected: set[int] = set()
    _analyze(m, st.temps, st.rows + st.n_follows, 10_000)  # the staging tables: what the joins below read

    step("storing accounts", 0.86)
    _accounts(m)
    _analyze(m, ["monitor_account"], m.counts["accounts_new"])
    step("storing tweets", 0.88)
    _originals(m, affected)
    _analyze(m, ["monitor_tweet"], m.counts["tweets_new"])
    step("storing retweets and follower counts", 0.89)
    _retweets_and_counts(m, affected)
    step("storing follows", 0.93)
    _follows(m, affected)
    step("storing given edges", 0.97)
    _given_edges(m, st.edges())
    step("finding the cascades to compute", 0.98)
    st.affected = sorted(affected)
    return m.counts


def _analyze(m: _Merge, tables: list[str], rows: int, at_least: int = 1_000) -> None:
    """Planner statistics for ``tables`` (PostgreSQL): the merge joins the staging tables (temporary: never
    analysed by autovacuum) with the accounts and tweets it has just written (their statistics still those of
    before). Without them the planner took a 2M-status partition join for a tiny one (minutes, not seconds),
    and after a big workspace was purged, 8,865 new accounts for none: a seq scan of the emptied table per
    follow edge (108 s for 64K edges). ``rows``: the rows just written; below ``at_least`` nothing is done
    (a live-stream batch pays no ANALYZE)."""
    if not m.d.postgres or not tables or rows < at_least:
        return
    t = time.perf_counter()
    m.cur.execute("ANALYZE " + ", ".join(tables))
    m.st.timings["analyze"] = round(m.st.timings.get("analyze", 0.0) + time.perf_counter() - t, 3)


def _add(m: _Merge, key: str, n: int) -> None:
    m.counts[key] = m.counts.get(key, 0) + int(n)


def _accounts(m: _Merge) -> None:
    """Every user named anywhere in the upload, one ``uid`` partition at a time, with the last screen name seen."""
    d, st = m.d, m.st
    m.counts["accounts_new"] = 0
    names_parts, usr_parts, uid_parts = st.partitions("nam"), st.partitions("usr"), st.partitions("uid")
    # the same hash partitions every user-keyed table, so partition p of each names the same users
    for p in range(st.k if usr_parts or uid_parts else 0):
        sources = [f"SELECT DISTINCT s.user_id FROM {usr_parts[p]} s WHERE {st.not_dropped('s')}"] if usr_parts else []
        sources += [f"SELECT DISTINCT twitter_id FROM {uid_parts[p]}"] if uid_parts else []
        (users,) = st.read_back("users", " UNION ".join(sources), [], [("twitter_id", "bigint")])
        users = np.unique(users)
        u_stage = st.stage("users", [("twitter_id", "bigint")], [users])
        (old_ids,) = copy_out(
            m.cur,
            f"""SELECT a.twitter_id FROM {u_stage} s {d.join} monitor_account a
                ON a.workspace_id = %s AND a.twitter_id = s.twitter_id ORDER BY a.twitter_id""",
            [m.ws],
            [("twitter_id", "bigint")],
        )
        is_old = _in(old_ids, users)
        names: dict[int, str] = {}
        if names_parts:
            t = time.perf_counter()
            m.cur.execute(f"SELECT user_id, name FROM {names_parts[p]} ORDER BY seq")
            names = dict(m.cur.fetchall())  # in upload order: the last name seen wins
            st.loaded(len(names))
            st.timings["read names"] = round(st.timings.get("read names", 0.0) + time.perf_counter() - t, 3)
        t = time.perf_counter()
        new_stage = st.stage_text(
            "newusers",
            "twitter_id bigint, screen_name varchar(64)",
            ("twitter_id", "screen_name"),
            [(u, (names.get(u) or "")[:64]) for u in users[~is_old].tolist()],
        )
        st.timings["stage users"] = round(st.timings.get("stage users", 0.0) + time.perf_counter() - t, 3)
        _add(
            m,
            "accounts_new",
            m.run(
                f"""INSERT INTO monitor_account (workspace_id, twitter_id, screen_name)
                    SELECT %s, twitter_id, screen_name FROM {new_stage} ORDER BY twitter_id""",
                [m.ws],
            ),
        )
        # known accounts take the name the upload gives them, where it gives one
        renamed = [(u, names[u][:64]) for u in users[is_old].tolist() if names.get(u)]
        if renamed:
            ren = st.stage_text(
                "renamed",
                "twitter_id bigint PRIMARY KEY, screen_name varchar(64)",
                ("twitter_id", "screen_name"),
                renamed,
            )
            if d.postgres:
                sql = f"""UPDATE monitor_account a SET screen_name = r.screen_name FROM {ren} r
                          WHERE a.workspace_id = %s AND a.twitter_id = r.twitter_id
                              AND a.screen_name <> r.screen_name"""
            else:
                name = f"(SELECT r.screen_name FROM {ren} r WHERE r.twitter_id = monitor_account.twitter_id)"
                sql = f"""UPDATE monitor_account SET screen_name = {name}
                          WHERE workspace_id = %s AND twitter_id IN (SELECT twitter_id FROM {ren})
                              AND screen_name <> {name}"""
            _add(m, "accounts_renamed", m.run(sql, [m.ws]))


def _originals(m: _Merge, affected: set[int]) -> None:
    """Originals, one ``tid`` partition at a time: one per tweet id, the first row wins; a stored tweet gains a
    label, text or follower count it lacked, and keeps the rest. Their authors become publishers."""
    d, st = m.d, m.st
    count_sql = "SELECT count(*) FROM monitor_tweet WHERE workspace_id = %s"
    before = m.count(count_sql, [m.ws])
    m.counts["tweets_in_upload"] = 0
    m.counts["publishers_new"] = 0
    texts_parts = st.partitions("txt")
    orig_cols = [
        ("tweet_id", "bigint"),
        ("author", "bigint"),
        ("created_at", "float"),
        ("followers", "float"),
        ("given", "int"),
        ("times_known", "int"),
    ]
    for p, part in enumerate(st.partitions("tid")):
        # a v1.1 retweet repeats its original: the database picks each original's first row (its least seq)
        tid, author, created, followers = st.read_back(
            "originals",
            f"""SELECT s.tweet_id, a.id, s.created_at, s.followers FROM {part} s
                JOIN (SELECT min(seq) AS seq FROM {part} s WHERE s.rt = {NO_TWEET} AND {st.not_dropped("s")}
                      GROUP BY s.tweet_id) f ON f.seq = s.seq
                {d.join} monitor_account a ON a.workspace_id = %s AND a.twitter_id = s.user_id
                ORDER BY s.tweet_id""",
            [m.ws],
            [("tweet_id", "bigint"), ("author", "bigint"), ("t", "float"), ("f", "float")],
        )
        if not len(tid):
            continue
        rows = np.arange(len(tid))
        _add(m, "tweets_in_upload", len(rows))
        ids = tid[rows]
        n = len(rows)
        if st.given:
            given = np.array([st.given.get(int(x), None) is not None for x in ids], bool).astype(np.int64)
            times_known = np.array([bool(st.given.get(int(x), True)) for x in ids], bool).astype(np.int64)
        else:
            given, times_known = np.zeros(n, np.int64), np.ones(n, np.int64)
        orig_stage = st.stage(
            "orig", orig_cols, [ids, author[rows], created[rows], followers[rows], given, times_known]
        )
        texts = []
        if texts_parts:
            m.cur.execute(f"SELECT tweet_id, text, label FROM {texts_parts[p]} ORDER BY seq")
            for t_id, text, label in m.cur.fetchall():
                texts.append((t_id, text, label))
            first: dict[int, tuple] = {}
            for r in texts:  # the first row with a text or a label wins
                first.setdefault(r[0], r)
            texts = list(first.values())
            st.loaded(len(texts))
        tx_stage = st.stage_text(
            "texts", "tweet_id bigint, text text, label varchar(16)", ("tweet_id", "text", "label"), texts
        )
        m.run(
            f"""INSERT INTO monitor_tweet (workspace_id, tweet_id, author_id, created_at, text, label, author_followers,
                    graph_source, times_known, collection_id, compute_status, n_participants, n_edges, n_orphans, unit)
                SELECT %s, o.tweet_id, o.author, {d.epoch_to_ts("o.created_at")}, COALESCE(tx.text, ''),
                    COALESCE(tx.label, 'unknown'), {d.nan_to_null("o.followers")},
                    CASE WHEN o.given = 1 THEN 'given' ELSE 'follows' END, o.times_known = 1,
                    %s, 'pending', 0, 0, 0, 'followers'
                FROM {orig_stage} o LEFT JOIN {tx_stage} tx ON tx.tweet_id = o.tweet_id
                WHERE true
                ON CONFLICT (workspace_id, tweet_id) DO UPDATE SET
                    label = CASE WHEN excluded.label <> 'unknown' THEN excluded.label ELSE monitor_tweet.label END,
                    text = CASE WHEN excluded.text <> '' THEN excluded.text ELSE monitor_tweet.text END,
                    author_followers = COALESCE(monitor_tweet.author_followers, excluded.author_followers)""",
            [m.ws, m.coll],
        )
        (pks,) = copy_out(
            m.cur,
            f"""SELECT t.id FROM {orig_stage} o {d.join} monitor_tweet t
                ON t.workspace_id = %s AND t.tweet_id = o.tweet_id""",
            [m.ws],
            [("id", "bigint")],
        )
        affected.update(pks.tolist())
        _publishers(m, np.unique(author[rows]))
    m.counts["tweets_new"] = m.count(count_sql, [m.ws]) - before


def _in(sorted_keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mask of ``values`` found in ``sorted_keys``."""
    return lookup(sorted_keys, sorted_keys, values)[1]


def _stored_rows(m: _Merge, prefix: str, cols: list[tuple[str, str]], arrays: list[np.ndarray], on: str) -> np.ndarray:
    """Mask of the candidate rows (``arrays``) that the target already stores: one staged join, ``on`` naming
    the staging table ``s`` and the target's alias; the staging table gets a row number ``i``."""
    n = len(arrays[0])
    found = np.zeros(n, bool)
    if not n:
        return found
    stage = m.st.stage(prefix, [("i", "bigint"), *cols], [np.arange(n), *arrays])
    t = time.perf_counter()
    if m.d.postgres:
        # a temporary table has no statistics: without them the planner may hash the whole target table
        m.cur.execute(f"ANALYZE {stage}")
    (hit,) = copy_out(m.cur, f"SELECT s.i FROM {stage} s {m.d.join} {on} WHERE true", [], [("i", "bigint")])
    m.st.timings[f"check stored {prefix}"] = round(time.perf_counter() - t, 3)
    found[hit] = True
    return found


class _Retweets(NamedTuple):
    rows: np.ndarray  # indices into the staged tweet rows
    tweet_pk: np.ndarray  # the retweeted tweet
    account_pk: np.ndarray  # the retweeter

    def take(self, keep: np.ndarray) -> _Retweets:
        return _Retweets(*(col[keep] for col in self))


def _retweets_and_counts(m: _Merge, affected: set[int]) -> None:
    """Retweets and follower-count snapshots, one ``usr`` partition (by author) at a time: both group by
    author (one retweet per user and tweet, one snapshot per account and time), so a partition holds every row
    of its groups. Ids are resolved to keys by the database as the partition is read."""
    d, st, c = m.d, m.st, m.counts
    for key in ("retweets_in_upload", "retweets_of_unknown_tweets", "self_retweets", "duplicate_retweets"):
        c[key] = 0
    c["retweets_stored"] = 0
    c["follower_counts_new"] = 0
    for part in st.partitions("usr"):
        tid, rt, account, tweet, author, created, followers = st.read_back(
            "retweets and counts",
            f"""SELECT s.tweet_id, s.rt, a.id, COALESCE(t.id, -1), COALESCE(t.author_id, -1), s.created_at, s.followers
                FROM {part} s {d.join} monitor_account a ON a.workspace_id = %s AND a.twitter_id = s.user_id
                LEFT JOIN monitor_tweet t ON s.rt <> {NO_TWEET} AND t.workspace_id = %s AND t.tweet_id = s.rt
                WHERE {st.not_dropped("s")} ORDER BY s.seq""",
            [m.ws, m.ws],
            [(n, "bigint") for n in ("tid", "rt", "account", "tweet", "author")] + [("t", "float"), ("f", "float")],
        )
        rows = TweetRows(tid, rt, account, created, followers)  # user_id: the account's key here
        retweeted = _retweets(m, rows, tweet, author)
        affected.update(np.unique(retweeted).tolist())
        _follower_counts(m, rows)


def _retweets(m: _Merge, tweets: TweetRows, tweet_pks: np.ndarray, author_pks: np.ndarray) -> np.ndarray:
    """One partition's retweets (``tweets.user_id``: account keys; ``tweet_pks``, ``author_pks``: the retweeted
    tweet and its author, -1 when the workspace has no such tweet): of a tweet in the workspace, not by its
    author, the earliest per user (ties: the first in the upload); returns the retweeted tweets' keys."""
    d = m.d
    rows = np.flatnonzero(tweets.retweeted_id != NO_TWEET)
    _add(m, "retweets_in_upload", len(rows))
    known = tweet_pks[rows] >= 0
    _add(m, "retweets_of_unknown_tweets", np.count_nonzero(~known))
    rows = rows[known]
    rts = _Retweets(rows, tweet_pks[rows], tweets.user_id[rows])
    self_rt = rts.account_pk == author_pks[rows]
    _add(m, "self_retweets", np.count_nonzero(self_rt))
    rts = rts.take(~self_rt)
    rts = rts.take(np.lexsort((rts.rows, tweets.created_at[rts.rows], rts.account_pk, rts.tweet_pk)))
    first = first_of_runs(rts.tweet_pk, rts.account_pk)
    _add(m, "duplicate_retweets", len(first) - first.sum())
    rts = rts.take(first)
    rt_cols = [
        ("tweet", "bigint"),
        ("account", "bigint"),
        ("rid", "bigint"),
        ("created_at", "float"),
        ("followers", "float"),
    ]
    # only a retweet of an old tweet by an old account can be stored already: a stored one that this upload
    # says happened earlier moves to the upload's time; the others are left as they are
    cand = (rts.tweet_pk <= m.old_tweet) & (rts.account_pk <= m.old_account)
    updated = 0
    rts_new = rts
    if cand.any():
        cr = rts.take(cand)
        picked = tweets.take(cr.rows)
        cols = [cr.tweet_pk, cr.account_pk, picked.tweet_id, picked.created_at, picked.followers]
        stored = _stored_rows(
            m, "rtold", rt_cols, cols, "monitor_retweet r ON r.tweet_id = s.tweet AND r.retweeter_id = s.account"
        )
        if stored.any():
            upd = m.st.stage("rtupd", rt_cols, [col[stored] for col in cols])
            updated = m.run(_update_retweets_sql(d, upd))
            keep = np.ones(len(rts.rows), bool)
            keep[np.flatnonzero(cand)[stored]] = False
            rts_new = rts.take(keep)
    picked = tweets.take(rts_new.rows)
    rt_stage = m.st.stage(
        "rt", rt_cols, [rts_new.tweet_pk, rts_new.account_pk, picked.tweet_id, picked.created_at, picked.followers]
    )
    inserted = m.run(
        f"""INSERT INTO monitor_retweet (tweet_id, retweeter_id, retweet_id, created_at, followers_count,
                collection_id)
            SELECT r.tweet, r.account, CASE WHEN r.rid > 0 THEN r.rid END, {d.epoch_to_ts("r.created_at")},
                {d.nan_to_null("r.followers")}, %s
            FROM {rt_stage} r""",
        [m.coll],
    )
    # retweets inserted, plus stored ones this upload moved earlier in time
    _add(m, "retweets_stored", inserted + updated)
    return rts.tweet_pk


def _update_retweets_sql(d, upd: str) -> str:
    """Stored retweets that ``upd`` (a staging table of retweets) says happened earlier take its time, count
    and id. SQLite's UPDATE ... FROM is recent (3.33): correlated subqueries there."""
    if d.postgres:
        return f"""UPDATE monitor_retweet r SET created_at = to_timestamp(u.created_at),
                       followers_count = NULLIF(u.followers, 'NaN'::double precision),
                       retweet_id = CASE WHEN u.rid > 0 THEN u.rid END
                   FROM {upd} u WHERE r.tweet_id = u.tweet AND r.retweeter_id = u.account
                       AND to_timestamp(u.created_at) < r.created_at"""
    where = f"FROM {upd} u WHERE u.tweet = monitor_retweet.tweet_id AND u.account = monitor_retweet.retweeter_id"
    ts = f"(SELECT {d.epoch_to_ts('u.created_at')} {where})"
    return f"""UPDATE monitor_retweet SET created_at = {ts}, followers_count = (SELECT u.followers {where}),
                   retweet_id = (SELECT CASE WHEN u.rid > 0 THEN u.rid END {where})
               WHERE EXISTS (SELECT 1 {where}) AND {ts} < monitor_retweet.created_at"""


def _follower_counts(m: _Merge, tweets: TweetRows) -> None:
    """One partition's follower-count snapshots (``tweets.user_id``: account keys): every row with a count is
    one (the highest count per account and time)."""
    has = np.flatnonzero((tweets.followers >= 0) & (tweets.followers < 9.2e18))
    account_pk = tweets.user_id[has]
    observed_at, count = tweets.created_at[has], tweets.followers[has]
    order = np.lexsort((-count, observed_at, account_pk))
    account_pk, observed_at, count = account_pk[order], observed_at[order], count[order]
    first = first_of_runs(account_pk, observed_at)
    cols = [account_pk[first], observed_at[first], count[first].astype(np.int64)]
    fc_cols = [("account", "bigint"), ("t", "float"), ("n", "bigint")]
    # only an old account can have a snapshot stored already
    cand = np.flatnonzero(cols[0] <= m.old_account)
    if len(cand):
        stored = _stored_rows(
            m,
            "fcold",
            fc_cols,
            [c[cand] for c in cols],
            f"monitor_followercount f ON f.account_id = s.account AND f.observed_at = {m.d.epoch_to_ts('s.t')}",
        )
        keep = np.ones(len(cols[0]), bool)
        keep[cand[stored]] = False
        cols = [c[keep] for c in cols]
    fc_stage = m.st.stage("fc", fc_cols, cols)
    _add(
        m,
        "follower_counts_new",
        m.run(
            f"""INSERT INTO monitor_followercount (account_id, observed_at, count, collection_id)
                SELECT account, {m.d.epoch_to_ts("t")}, n, %s FROM {fc_stage}""",
            [m.coll],
        ),
    )


def _follows(m: _Merge, affected: set[int]) -> None:
    """Follow edges, one ``fol`` partition (by follower) at a time: each once, without self-follows. A participant
    who gained a follow edge may gain spreading edges in every cascade it took part in: the stored retweets of
    the old followers are added to ``affected`` (this upload's retweets are in already)."""
    d, st = m.d, m.st
    m.counts["follows_in_upload"] = st.n_follows
    m.counts["self_follows"] = 0
    m.counts["follows_new"] = 0
    for part in st.partitions("fol"):
        a, b = st.read_back(
            "follows",
            f"""SELECT a.id, b.id FROM {part} s
                {d.join} monitor_account a ON a.workspace_id = %s AND a.twitter_id = s.follower
                {d.join} monitor_account b ON b.workspace_id = %s AND b.twitter_id = s.followee""",
            [m.ws, m.ws],
            [("a", "bigint"), ("b", "bigint")],
        )
        edges = FollowRows(a, b)
        self_follow = edges.follower == edges.followee
        _add(m, "self_follows", np.count_nonzero(self_follow))
        edges = edges.take(~self_follow)
        edges = edges.take(np.lexsort((edges.followee, edges.follower)))
        edges = edges.take(first_of_runs(edges.follower, edges.followee))
        new = edges
        # only an edge between two old accounts can be stored already
        cand = np.flatnonzero((edges.follower <= m.old_account) & (edges.followee <= m.old_account))
        if len(cand):
            stored = _stored_rows(
                m,
                "folold",
                [("a", "bigint"), ("b", "bigint")],
                [edges.follower[cand], edges.followee[cand]],
                "monitor_follow f ON f.follower_id = s.a AND f.followee_id = s.b",
            )
            keep = np.ones(len(edges.follower), bool)
            keep[cand[stored]] = False
            new = edges.take(keep)
        # straight into the table, in its unique key's order
        n = len(new.follower)
        t = time.perf_counter()
        cols = [("workspace_id", "bigint"), ("follower_id", "bigint"), ("followee_id", "bigint")]
        arrays = [np.full(n, m.ws, np.int64), new.follower, new.followee]
        if m.coll is not None:  # rows of the live stream belong to no collection: collection_id stays NULL
            cols.append(("collection_id", "bigint"))
            arrays.append(np.full(n, m.coll, np.int64))
        copy_in(m.cur, "monitor_follow", cols, arrays)
        st.timings["copy into monitor_follow"] = round(
            st.timings.get("copy into monitor_follow", 0.0) + time.perf_counter() - t, 3
        )
        _add(m, "follows_new", n)
        followers = np.unique(edges.follower)
        followers = followers[followers <= m.old_account]
        if len(followers):
            fer_stage = st.stage("fer", [("account", "bigint")], [followers])
            m.timed(
                f"""SELECT DISTINCT r.tweet_id FROM {fer_stage} f {d.join} monitor_retweet r
                    ON r.retweeter_id = f.account WHERE true"""
            )
            affected.update(row[0] for row in m.cur.fetchall())


def _given_edges(m: _Merge, edges: EdgeRows) -> None:
    """Given spreading edges (TUDataset, spreading-graph archives), of the tweets stored; keys resolved by the
    database (these formats are read whole, so the edges are in memory already)."""
    m.counts["given_edges_new"] = 0
    if not len(edges.tweet):
        return
    d = m.d
    ge_stage = m.st.stage("ge", [("t", "bigint"), ("s", "bigint"), ("d", "bigint")], list(edges))
    m.counts["given_edges_new"] = m.run(
        f"""INSERT INTO monitor_givenedge (tweet_id, src_id, dst_id)
            SELECT t.id, a.id, b.id FROM {ge_stage} g
            {d.join} monitor_tweet t ON t.workspace_id = %s AND t.tweet_id = g.t
            {d.join} monitor_account a ON a.workspace_id = %s AND a.twitter_id = g.s
            {d.join} monitor_account b ON b.workspace_id = %s AND b.twitter_id = g.d
            WHERE true
            ON CONFLICT (tweet_id, src_id, dst_id) DO NOTHING""",
        [m.ws, m.ws, m.ws],
    )


def _publishers(m: _Merge, authors: np.ndarray) -> None:
    """Every author of an original is a publisher of the workspace."""
    pub_stage = m.st.stage("pub", [("account", "bigint")], [authors])
    _add(
        m,
        "publishers_new",
        m.run(
            f"""INSERT INTO monitor_publisher (workspace_id, account_id, monitored, created_at)
                SELECT %s, account, {"true" if m.d.postgres else "1"}, CURRENT_TIMESTAMP FROM {pub_stage} WHERE true
                ON CONFLICT (workspace_id, account_id) DO NOTHING""",
            [m.ws],
        ),
    )
