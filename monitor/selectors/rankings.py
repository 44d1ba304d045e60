"""Rankings: accounts ranked by combined influence over a window (of one publisher, or of all publishers), the
all-time snapshot that serves the ranking across publishers, the reach split by truth label, and the top
spreaders of a label."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import connection
from django.db.models import Q, Sum

from ..cache import all_time_deltas, cached, data_version, read_cache_seconds
from ..models import Account, Label, PublisherDay, Tweet, Workspace
from .windows import ALL_TIME, Window, covers_all_time, daily_where

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

AGGREGATES = ("total", "mean", "participation")
SORTS = (*AGGREGATES, "cascades")  # what a ranking can be ordered by: an aggregate, or T_v


@dataclass
class RankingPage:
    rows: list[dict]
    tweets: int  # T: computed tweets in the group and window
    total_rows: int
    aggregate: str
    unit: str


@cached
def ranking(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    aggregate: str = "total",
    window: Window = ALL_TIME,
    labels: list[str] | None = None,
    limit: int = 50,
    offset: int = 0,
    sort: str | None = None,
    spreaders_only: bool = False,
) -> RankingPage:
    """Accounts ranked by combined influence over the window's computed tweets (of one publisher, or of all
    publishers of the workspace). Four or five queries whatever the page size: T, the page with the number of
    ranked accounts, the page's accounts, and the unit. All time across publishers the page comes from the
    process's snapshot of the per-account sums (see below); otherwise one pass groups the daily aggregates (the
    count is a window function over the grouped rows). Ties are broken by the account's first appearance in the
    workspace.

    ``sort`` orders the rows by another column than ``aggregate`` (one of :data:`SORTS`; ``cascades`` is T_v,
    ties by total); ``score`` stays the aggregate's value.

    ``spreaders_only``: each publisher's own rows are left out (its influence on its own tweets is their whole
    reach, :func:`reach_by_label`), so the ranking is of the accounts that spread the tweets: of one publisher's
    tweets, or across publishers of everyone else's (an account that publishes and retweets others keeps the
    latter). The pages rank this way; the API, exports and alert rules keep every participant's row."""
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {', '.join(AGGREGATES)}")
    sort = sort or aggregate
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {', '.join(SORTS)}")
    where, params = daily_where(ws, publisher, window, labels)
    if spreaders_only:
        where, params = without_publisher(where, params, publisher)
    tweets = computed_tweets(ws, publisher=publisher, window=window, labels=labels)
    snap = _all_time(ws) if publisher is None and covers_all_time(ws, window) else None
    if snap is not None:
        found, total_rows = snap.page(labels, sort, limit, offset, spreaders_only=spreaders_only)
    elif publisher is not None and read_cache_seconds() > 0:
        # a publisher's sums (of a window, labels), grouped once per data version and paged here for every
        # aggregate, sort and page: the variants one click away share them. Not across publishers: a window of a
        # long workspace may hold millions of accounts, which the cache would keep whole
        # a window holding every day with data (the "30 days" preset of a month's data) groups the same rows
        whole = ALL_TIME if covers_all_time(ws, window) else window
        grouped = _days_grouped(ws, publisher=publisher, window=whole, labels=labels, spreaders_only=spreaders_only)
        found, total_rows = grouped.page(sort, limit, offset)
    else:
        found, total_rows = _ranked_from_days(where, params, sort, limit, offset)
    accounts = {a.pk: a for a in Account.objects.filter(pk__in=[r[0] for r in found]).only("twitter_id", "screen_name")}
    rows = []
    for i, (pk, total, tv) in enumerate(found):
        acc = accounts[pk]
        total, tv = float(total), int(tv)
        row = {
            "rank": offset + i + 1,
            "account": pk,
            "twitter_id": acc.twitter_id,
            "screen_name": acc.screen_name,
            "total": total,
            "cascades": tv,
            "mean": total / tweets if tweets else 0.0,
            "participation": total / tv if tv else 0.0,
        }
        row["score"] = row[aggregate]
        rows.append(row)
    unit = ranking_unit(ws, publisher=publisher)
    return RankingPage(rows=rows, tweets=tweets, total_rows=total_rows, aggregate=aggregate, unit=unit)


