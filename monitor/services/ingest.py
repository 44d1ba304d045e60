"""Loading an uploaded collection into the database: parse with ``compute.formats``, stage, merge.

The whole load of one collection is one transaction:

1. every file is stream-parsed a chunk at a time and its rows are copied into temporary *staging* tables
   (binary COPY on PostgreSQL), so a 1 GB upload never sits in memory as Python objects;
2. set-based ``INSERT ... SELECT ... ON CONFLICT`` statements merge the staging tables into the real ones,
   keyed by natural ids (workspace + Twitter ids), which is what makes re-uploading the same data a no-op;
3. the tweets the upload touched are returned so the compute planner can batch them.

A strict upload that meets a bad record raises ``InputError`` from inside the transaction, so nothing is
stored; ``skip-bad`` leaves bad records out and lists them in the report; ``validate_only`` parses and checks
everything, then rolls back. Progress (bytes read, stage) goes to the cache, outside the transaction, so the
collection page can show it while the load runs.
"""

from __future__ import annotations

import logging
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.db import connection

from compute.formats import FORMATS, ReadReport, detect_format, iter_follows, iter_tweets, read
from compute.formats.npz import npz_kind
from compute.structures import SpreadingGraphs
from compute.tables import NO_TWEET, FollowTable, TweetTable

from ..db import copy_in, create_temp, dialect, temp_table_name
from ..models import Label

log = logging.getLogger(__name__)

__all__ = ["IngestResult", "UploadError", "load_files", "expand_uploads"]

_LABELS = {c.value for c in Label}
_LABEL_ALIASES = {"nonrumor": "non-rumor", "non_rumor": "non-rumor", "non-rumour": "non-rumor", "": "unknown"}
ProgressFn = Callable[[str, float], None]


class UploadError(ValueError):
    """A problem with an upload as a whole (an unreadable archive, an unknown format), named by file."""


@dataclass
class IngestResult:
    """What one load read, stored and set aside."""

    counts: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    tweet_pks: list[int] = field(default_factory=list)  # tweets whose cascades changed
    report: ReadReport = field(default_factory=ReadReport)
    timings: dict = field(default_factory=dict)


# --- archives and format detection ----------------------------------------------------------------------


def expand_uploads(paths: list[tuple[Path, str, str]], workdir: Path) -> list[tuple[Path, str, str]]:
    """Unpack zip / tar uploads into ``workdir``. Each entry is ``(path, shown name, format)``; an archive
    becomes its Twitter15/16 folder, TUDataset folder or member files. Members may not escape ``workdir``."""
    out: list[tuple[Path, str, str]] = []
    for path, shown, fmt in paths:
        kind = _archive_kind(path)
        if kind is None or fmt not in ("auto", ""):
            out.append((path, shown, fmt or "auto"))
            continue
        dest = workdir / f"x{len(out)}"
        dest.mkdir(parents=True)
        try:
            if kind == "zip":
                with zipfile.ZipFile(path) as zf:
                    for m in zf.infolist():
                        _safe_member(dest, m.filename, shown)
                    zf.extractall(dest)
            else:
                with tarfile.open(path) as tf:
                    tf.extractall(dest, filter="data")
        except (zipfile.BadZipFile, tarfile.TarError, OSError) as exc:
            raise UploadError(f"{shown}: cannot unpack the archive: {exc}") from None
        found = _inputs_in(dest)
        if not found:
            raise UploadError(f"{shown}: the archive holds no input this application reads")
        out += [(p, f"{shown}:{p.relative_to(dest)}", "auto") for p in found]
    return out


def _archive_kind(path: Path) -> str | None:
    if path.suffix.lower() == ".npz":  # a NumPy archive is a zip file, but one input
        return None
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
        if names and all(n.endswith(".npy") for n in names):
            return None
        return "zip"
    try:
        if tarfile.is_tarfile(path):
            return "tar"
    except OSError:
        return None
    return None


