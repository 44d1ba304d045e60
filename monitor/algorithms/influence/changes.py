"""A live-stream micro-batch's store: only the per-cascade and daily rows that changed are deleted and written
(a compute batch rewrites its cascades' rows and its (publisher, day) pairs' aggregates whole: ``store``)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from compute.arrays import lexorder, unique

from ...db import copy_out, int_array
from .copies import _DAY_NUMBER, _LABEL_ARRAY, _LABEL_CASE, _ROLE_CASE, _copy_cascade_influence, _days_and_labels
from .rows import AllTimeDelta, InfluenceRows, _stage


def _replace_changed_influence(cur, ws: int, tweet_pks: list[int], rows: InfluenceRows) -> _DailyChanges:
    """Make the stored per-cascade rows of workspace ``ws``'s cascades ``tweet_pks`` equal ``rows`` by deleting and
    writing only the rows that differ (PostgreSQL). Returns the daily aggregates' keys those rows belong to, with what
    the batch's rows say of each (:class:`_DailyChanges`).

    Every statement here reads or writes one table by an index (``= ANY`` of an array), never a join from a
    temporary table: the planner has no statistics for those, and a live stream's tables grow faster than
    their own statistics (where autovacuum is off, they never catch up), so a join could be planned as a scan
    of the big table per key (seen: 67 s for 10,000 keys)."""
    day, label = _days_and_labels(cur, rows) if len(rows.tweet) else (np.zeros(0, np.int64),) * 2
    old_cols = copy_out(
        cur,
        f"""SELECT ci.tweet_id, ci.account_id, ci.publisher_id, {_DAY_NUMBER.format(col="ci.day")},
                ({_LABEL_CASE.format(col="ci.label")})::bigint, ci.influence, ci.followers,
                ({_ROLE_CASE.format(col="ci.role")})::bigint
            FROM monitor_cascadeinfluence ci
            WHERE ci.workspace_id = %s AND ci.tweet_id = ANY({int_array(tweet_pks)})""",
        [ws],
        [("t", "bigint"), ("a", "bigint"), ("p", "bigint"), ("d", "bigint"), ("l", "bigint"), ("i", "float"),
         ("f", "float"), ("r", "bigint")],
    )  # fmt: skip
    new_cols = [rows.tweet, rows.account, rows.publisher, day, label, rows.influence, rows.followers, rows.role]
    write, gone = changed_rows(old_cols, new_cols)
    if gone.any():  # by the unique key: ``id`` has no index (migration 0044)
        cur.execute(
            f"""DELETE FROM monitor_cascadeinfluence ci
                USING unnest({int_array(old_cols[0][gone])}, {int_array(old_cols[1][gone])}) AS g(tweet, account)
                WHERE ci.workspace_id = %s AND ci.tweet_id = g.tweet AND ci.account_id = g.account""",
            [ws],
        )
    if write.any():
        _copy_cascade_influence(cur, ws, InfluenceRows(*(c[write] for c in rows)), (day[write], label[write]))
    # the daily keys (publisher, account, day, label) of every row deleted or written
    old_keys = np.stack([old_cols[k] for k in (2, 1, 3, 4)], axis=1)
    new_keys = np.stack([new_cols[k] for k in (2, 1, 3, 4)], axis=1).astype(np.int64)
    keys = np.unique(np.concatenate([old_keys[gone], new_keys[write]]), axis=0)
    old_rows, _ = _per_key(keys, old_keys, old_cols[5])
    grown = max(len(rows.tweet) - len(old_cols[0]), 0)
    return _DailyChanges(keys, old_rows, *_per_key(keys, new_keys, rows.influence), grown=grown)


class _DailyChanges(NamedTuple):
    """The daily aggregates' keys a micro-batch's changed rows belong to, one per row of ``keys``
    (publisher, account, day number, label code; sorted), and, per key, the batch's cascades' rows of that key:
    how many were stored before (``old_rows``) and what they are now (``new_rows``, ``new_sum`` of influence)."""

    keys: np.ndarray
    old_rows: np.ndarray
    new_rows: np.ndarray
    new_sum: np.ndarray
    grown: int = 0  # per-cascade rows added (the new ones less the gone ones)


def _per_key(keys: np.ndarray, rows: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``keys`` (unique, sorted): how many rows of ``rows`` equal it, and the sum of their
    ``weights``, added in row order."""
    count, total = np.zeros(len(keys), np.int64), np.zeros(len(keys), np.float64)
    pos, hit = _key_positions(keys, rows)
    np.add.at(count, pos[hit], 1)
    np.add.at(total, pos[hit], weights[hit])  # unbuffered: added in row order
    return count, total