def _ranked_from_days(where: list[str], params: list, sort: str, limit: int, offset: int) -> tuple[list, int]:
    """A page of ``(account, Σ influence, T_v)`` grouped from the daily aggregates, and the number ranked."""
    order = {
        "participation": "SUM(d.influence) / SUM(d.cascades)",
        "cascades": "SUM(d.cascades) DESC, SUM(d.influence)",
    }.get(sort, "SUM(d.influence)")
    with connection.cursor() as cur:
        cur.execute(
            f"""SELECT d.account_id, SUM(d.influence), SUM(d.cascades), COUNT(*) OVER ()
                FROM monitor_dailyinfluence d WHERE {" AND ".join(where)}
                GROUP BY d.account_id ORDER BY {order} DESC, d.account_id LIMIT %s OFFSET %s""",
            [*params, limit, offset],
        )
        found = cur.fetchall()
    total_rows = int(found[0][3]) if found else (0 if offset == 0 else _count_ranked(where, params))
    return [r[:3] for r in found], total_rows


class _Grouped:
    """Σ influence and Σ T_v per account of one publisher's scope (a window, labels), in no order: what
    :func:`_ranked_from_days` groups for one page, kept whole so that every sort and page of the scope is taken
    from one grouping. At the 10M-retweet benchmark each of a busy publisher's pages grouped its 148,821 daily rows
    again (450-570 ms), and a run's warm-up builds five of them per publisher (its ranking variants)."""

    def __init__(self, account, influence, cascades):
        self.account, self.influence, self.cascades = account, influence, cascades

    def page(self, sort: str, limit: int, offset: int) -> tuple[list, int]:
        """The rows of :func:`_ranked_from_days`'s page, in its order: ``sort`` descending (``participation``:
        Σ influence / Σ T_v; ``cascades``: Σ T_v, then Σ influence), ties by account."""
        import numpy as np

        acc, inf, cas = self.account, self.influence, self.cascades
        if sort == "participation":
            keys = (acc, -(inf / cas.astype(np.float64)))
        elif sort == "cascades":
            keys = (acc, -inf, -cas)
        else:
            keys = (acc, -inf)
        order = np.lexsort(keys)[offset : offset + limit]
        rows = zip(acc[order].tolist(), inf[order].tolist(), cas[order].tolist(), strict=True)
        return list(rows), len(acc)


@cached
def _days_grouped(
    ws: Workspace, *, publisher: Account | None, window: Window, labels: list[str] | None, spreaders_only: bool
) -> _Grouped:
    """The daily rows of a ranking's scope summed per account (one query), for :meth:`_Grouped.page`."""
    import numpy as np

    where, params = daily_where(ws, publisher, window, labels)
    if spreaders_only:
        where, params = without_publisher(where, params, publisher)
    grouped = f"""SELECT d.account_id AS a, SUM(d.influence) AS i, SUM(d.cascades) AS c
                  FROM monitor_dailyinfluence d WHERE {" AND ".join(where)} GROUP BY d.account_id"""
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":  # three arrays, not a row per account
            cur.execute(f"SELECT array_agg(g.a), array_agg(g.i), array_agg(g.c) FROM ({grouped}) g", params)
            acc, inf, cas = (v or [] for v in cur.fetchone())
        else:
            cur.execute(grouped, params)
            rows = cur.fetchall()
            acc, inf, cas = ([r[i] for r in rows] for i in range(3))
    return _Grouped(np.array(acc, np.int64), np.array(inf, np.float64), np.array(cas, np.int64))