def _safe_member(dest: Path, name: str, shown: str) -> None:
    target = (dest / name).resolve()
    if not target.is_relative_to(dest.resolve()):
        raise UploadError(f"{shown}: archive member {name!r} points outside the archive")


def _inputs_in(root: Path) -> list[Path]:
    """Inputs inside an unpacked archive: a folder with ``tree/`` is one Twitter15/16 input, a folder with
    ``*_A.txt`` one TUDataset; other files count one by one (hidden files and READMEs are ignored)."""
    found: list[Path] = []
    for d in sorted([root, *[p for p in root.rglob("*") if p.is_dir()]]):
        if (d / "tree").is_dir():
            found.append(d)
    tud = sorted({p.parent for p in root.rglob("*_A.txt")})
    found += [d for d in tud if d not in found]
    taken = [*found]
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name.startswith(".") or p.name.lower().startswith("readme"):
            continue
        if any(p.is_relative_to(d) for d in taken):
            continue
        found.append(p)
    return found


def _detect(path: Path, shown: str, fmt: str) -> str:
    if fmt not in ("", "auto"):
        if fmt not in FORMATS:
            raise UploadError(f"{shown}: unknown format {fmt!r}; want one of {', '.join(FORMATS)}")
        return fmt
    try:
        return detect_format(path)
    except (ValueError, OSError) as exc:
        raise UploadError(f"{shown}: {exc}") from None


# --- staging ----------------------------------------------------------------------------------------------

_TWEET_COLS = [
    ("tweet_id", "bigint"),
    ("rt_id", "bigint"),
    ("user_id", "bigint"),
    ("created_at", "float"),
    ("followers", "float"),
    ("row_no", "bigint"),
]


