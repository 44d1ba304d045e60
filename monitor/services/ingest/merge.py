"""The merge: the staged upload into the workspace's tables, one step per table, in one transaction.

Merging the same upload twice stores each record once: every step keys its rows by natural ids. The big tables
(accounts, retweets, follower counts, follows) are not merged row by row with ``INSERT ... ON CONFLICT`` (on
PostgreSQL that costs about twice a plain insert: each row probes the unique index, inserts, then checks again);
instead each step finds, set-based in one pass, which of its rows can already be stored, and inserts the rest:
retweets, follower counts and follows by one binary COPY straight into the table in its unique key's order
(``monitor.db.copy_in``), the others by a plain ``INSERT ... SELECT`` from a staging table. A row can only be
stored already when every key it hangs on existed before this merge (a retweet of a tweet or by an account this
upload created is new by construction), so a first import checks nothing and a re-upload checks only the rows on old
keys. That is safe only while no other writer adds rows to the same workspace meanwhile: the merge holds a
per-workspace advisory lock (PostgreSQL; SQLite has one writer) from its first read until the import commits,
so two imports of one workspace merge one after the other (their reading still runs side by side). Every
writer of these tables must take it (:func:`lock_workspace`).

The steps run in the order the foreign keys need: accounts, follows (they need only the accounts' keys, and a
workspace's first follows are stored on a second connection meanwhile: :mod:`.side_load`), tweets (originals),
retweets, follower counts, given edges, publishers; then the tweets whose cascades may have changed are collected
for the compute planner.

A large upload is merged in parts (:mod:`.stager`), each one an ordinary merge into what the earlier parts
stored. What one merge of the whole upload would do across rows, the parts do across the stored rows of this
import (``collection_id`` is the import's collection): the earliest retweet per user and tweet wins and the
others count as repeated; a follower-count snapshot keeps the highest count of its account and time; an
original keeps its first row's text and label; a retweet whose original is not stored yet is carried into the
next part; originals and renamed accounts are counted once. So the stored rows and the counts are the same
whatever the part size (``tests/monitor/services/ingest/test_parts.py``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from compute.arrays import distinct_sorted, lexorder, unique
from compute.tables import NO_TWEET

from ... import partitions
from ...db import (
    ARRAY_LOOKUP_MAX,
    copy_in,
    copy_out,
    dialect,
    int_array,
    int_array_param,
    renew_follows_token,
    reserve_ids,
)
from .columns import AccountKeys, EdgeRows, FollowRows, TweetKeys, TweetRows, first_of_runs, in_sorted, lookup
from .conflicts import stored_conflicts
from .earlier_parts import pair_hashes
from .originals import Originals, merge_originals, named_tweets, stage_named_tweets
from .stager import Stager, add_timing
from .stored_retweets import move_stored_earlier, update_retweets_sql

__all__ = ["lock_workspace", "merge"]

log = logging.getLogger(__name__)

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
    kept: np.ndarray | None = None  # the staged rows merged (None: all), when conflicts left some out

    @property
    def d(self):
        return self.st.d

    @property
    def later_part(self) -> bool:
        """An earlier part of this import is stored already (rows of ``coll`` are this upload's own)."""
        return self.st.part > 0

    @property
    def in_parts(self) -> bool:
        """This import is merged in more than one part."""
        return self.st.part > 0 or not self.st.final

    def timed(self, sql: str, params=()) -> None:
        t = time.perf_counter()
        self.cur.execute(sql, params)
        key = " ".join(sql.split()[:3]).lower()[:40]  # e.g. "insert into monitor_retweet"
        add_timing(self.st.timings, key, t)

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


def merge(
    cur, st: Stager, ws: int, coll: int, progress: ProgressFn | None = None, *, conflicts_checked: bool = False
) -> dict[str, int]:
    """Merge everything staged in ``st`` into workspace ``ws`` for collection ``coll``; returns the counts and
    leaves the primary keys of the tweets whose cascades may have changed in ``st.affected``.
    ``conflicts_checked``: the caller has taken :func:`lock_workspace` and left out the rows that contradict a
    stored tweet (:func:`~.conflicts.stored_conflicts`) itself, as the stream's apply does."""
    step = progress or (lambda stage, frac: None)
    m = _Merge(cur, st, ws, coll)
    tweets = st.tweets()
    step("waiting for other imports into this workspace", 0.85)
    t = time.perf_counter()
    lock_workspace(cur, ws)
    add_timing(st.timings, "merge lock wait", t)
    if st.on_locked is not None:  # the import's first part: what it builds on, now that no other merge runs
        st.on_locked(cur)
    step("checking against the stored tweets", 0.855)
    if not conflicts_checked:
        drop = stored_conflicts(st, ws, tweets)
        m.counts["conflicts_with_stored"] = int(np.count_nonzero(drop))
        if m.counts["conflicts_with_stored"]:
            m.kept = np.flatnonzero(~drop)
            tweets = tweets.take(m.kept)
    follows, edges = st.follows(), st.edges()

    step("storing accounts", 0.86)
    accounts = _accounts(m, tweets, follows, edges)
    # the follows next: they need only the accounts' keys, and a first import's go to a second connection that
    # stores them while this one stores the rest (side_load)
    step("storing follows", 0.87)
    new_follows = _follows(m, follows, accounts)
    st.merged_follows = new_follows  # the follower graph's next version is written from them (graph_files)
    step("storing tweets", 0.88)
    named_stage, old_tweets = stage_named_tweets(m, tweets)
    originals = merge_originals(m, tweets, accounts)
    named = named_tweets(m, named_stage)
    step("storing retweets", 0.89)
    retweeted_pks = _retweets(m, tweets, accounts, named, old_tweets)
    step("storing follower counts", 0.91)
    _follower_counts(m, tweets, accounts)
    step("storing given edges", 0.97)
    _given_edges(m, edges, accounts, named)
    _publishers(m, originals)
    step("finding the cascades to compute", 0.98)
    st.affected = _affected(m, tweets, originals, named, retweeted_pks, new_follows, accounts)
    if st.final and st.side is not None:  # the follows stored on the side become the workspace's partition
        st.side.attach_all(cur, st.timings)
    if m.counts.get("follows_new"):  # last: the workspace row stays locked from here to the commit
        renew_follows_token(cur, ws)  # the follower graphs the compute workers keep are stale from the commit on
    return m.counts


def _accounts(m: _Merge, tweets: TweetRows, follows: FollowRows, edges: EdgeRows) -> AccountKeys:
    """Every user named anywhere in the upload, with the screen names seen; returns their keys (``old``: the
    keys that existed before this merge)."""
    d, st = m.d, m.st
    # a follows file grouped by follower repeats each follower once per followee: those repeats dropped first (one
    # pass) halve what the sort takes (0.18 -> 0.08 s for a part of 3M follows); the concatenation is ours to sort
    followers = distinct_sorted(follows.follower)  # the runs of one value squeezed, in any order
    users = unique(np.concatenate([tweets.user_id, followers, follows.followee, edges.src, edges.dst]), overwrite=True)
    key_cols = [("twitter_id", "bigint"), ("id", "bigint")]

    def key_sql(staged: str) -> str:  # the stored accounts among the ``twitter_id`` of a staging table
        return f"""SELECT a.twitter_id, a.id FROM {staged} s {d.join} monitor_account a
                   ON a.workspace_id = %s AND a.twitter_id = s.twitter_id ORDER BY a.twitter_id"""

    names = st.names_seen()
    stored_names = None  # twitter id -> the name stored, where read with the keys
    if m.later_part and st.created is not None:
        # every account of the workspace is one an earlier part of this import created (it had none before, and
        # the merge lock keeps other writers out): they are known, no staging table and no join
        pk, known = lookup(st.created.twitter_id, st.created.pk, users)
        old = AccountKeys(users[known], pk[known])
    elif d.postgres and len(users) <= ARRAY_LOOKUP_MAX:
        # a small upload (a stream micro-batch): one indexed read by an array, no staging table. Staging and
        # joining 10,000 users cost 100-120 ms; so did an unnest of the array, which the planner joins by a hash
        # of the whole table; ``= ANY`` reads the index: 32 ms (benchmarks/stream_web.md)
        by_array = f"""FROM monitor_account a WHERE a.workspace_id = %s AND a.twitter_id = ANY({int_array(users)})
                       ORDER BY a.twitter_id"""
        old_sql = f"SELECT a.twitter_id, a.id {by_array}"
        if len(names) and not m.in_parts:
            old, stored_names = _keys_and_names(m, f"SELECT a.twitter_id, a.id, a.screen_name {by_array}")
        else:
            old = AccountKeys(*copy_out(m.cur, old_sql, [m.ws], key_cols))
    else:
        old_sql = key_sql(st.stage("users", [("twitter_id", "bigint")], [users]))
        old = AccountKeys(*copy_out(m.cur, old_sql, [m.ws], key_cols))
    is_old = lookup(old.twitter_id, old.pk, users)[1]
    new_users = users[~is_old]  # sorted: the unique key's order
    if m.in_parts and not m.later_part:
        # the accounts from before the import, for counting renames once over the parts
        st.accounts_before = m.count("SELECT max(id) FROM monitor_account WHERE workspace_id = %s", [m.ws])
        if not st.accounts_before:  # none: the later parts know every account of the workspace (above)
            st.created = AccountKeys(np.zeros(0, np.int64), np.zeros(0, np.int64))
    # straight into the table by one COPY, as the retweets (:func:`_copy`). On PostgreSQL the keys are taken from
    # the sequence first and written with the rows, so nothing is read back (5.1 s at the 10M benchmark); on
    # SQLite the table gives them and they are read back (:func:`_new_keys`)
    new_names = names.of(new_users)[0]
    t = time.perf_counter()
    columns = [("workspace_id", "bigint"), ("twitter_id", "bigint"), ("screen_name", "text")]
    values = [np.full(len(new_users), m.ws, np.int64), new_users, new_names]
    new_pks, above = None, 0
    if d.postgres and len(new_users):
        new_pks = reserve_ids(m.cur, "monitor_account", len(new_users))  # sorted, as ``new_users`` is
        columns, values = [("id", "bigint"), *columns], [new_pks, *values]
        add_timing(st.timings, "take new account keys", t)
        t = time.perf_counter()
    elif len(new_users):
        above = m.count("SELECT max(id) FROM monitor_account", [])
    m.counts["accounts_new"] = copy_in(m.cur, "monitor_account", columns, values)
    add_timing(st.timings, "copy into monitor_account", t)
    remember = m.in_parts and not st.final  # a later part compares the names it is given with these
    if remember:
        st.names_given.add(new_users, new_names)
    # known accounts take the name the upload gives them, where it gives one (counted, 0 where none changed,
    # whichever path below: an upload's counts have the same keys whatever its size or parts)
    m.counts["accounts_renamed"] = 0
    known = users[is_old]
    given, named = names.of(known)
    named &= given != ""  # an empty name renames nobody
    known, given = known[named], given[named]
    if len(known) and m.later_part:  # not again the name an earlier part of this import stored
        again = ~st.names_given.unchanged(known, given)
        known, given = known[again], given[again]
    renamed = list(zip(known.tolist(), given.tolist()))
    if stored_names is not None:  # only the names that differ from the stored ones go to the database
        renamed = [(u, n) for u, n in renamed if stored_names.get(u) != n]
    if renamed and stored_names is not None:
        # a small upload on PostgreSQL (the keys were read by array): by primary key from two arrays, no staging
        # table. A stream micro-batch names ~3,000 accounts for the first time (the follower graph's accounts come
        # without names): staging them and joining took 44-73 ms, this 32-49 ms. The ``= ANY`` tells the planner
        # how many accounts it reads; without it, it hashed all of them (59-108 ms; benchmarks/stream_web.md)
        pks = lookup(old.twitter_id, old.pk, np.array([u for u, _ in renamed], np.int64))[0]
        order = np.argsort(pks, kind="stable")
        ids = int_array_param(pks[order])
        # NUL cannot be stored in a PostgreSQL string: dropped, as the COPY of the staged path drops it
        given = [renamed[i][1].replace("\x00", "") for i in order.tolist()]
        m.counts["accounts_renamed"] = m.run(
            """UPDATE monitor_account a SET screen_name = r.screen_name
               FROM unnest(%s::bigint[], %s::varchar(64)[]) AS r(id, screen_name)
               WHERE a.id = ANY(%s::bigint[]) AND a.id = r.id AND a.screen_name <> r.screen_name""",
            [ids, given, ids],
        )
    elif renamed:
        ren = st.stage_text(
            "renamed",
            "twitter_id bigint PRIMARY KEY, screen_name varchar(64)",
            ("twitter_id", "screen_name"),
            renamed,
        )
        if d.postgres:
            sql = f"""UPDATE monitor_account a SET screen_name = r.screen_name FROM {ren} r
                      WHERE a.workspace_id = %s AND a.twitter_id = r.twitter_id AND a.screen_name <> r.screen_name"""
        else:
            name = f"(SELECT r.screen_name FROM {ren} r WHERE r.twitter_id = monitor_account.twitter_id)"
            sql = f"""UPDATE monitor_account SET screen_name = {name}
                      WHERE workspace_id = %s AND twitter_id IN (SELECT twitter_id FROM {ren})
                          AND screen_name <> {name}"""
        if m.in_parts:
            # an account renamed by two parts, or created by an earlier part, is not renamed twice
            m.timed(sql + " RETURNING id", [m.ws])
            st.renamed.update(pk for (pk,) in m.cur.fetchall() if pk <= st.accounts_before)
            # ``renamed`` is ``known`` with ``given`` here: a part's keys are never read with their names
            renamed_pks = old.pk[in_sorted(known, old.twitter_id)]
            st.renames_given |= bool((renamed_pks <= st.accounts_before).any())
            if remember:
                st.names_given.add(known, given)
        else:
            m.counts["accounts_renamed"] = m.run(sql, [m.ws])
    if m.in_parts and st.final and st.renames_given:  # one merge counts where it gave names to stored accounts
        m.counts["accounts_renamed"] = len(st.renamed)
    if not len(new_users):
        keys = old
    else:
        if new_pks is not None:
            new = AccountKeys(new_users, new_pks)
        else:
            t = time.perf_counter()
            new = _new_keys(m, above, new_users)
            add_timing(st.timings, "read back new account keys", t)
        keys = new if not len(old.pk) else old.merged(new)
        if st.created is not None and not st.final:
            st.created = st.created.merged(new)
    return keys._replace(old=np.sort(old.pk))


def _new_keys(m: _Merge, above: int, new_users: np.ndarray) -> AccountKeys:
    """The keys SQLite gave ``new_users`` (sorted) as the accounts' rows went in, every one of them above
    ``above``: the workspace's accounts above it, read along the primary key. The merge lock keeps the
    workspace's other writers out and the keys rise as the rows go in, so they are the new accounts in their
    order; should they not be, the keys are read by Twitter id. (PostgreSQL takes the keys first:
    :func:`monitor.db.reserve_ids`.)"""
    key_cols = [("twitter_id", "bigint"), ("id", "bigint")]
    sql = "SELECT twitter_id, id FROM monitor_account WHERE id > %s AND workspace_id = %s ORDER BY id"
    got = AccountKeys(*copy_out(m.cur, sql, [above, m.ws], key_cols))
    if np.array_equal(got.twitter_id, new_users):
        return got
    log.warning("the new accounts' keys were not those above %d in their order: read by Twitter id", above)
    staged = m.st.stage("newusers", [("twitter_id", "bigint")], [new_users])
    sql = f"""SELECT a.twitter_id, a.id FROM monitor_account a
              WHERE a.workspace_id = %s AND a.twitter_id IN (SELECT twitter_id FROM {staged}) ORDER BY a.twitter_id"""
    return AccountKeys(*copy_out(m.cur, sql, [m.ws], key_cols))


def _keys_and_names(m: _Merge, sql: str) -> tuple[AccountKeys, dict[int, str]]:
    """The stored accounts ``sql`` selects (``twitter_id``, ``id``, ``screen_name``) as keys, and their stored
    names by Twitter id.

    Read with the keys, so a micro-batch compares the names it brings with the stored ones in Python and sends
    only those that differ: staging every named account of a 10,000-event micro-batch (a temporary table with
    its key) and joining it to the accounts to find that almost none changed took 80-135 ms of statements; the
    names cost the key read 5 ms more (``benchmarks/stream_web.md``)."""
    m.timed(sql, [m.ws])
    rows = m.cur.fetchall()
    keys = AccountKeys(np.array([r[0] for r in rows], np.int64), np.array([r[1] for r in rows], np.int64))
    return keys, {r[0]: r[2] for r in rows}


def _stored_rows(
    m: _Merge,
    prefix: str,
    cols: list[tuple[str, str]],
    arrays: list[np.ndarray],
    on: str,
    alias: str,
    mine_if: str = "true",
) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the candidate rows (``arrays``) that the target already stores, and of those stored by an
    earlier part of this upload (rows of its collection) for which ``mine_if`` holds: one staged join, ``on``
    naming the staging table ``s`` and the target as ``alias``; the staging table gets a row number ``i``."""
    n = len(arrays[0])
    found, mine = np.zeros(n, bool), np.zeros(n, bool)
    if not n:
        return found, mine
    stage = m.st.stage(prefix, [("i", "bigint"), *cols], [np.arange(n), *arrays])
    t = time.perf_counter()
    if m.d.postgres:
        # a temporary table has no statistics: without them the planner may hash the whole target table
        m.cur.execute(f"ANALYZE {stage}")
    if m.later_part:
        ours = f"CAST(CASE WHEN {alias}.collection_id = %s AND ({mine_if}) THEN 1 ELSE 0 END AS bigint)"
        sql = f"SELECT s.i, {ours} FROM {stage} s {m.d.join} {on} WHERE true"
        hit, own = copy_out(m.cur, sql, [m.coll], [("i", "bigint"), ("o", "bigint")])
        mine[hit[own == 1]] = True
    else:
        (hit,) = copy_out(m.cur, f"SELECT s.i FROM {stage} s {m.d.join} {on} WHERE true", [], [("i", "bigint")])
    add_timing(m.st.timings, f"check stored {prefix}", t)
    found[hit] = True
    return found, mine


class _Retweets(NamedTuple):
    rows: np.ndarray  # indices into the staged tweet rows
    tweet_pk: np.ndarray  # the retweeted tweet
    account_pk: np.ndarray  # the retweeter

    def take(self, keep: np.ndarray) -> _Retweets:
        return _Retweets(*(col[keep] for col in self))


def _retweets(
    m: _Merge, tweets: TweetRows, accounts: AccountKeys, named: TweetKeys, old_tweets: np.ndarray
) -> np.ndarray:
    """Retweets: of a tweet in the workspace, not by its author, the earliest per user; returns the retweeted
    tweets' keys."""
    d, c = m.d, m.counts
    rows = np.flatnonzero(tweets.retweeted_id != NO_TWEET)
    c["retweets_in_upload"] = len(rows) - m.st.carried  # the carried ones were counted by the part before
    tweet_pk, known = lookup(named.tweet_id, named.pk, tweets.retweeted_id[rows])
    author_pk, _ = lookup(named.tweet_id, named.author_pk, tweets.retweeted_id[rows])
    if m.st.final:
        c["retweets_of_unknown_tweets"] = int(np.count_nonzero(~known))
    else:  # their original may come in a later part of the upload
        unknown = rows[~known]
        m.st.carry = unknown if m.kept is None else m.kept[unknown]
        c["retweets_of_unknown_tweets"] = 0
    rows, tweet_pk, author_pk = rows[known], tweet_pk[known], author_pk[known]
    rts = _Retweets(rows, tweet_pk, accounts.of(tweets.user_id[rows]))
    self_rt = rts.account_pk == author_pk
    c["self_retweets"] = int(np.count_nonzero(self_rt))
    rts = rts.take(~self_rt)
    rts = rts.take(lexorder((rts.rows, tweets.created_at[rts.rows], rts.account_pk, rts.tweet_pk)))
    first = first_of_runs(rts.tweet_pk, rts.account_pk)
    c["duplicate_retweets"] = int(len(first) - first.sum())
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
    cand = in_sorted(old_tweets, rts.tweet_pk) & in_sorted(accounts.old, rts.account_pk)
    fresh = m.st.created is not None  # in parts into a workspace with no account before: only this import's rows
    if fresh and m.later_part and cand.any():  # what no earlier part stored is not asked of the table
        t, at = time.perf_counter(), np.flatnonzero(cand)
        cand[at[~m.st.retweets.maybe(pair_hashes(rts.tweet_pk[at], rts.account_pk[at]))]] = False
        add_timing(m.st.timings, "check earlier parts' retweets", t)
    updated = 0
    if cand.any():
        cr = rts.take(cand)
        _read_back(m, "monitor_retweet")
        picked = tweets.take(cr.rows)
        cols = [cr.tweet_pk, cr.account_pk, picked.tweet_id, picked.created_at, picked.followers]
        stored, mine = _stored_rows(
            m,
            "rtold",
            rt_cols,
            cols,
            f"monitor_retweet r ON r.workspace_id = {int(m.ws)} AND r.tweet_id = s.tweet "
            "AND r.retweeter_id = s.account",
            "r",
        )
        if stored.any():
            # a retweet an earlier part stored is this upload's own: a repeat, which may still move it earlier
            c["duplicate_retweets"] += int(np.count_nonzero(mine))
            if mine.any():
                m.run(update_retweets_sql(d, m.ws, m.st.stage("rtown", rt_cols, [col[mine] for col in cols])))
            other = stored & ~mine
            if other.any():  # stored before the import (or before this merge): a part may give it again
                upd = m.st.stage("rtupd", rt_cols, [col[other] for col in cols])
                updated, again = move_stored_earlier(m, upd, cr.tweet_pk[other], cr.account_pk[other])
                c["duplicate_retweets"] += again
            keep = np.ones(len(rts.rows), bool)
            keep[np.flatnonzero(cand)[stored]] = False
            rts_new = rts.take(keep)
        else:
            rts_new = rts
    else:
        rts_new = rts
    if fresh and not m.st.final:  # for the next parts' checks (the last part drops them with the snapshots')
        m.st.retweets.add(pair_hashes(rts_new.tweet_pk, rts_new.account_pk))
    picked = tweets.take(rts_new.rows)
    # straight into the table, in its unique key's order (tweet, retweeter): as update_retweets_sql stores them,
    # a retweet id of 0 (none given) is NULL and so is an unknown (NaN) follower count
    inserted = _copy_partitioned(
        m,
        "monitor_retweet",
        [
            ("tweet_id", "bigint"),
            ("retweeter_id", "bigint"),
            ("retweet_id", "bigint"),
            ("created_at", "timestamptz"),
            ("followers_count", "float"),
        ],
        [rts_new.tweet_pk, rts_new.account_pk, picked.tweet_id, picked.created_at, picked.followers],
        {"retweet_id": picked.tweet_id <= 0, "followers_count": np.isnan(picked.followers)},
    )
    c["retweets_stored"] = inserted + updated  # retweets inserted, plus stored ones this upload moved earlier in time
    return rts.tweet_pk


def _follower_counts(m: _Merge, tweets: TweetRows, accounts: AccountKeys) -> None:
    """Follower-count snapshots: every row with a count is one (the highest count per account and time)."""
    st = m.st
    has = np.flatnonzero((tweets.followers >= 0) & (tweets.followers < 9.2e18))
    account_pk = accounts.of(tweets.user_id[has])
    observed_at, count, original = tweets.created_at[has], tweets.followers[has], tweets.retweeted_id[has] == NO_TWEET
    # by (account, time), each run's rows in upload order; of each run the row with the highest count, the first
    # of equals (sorting by the count too took a 10M import 7.4 s: three keys over 64 bits, each float ranked)
    order = lexorder((observed_at, account_pk))
    account_pk, observed_at, count = account_pk[order], observed_at[order], count[order]
    first_row = first_of_runs(account_pk, observed_at)
    starts, run = np.flatnonzero(first_row), np.cumsum(first_row) - 1
    best = np.flatnonzero(count == np.maximum.reduceat(count, starts)[run]) if len(starts) else starts
    first = best[first_of_runs(run[best])]
    cols = [account_pk[first], observed_at[first], count[first].astype(np.int64)]
    original = original[order[first]]
    fc_cols = [("account", "bigint"), ("t", "float"), ("n", "bigint")]
    cand = np.flatnonzero(in_sorted(accounts.old, cols[0]))  # only an old account can have a snapshot stored already
    stored, own = np.zeros(len(cols[0]), bool), np.zeros(0, np.int64)  # own: stored ones whose count this part raises
    fresh = st.created is not None  # in parts into a workspace with no account before: only this import's rows
    if fresh and m.later_part and len(cand):  # what no earlier part stored is not checked against the table
        t = time.perf_counter()
        ask, known, raised = st.snapshots.check(*(c[cand] for c in cols))
        stored[cand[known]], own, cand = True, cand[raised], cand[ask]
        add_timing(st.timings, "check earlier parts' snapshots", t)
    if len(cand):
        found, mine = _stored_rows(
            m,
            "fcold",
            fc_cols,
            [c[cand] for c in cols],
            f"monitor_followercount f ON f.workspace_id = {int(m.ws)} AND f.account_id = s.account "
            f"AND f.observed_at = {m.d.epoch_to_ts('s.t')}",
            "f",
            # only those whose count this part raises: v1.1 retweets embed their original's author with a count,
            # so every part gives again the snapshots of the originals an earlier part stored, mostly unchanged (and
            # so do the retweets carried from the part before, whose snapshots that part stored)
            mine_if="s.n > f.count",
        )
        stored[cand[found]] = True
        own = np.concatenate([own, cand[mine]])
    if len(own):  # a snapshot an earlier part stored: the highest count of its account and time wins
        m.run(_raise_counts_sql(m.d, m.ws, st.stage("fcown", fc_cols, [c[own] for c in cols])))
    if stored.any():
        cols, original = [c[~stored] for c in cols], original[~stored]
    if fresh and not st.final:  # for the next parts' checks
        t = time.perf_counter()
        st.snapshots.add(*cols, original)
        add_timing(st.timings, "check earlier parts' snapshots", t)
    elif fresh:  # the last part: no later part checks against them
        st.snapshots.clear()
        st.retweets.clear()
    # straight into the table, in its unique key's order (account, time)
    m.counts["follower_counts_new"] = _copy_partitioned(
        m,
        "monitor_followercount",
        [("account_id", "bigint"), ("observed_at", "timestamptz"), ("count", "bigint")],
        cols,
    )


def _raise_counts_sql(d, ws: int, own: str) -> str:
    """Stored snapshots that ``own`` (staged snapshots of the same account and time) gives a higher count
    (UPDATE ... FROM on SQLite too: see ``stored_retweets.update_retweets_sql``)."""
    if d.postgres:
        return f"""UPDATE monitor_followercount f SET count = o.n FROM {own} o
                   WHERE f.workspace_id = {int(ws)} AND f.account_id = o.account AND f.observed_at = to_timestamp(o.t)
                       AND o.n > f.count"""
    return f"""UPDATE monitor_followercount SET count = o.n FROM {own} o
               WHERE o.account = monitor_followercount.account_id
                   AND {d.epoch_to_ts("o.t")} = monitor_followercount.observed_at
                   AND o.n > monitor_followercount.count"""


def _follows(m: _Merge, follows: FollowRows, accounts: AccountKeys) -> FollowRows:
    """Follow edges, each once, without self-follows; returns them as account keys."""
    m.counts["follows_in_upload"] = len(follows.follower)
    edges = FollowRows(*accounts.of_each(follows.follower, follows.followee))
    self_follow = edges.follower == edges.followee
    m.counts["self_follows"] = int(np.count_nonzero(self_follow))
    edges = edges.take(~self_follow)
    edges = edges.take(lexorder((edges.followee, edges.follower)))
    edges = edges.take(first_of_runs(edges.follower, edges.followee))
    new = edges
    # only an edge between two old accounts can be stored already
    cand = np.flatnonzero(in_sorted(accounts.old, edges.follower) & in_sorted(accounts.old, edges.followee))
    stored = None
    if len(cand) and m.later_part and m.st.created is not None and m.st.earlier_follows is not None:
        # a workspace with no account before the import: the stored follows are the earlier parts', kept in memory
        t = time.perf_counter()
        stored = m.st.earlier_follows(edges.follower[cand], edges.followee[cand])
        add_timing(m.st.timings, "check earlier parts' follows", t)
    if len(cand) and stored is None:
        _read_back(m, "monitor_follow")
        stored, _ = _stored_rows(
            m,
            "folold",
            [("a", "bigint"), ("b", "bigint")],
            [edges.follower[cand], edges.followee[cand]],
            f"monitor_follow f ON f.workspace_id = {int(m.ws)} AND f.follower_id = s.a AND f.followee_id = s.b",
            "f",
        )
    if stored is not None:
        keep = np.ones(len(edges.follower), bool)
        keep[cand[stored]] = False
        new = edges.take(keep)
    # straight into the table, in its unique key's order (a workspace's first follows: _copy_partitioned)
    m.counts["follows_new"] = _copy_partitioned(
        m,
        "monitor_follow",
        [("follower_id", "bigint"), ("followee_id", "bigint")],
        [new.follower, new.followee],
    )
    return edges


def _read_back(m: _Merge, table: str) -> None:
    """Before this merge reads ``table``'s rows of the workspace: those loaded on the side so far are attached
    (:meth:`.side_load.SideLoad.attach_now`), so that the read finds them."""
    if m.st.side is not None:
        m.st.side.attach_now(m.cur, table, m.st.unindexed)


def _copy_partitioned(
    m: _Merge, table: str, cols: list[tuple[str, str]], arrays: list[np.ndarray], nulls: dict | None = None
) -> int:
    """:func:`_copy` into a table partitioned by workspace (``monitor.partitions``), the workspace's column added.
    The workspace's first rows go into a new partition of its own, without indexes; they are built once the rows
    are in (timed as ``index <table>``). An import merged in parts fills that partition part by part and builds
    them in its last part: kept up row by row, through a B-tree larger than memory by the later parts, they cost
    the 10M benchmark's merge most of its COPYs (benchmarks/data_layer.md). Until then the parts' checks against
    the stored rows (:func:`_stored_rows`, the updates of earlier rows) join the partition by hashing.

    An import that owns its transaction stores a workspace's first follows on a second connection instead
    (:mod:`.side_load`): they go into a table of their own there, which the last part's end makes the partition
    (:func:`merge`)."""
    n = len(arrays[0])
    cols, arrays = [("workspace_id", "bigint"), *cols], [_constant(m.ws, n), *arrays]
    side = m.st.side
    if side is not None and (n or table in side.loading) and side.begin(m.cur, table):
        out = _copy(m, table, cols, arrays, nulls, side=side)
        if m.st.final:
            side.last_rows(table)  # its index is built on the side while this merge stores the rest
        return out
    if n and table not in m.st.unindexed and partitions.begin_load(m.cur, table, m.ws):
        m.st.unindexed.append(table)
    out = _copy(m, table, cols, arrays, nulls)
    if m.st.final and table in m.st.unindexed:  # every part calls this for each table, with rows or none
        t = time.perf_counter()
        partitions.build_indexes(m.cur, table, m.ws)
        m.st.unindexed.remove(table)
        add_timing(m.st.timings, f"index {table}", t)
    return out


def _constant(value: int, n: int) -> np.ndarray:
    """A COPY's column of ``n`` times ``value``: a read-only view of one number, not ``n`` of them in memory."""
    return np.broadcast_to(np.int64(value), (n,))


def _copy(
    m: _Merge,
    table: str,
    cols: list[tuple[str, str]],
    arrays: list[np.ndarray],
    nulls: dict | None = None,
    *,
    side=None,
) -> int:
    """Append new rows of this merge's collection to ``table`` by one COPY (``copy_in``), timed as
    ``copy into <table>``; returns how many. On PostgreSQL that is a binary COPY straight into the table instead
    of a COPY into a staging table and an ``INSERT ... SELECT`` from it: 1M retweets 6.1 s against 7.0 s, 1M
    snapshots 2.4 s against 3.8 s, the rest being the tables' index upkeep (``benchmarks/web.md``, 2026-11-29).
    Times are converted as ``to_timestamp`` converts them, so later merges find the rows by them. ``side``: the
    COPY is queued on the import's side load instead (:mod:`.side_load`, timed there)."""
    n = len(arrays[0])
    t = time.perf_counter()
    if m.coll is not None:  # rows of the live stream belong to no collection: collection_id stays NULL
        cols = [*cols, ("collection_id", "bigint")]
        arrays = [*arrays, _constant(m.coll, n)]
    if side is not None:
        if n:
            side.copy(table, cols, arrays, nulls)
        return n
    copy_in(m.cur, table, cols, arrays, nulls=nulls)
    key = f"copy into {table}"
    add_timing(m.st.timings, key, t)
    return n


def _given_edges(m: _Merge, edges: EdgeRows, accounts: AccountKeys, named: TweetKeys) -> None:
    """Given spreading edges (TUDataset, spreading-graph archives), of the tweets stored."""
    m.counts["given_edges_new"] = 0
    if not len(edges.tweet):
        return
    tweet_pk, ok = lookup(named.tweet_id, named.pk, edges.tweet)
    keyed = EdgeRows(tweet_pk, *accounts.of_each(edges.src, edges.dst))
    ge_stage = m.st.stage(
        "ge", [("t", "bigint"), ("s", "bigint"), ("d", "bigint")], [keyed.tweet[ok], keyed.src[ok], keyed.dst[ok]]
    )
    m.counts["given_edges_new"] = m.run(
        f"""INSERT INTO monitor_givenedge (tweet_id, src_id, dst_id) SELECT t, s, d FROM {ge_stage} WHERE true
            ON CONFLICT (tweet_id, src_id, dst_id) DO NOTHING"""
    )


def _publishers(m: _Merge, originals: Originals) -> None:
    """Every author of an original is a publisher of the workspace."""
    pub_stage = m.st.stage("pub", [("account", "bigint")], [unique(originals.author_pk)])
    m.counts["publishers_new"] = m.run(
        f"""INSERT INTO monitor_publisher (workspace_id, account_id, monitored, created_at)
            SELECT %s, account, {"true" if m.d.postgres else "1"}, CURRENT_TIMESTAMP FROM {pub_stage} WHERE true
            ON CONFLICT (workspace_id, account_id) DO NOTHING""",
        [m.ws],
    )


def _affected(
    m: _Merge,
    tweets: TweetRows,
    originals: Originals,
    named: TweetKeys,
    retweeted_pks: np.ndarray,
    new_follows: FollowRows,
    accounts: AccountKeys,
) -> list[int]:
    """Keys of the tweets whose cascade may have changed, sorted."""
    affected = set(lookup(named.tweet_id, named.pk, tweets.tweet_id[originals.rows])[0].tolist())
    affected |= set(retweeted_pks.tolist())
    # a participant who gained a follow edge may gain spreading edges in every cascade it took part in; the
    # cascades of this upload's retweets are in already, so only the stored retweets of old accounts are left
    followers = unique(new_follows.follower)
    followers = followers[in_sorted(accounts.old, followers)]
    if m.in_parts:
        # an account an earlier part of this import created (a key above the workspace's highest before it: the
        # merge lock is held to the commit) has only this import's retweets, whose tweets are affected already:
        # at 10M retweets in parts, looking them up again took 69 s of the merge
        followers = followers[followers <= m.st.accounts_before]
    if len(followers):
        _read_back(m, "monitor_retweet")
        fer_stage = m.st.stage("fer", [("account", "bigint")], [followers])
        m.timed(
            f"""SELECT DISTINCT r.tweet_id FROM {fer_stage} f {m.d.join} monitor_retweet r
                ON r.workspace_id = {int(m.ws)} AND r.retweeter_id = f.account WHERE true"""
        )
        affected.update(row[0] for row in m.cur.fetchall())
    return sorted(affected)