# --- the all-time ranking across publishers, from a per-process snapshot -----------------------------------------
#
# Ranking every account over all time and all publishers groups every daily row (1.02M rows at the 1M-retweet
# benchmark: about 1.2 s on PostgreSQL here), and each sort, label filter and page is another such query. So each
# process keeps, per workspace and data version, the daily rows summed per (account, label) as NumPy columns
# (about 21 bytes a pair: 9 MB for 429K accounts), read once by binary COPY, and ranks any sort, label filter
# and page from them in milliseconds, with the SQL's order (score descending, ties by account). A compute commit
# bumps the data version, so a snapshot is never staler than the read cache. It is used only while the read
# cache is on (``SPREADWATCH_READ_CACHE_SECONDS`` > 0); the newest ``_ALL_TIME_KEEP`` stay in memory.
#
# A live stream bumps the version about once a second, and reading the sums whole each time cost the ranking
# page 0.23 s of PostgreSQL (330,000 daily rows) per version. A stream micro-batch, a compute batch and an import
# record how they changed them (``cache.record_all_time_delta``), so a process holding the snapshot of an earlier
# version adds the recorded changes of the versions since (up to ``_DELTA_STEPS`` of them) instead, and so do the
# cached columns (:func:`all_time_sums`, on a miss). A version with no record is read whole;
# so is a snapshot after ``_DELTA_DEPTH`` versions added (the float sums then start again from the rows).

_ALL_TIME_KEEP = 4
_ALL_TIME: dict[str, _AllTime] = {}
_LABEL_CODES = {value: code for code, (value, _) in enumerate(Label.choices)}
_DELTA_STEPS = 64
_DELTA_DEPTH = 1000