class Stager:
    """Temporary tables holding everything read so far, plus the few text columns."""

    def __init__(self, cursor) -> None:
        self.cur = cursor
        self.d = dialect()
        self.tweets = temp_table_name("tweets")
        self.follows = temp_table_name("follows")
        self.edges = temp_table_name("edges")
        self.texts = temp_table_name("texts")
        self.names = temp_table_name("names")
        self.given = temp_table_name("given")
        create_temp(cursor, self.tweets, _TWEET_COLS)
        create_temp(cursor, self.follows, [("follower", "bigint"), ("followee", "bigint")])
        create_temp(cursor, self.edges, [("tweet_id", "bigint"), ("src", "bigint"), ("dst", "bigint")])
        create_temp(cursor, self.given, [("tweet_id", "bigint"), ("times_known", "int")])
        cursor.execute(f"DROP TABLE IF EXISTS {self.texts}")
        cursor.execute(f"CREATE TEMP TABLE {self.texts} (tweet_id bigint, text text, label varchar(16))")
        cursor.execute(f"DROP TABLE IF EXISTS {self.names}")
        cursor.execute(f"CREATE TEMP TABLE {self.names} (user_id bigint, screen_name varchar(64))")
        self.rows = 0
        self.n_follows = 0
        self.missing_times = 0
        self.unknown_labels = 0
        self.names_seen: dict[int, str] = {}
        self.texts_seen: dict[int, tuple[str, str]] = {}

    def add_tweets(self, t: TweetTable, labels: dict[int, str] | None = None) -> None:
        ok = ~np.isnan(t.created_at)
        self.missing_times += int(np.count_nonzero(~ok))
        if not ok.all():
            t = t.take(ok)
        n = len(t)
        if not n:
            return
        rows = np.arange(self.rows, self.rows + n, dtype=np.int64)
        self.rows += n
        copy_in(
            self.cur,
            self.tweets,
            _TWEET_COLS,
            [t.tweet_id, t.retweeted_tweet_id, t.user_id, t.created_at, t.followers_count, rows],
        )
        if t.screen_name is not None:
            names = t.screen_name
            has = np.flatnonzero(names != None)  # noqa: E711  (object array: elementwise test)
            # the last name seen wins (accounts rename; uploads are roughly in time order)
            self.names_seen.update(zip(t.user_id[has].tolist(), names[has].tolist()))
        orig = np.flatnonzero(t.retweeted_tweet_id == NO_TWEET)
        if len(orig) and (t.text is not None or t.label is not None or labels):
            text = t.text[orig].tolist() if t.text is not None else [None] * len(orig)
            lab = t.label[orig].tolist() if t.label is not None else [None] * len(orig)
            for tid, tx, lb in zip(t.tweet_id[orig].tolist(), text, lab):
                if labels and tid in labels:
                    lb = labels[tid]
                if tid not in self.texts_seen:
                    self.texts_seen[tid] = (tx or "", self._label(lb))
        elif labels:
            for tid in t.tweet_id[orig].tolist():
                if tid in labels and tid not in self.texts_seen:
                    self.texts_seen[tid] = ("", self._label(labels[tid]))

    def _label(self, lb) -> str:
        if lb is None:
            return "unknown"
        v = str(lb).strip().lower()
        v = _LABEL_ALIASES.get(v, v)
        if v not in _LABELS:
            self.unknown_labels += 1
            return "unknown"
        return v

    def add_follows(self, f: FollowTable) -> None:
        self.n_follows += copy_in(
            self.cur, self.follows, [("follower", "bigint"), ("followee", "bigint")], [f.follower_id, f.followee_id]
        )

    def add_graphs(self, g: SpreadingGraphs) -> None:
        """Given spreading graphs: the participants become tweets + retweets, the edges go to GivenEdge."""
        c = g.cascades
        sizes = c.sizes
        casc = np.repeat(np.arange(c.n_cascades), sizes)
        is_pub = np.zeros(c.n_nodes, bool)
        is_pub[c.publisher] = True
        tid = c.tweet_ids[casc]
        times_known = c.times is not None
        if times_known:
            times = c.times.astype(np.float64)
        else:
            # no times (TUDataset): the tweet's snowflake time for everyone; the cascade is flagged so the
            # backward phase treats it as untimed (a cycle rejects it rather than dropping edges)
            from compute.formats import snowflake_time

            base = np.array([snowflake_time(int(x)) for x in c.tweet_ids.tolist()], dtype=np.float64)
            times = base[casc]
        followers = c.followers if c.unit == "followers" else np.full(c.n_nodes, np.nan)
        rt = np.where(is_pub, NO_TWEET, tid)
        tweet_col = np.where(is_pub, tid, 0)
        labels = None
        if c.labels is not None:
            labels = {int(t): str(lb) for t, lb in zip(c.tweet_ids.tolist(), c.labels.tolist()) if lb is not None}
        self.add_tweets(TweetTable(tweet_col, rt, c.user_ids, times, followers), labels=labels)
        copy_in(
            self.cur,
            self.given,
            [("tweet_id", "bigint"), ("times_known", "int")],
            [c.tweet_ids, np.full(c.n_cascades, int(times_known))],
        )
        ecasc = np.repeat(np.arange(c.n_cascades), np.diff(g.edge_offsets))
        copy_in(
            self.cur,
            self.edges,
            [("tweet_id", "bigint"), ("src", "bigint"), ("dst", "bigint")],
            [c.tweet_ids[ecasc], c.user_ids[g.edge_src], c.user_ids[g.edge_dst]],
        )

    def flush_text(self) -> None:
        """Write the collected screen names and tweet texts (small next to the numeric columns)."""
        if self.names_seen:
            self._text_rows(self.names, ("user_id", "screen_name"), [(k, v[:64]) for k, v in self.names_seen.items()])
        if self.texts_seen:
            self._text_rows(
                self.texts, ("tweet_id", "text", "label"), [(k, tx, lb) for k, (tx, lb) in self.texts_seen.items()]
            )

    def _text_rows(self, table: str, cols: tuple[str, ...], rows: list[tuple]) -> None:
        if self.d.postgres:
            raw = self.cur.cursor
            with raw.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
                for r in rows:
                    cp.write_row(r)
        else:
            self.cur.executemany(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(cols))})", rows)

    def drop(self) -> None:
        for t in (self.tweets, self.follows, self.edges, self.texts, self.names, self.given):
            self.cur.execute(f"DROP TABLE IF EXISTS {t}")