def _key_positions(keys: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``rows``: its position among ``keys`` (2-D int arrays; ``keys`` unique and sorted) and,
    as indices into ``rows``, the rows found there."""
    if not len(keys) or not len(rows):
        return np.zeros(len(rows), np.int64), np.zeros(0, np.int64)
    kv, rv = _row_codes(keys, rows)
    pos = np.minimum(np.searchsorted(kv, rv), len(kv) - 1)
    return pos, np.flatnonzero(kv[pos] == rv)


def _row_codes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of two 2-D int arrays as values that compare as the rows do (lexicographically), for
    ``searchsorted``: one int64 each, a mixed-radix number of the columns' offsets from their smallest value,
    when the columns' ranges multiply to less than 2**62 (ids, days and labels of one micro-batch do); else
    one structured value each. Searching structured values compares them field by field in generic code: four
    searches of a micro-batch's daily keys took 0.10 s of its ~0.5 s of Python, as int64 a few ms."""
    both = np.concatenate([a, b]).astype(np.int64, copy=False)
    lo, hi = both.min(axis=0), both.max(axis=0)
    spans = [int(h) - int(lo_) + 1 for lo_, h in zip(lo.tolist(), hi.tolist())]
    if math.prod(spans) >= 2**62:
        return _rows_view(a), _rows_view(b)
    code = np.zeros(len(both), np.int64)
    for j, span in enumerate(spans):
        code = code * span + (both[:, j] - lo[j])
    return code[: len(a)], code[len(a) :]


def _rows_view(a: np.ndarray) -> np.ndarray:
    """The rows of a 2-D int64 array as one structured value each (compared and sorted field by field)."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    return a.view([("", np.int64)] * a.shape[1]).ravel()


class _DailyRows(NamedTuple):
    publisher: np.ndarray
    account: np.ndarray
    day: np.ndarray
    label: np.ndarray
    influence: np.ndarray
    cascades: np.ndarray
    SQL = ("bigint", "bigint", "bigint", "bigint", "float", "bigint")


def changed_rows(old: list[np.ndarray], new: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Which rows differ between two row sets keyed by their first two columns (tweet, account), each key at
    most once per set: ``(write, gone)``, the masks of the ``new`` rows to write (no old row with that key, or
    one with another value in some column) and of the ``old`` rows to delete (no new row with that key, or a
    different one). NaN equals NaN (a rejected cascade's influence)."""
    n_old = len(old[0])
    if not n_old:
        return np.ones(len(new[0]), bool), np.zeros(0, bool)
    t = np.concatenate([old[0], new[0]])
    a = np.concatenate([old[1], new[1]])
    side = np.concatenate([np.zeros(n_old, np.int8), np.ones(len(new[0]), np.int8)])
    order = lexorder((side, a, t))
    # a pair: an old row followed, in key order, by a new row with the same key
    pair = (t[order][1:] == t[order][:-1]) & (a[order][1:] == a[order][:-1])
    i_old, i_new = order[:-1][pair], order[1:][pair] - n_old
    same = np.ones(len(i_old), bool)
    for o, n in zip(old[2:], new[2:]):
        x, y = o[i_old], n[i_new]
        same &= (x == y) | (np.isnan(x) & np.isnan(y)) if x.dtype.kind == "f" else (x == y)
    write = np.ones(len(new[0]), bool)
    gone = np.ones(n_old, bool)
    write[i_new[same]] = False
    gone[i_old[same]] = False
    return write, gone


def _refresh_daily_keys(cur, ws: int, ch: _DailyChanges) -> AllTimeDelta:
    """Replace the daily rows of the keys ``ch.keys`` (PostgreSQL), reading and writing each table by an index
    (see :func:`_replace_changed_influence`).

    The stored rows of the keys' (publisher, day) pairs are read with their ``cascades`` counts. A key whose
    stored count equals the number of its rows among the batch's cascades before the change has no row outside
    them, so its new sum and count are the batch's own (``ch.new_sum``, ``ch.new_rows``); the other keys (an
    account in two cascades of one publisher and day, only one of them in the batch) are summed again from the
    account's per-cascade rows.

    Returns what the change adds to each (account, label)'s all-time sums: the rows written less the rows
    deleted (:class:`AllTimeDelta`)."""
    if not len(ch.keys):
        return AllTimeDelta.empty()
    pub, acc, day, lab = ch.keys.T
    spub, sacc, sday, slab, scount, sinf = copy_out(
        cur,
        f"""SELECT x.publisher_id, x.account_id, {_DAY_NUMBER.format(col="x.day")},
                ({_LABEL_CASE.format(col="x.label")})::bigint, x.cascades::bigint, x.influence
            FROM monitor_dailyinfluence x WHERE x.workspace_id = %s AND x.publisher_id = ANY({int_array(unique(pub))})
                AND x.day = ANY(ARRAY(SELECT DATE '2000-01-01' + d::integer FROM unnest({int_array(unique(day))}) d))
                AND x.account_id = ANY({int_array(unique(acc))})""",
        [ws],
        [("p", "bigint"), ("a", "bigint"), ("d", "bigint"), ("l", "bigint"), ("n", "bigint"), ("i", "float")],
    )
    # the stored rows of the changed keys (the read is a superset)
    pos, hit = _key_positions(ch.keys, np.stack([spub, sacc, sday, slab], axis=1))
    stored = np.zeros(len(ch.keys), np.int64)
    stored[pos[hit]] = scount[hit]
    if len(hit):  # by the unique key, one probe a row: ``id`` has no index (migration 0044)
        gone = [int_array(c[hit]) for c in (spub, sday, slab, sacc)]
        cur.execute(
            f"""DELETE FROM monitor_dailyinfluence x
                USING unnest({", ".join(gone)}) AS g(publisher, day, label, account)
                WHERE x.workspace_id = %s AND x.publisher_id = g.publisher
                    AND x.day = DATE '2000-01-01' + g.day::integer AND x.label = ({_LABEL_ARRAY})[g.label + 1]
                    AND x.account_id = g.account""",
            [ws],
        )
    own = stored == ch.old_rows  # every row of the key is in the batch's cascades
    influence, cascades = ch.new_sum.copy(), ch.new_rows.copy()
    rest = np.flatnonzero(~own)
    if len(rest):
        # the accounts' per-cascade rows, through the cascades they retweeted or published (the table has no
        # index leading with the account: ``CascadeInfluence.objects.of_accounts``). The (tweet, account) pairs are
        # read first and named in the second statement, which probes the unique key once per pair: joined in one
        # statement, the planner misjudged how many pairs there were where the retweets' statistics were stale
        # and scanned the whole per-cascade table (19 ms a micro-batch at 400,000 rows, benchmarks/stream_web.md)
        accounts = int_array(unique(acc[rest]))
        pt, pa = copy_out(
            cur,
            f"""SELECT r.tweet_id, r.retweeter_id FROM monitor_retweet r
                WHERE r.workspace_id = {int(ws)} AND r.retweeter_id = ANY({accounts})
                UNION SELECT t.id, t.author_id FROM monitor_tweet t WHERE t.author_id = ANY({accounts})""",
            [],
            [("t", "bigint"), ("a", "bigint")],
        )
        ta, tp, td, tl, ti = copy_out(
            cur,
            f"""SELECT ci.account_id, ci.publisher_id, {_DAY_NUMBER.format(col="ci.day")},
                    ({_LABEL_CASE.format(col="ci.label")})::bigint, ci.influence
                FROM unnest({int_array(pt)}, {int_array(pa)}) AS p(tweet, account)
                JOIN monitor_cascadeinfluence ci
                    ON ci.workspace_id = %s AND ci.tweet_id = p.tweet AND ci.account_id = p.account""",
            [ws],
            [("a", "bigint"), ("p", "bigint"), ("d", "bigint"), ("l", "bigint"), ("i", "float")],
        )
        count, total = _per_key(ch.keys, np.stack([tp, ta, td, tl], axis=1), ti)
        influence[rest], cascades[rest] = total[rest], count[rest]
    put = np.flatnonzero(cascades > 0)
    delta = AllTimeDelta(
        np.concatenate([acc[put], sacc[hit]]),
        np.concatenate([lab[put], slab[hit]]),
        np.concatenate([influence[put], -sinf[hit]]),
        np.concatenate([cascades[put], -scount[hit]]),
        np.concatenate([acc[put] == pub[put], sacc[hit] == spub[hit]]),
    )
    if not len(put):
        return delta
    order = put[lexorder((acc[put], lab[put], day[put], pub[put]))]  # the unique key's order
    vals = _stage(cur, "dkput", _DailyRows, _DailyRows(*ch.keys[order].T, influence[order], cascades[order]))
    cur.execute(
        f"""INSERT INTO monitor_dailyinfluence (workspace_id, publisher_id, account_id, day, label, influence,
                cascades)
            SELECT %s, v.publisher, v.account, DATE '2000-01-01' + v.day::integer, ({_LABEL_ARRAY})[v.label + 1],
                v.influence, v.cascades
            FROM {vals} v""",
        [ws],
    )
    cur.execute(f"DROP TABLE IF EXISTS {vals}")
    return delta