class _AllTime:
    """Σ influence and Σ T_v per (account, label, own), in no order; ``own`` marks the sums of an account's
    rows on its own tweets (the spreaders' rankings leave them out). ``version`` is the number of the data
    version they are exactly the sums of (None if unknown), ``depth`` how many versions' changes were added since
    the sums were read whole."""

    def __init__(self, account, label, influence, cascades, own=None, *, version: int | None = None, depth: int = 0):
        import numpy as np

        self.account, self.label, self.influence, self.cascades = account, label, influence, cascades
        self.own = np.zeros(len(account), bool) if own is None else np.asarray(own, bool)
        self.version, self.depth = version, depth
        self._groups: dict[tuple, tuple] = {}
        self._orders: dict[tuple, tuple] = {}
        self._tops: dict[tuple, tuple] = {}

    @classmethod
    def read(cls, ws: Workspace) -> _AllTime:
        *cols, version = all_time_sums(ws)
        return cls(*cols, version=version)

    def advanced(self, deltas: list, version: int) -> _AllTime:
        """These sums with ``deltas`` (``AllTimeDelta``s, the versions after this one up to ``version``)
        added; a pair whose T_v falls to 0 has no daily row left and is dropped. The result's pairs are in
        ascending order of their code, so that the next advance of it finds the few changed pairs by a binary
        search (at 10M retweets' 4.3M pairs 0.05 s against about 1 s for regrouping every pair, which a snapshot
        grouped by the database, in no order, still takes once)."""
        import numpy as np

        from compute.arrays import unique_inverse

        pair = _pair_codes(self.account, self.label, _own_of(self))
        none = np.zeros(0, np.int64)
        d_pair = np.concatenate([none, *(_pair_codes(d.account, d.label, _own_of(d)) for d in deltas)])
        d_inf = np.concatenate([none.astype(np.float64), *(np.asarray(d.influence, np.float64) for d in deltas)])
        d_tv = np.concatenate([none, *(np.asarray(d.cascades, np.int64) for d in deltas)])
        if len(pair) > 1 and not (pair[1:] > pair[:-1]).all():  # in no order (read from the database): regroup
            pair, inv = unique_inverse(np.concatenate([pair, d_pair]))
            total = np.bincount(inv, weights=np.concatenate([self.influence, d_inf]), minlength=len(pair))
            t_v = np.bincount(inv, weights=np.concatenate([self.cascades, d_tv]), minlength=len(pair))
            t_v = t_v.astype(np.int64)  # exact: whole counts
        else:
            changed, inv = unique_inverse(d_pair)
            add_inf = np.bincount(inv, weights=d_inf, minlength=len(changed))
            add_tv = np.bincount(inv, weights=d_tv, minlength=len(changed)).astype(np.int64)
            at = np.searchsorted(pair, changed)
            held = at < len(pair)
            held[held] = pair[at[held]] == changed[held]
            total = np.asarray(self.influence, np.float64).copy()
            t_v = np.asarray(self.cascades, np.int64).copy()
            total[at[held]] += add_inf[held]  # each changed pair once: no repeated index
            t_v[at[held]] += add_tv[held]
            new = ~held  # pairs the snapshot lacks, inserted where they sort
            pair = np.insert(pair, at[new], changed[new])
            total = np.insert(total, at[new], add_inf[new])
            t_v = np.insert(t_v, at[new], add_tv[new])
        keep = t_v > 0
        if not keep.all():
            pair, total, t_v = pair[keep], total[keep], t_v[keep]
        return _AllTime(pair >> 5, ((pair >> 1) & 15) - 1, total, t_v, (pair & 1).astype(bool),
                        version=version, depth=self.depth + len(deltas))  # fmt: skip

    def grouped(self, labels: list[str] | None, spreaders_only: bool = False):
        """The sums per account of the label filter (accounts ascending): (accounts, totals, T_v), computed once
        per filter; every sort of it orders these."""
        import numpy as np

        key = (tuple(sorted(labels)) if labels else None, spreaders_only)
        if key in self._groups:
            return self._groups[key]
        mask = np.ones(len(self.account), bool)
        if labels:
            mask &= np.isin(self.label, [_LABEL_CODES.get(x, -1) for x in labels])
        if spreaders_only:
            mask &= ~self.own
        acc, inf, tv = self.account[mask], self.influence[mask], self.cascades[mask]
        self._groups[key] = _sums_per_account(acc, inf, tv)
        return self._groups[key]

    def ordered(self, labels: list[str] | None, sort: str, spreaders_only: bool = False):
        """Every ranked account of the label filter in ``sort``'s order: (accounts, totals, T_v); with
        ``spreaders_only`` of the sums on other accounts' tweets. The label filter's sums are grouped once
        (:meth:`grouped`) and each sort only orders them; ``mean`` (the total over the window's T tweets, the same
        T for every account) is the total's order. At the 10M-retweet benchmark's 4.3M pairs each sort grouped the
        snapshot again, about 1.1 s each on this machine (``benchmarks/data_layer.md``)."""
        import numpy as np

        sort, key = _order_key(labels, sort, spreaders_only)
        if key in self._orders:
            return self._orders[key]
        ids, total, t_v = self.grouped(labels, spreaders_only)
        # stable sorts of accounts in ascending order: ties stay by account, as the SQL's order breaks them
        keys = _sort_keys(sort, total, t_v)
        order = np.lexsort(keys) if len(keys) > 1 else np.argsort(keys[0], kind="stable")
        out = (ids[order], total[order], t_v[order])
        self._orders[key] = out
        return out

    #: the fewest accounts :meth:`top` orders: a page reads the first ``offset + limit``, and a deeper page than the
    #: ones ordered orders twice as many again
    TOP_MIN = 1024

    def top(self, labels: list[str] | None, sort: str, spreaders_only: bool, k: int) -> tuple[tuple, int]:
        """The first ``k`` or more accounts in :meth:`ordered`'s order, as its arrays' prefix, and how many accounts
        are ranked in all. Only the first ones are sorted: the accounts whose score is at most the ``k``-th's are
        picked by a partition and sorted by the same keys (the partition's ties all picked, so the prefix is
        exact): a page's first read of a new version took 0.07 s instead of 0.45-0.5 s (grouping included) at the
        10M benchmark's 4.3M pairs, paid by every web process after each run (benchmarks/data_layer.md). The whole
        order is sorted where it is cheap or already held (a quarter of the accounts or more asked for, or few
        accounts)."""
        import numpy as np

        sort, key = _order_key(labels, sort, spreaders_only)
        if key in self._orders:
            full = self._orders[key]
            return full, len(full[0])
        held = self._tops.get(key)
        if held is not None and len(held[0]) >= k:
            return held[:3], held[3]
        ids, total, t_v = self.grouped(labels, spreaders_only)
        n = len(ids)
        want = max(self.TOP_MIN, 1 << max(k - 1, 0).bit_length())
        if 4 * want >= n:
            return self.ordered(labels, sort, spreaders_only), n
        keys = _sort_keys(sort, total, t_v)
        kth = np.partition(keys[-1], want - 1)[want - 1]
        picked = np.flatnonzero(keys[-1] <= kth)
        picked = picked[np.lexsort((ids[picked], *(col[picked] for col in keys)))]
        self._tops[key] = (ids[picked], total[picked], t_v[picked], n)
        return self._tops[key][:3], n

    def page(
        self, labels: list[str] | None, sort: str, limit: int, offset: int, *, spreaders_only: bool = False
    ) -> tuple[list, int]:
        (ids, total, t_v), n = self.top(labels, sort, spreaders_only, offset + limit)
        sl = slice(offset, offset + limit)
        return list(zip(ids[sl].tolist(), total[sl].tolist(), t_v[sl].tolist(), strict=True)), n