# --- the merge ----------------------------------------------------------------------------------------------


def _merge(cur, st: Stager, ws: int, coll: int) -> dict:
    d = st.d
    c: dict[str, int] = {}

    def count(sql: str, params=()) -> int:
        cur.execute(sql, params)
        return int(cur.fetchone()[0] or 0)

    def run(sql: str, params=()) -> int:
        cur.execute(sql, params)
        return max(cur.rowcount, 0)

    J = d.join
    for t in (st.tweets, st.follows, st.edges, st.texts, st.names, st.given):
        cur.execute(f"ANALYZE {t}")
    cur.execute(f"CREATE INDEX {st.tweets}_rt ON {st.tweets} (rt_id, user_id)")

    # accounts: every user named anywhere in the upload
    c["accounts_new"] = run(
        f"""INSERT INTO monitor_account (workspace_id, twitter_id, screen_name)
            SELECT %s, u, '' FROM (
                SELECT user_id AS u FROM {st.tweets}
                UNION SELECT follower FROM {st.follows}
                UNION SELECT followee FROM {st.follows}
            ) users WHERE true
            ON CONFLICT (workspace_id, twitter_id) DO NOTHING""",
        [ws],
    )
    run(
        f"""UPDATE monitor_account SET screen_name = n.screen_name
            FROM {st.names} n
            WHERE monitor_account.workspace_id = %s AND monitor_account.twitter_id = n.user_id
              AND n.screen_name <> '' AND monitor_account.screen_name <> n.screen_name""",
        [ws],
    )

    # originals: the first row of each tweet id wins
    c["tweets_in_upload"] = count(f"SELECT count(DISTINCT tweet_id) FROM {st.tweets} WHERE rt_id = %s", [NO_TWEET])
    before = count("SELECT count(*) FROM monitor_tweet WHERE workspace_id = %s", [ws])
    run(
        f"""INSERT INTO monitor_tweet (workspace_id, tweet_id, author_id, created_at, text, label, author_followers,
                graph_source, times_known, collection_id, compute_status, n_participants, n_edges, n_orphans, unit)
            SELECT %s, o.tweet_id, a.id, {d.epoch_to_ts("o.created_at")}, COALESCE(tx.text, ''),
                COALESCE(tx.label, 'unknown'), {d.nan_to_null("o.followers")},
                CASE WHEN g.tweet_id IS NULL THEN 'follows' ELSE 'given' END, COALESCE(g.times_known, 1) = 1,
                %s, 'pending', 0, 0, 0, 'followers'
            FROM (SELECT s.*, ROW_NUMBER() OVER (PARTITION BY tweet_id ORDER BY row_no) AS rn
                  FROM {st.tweets} s WHERE rt_id = %s) o
            {J} monitor_account a ON a.workspace_id = %s AND a.twitter_id = o.user_id
            LEFT JOIN {st.texts} tx ON tx.tweet_id = o.tweet_id
            LEFT JOIN {st.given} g ON g.tweet_id = o.tweet_id
            WHERE o.rn = 1
            ON CONFLICT (workspace_id, tweet_id) DO UPDATE SET
                label = CASE WHEN excluded.label <> 'unknown' THEN excluded.label ELSE monitor_tweet.label END,
                text = CASE WHEN excluded.text <> '' THEN excluded.text ELSE monitor_tweet.text END,
                author_followers = COALESCE(monitor_tweet.author_followers, excluded.author_followers)""",
        [ws, coll, NO_TWEET, ws],
    )
    c["tweets_new"] = count("SELECT count(*) FROM monitor_tweet WHERE workspace_id = %s", [ws]) - before
    c["duplicate_originals"] = count(
        f"SELECT count(*) - count(DISTINCT tweet_id) FROM {st.tweets} WHERE rt_id = %s", [NO_TWEET]
    )

    # retweets: of a tweet now in the workspace, not by its author, the earliest per user
    c["retweets_in_upload"] = count(f"SELECT count(*) FROM {st.tweets} WHERE rt_id <> %s", [NO_TWEET])
    c["retweets_of_unknown_tweets"] = count(
        f"""SELECT count(*) FROM {st.tweets} r
            LEFT JOIN monitor_tweet t ON t.workspace_id = %s AND t.tweet_id = r.rt_id
            WHERE r.rt_id <> %s AND t.id IS NULL""",
        [ws, NO_TWEET],
    )
    c["self_retweets"] = count(
        f"""SELECT count(*) FROM {st.tweets} r
            {J} monitor_tweet t ON t.workspace_id = %s AND t.tweet_id = r.rt_id
            {J} monitor_account a ON a.id = t.author_id
            WHERE r.rt_id <> %s AND a.twitter_id = r.user_id""",
        [ws, NO_TWEET],
    )
    c["duplicate_retweets"] = c["retweets_in_upload"] - count(
        f"SELECT count(*) FROM (SELECT DISTINCT rt_id, user_id FROM {st.tweets} WHERE rt_id <> %s) x", [NO_TWEET]
    )
    before = count(
        "SELECT count(*) FROM monitor_retweet r JOIN monitor_tweet t ON t.id = r.tweet_id WHERE t.workspace_id = %s",
        [ws],
    )
    run(
        f"""INSERT INTO monitor_retweet (tweet_id, retweeter_id, retweet_id, created_at, followers_count,
                collection_id)
            SELECT t.id, a.id, CASE WHEN r.tweet_id > 0 THEN r.tweet_id END, {d.epoch_to_ts("r.created_at")},
                {d.nan_to_null("r.followers")}, %s
            FROM (SELECT s.*, ROW_NUMBER() OVER (PARTITION BY rt_id, user_id ORDER BY created_at, row_no) AS rn
                  FROM {st.tweets} s WHERE rt_id <> %s) r
            {J} monitor_tweet t ON t.workspace_id = %s AND t.tweet_id = r.rt_id
            {J} monitor_account a ON a.workspace_id = %s AND a.twitter_id = r.user_id
            WHERE r.rn = 1 AND a.id <> t.author_id
            ON CONFLICT (tweet_id, retweeter_id) DO UPDATE SET
                created_at = excluded.created_at, followers_count = excluded.followers_count,
                retweet_id = excluded.retweet_id
            WHERE excluded.created_at < monitor_retweet.created_at""",
        [coll, NO_TWEET, ws, ws],
    )
    c["retweets_new"] = (
        count(
            "SELECT count(*) FROM monitor_retweet r JOIN monitor_tweet t ON t.id = r.tweet_id "
            "WHERE t.workspace_id = %s",
            [ws],
        )
        - before
    )

    # follower-count snapshots: every row with a count is one
    c["follower_counts_new"] = run(
        f"""INSERT INTO monitor_followercount (account_id, observed_at, count, collection_id)
            SELECT a.id, {d.epoch_to_ts("s.created_at")}, CAST(s.f AS bigint), %s
            FROM (SELECT user_id, created_at, MAX(followers) AS f FROM {st.tweets}
                  WHERE followers >= 0 AND followers < 9.2e18 GROUP BY user_id, created_at) s
            {J} monitor_account a ON a.workspace_id = %s AND a.twitter_id = s.user_id
            WHERE true
            ON CONFLICT (account_id, observed_at) DO NOTHING""",
        [coll, ws],
    )

    # follows
    c["follows_in_upload"] = st.n_follows
    c["self_follows"] = count(f"SELECT count(*) FROM {st.follows} WHERE follower = followee")
    c["follows_new"] = run(
        f"""INSERT INTO monitor_follow (workspace_id, follower_id, followee_id, collection_id)
            SELECT %s, a.id, b.id, %s
            FROM (SELECT DISTINCT follower, followee FROM {st.follows} WHERE follower <> followee) f
            {J} monitor_account a ON a.workspace_id = %s AND a.twitter_id = f.follower
            {J} monitor_account b ON b.workspace_id = %s AND b.twitter_id = f.followee
            WHERE true
            ON CONFLICT (follower_id, followee_id) DO NOTHING""",
        [ws, coll, ws, ws],
    )

    # given spreading edges
    c["given_edges_new"] = run(
        f"""INSERT INTO monitor_givenedge (tweet_id, src_id, dst_id)
            SELECT DISTINCT t.id, a.id, b.id FROM {st.edges} e
            {J} monitor_tweet t ON t.workspace_id = %s AND t.tweet_id = e.tweet_id
            {J} monitor_account a ON a.workspace_id = %s AND a.twitter_id = e.src
            {J} monitor_account b ON b.workspace_id = %s AND b.twitter_id = e.dst
            WHERE true
            ON CONFLICT (tweet_id, src_id, dst_id) DO NOTHING""",
        [ws, ws, ws],
    )

    # every author of an original is a publisher of the workspace
    c["publishers_new"] = run(
        f"""INSERT INTO monitor_publisher (workspace_id, account_id, monitored, created_at)
            SELECT DISTINCT %s, t.author_id, {"true" if d.postgres else "1"}, CURRENT_TIMESTAMP
            FROM {st.tweets} s {J} monitor_tweet t ON t.workspace_id = %s AND t.tweet_id = s.tweet_id
            WHERE s.rt_id = %s
            ON CONFLICT (workspace_id, account_id) DO NOTHING""",
        [ws, ws, NO_TWEET],
    )
    return c


