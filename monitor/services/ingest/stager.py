"""The staging area of one load: the part read so far as NumPy columns, and the temporary tables of the merge.

An upload larger than ``part_rows`` (``SPREADWATCH_IMPORT_PART_ROWS``) is merged in parts, inside the import's one
transaction: when the rows staged reach the limit between two chunks, ``on_full`` merges them and
:meth:`Stager.next_part` starts over with empty columns, so an import holds one part (plus what the merge of
it needs), not the whole upload. What must span the parts stays here: the files' names, the originals whose
text was taken, the renamed accounts, and the retweets whose original has not been read yet (carried into the
next part, reported as unknown only after the last one).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from compute.arrays import sorted_positions, unique_first
from compute.entities import domains_of
from compute.formats import ReadReport, snowflake_time
from compute.structures import SpreadingGraphs
from compute.tables import NO_TWEET, FollowTable, TweetTable

from ...db import copy_in, copy_text, create_temp, dialect, empty_table, temp_table_name
from ...models import Account, Label
from .columns import EdgeRows, FollowRows, TweetRows, cat
from .earlier_parts import EarlierSnapshots, StoredKeys
from .stored_retweets import StoredBefore

__all__ = ["LABELS", "GivenNames", "Stager", "add_timing", "text_rows"]

LABELS = {c.value for c in Label}
_LABEL_ALIASES = {"nonrumor": "non-rumor", "non_rumor": "non-rumor", "non-rumour": "non-rumor", "": "unknown"}


class Stager:
    """Everything read so far, as NumPy columns (about 40 bytes per record), plus the few text columns.

    Ids are resolved to primary keys, deduplicated and sorted here, so the database receives each big table's
    rows once, in its unique key's order (B-tree inserts at the right edge, no joins, no DISTINCT).
    """

    def __init__(self, cursor, *, mode: str = "strict", report: ReadReport | None = None, part_rows: int = 0) -> None:
        self.cur = cursor
        self.d = dialect()
        self.mode = mode
        self.report = ReadReport() if report is None else report
        self.names: list[str] = []  # the files read, as uploaded (``src`` indexes them)
        self.tweet_parts: list[TweetRows] = []
        self.where_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (file index, line or -1) of each row
        self.follow_parts: list[FollowRows] = []
        self.edge_parts: list[EdgeRows] = []
        self.given: dict[int, bool] = {}  # tweet id -> times known
        self.rows = 0
        self.timings: dict[str, float] = {}
        self.n_follows = 0
        self.missing_times = 0
        self.unknown_labels = 0
        # (Twitter ids, screen names) of the rows that named their user, in reading order (:meth:`names_seen`)
        self.name_parts: list[tuple[np.ndarray, np.ndarray]] = []
        # per original: text, label, hashtags, urls, domains (the first row seen with any of them wins)
        self.texts_seen: dict[int, tuple[str, str, str, str, str]] = {}
        self.affected: list[int] = []  # Tweet pks, set by the merge
        self.merged_follows = None  # the part's follow edges as account pks (FollowRows), set by the merge
        self.on_locked = None  # called by the merge with the cursor once it holds the workspace's merge lock
        self.temps: list[str] = []  # temporary tables to drop
        # a part's temporary tables are emptied and used again by the next part: PostgreSQL keeps a lock on every
        # table created in a transaction until it ends, and an import is one transaction of many parts
        self._pool: dict[tuple, str] = {}
        self._used: set[tuple] = set()  # the pool's tables this part has filled
        # merging in parts (see the module docstring); 0: one part, however large
        self.part_rows = max(0, int(part_rows))
        self.on_full: Callable[[], None] | None = None
        self.part = 0  # parts merged before the one staged now
        self.final = True  # the merge of the part staged now is the last one
        self.carried = 0  # rows at the head of this part carried from the previous one (retweets, unmerged)
        self.carry: np.ndarray | None = None  # set by a non-final merge: staged rows to carry into the next part
        self.texts_taken: set[int] = set()  # originals whose text and label an earlier part took
        self.originals_counted = np.zeros(0, np.int64)  # multi-part: the originals' ids counted so far, sorted
        self.accounts_before = 0  # multi-part: the workspace's highest account key before the import
        self.renamed: set[int] = set()  # multi-part: keys of accounts from before the import that were renamed
        self.renames_given = False  # multi-part: some part gave names to accounts it found stored
        self.names_given = GivenNames()  # multi-part: the names the earlier parts stored, by account
        # multi-part into a workspace with no account before the import: the accounts the earlier parts created, the
        # workspace's every account (merge._accounts); None otherwise
        self.created = None
        # multi-part into such a workspace: what the earlier parts stored, so a later part checks its rows in memory
        # (earlier_parts): the snapshots, the retweets' hashes, and the follows the follower graph's file keeps
        self.snapshots, self.retweets = EarlierSnapshots(), StoredKeys()
        # multi-part: the retweets stored before the import that the earlier parts gave and moved (stored_retweets)
        self.stored_before = StoredBefore()
        self.earlier_follows: Callable[[np.ndarray, np.ndarray], np.ndarray | None] | None = None
        # partitioned tables whose workspace partition this import created and has not indexed yet: an import in
        # parts fills it part by part and builds its indexes in the last part (merge._copy_partitioned)
        self.unindexed: list[str] = []
        # an import owning its transaction: its SideLoad, storing a workspace's first follows and retweets elsewhere
        self.side = None

    def drop(self) -> None:
        # temporary tables live as long as the connection (workers keep theirs open): drop them now
        for t in self.temps:
            self.cur.execute(f"DROP TABLE IF EXISTS {t}")
        self.temps.clear()
        self._pool.clear()
        self._used.clear()

    def release(self) -> None:
        """After a part's merge: its temporary tables may be filled again by the next part's."""
        self._used.clear()

    def _temp(self, key: tuple, create: Callable[[str], None]) -> str:
        """A temporary table for ``key`` (its prefix and columns): the pool's, emptied, when this part has not
        used it yet; else a new one, made by ``create(name)``."""
        name = self._pool.get(key)
        if name is not None and key not in self._used:
            empty_table(self.cur, name)
        else:
            name = temp_table_name(key[0])
            self.temps.append(name)
            create(name)
            self._pool.setdefault(key, name)
        self._used.add(key)
        return name

    def add_tweets(self, t: TweetTable, labels: dict[int, str] | None = None) -> None:
        ok = ~np.isnan(t.created_at)
        self.missing_times += int(np.count_nonzero(~ok))
        if not ok.all():
            t = t.take(ok)
        n = len(t)
        if not n:
            return
        self.rows += n
        self.tweet_parts.append(TweetRows(t.tweet_id, t.retweeted_tweet_id, t.user_id, t.created_at, t.followers_count))
        lines = t.lines if t.lines is not None else np.full(n, -1, np.int64)
        self.where_parts.append((np.full(n, len(self.names) - 1, np.int32), lines))
        if t.screen_name is not None:
            names = t.screen_name
            has = np.flatnonzero(names != None)  # noqa: E711  (object array: elementwise test)
            if len(has):
                # every row's name until the part's merge (a string object each, ~60 bytes: the 1M-retweet
                # upload's import peaked 75 MB higher than with one name per account in a dict, whose updates and
                # lookups took 15 s of the 10M upload's main process; benchmarks/data_layer.md)
                self.name_parts.append((t.user_id[has], names[has]))
        self._add_texts(t, labels)

    def _add_texts(self, t: TweetTable, labels: dict[int, str] | None) -> None:
        """Text, truth label and entities of each original, the first seen per tweet id."""
        orig = np.flatnonzero(t.retweeted_tweet_id == NO_TWEET)
        if not len(orig):
            return
        # a v1.1 retweet embeds its original, so the same original comes once per retweet: first row wins
        _, first = np.unique(t.tweet_id[orig], return_index=True)
        orig = orig[np.sort(first)]
        ids = t.tweet_id[orig].tolist()
        text = t.text[orig].tolist() if t.text is not None else [None] * len(orig)
        lab = t.label[orig].tolist() if t.label is not None else [None] * len(orig)
        tags = t.hashtags[orig].tolist() if t.hashtags is not None else [None] * len(orig)
        links = t.urls[orig].tolist() if t.urls is not None else [None] * len(orig)
        taken = self.texts_taken
        for tid, tx, lb, tg, ul in zip(ids, text, lab, tags, links):
            if labels and tid in labels:
                lb = labels[tid]
            if tid not in self.texts_seen and tid not in taken and (tx or lb is not None or tg or ul):
                self.texts_seen[tid] = (tx or "", self._label(lb), tg or "", ul or "", domains_of(ul))

    def _label(self, lb) -> str:
        if lb is None:
            return "unknown"
        v = str(lb).strip().lower()
        v = _LABEL_ALIASES.get(v, v)
        if v not in LABELS:
            self.unknown_labels += 1
            return "unknown"
        return v

    def add_follows(self, f: FollowTable) -> None:
        self.follow_parts.append(FollowRows(f.follower_id, f.followee_id))
        self.n_follows += len(f)

    def add_graphs(self, g: SpreadingGraphs) -> None:
        """Given spreading graphs: the participants become tweets + retweets, the edges go to GivenEdge."""
        c = g.cascades
        casc = np.repeat(np.arange(c.n_cascades), c.sizes)
        is_pub = np.zeros(c.n_nodes, bool)
        is_pub[c.publisher] = True
        tid = c.tweet_ids[casc]
        times_known = c.times is not None
        if times_known:
            times = c.times.astype(np.float64)
        else:
            # no times (TUDataset): the tweet's snowflake time for everyone; the cascade is flagged so the
            # backward phase treats it as untimed (a cycle rejects it rather than dropping edges)
            base = np.array([snowflake_time(int(x)) for x in c.tweet_ids.tolist()], dtype=np.float64)
            times = base[casc]
        followers = c.followers if c.unit == "followers" else np.full(c.n_nodes, np.nan)
        rt = np.where(is_pub, NO_TWEET, tid)
        tweet_col = np.where(is_pub, tid, 0)
        labels = None
        if c.labels is not None:
            labels = {int(t): str(lb) for t, lb in zip(c.tweet_ids.tolist(), c.labels.tolist()) if lb is not None}
        self.add_tweets(TweetTable(tweet_col, rt, c.user_ids, times, followers), labels=labels)
        self.given.update(dict.fromkeys(c.tweet_ids.tolist(), times_known))
        ecasc = np.repeat(np.arange(c.n_cascades), np.diff(g.edge_offsets))
        self.edge_parts.append(EdgeRows(c.tweet_ids[ecasc], c.user_ids[g.edge_src], c.user_ids[g.edge_dst]))

    def tweets(self) -> TweetRows:
        """Every tweet row of this part, in upload order (joined into one part: held once, not twice)."""
        cols = list(zip(*self.tweet_parts)) if self.tweet_parts else [[]] * len(TweetRows._fields)
        rows = TweetRows(*(cat(list(c), dt) for c, dt in zip(cols, TweetRows.DTYPES)))
        self.tweet_parts = [rows] if len(rows.tweet_id) else []
        return rows

    def follows(self) -> FollowRows:
        """Every staged follow edge (Twitter user ids), in upload order."""
        return FollowRows(*(cat([p[k] for p in self.follow_parts], np.int64) for k in range(2)))

    def edges(self) -> EdgeRows:
        """Every given spreading edge (Twitter ids), in upload order."""
        return EdgeRows(*(cat([p[k] for p in self.edge_parts], np.int64) for k in range(3)))

    def stage(self, prefix: str, cols: list[tuple[str, str]], arrays: list[np.ndarray]) -> str:
        """Copy ``arrays`` into a new temporary table (dropped by :meth:`drop`); returns its name."""
        t = time.perf_counter()
        name = self._temp((prefix, *cols), lambda n: create_temp(self.cur, n, cols))
        copy_in(self.cur, name, cols, arrays)
        add_timing(self.timings, f"stage {prefix}", t)
        return name

    def stage_text(self, prefix: str, cols: str, names: tuple[str, ...], rows: list[tuple]) -> str:
        """A new temporary table of ints and strings (``cols``: its column definitions); returns its name."""
        t = time.perf_counter()
        name = self._temp((prefix, cols), lambda n: self.cur.execute(f"CREATE TEMP TABLE {n} ({cols})"))
        if rows:
            text_rows(self.cur, self.d, name, names, rows)
        add_timing(self.timings, f"stage {prefix}", t)
        return name

    def where(self) -> tuple[np.ndarray, np.ndarray]:
        """(file index, line or -1) of every staged tweet row, in the order of :meth:`tweets`."""
        w = cat([w[0] for w in self.where_parts], np.int32), cat([w[1] for w in self.where_parts], np.int64)
        self.where_parts = [w] if len(w[0]) else []
        return w

    @property
    def empty(self) -> bool:
        return not (self.rows or self.n_follows or self.edge_parts)

    @property
    def staged(self) -> int:
        """Rows in this part: tweets and retweets, follow edges, given edges."""
        return (
            sum(len(p.tweet_id) for p in self.tweet_parts)
            + sum(len(p.follower) for p in self.follow_parts)
            + sum(len(p.tweet) for p in self.edge_parts)
        )

    def maybe_flush(self) -> None:
        """Between two chunks: merge the part staged so far when it has reached ``part_rows``."""
        if self.part_rows and self.on_full is not None and self.staged >= self.part_rows:
            self.on_full()

    def names_seen(self) -> NamesSeen:
        """Each user this part named, with the last name seen (accounts rename; uploads are roughly in time
        order)."""
        return NamesSeen(*_last_names(self.name_parts))

    def next_part(self) -> None:
        """After a part's merge: start the next part empty, but for the retweets the merge carried (``carry``)."""
        carry = self.carry if self.carry is not None else np.zeros(0, np.int64)
        tweets, (src, line) = self.tweets(), self.where()
        self.texts_taken.update(self.texts_seen)
        self.tweet_parts, self.where_parts, self.follow_parts, self.edge_parts = [], [], [], []
        self.given, self.texts_seen, self.name_parts = {}, {}, []
        self.carry, self.carried = None, len(carry)
        if len(carry):
            self.tweet_parts.append(tweets.take(carry))
            self.where_parts.append((src[carry], line[carry]))
        self.part += 1