def _order_key(labels: list[str] | None, sort: str, spreaders_only: bool) -> tuple[str, tuple]:
    """The sort an order is built by (``mean`` is the total's order: the same T for every account) and the key an
    ordered snapshot keeps it under."""
    sort = "total" if sort == "mean" else sort
    return sort, (tuple(sorted(labels)) if labels else None, sort, spreaders_only)


def _sort_keys(sort: str, total, t_v) -> tuple:
    """What ``sort`` orders the accounts by, as ``np.lexsort`` keys (the first one last), each ascending; ties are
    left to the accounts' order."""
    import numpy as np

    if sort == "cascades":
        return (-total, -t_v)
    if sort == "participation":
        return (-(total / np.maximum(t_v, 1)),)
    return (-total,)


def _sums_per_account(acc: np.ndarray, inf: np.ndarray, tv: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(accounts ascending, Σ influence, Σ T_v) of the rows ``acc``. A workspace's account keys are mostly one
    run of numbers (an import creates them together), so where their range is at most four times the rows they
    are counted by position, with no sort (4.3M rows: 0.1 s against 0.5 s for ``np.unique``); keys spread wider
    (workspaces whose imports interleaved) are sorted."""
    import numpy as np

    from compute.arrays import unique_inverse

    if len(acc) == 0:
        return acc.astype(np.int64), np.zeros(0), np.zeros(0, np.int64)
    lo, hi = int(acc.min()), int(acc.max())
    if hi - lo + 1 <= 4 * len(acc):
        pos = acc - lo
        seen = np.bincount(pos, minlength=hi - lo + 1) > 0
        ids = np.flatnonzero(seen)
        total = np.bincount(pos, weights=inf, minlength=hi - lo + 1)[ids]
        t_v = np.bincount(pos, weights=tv, minlength=hi - lo + 1)[ids].astype(np.int64)
        return ids + lo, total, t_v
    ids, inv = unique_inverse(acc)
    total = np.bincount(inv, weights=inf, minlength=len(ids))
    t_v = np.bincount(inv, weights=tv, minlength=len(ids)).astype(np.int64)
    return ids, total, t_v


def _pair_codes(account, label, own) -> np.ndarray:
    """One number per (account, label, own): label codes -1 .. 14 in 4 bits, the own flag in the lowest; in the
    accounts' order, then the labels', then own."""
    import numpy as np

    return (np.asarray(account, np.int64) * 16 + (np.asarray(label, np.int64) + 1)) * 2 + np.asarray(own, np.int64)


def _own_of(part) -> np.ndarray:
    """The own flags of a snapshot or a recorded change (a change recorded before they existed has none)."""
    import numpy as np

    own = getattr(part, "own", None)
    return np.zeros(len(part.account), np.int64) if own is None else np.asarray(own, np.int64)


def _all_time(ws: Workspace) -> _AllTime | None:
    key = data_version(ws)
    if key is None:
        return None
    snap = _ALL_TIME.get(key)
    if snap is None:
        snap = _advanced(ws, key) or _AllTime.read(ws)
        _ALL_TIME[key] = snap
        while len(_ALL_TIME) > _ALL_TIME_KEEP:
            _ALL_TIME.pop(next(iter(_ALL_TIME)))
    return snap


def _advanced(ws: Workspace, key: str) -> _AllTime | None:
    """The snapshot of version ``key`` built from this process's newest earlier one of the workspace and the
    changes recorded since, or None (none held, too far behind, a version not recorded)."""
    prefix, _, number = key.rpartition(":")
    target = int(number)
    bases = [
        s for k, s in _ALL_TIME.items()
        if k.rpartition(":")[0] == prefix and s.version is not None and s.version < target
    ]  # fmt: skip
    if not bases:
        return None
    base = max(bases, key=lambda s: s.version)
    steps = target - base.version
    if steps > _DELTA_STEPS or base.depth + steps > _DELTA_DEPTH:
        return None
    deltas = all_time_deltas(ws, base.version + 1, target)
    if deltas is None:
        return None
    return base.advanced(deltas, target)


def all_time_prime(ws: Workspace) -> bool:
    """Build this process's all-time snapshot of ``ws`` and the first accounts of the pages' default order now
    (``monitor.boot``, as a web process starts: the overview's and the ranking page's, of the spreaders), so that
    its first ranking across publishers does not pay for it (about 0.2 s at the 1M-retweet benchmark); False while
    the read cache is off. Only the first :attr:`_AllTime.TOP_MIN` accounts are sorted (:meth:`_AllTime.top`), as a
    page does: the whole order took a process 0.45-0.5 s a workspace at the 10M-retweet benchmark, the top 0.07 s."""
    snap = _all_time(ws)
    if snap is None:
        return False
    snap.top(None, "total", True, 1)
    return True


@cached(rev=2)  # rev 1: the ``own`` column (issue 40); rev 2: narrowed columns
def all_time_sums(ws: Workspace) -> tuple:
    """The snapshot's columns (account, label code, Σ influence, Σ T_v, own per (account, label, own): ``own``
    where the rows are the account's on its own tweets), read by one binary
    COPY, and the number of the data version they are the sums of (read by the same statement, so it is exact
    even when a commit lands between the page's reading of the version and this read; None for a workspace
    with no daily row). In the read cache too (about 10 MB at the 1M-retweet benchmark, a few ms to fetch): a web
    process meets a new data version with the columns built once, by the worker that warmed the cache when the
    run finished (``monitor.services.warmup``) or by the first process to need them, instead of each process
    grouping every daily row again (about 1.2 s there).

    On a miss, the sums of the newest earlier version still cached, with the changes recorded since (a compute
    batch's or a live-stream micro-batch's, ``cache.record_all_time_delta``) added, when every version between
    has one: at 10M retweets the warm-up after a small run took the new sums that way in under 1 s (fetching the
    previous ones and adding the change) where grouping every daily row took PostgreSQL 5.4-6.5 s, the overview's
    read 9.4-10.9 s in all (``benchmarks/data_layer.md``)."""
    advanced = _sums_advanced(ws)
    if advanced is not None:
        return advanced
    from ..db import copy_out

    codes = " ".join(f"WHEN '{value}' THEN {code}" for value, code in _LABEL_CODES.items())
    with connection.cursor() as cur:
        *cols, version = copy_out(
            cur,
            f"""SELECT g.account_id, g.code, g.influence, g.cascades, g.own, w.data_version
                FROM (SELECT account_id, CASE label {codes} ELSE -1 END AS code, SUM(influence) AS influence,
                            SUM(cascades) AS cascades, CASE WHEN account_id = publisher_id THEN 1 ELSE 0 END AS own
                        FROM monitor_dailyinfluence WHERE workspace_id = %s
                        GROUP BY account_id, label, CASE WHEN account_id = publisher_id THEN 1 ELSE 0 END) g
                    CROSS JOIN (SELECT data_version FROM monitor_workspace WHERE id = %s) w""",
            [ws.pk, ws.pk],
            [("account", "bigint"), ("label", "int"), ("influence", "float"), ("cascades", "bigint"),
             ("own", "int"), ("version", "bigint")],
        )  # fmt: skip

    return (*_narrow(*cols), int(version[0]) if len(version) else None)


def _narrow(account, code, influence, cascades, own) -> tuple:
    """The all-time sums' columns as they are cached: 22 bytes a pair instead of 48 (at 10M retweets 4.3M pairs,
    95 MB instead of 173 MB that every web process fetches and unpickles once per data version); label codes are
    -1 .. 14."""
    import numpy as np

    return (
        np.asarray(account, np.int64),
        np.asarray(code).astype(np.int8),
        np.asarray(influence, np.float64),
        np.asarray(cascades).astype(np.int32),
        np.asarray(own).astype(bool),
    )


def _sums_advanced(ws: Workspace) -> tuple | None:
    """:func:`all_time_sums` of the current version from the newest of the ``_DELTA_STEPS`` versions before it
    whose sums are cached, and the changes recorded since; None when there is no such version or a change is
    missing (the caller then groups the rows)."""
    import numpy as np
    from django.core.cache import cache

    from ..cache import all_time_empty, current_version, version_name

    if read_cache_seconds() <= 0:
        return None
    number = int(current_version(ws).rpartition(":")[2])
    backs = list(range(number - 1, max(number - _DELTA_STEPS, 0) - 1, -1))
    # a version recorded as having had no daily row (before a workspace's first run) has empty sums
    empty = all_time_empty(ws, backs)
    try:
        for back in backs:  # the newest first, one at a time: cached sums are large (95 MB at 10M retweets)
            if back in empty:
                base = (*_narrow(*(np.zeros(0, t) for t in (np.int64, np.int8, np.float64, np.int32, bool))), back)
                break
            base = cache.get(all_time_sums.key_at(version_name(ws.pk, ws.created_at, back), ws))
            if base is not None:
                break
        else:
            return None
    except Exception:  # the cache cannot be reached: group the rows
        return None
    *cols, base_version = base
    if base_version is not None and base_version != back:
        return None  # not the sums of the version they are cached under (never written so): group the rows
    deltas = all_time_deltas(ws, back + 1, number)
    if deltas is None:
        return None
    snap = _AllTime(*cols, version=back).advanced(deltas, number)
    log.info("workspace %s: all-time sums of version %s from version %s and %s changes", ws.pk, number, back,
             len(deltas))  # fmt: skip
    return (*_narrow(snap.account, snap.label, snap.influence, snap.cascades, snap.own), number)


@cached
def reach_by_label(ws: Workspace, *, publisher: Account | None = None, window: Window = ALL_TIME) -> list[dict]:
    """The computed tweets and their summed reach per truth label (one query): whose claims travel."""
    qs = PublisherDay.objects.filter(Q(workspace=ws) & window.filter())
    if publisher is not None:
        qs = qs.filter(publisher=publisher)
    rows = list(qs.values("label").annotate(tweets=Sum("tweets"), reach=Sum("reach")).order_by("-reach", "label"))
    total = sum(r["reach"] or 0.0 for r in rows) or 1.0
    for r in rows:
        r["share"] = (r["reach"] or 0.0) / total
    return rows


def without_publisher(where: list[str], params: list, publisher: Account | None) -> tuple[list[str], list]:
    """A read of the daily influence (``d``) less each publisher's own rows (of one publisher's tweets, or of
    every publisher's): the spreaders. (Not for ``monitor_publisherday``, which has no account.)"""
    if publisher is None:
        return [*where, "d.account_id <> d.publisher_id"], params
    return [*where, "d.account_id <> %s"], [*params, publisher.pk]