def _affected(cur, st: Stager, ws: int) -> list[int]:
    """Tweets whose cascade the upload may have changed: those it names (originals or retweets), and those
    with a participant who gained a follow edge (the forward phase may now find more edges)."""
    cur.execute(
        f"""SELECT t.id FROM monitor_tweet t
            JOIN (SELECT tweet_id AS k FROM {st.tweets} WHERE rt_id = %s
                  UNION SELECT rt_id FROM {st.tweets} WHERE rt_id <> %s) s ON t.tweet_id = s.k
            WHERE t.workspace_id = %s""",
        [NO_TWEET, NO_TWEET, ws],
    )
    pks = {r[0] for r in cur.fetchall()}
    if st.n_follows:
        cur.execute(
            f"""SELECT DISTINCT t.id FROM (SELECT DISTINCT follower FROM {st.follows}) f
                {st.d.join} monitor_account a ON a.workspace_id = %s AND a.twitter_id = f.follower
                {st.d.join} monitor_retweet r ON r.retweeter_id = a.id
                {st.d.join} monitor_tweet t ON t.id = r.tweet_id
                WHERE true""",
            [ws],
        )
        pks.update(r[0] for r in cur.fetchall())
    return sorted(pks)


# --- the entry point ---------------------------------------------------------------------------------------