def add_timing(timings: dict[str, float], key: str, t0: float) -> None:
    """Add the seconds since ``t0`` to the merge step ``key``: summed over the parts of an import in parts."""
    timings[key] = round(timings.get(key, 0.0) + time.perf_counter() - t0, 3)


#: the longest screen name an account keeps
NAME_MAX = Account._meta.get_field("screen_name").max_length


def _last_names(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The users of ``parts`` (Twitter ids, names; in reading order), sorted, with the last name given to each."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, object)
    ids = np.concatenate([i for i, _ in parts])
    names = np.concatenate([n for _, n in parts])
    ids, last = unique_first(ids[::-1])  # the first of each id in reverse order is its last row
    return ids, names[::-1][last]


class NamesSeen:
    """The screen names a part gives its users: ``ids`` sorted, ``names[i]`` (an object array of ``str``, each cut
    to :data:`NAME_MAX`) the last one given to ``ids[i]``.

    Arrays, not a dict: at the 10M-retweet benchmark the dict's updates and the merge's lookups of 4.2M new
    accounts and 2-3M known ones a part, one Python call each, took 15 s of the import's main process
    (``benchmarks/data_layer.md``)."""

    def __init__(self, ids: np.ndarray, names: np.ndarray) -> None:
        self.ids = ids
        # a name longer than the column is cut: measured in one pass, cut only where it is
        lengths = np.fromiter(map(len, names), np.int64, len(names))
        long = np.flatnonzero(lengths > NAME_MAX)
        if len(long):
            names = names.copy()
            names[long] = [n[:NAME_MAX] for n in names[long].tolist()]
        self.names = names

    def __len__(self) -> int:
        return len(self.ids)

    def of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The names of ``ids`` (an object array; ``""`` where this part named none) and whether it named each."""
        if not len(self.ids):
            return np.full(len(ids), "", object), np.zeros(len(ids), bool)
        pos, found = sorted_positions(self.ids, np.asarray(ids, np.int64))
        names = self.names[pos]
        names[~found] = ""
        return names, found


class GivenNames:
    """The screen names the earlier parts of an import in parts stored, by account (Twitter id): a 64-bit keyed
    hash of each name (Python's ``hash``, SipHash, fixed within the process), 16 bytes an account.

    An account met again in a later part is renamed only when its name differs from the one this import stored:
    the 10M-retweet benchmark's later parts each staged 2-3M unchanged names again and ran their update for
    nothing (15 s of its merge, benchmarks/data_layer.md). Equal hashes of two different names would keep the
    earlier name; with 64 bits that is one chance in 2^64 per account met again."""

    def __init__(self) -> None:
        self.ids = np.zeros(0, np.int64)  # sorted
        self.hashes = np.zeros(0, np.int64)

    @staticmethod
    def _hashes(names) -> np.ndarray:
        return np.fromiter(map(hash, names), np.int64, len(names))

    def add(self, ids: np.ndarray, names) -> None:
        """``names[i]`` is now the stored name of account ``ids[i]`` (the ids unique)."""
        if not len(ids):
            return
        ids = np.concatenate([np.asarray(ids, np.int64), self.ids])  # the new names first: ``unique`` keeps them
        hashes = np.concatenate([self._hashes(names), self.hashes])
        self.ids, first = unique_first(ids)
        self.hashes = hashes[first]

    def unchanged(self, ids: np.ndarray, names) -> np.ndarray:
        """Mask of the accounts whose stored name this import gave, and gave as ``names[i]``."""
        if not len(self.ids) or not len(ids):
            return np.zeros(len(ids), bool)
        pos, found = sorted_positions(self.ids, np.asarray(ids, np.int64))
        return found & (self.hashes[pos] == self._hashes(names))


def text_rows(cur, d, table: str, cols: tuple[str, ...], rows: list[tuple]) -> None:
    """Rows of ints and strings into a temporary table (PostgreSQL: one COPY text buffer per 100K rows)."""
    if d.postgres:
        with cur.cursor.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
            for a in range(0, len(rows), 100_000):
                cp.write(
                    # PostgreSQL text cannot hold NUL: a NUL in a name or text (JSON \u0000, a stray byte in a CSV)
                    # is dropped (copy_text)
                    "".join("\t".join(copy_text(str(v)) for v in r) + "\n" for r in rows[a : a + 100_000])
                )
    else:
        cur.executemany(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(cols))})", rows)