def _count_ranked(where: list[str], params: list) -> int:
    """Ranked accounts when the page asked for is past the end (so the page query returned no row)."""
    with connection.cursor() as cur:
        cur.execute(
            f"SELECT COUNT(DISTINCT d.account_id) FROM monitor_dailyinfluence d WHERE {' AND '.join(where)}", params
        )
        return int(cur.fetchone()[0])


# T and the unit are the same for every page, aggregate and sort of a ranking: each is cached on its own (under the
# data version), so that the variants of a ranking (the warm-up's, an analyst's clicks) do not read them again. Across
# publishers they read every computed tweet or every publisher-day of the workspace: at the 10M-retweet benchmark 15
# and 58 ms, nearly all of a ranking page's time when its sums come from the all-time snapshot
# (benchmarks/data_layer.md, 2026-12-06 (third))


@cached
def computed_tweets(
    ws: Workspace, *, publisher: Account | None = None, window: Window = ALL_TIME, labels: list[str] | None = None
) -> int:
    """T: the computed tweets of the window with these labels (of one publisher, or of all)."""
    days = PublisherDay.objects.filter(Q(workspace=ws) & window.filter())
    if publisher is not None:
        days = days.filter(publisher=publisher)
    if labels:
        days = days.filter(label__in=labels)
    return days.aggregate(n=Sum("tweets"))["n"] or 0