def load_files(
    files: list[tuple[Path, str, str]],
    *,
    workspace_id: int,
    collection_id: int,
    mode: str,
    store: bool,
    progress: ProgressFn | None = None,
    max_shown: int = 50,
) -> IngestResult:
    """Parse ``files`` (``(path, shown name, format)``) and, when ``store``, merge them into the workspace.

    Must run inside ``transaction.atomic()``: the caller rolls back on any exception (and for validate-only
    runs). Raises ``InputError`` (strict mode, first bad record) or :class:`UploadError`.
    """
    res = IngestResult(report=ReadReport(max_shown=max_shown))
    progress = progress or (lambda stage, frac: None)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="spreadwatch-ingest-") as tmp, connection.cursor() as cur:
        inputs = expand_uploads(files, Path(tmp))
        typed = [(p, shown, _detect(p, shown, fmt)) for p, shown, fmt in inputs]
        res.formats = sorted({f for _, _, f in typed})
        sizes = [max(_size(p), 1) for p, _, _ in typed]
        total = float(sum(sizes))
        st = Stager(cur)
        done = 0.0
        for (path, shown, fmt), size in zip(typed, sizes):
            base = done

            def on_bytes(b: int, tot: int, base=base, size=size, shown=shown) -> None:
                frac = (base + (b / tot if tot else 0) * size) / total
                progress(f"reading {shown}", 0.85 * frac)

            _read_into(st, path, shown, fmt, mode, res.report, on_bytes)
            done += size
            progress(f"read {shown}", 0.85 * done / total)
        st.flush_text()
        res.counts["rows_read"] = st.rows
        res.counts["missing_times"] = st.missing_times
        res.timings = {"read_s": round(time.perf_counter() - t0, 3)}
        if st.unknown_labels:
            res.notes.append(f"{st.unknown_labels:,} truth label(s) not one of {', '.join(sorted(_LABELS))}: unknown")
        if st.missing_times:
            res.notes.append(f"{st.missing_times:,} row(s) without a time were skipped")
        if store:
            progress("storing", 0.86)
            t1 = time.perf_counter()
            res.counts.update(_merge(cur, st, workspace_id, collection_id))
            progress("finding affected cascades", 0.97)
            res.tweet_pks = _affected(cur, st, workspace_id)
            res.timings["merge_s"] = round(time.perf_counter() - t1, 3)
            for key, text in (
                ("retweets_of_unknown_tweets", "retweet(s) of tweets not in the workspace were skipped"),
                ("self_retweets", "self-retweet(s) were dropped"),
                ("duplicate_retweets", "repeated retweet(s) by the same user: the earliest was kept"),
                ("self_follows", "self-follow edge(s) were ignored"),
            ):
                if res.counts.get(key):
                    res.notes.append(f"{res.counts[key]:,} {text}")
        st.drop()
    progress("done", 1.0)
    return res


def _size(p: Path) -> int:
    if p.is_dir():
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return p.stat().st_size


def _read_into(st: Stager, path: Path, shown: str, fmt: str, mode: str, report: ReadReport, on_bytes) -> None:
    with _shown_as(report, str(path), shown):
        if fmt in ("csv", "v1", "v2"):
            for chunk in iter_tweets(path, fmt, mode=mode, report=report, progress=on_bytes):
                st.add_tweets(chunk)
        elif fmt == "follows":
            for chunk in iter_follows(path, fmt, mode=mode, report=report, progress=on_bytes):
                st.add_follows(chunk)
        elif fmt == "npz" and npz_kind(path) == "collection":
            for chunk in iter_tweets(path, fmt, mode=mode, report=report):
                st.add_tweets(chunk)
            for chunk in iter_follows(path, fmt, mode=mode, report=report):
                st.add_follows(chunk)
        else:  # trees, tudataset, spreading-graph npz: read whole (labels and graphs come with the read)
            r = read(path, fmt, mode=mode, max_shown=report.max_shown, progress=on_bytes)
            report.merge(r.report)
            if r.graphs is not None:
                st.add_graphs(r.graphs)
            if r.tweets is not None:
                st.add_tweets(r.tweets, labels=r.labels)
            if r.follows is not None:
                st.add_follows(r.follows)


@contextmanager
def _shown_as(report: ReadReport, real: str, shown: str) -> Iterator[None]:
    """Bad records name the file as the analyst uploaded it, not our storage path."""
    from compute.formats import InputError
    from compute.formats._report import BadRecord

    first = len(report.shown)
    try:
        yield
    except InputError as exc:
        rec = exc.record
        raise InputError(BadRecord(_rename(rec.path, real, shown), rec.line, rec.field, rec.reason, rec.kind)) from None
    finally:
        for i in range(first, len(report.shown)):
            r = report.shown[i]
            report.shown[i] = BadRecord(_rename(r.path, real, shown), r.line, r.field, r.reason, r.kind)
        report.files[:] = [_rename(f, real, shown) for f in report.files]


def _rename(path: str, real: str, shown: str) -> str:
    return shown + path[len(real) :] if path.startswith(real) else path