@cached
def ranking_unit(ws: Workspace, *, publisher: Account | None = None) -> str:
    """What the scores of a ranking count, in words: from the units its computed tweets were computed in."""
    qs = Tweet.objects.filter(workspace=ws, compute_status=Tweet.ComputeStatus.COMPUTED)
    if publisher is not None:
        qs = qs.filter(author=publisher)
    units = set(qs.values_list("unit", flat=True).distinct()[:2])
    if units == {"retweeters"}:
        return "retweeters reached"
    if len(units) > 1:
        return "mixed: followers reached, and retweeters reached where counts are unknown"
    return "followers reached"


@cached
def top_spreaders(
    ws: Workspace,
    *,
    publisher: Account | None = None,
    window: Window = ALL_TIME,
    labels: list[str] | None = None,
    limit: int = 5,
    spreaders_only: bool = False,
) -> list[dict]:
    """The ``limit`` accounts with the most total influence over the window's tweets with these labels (one
    query, or the all-time snapshot across publishers; the order of :func:`ranking` by ``total``): e.g. who
    carries a publisher's false claims."""
    snap = _all_time(ws) if publisher is None and covers_all_time(ws, window) else None
    if snap is not None:
        found, _ = snap.page(labels, "total", int(limit), 0, spreaders_only=spreaders_only)
        accs = Account.objects.only("twitter_id", "screen_name").in_bulk([r[0] for r in found])
        return [
            {
                "rank": i + 1,
                "account": pk,
                "twitter_id": accs[pk].twitter_id,
                "screen_name": accs[pk].screen_name,
                "total": float(total),
                "cascades": int(tv),
            }
            for i, (pk, total, tv) in enumerate(found)
        ]
    where, params = daily_where(ws, publisher, window, labels)
    if spreaders_only:
        where, params = without_publisher(where, params, publisher)
    with connection.cursor() as cur:
        cur.execute(
            f"""SELECT d.account_id, a.twitter_id, a.screen_name, SUM(d.influence), SUM(d.cascades)
                FROM monitor_dailyinfluence d JOIN monitor_account a ON a.id = d.account_id
                WHERE {" AND ".join(where)}
                GROUP BY d.account_id, a.twitter_id, a.screen_name
                ORDER BY SUM(d.influence) DESC, d.account_id LIMIT %s""",
            [*params, int(limit)],
        )
        return [
            {
                "rank": i + 1,
                "account": pk,
                "twitter_id": tid,
                "screen_name": name,
                "total": float(total),
                "cascades": int(tv),
            }
            for i, (pk, tid, name, total, tv) in enumerate(cur.fetchall())
        ]
