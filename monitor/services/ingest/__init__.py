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

Bad input policy, beyond the readers' own checks (``compute.formats``):

* *Whole-file problems* (cannot tell the format, empty, no header, unreadable archive member, a tree without
  a ROOT line...): strict mode fails the upload naming the file; skip-bad mode skips that file (one bad record,
  a note) and stores the rest, and fails the upload only when nothing else in it could be stored. Archives
  refused for safety (bombs, limits, members outside the archive) fail the upload in both modes.
* *Conflicting tweet ids*: one ``SeenTweets`` spans every file of the upload, so a tweet id that a later file
  gives with another author, time or retweeted tweet is a bad record of that file naming the earlier
  ``file:line``. Against what is already stored, a tweet id keeps its stored author and time: an upload row that
  says otherwise (another author, a time more than a second away, or a retweet whose own id is a stored
  original) is a bad record naming the stored value; strict fails, skip-bad leaves that tweet's rows out (its
  retweets still count: they retweet the stored tweet). Stored *retweets* are not checked by their own ids
  (nothing indexes them); a retweet per user and tweet keeps its earliest time, as before.
"""

from __future__ import annotations

import bz2
import gzip
import logging
import lzma
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection

from compute.formats import (
    FORMATS,
    MAX_RECORD_BYTES,
    InputError,
    ReadReport,
    SeenTweets,
    detect_format,
    iter_follows,
    iter_tweets,
    read,
)
from compute.formats._report import BadRecord
from compute.formats.limits import fmt_time
from compute.formats.npz import npz_kind
from compute.structures import SpreadingGraphs
from compute.tables import NO_TWEET, FollowTable, TweetTable

from ..db import copy_in, copy_out, create_temp, dialect, temp_table_name
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


def expand_uploads(
    paths: list[tuple[Path, str, str]], workdir: Path, unreadable: Callable[[str, str], None] | None = None
) -> list[tuple[Path, str, str]]:
    """Unpack zip / tar uploads into ``workdir``. Each entry is ``(path, shown name, format)``; an archive
    becomes its Twitter15/16 folder, TUDataset folder or member files. Members may not escape ``workdir``, and
    an archive is checked against the limits of :func:`_check_archive` (size, member count, compression ratio)
    before anything is extracted. An archive that cannot be unpacked or holds no input raises
    :class:`UploadError`, or, given ``unreadable(shown, message)``, is passed to it and left out (skip-bad);
    the safety refusals always raise."""
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
                    infos = zf.infolist()
                    _check_archive(path, shown, [(m.filename, m.file_size, m.compress_size) for m in infos])
                    for m in infos:
                        _safe_member(dest, m.filename, shown)
                    zf.extractall(dest)
            else:
                with tarfile.open(path) as tf:
                    members = tf.getmembers()
                    # a tar's members are compressed together: the ratio is checked on the whole archive
                    _check_archive(path, shown, [(m.name, m.size if m.isfile() else 0, None) for m in members])
                    for m in members:
                        _safe_member(dest, m.name, shown)
                    tf.extractall(dest, filter="data")
        except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError) as exc:
            if unreadable is None:
                raise UploadError(f"{shown}: cannot unpack the archive: {exc}") from None
            unreadable(shown, f"cannot unpack the archive: {exc}")
            continue
        found = _inputs_in(dest)
        if not found:
            if unreadable is None:
                raise UploadError(f"{shown}: the archive holds no input this application reads")
            unreadable(shown, "the archive holds no input this application reads")
            continue
        out += [(p, f"{shown}:{p.relative_to(dest)}", "auto") for p in found]
    return out


#: Archive limits (settings of the same names override them): total uncompressed bytes, members, and the
#: uncompressed : compressed ratio above which a member (zip) or the whole archive (tar) is taken for a bomb.
ARCHIVE_MAX_BYTES = 20 * 1024**3
ARCHIVE_MAX_MEMBERS = 100_000
ARCHIVE_MAX_RATIO = 1000
_RATIO_MIN_BYTES = 1 << 20  # small members (a 10 KB file of one repeated line) may compress better than that


def _check_archive(path: Path, shown: str, members: list[tuple[str, int, int | None]]) -> None:
    """Reject an archive, from its directory alone, that would unpack to too much: ``members`` are
    ``(name, uncompressed size, compressed size or None)``."""
    max_bytes = int(getattr(settings, "SPREADWATCH_ARCHIVE_MAX_BYTES", ARCHIVE_MAX_BYTES))
    max_members = int(getattr(settings, "SPREADWATCH_ARCHIVE_MAX_MEMBERS", ARCHIVE_MAX_MEMBERS))
    max_ratio = float(getattr(settings, "SPREADWATCH_ARCHIVE_MAX_RATIO", ARCHIVE_MAX_RATIO))
    if len(members) > max_members:
        raise UploadError(f"{shown}: the archive has {len(members):,} members; the limit is {max_members:,}")
    total = 0
    for name, size, packed in members:
        total += size
        if packed is not None and size > _RATIO_MIN_BYTES and size > max_ratio * max(packed, 1):
            raise UploadError(
                f"{shown}: archive member {name!r} would unpack {size:,} bytes from {packed:,} "
                f"(more than {max_ratio:,.0f}:1): refused as a zip bomb"
            )
    if total > max_bytes:
        raise UploadError(f"{shown}: the archive would unpack to {total:,} bytes; the limit is {max_bytes:,}")
    packed_total = path.stat().st_size
    if total > _RATIO_MIN_BYTES and total > max_ratio * max(packed_total, 1):
        raise UploadError(
            f"{shown}: the archive would unpack {total:,} bytes from {packed_total:,} "
            f"(more than {max_ratio:,.0f}:1): refused as an archive bomb"
        )


def _archive_kind(path: Path) -> str | None:
    if path.suffix.lower() == ".npz":  # a NumPy archive is a zip file, but one input
        return None
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
        if names and all(n.endswith(".npy") for n in names):
            return None
        return "zip"
    return "tar" if _starts_with_tar_header(path) else None


_COMPRESSED = ((b"\x1f\x8b", gzip.open), (b"BZh", bz2.open), (b"\xfd7zXZ\x00", lzma.open))


def _starts_with_tar_header(path: Path) -> bool:
    """Whether the (possibly gzip / bzip2 / xz compressed) file begins with a valid tar header block.

    Reads one 512-byte block, never the whole file (``tarfile.is_tarfile`` tries every decompressor in turn,
    and the xz one reads a 2 GB file of zeros to its end); a compressed CSV or JSONL is no tar."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(6)
        opener = next((o for m, o in _COMPRESSED if magic.startswith(m)), open)
        with opener(path, "rb") as fh:
            block = fh.read(tarfile.BLOCKSIZE)
        tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    except (OSError, EOFError, lzma.LZMAError, tarfile.TarError, ValueError):
        return False
    return True


def _safe_member(dest: Path, name: str, shown: str) -> None:
    target = (dest / name).resolve()
    if Path(name).is_absolute() or name.startswith(("/", "\\")) or not target.is_relative_to(dest.resolve()):
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
        # the reader names our storage path: name the file as uploaded, once
        msg = str(exc).removeprefix(f"{path}: ").replace(str(path), shown)
        raise UploadError(f"{shown}: {msg}") from None


# --- staging ----------------------------------------------------------------------------------------------


def _cat(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


class Stager:
    """Everything read so far, as NumPy columns (about 40 bytes per record), plus the few text columns.

    Ids are resolved to primary keys, deduplicated and sorted here, so the database receives each big table's
    rows once, in its unique key's order (B-tree inserts at the right edge, no joins, no DISTINCT).
    """

    def __init__(self, cursor, *, mode: str = "strict", report: ReadReport | None = None) -> None:
        self.cur = cursor
        self.d = dialect()
        self.mode = mode
        self.report = ReadReport() if report is None else report
        self.names: list[str] = []  # the files read, as uploaded (``src`` indexes them)
        self.tweet_parts: list[list[np.ndarray]] = []  # tweet_id, rt_id, user_id, created_at, followers
        self.where_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (file index, line or -1) of each row
        self.follow_parts: list[tuple[np.ndarray, np.ndarray]] = []
        self.edge_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.given: dict[int, bool] = {}  # tweet id -> times known
        self.rows = 0
        self.timings: dict[str, float] = {}
        self.n_follows = 0
        self.missing_times = 0
        self.unknown_labels = 0
        self.names_seen: dict[int, str] = {}
        self.texts_seen: dict[int, tuple[str, str]] = {}
        self.affected: list[int] = []  # Tweet pks, set by the merge
        self.temps: list[str] = []  # temporary tables to drop

    def drop(self) -> None:
        # temporary tables live as long as the connection (workers keep theirs open): drop them now
        for t in self.temps:
            self.cur.execute(f"DROP TABLE IF EXISTS {t}")
        self.temps.clear()

    def add_tweets(self, t: TweetTable, labels: dict[int, str] | None = None) -> None:
        ok = ~np.isnan(t.created_at)
        self.missing_times += int(np.count_nonzero(~ok))
        if not ok.all():
            t = t.take(ok)
        n = len(t)
        if not n:
            return
        self.rows += n
        self.tweet_parts.append([t.tweet_id, t.retweeted_tweet_id, t.user_id, t.created_at, t.followers_count])
        lines = t.lines if t.lines is not None else np.full(n, -1, np.int64)
        self.where_parts.append((np.full(n, len(self.names) - 1, np.int32), lines))
        if t.screen_name is not None:
            names = t.screen_name
            has = np.flatnonzero(names != None)  # noqa: E711  (object array: elementwise test)
            # the last name seen wins (accounts rename; uploads are roughly in time order)
            self.names_seen.update(zip(t.user_id[has].tolist(), names[has].tolist()))
        orig = np.flatnonzero(t.retweeted_tweet_id == NO_TWEET)
        if not len(orig):
            return
        # a v1.1 retweet embeds its original, so the same original comes once per retweet: first row wins
        _, first = np.unique(t.tweet_id[orig], return_index=True)
        orig = orig[np.sort(first)]
        ids = t.tweet_id[orig].tolist()
        text = t.text[orig].tolist() if t.text is not None else [None] * len(orig)
        lab = t.label[orig].tolist() if t.label is not None else [None] * len(orig)
        for tid, tx, lb in zip(ids, text, lab):
            if labels and tid in labels:
                lb = labels[tid]
            if tid not in self.texts_seen and (tx or lb is not None):
                self.texts_seen[tid] = (tx or "", self._label(lb))

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
        self.follow_parts.append((f.follower_id, f.followee_id))
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
        self.given.update(dict.fromkeys(c.tweet_ids.tolist(), times_known))
        ecasc = np.repeat(np.arange(c.n_cascades), np.diff(g.edge_offsets))
        self.edge_parts.append((c.tweet_ids[ecasc], c.user_ids[g.edge_src], c.user_ids[g.edge_dst]))

    def columns(self) -> tuple[np.ndarray, ...]:
        cols = list(zip(*self.tweet_parts)) if self.tweet_parts else [[]] * 5
        dts = (np.int64, np.int64, np.int64, np.float64, np.float64)
        return tuple(_cat(list(c), dt) for c, dt in zip(cols, dts))

    def stage(self, prefix: str, cols: list[tuple[str, str]], arrays: list[np.ndarray]) -> str:
        """Copy ``arrays`` into a new temporary table (dropped by :meth:`drop`); returns its name."""
        t = time.perf_counter()
        name = temp_table_name(prefix)
        self.temps.append(name)
        create_temp(self.cur, name, cols)
        copy_in(self.cur, name, cols, arrays)
        key = f"stage {prefix}"
        self.timings[key] = round(self.timings.get(key, 0.0) + time.perf_counter() - t, 3)
        return name

    def where(self) -> tuple[np.ndarray, np.ndarray]:
        """(file index, line or -1) of every staged tweet row, in the order of :meth:`columns`."""
        return _cat([w[0] for w in self.where_parts], np.int32), _cat([w[1] for w in self.where_parts], np.int64)

    @property
    def empty(self) -> bool:
        return not (self.rows or self.n_follows or self.edge_parts)


# --- the merge ----------------------------------------------------------------------------------------------


def _lookup(keys: np.ndarray, values: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` of ``want`` in the sorted ``keys``; second result: found or not."""
    if not len(keys):
        return np.zeros(len(want), np.int64), np.zeros(len(want), bool)
    pos = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    found = keys[pos] == want
    return values[pos], found


def _first_of_runs(*sorted_keys: np.ndarray) -> np.ndarray:
    """Mask of the first row of each run of equal keys (rows already sorted by those keys)."""
    n = len(sorted_keys[0])
    first = np.ones(n, bool)
    if n > 1:
        same = np.ones(n - 1, bool)
        for k in sorted_keys:
            same &= k[1:] == k[:-1]
        first[1:] = ~same
    return first


def _merge(cur, st: Stager, ws: int, coll: int, progress: ProgressFn | None = None) -> dict:
    d = st.d
    step = progress or (lambda stage, frac: None)
    c: dict[str, int] = {}
    timings = st.timings

    def timed(sql: str, params=()) -> None:
        t = time.perf_counter()
        cur.execute(sql, params)
        key = " ".join(sql.split()[:3]).lower()[:40]  # e.g. "insert into monitor_retweet"
        timings[key] = round(timings.get(key, 0.0) + time.perf_counter() - t, 3)

    def run(sql: str, params=()) -> int:
        timed(sql, params)
        return max(cur.rowcount, 0)

    stage = st.stage
    t_id, t_rt, t_user, t_time, t_f = st.columns()
    step("checking against the stored tweets", 0.855)
    drop = _stored_conflicts(st, ws, t_id, t_rt, t_user, t_time)
    c["conflicts_with_stored"] = int(np.count_nonzero(drop))
    if c["conflicts_with_stored"]:
        keep = ~drop
        t_id, t_rt, t_user, t_time, t_f = t_id[keep], t_rt[keep], t_user[keep], t_time[keep], t_f[keep]
    f_er = _cat([p[0] for p in st.follow_parts], np.int64)
    f_ee = _cat([p[1] for p in st.follow_parts], np.int64)
    e_t = _cat([p[0] for p in st.edge_parts], np.int64)
    e_s = _cat([p[1] for p in st.edge_parts], np.int64)
    e_d = _cat([p[2] for p in st.edge_parts], np.int64)

    step("storing accounts", 0.86)
    # --- accounts: every user named anywhere in the upload, with the screen names seen ----------------------
    users = np.unique(np.concatenate([t_user, f_er, f_ee, e_s, e_d]))
    acc_stage = temp_table_name("users")
    st.temps.append(acc_stage)
    cur.execute(f"CREATE TEMP TABLE {acc_stage} (twitter_id bigint, screen_name varchar(64))")
    t = time.perf_counter()
    names = st.names_seen
    _text_rows(cur, d, acc_stage, ("twitter_id", "screen_name"), [(u, names.get(u, "")[:64]) for u in users.tolist()])
    timings["stage users"] = round(time.perf_counter() - t, 3)
    # one pass: new accounts with their names, and known ones renamed where the upload says so
    c["accounts_new"] = run(
        f"""INSERT INTO monitor_account (workspace_id, twitter_id, screen_name)
            SELECT %s, twitter_id, screen_name FROM {acc_stage} WHERE true ORDER BY twitter_id
            ON CONFLICT (workspace_id, twitter_id) DO UPDATE SET screen_name = excluded.screen_name
            WHERE excluded.screen_name <> '' AND monitor_account.screen_name <> excluded.screen_name""",
        [ws],
    )
    a_tw, a_pk = copy_out(
        cur,
        f"""SELECT a.twitter_id, a.id FROM {acc_stage} s {d.join} monitor_account a
            ON a.workspace_id = %s AND a.twitter_id = s.twitter_id ORDER BY a.twitter_id""",
        [ws],
        [("twitter_id", "bigint"), ("id", "bigint")],
    )

    step("storing tweets", 0.88)
    # --- originals: one per tweet id, the first row wins ---------------------------------------------------------
    is_orig = t_rt == NO_TWEET
    o_rows = np.flatnonzero(is_orig)
    o_rows = o_rows[np.argsort(t_id[o_rows], kind="stable")]
    first = _first_of_runs(t_id[o_rows])
    c["tweets_in_upload"] = int(first.sum())
    o_rows = o_rows[first]
    o_author, _ = _lookup(a_tw, a_pk, t_user[o_rows])
    o_given = np.array([st.given.get(int(x), None) is not None for x in t_id[o_rows]], bool) if st.given else None
    o_times_known = np.array([bool(st.given.get(int(x), True)) for x in t_id[o_rows]], bool) if st.given else None
    orig_cols = [
        ("tweet_id", "bigint"),
        ("author", "bigint"),
        ("created_at", "float"),
        ("followers", "float"),
        ("given", "int"),
        ("times_known", "int"),
    ]
    n_o = len(o_rows)
    orig_stage = stage(
        "orig",
        orig_cols,
        [
            t_id[o_rows],
            o_author,
            t_time[o_rows],
            t_f[o_rows],
            o_given.astype(np.int64) if o_given is not None else np.zeros(n_o, np.int64),
            o_times_known.astype(np.int64) if o_times_known is not None else np.ones(n_o, np.int64),
        ],
    )
    texts = temp_table_name("texts")
    st.temps.append(texts)
    cur.execute(f"CREATE TEMP TABLE {texts} (tweet_id bigint, text text, label varchar(16))")
    if st.texts_seen:
        _text_rows(cur, d, texts, ("tweet_id", "text", "label"), [(k, *v) for k, v in st.texts_seen.items()])
    before = _count(cur, "SELECT count(*) FROM monitor_tweet WHERE workspace_id = %s", [ws])
    run(
        f"""INSERT INTO monitor_tweet (workspace_id, tweet_id, author_id, created_at, text, label, author_followers,
                graph_source, times_known, collection_id, compute_status, n_participants, n_edges, n_orphans, unit)
            SELECT %s, o.tweet_id, o.author, {d.epoch_to_ts("o.created_at")}, COALESCE(tx.text, ''),
                COALESCE(tx.label, 'unknown'), {d.nan_to_null("o.followers")},
                CASE WHEN o.given = 1 THEN 'given' ELSE 'follows' END, o.times_known = 1,
                %s, 'pending', 0, 0, 0, 'followers'
            FROM {orig_stage} o LEFT JOIN {texts} tx ON tx.tweet_id = o.tweet_id
            WHERE true
            ON CONFLICT (workspace_id, tweet_id) DO UPDATE SET
                label = CASE WHEN excluded.label <> 'unknown' THEN excluded.label ELSE monitor_tweet.label END,
                text = CASE WHEN excluded.text <> '' THEN excluded.text ELSE monitor_tweet.text END,
                author_followers = COALESCE(monitor_tweet.author_followers, excluded.author_followers)""",
        [ws, coll],
    )
    c["tweets_new"] = _count(cur, "SELECT count(*) FROM monitor_tweet WHERE workspace_id = %s", [ws]) - before

    # the workspace's tweets this upload names (as originals or as retweeted), for the retweets
    named_tweets = np.unique(np.concatenate([t_id[o_rows], t_rt[~is_orig]]))
    nt_stage = stage("named", [("tweet_id", "bigint")], [named_tweets])
    tw_id, tw_pk, tw_author = copy_out(
        cur,
        f"""SELECT t.tweet_id, t.id, t.author_id FROM {nt_stage} s {d.join} monitor_tweet t
            ON t.workspace_id = %s AND t.tweet_id = s.tweet_id ORDER BY t.tweet_id""",
        [ws],
        [("tweet_id", "bigint"), ("id", "bigint"), ("author", "bigint")],
    )

    step("storing retweets", 0.89)
    # --- retweets: of a tweet in the workspace, not by its author, the earliest per user ---------------------
    r_rows = np.flatnonzero(~is_orig)
    c["retweets_in_upload"] = len(r_rows)
    r_tweet, known = _lookup(tw_id, tw_pk, t_rt[r_rows])
    r_author, _ = _lookup(tw_id, tw_author, t_rt[r_rows])
    c["retweets_of_unknown_tweets"] = int(np.count_nonzero(~known))
    r_rows, r_tweet, r_author = r_rows[known], r_tweet[known], r_author[known]
    r_user, _ = _lookup(a_tw, a_pk, t_user[r_rows])
    selfrt = r_user == r_author
    c["self_retweets"] = int(np.count_nonzero(selfrt))
    r_rows, r_tweet, r_user = r_rows[~selfrt], r_tweet[~selfrt], r_user[~selfrt]
    order = np.lexsort((r_rows, t_time[r_rows], r_user, r_tweet))
    r_rows, r_tweet, r_user = r_rows[order], r_tweet[order], r_user[order]
    first = _first_of_runs(r_tweet, r_user)
    c["duplicate_retweets"] = int(len(first) - first.sum())
    r_rows, r_tweet, r_user = r_rows[first], r_tweet[first], r_user[first]
    rt_cols = [("tweet", "bigint"), ("account", "bigint"), ("rid", "bigint"), ("created_at", "float"),
               ("followers", "float")]  # fmt: skip
    rt_stage = stage("rt", rt_cols, [r_tweet, r_user, t_id[r_rows], t_time[r_rows], t_f[r_rows]])
    # rowcount: retweets inserted, plus stored ones this upload moved earlier in time
    c["retweets_stored"] = run(
        f"""INSERT INTO monitor_retweet (tweet_id, retweeter_id, retweet_id, created_at, followers_count,
                collection_id)
            SELECT r.tweet, r.account, CASE WHEN r.rid > 0 THEN r.rid END, {d.epoch_to_ts("r.created_at")},
                {d.nan_to_null("r.followers")}, %s
            FROM {rt_stage} r WHERE true
            ON CONFLICT (tweet_id, retweeter_id) DO UPDATE SET
                created_at = excluded.created_at, followers_count = excluded.followers_count,
                retweet_id = excluded.retweet_id
            WHERE excluded.created_at < monitor_retweet.created_at""",
        [coll],
    )

    step("storing follower counts", 0.91)
    # --- follower-count snapshots: every row with a count is one ----------------------------------------------
    has = np.flatnonzero((t_f >= 0) & (t_f < 9.2e18))
    fc_acc, _ = _lookup(a_tw, a_pk, t_user[has])
    fc_time, fc_n = t_time[has], t_f[has]
    order = np.lexsort((-fc_n, fc_time, fc_acc))
    fc_acc, fc_time, fc_n = fc_acc[order], fc_time[order], fc_n[order]
    first = _first_of_runs(fc_acc, fc_time)
    fc_stage = stage(
        "fc", [("account", "bigint"), ("t", "float"), ("n", "bigint")],
        [fc_acc[first], fc_time[first], fc_n[first].astype(np.int64)],
    )  # fmt: skip
    c["follower_counts_new"] = run(
        f"""INSERT INTO monitor_followercount (account_id, observed_at, count, collection_id)
            SELECT account, {d.epoch_to_ts("t")}, n, %s FROM {fc_stage} WHERE true
            ON CONFLICT (account_id, observed_at) DO NOTHING""",
        [coll],
    )

    step("storing follows", 0.93)
    # --- follows ---------------------------------------------------------------------------------------------------
    c["follows_in_upload"] = st.n_follows
    fa, _ = _lookup(a_tw, a_pk, f_er)
    fb, _ = _lookup(a_tw, a_pk, f_ee)
    selff = fa == fb
    c["self_follows"] = int(np.count_nonzero(selff))
    fa, fb = fa[~selff], fb[~selff]
    order = np.lexsort((fb, fa))
    fa, fb = fa[order], fb[order]
    first = _first_of_runs(fa, fb)
    fa, fb = fa[first], fb[first]
    fol_stage = stage("fol", [("a", "bigint"), ("b", "bigint")], [fa, fb])
    c["follows_new"] = run(
        f"""INSERT INTO monitor_follow (workspace_id, follower_id, followee_id, collection_id)
            SELECT %s, a, b, %s FROM {fol_stage} WHERE true
            ON CONFLICT (follower_id, followee_id) DO NOTHING""",
        [ws, coll],
    )

    step("storing given edges", 0.97)
    # --- given spreading edges -------------------------------------------------------------------------------------
    c["given_edges_new"] = 0
    if len(e_t):
        et, ok = _lookup(tw_id, tw_pk, e_t)
        es, _ = _lookup(a_tw, a_pk, e_s)
        ed, _ = _lookup(a_tw, a_pk, e_d)
        ge_stage = stage("ge", [("t", "bigint"), ("s", "bigint"), ("d", "bigint")], [et[ok], es[ok], ed[ok]])
        c["given_edges_new"] = run(
            f"""INSERT INTO monitor_givenedge (tweet_id, src_id, dst_id) SELECT t, s, d FROM {ge_stage} WHERE true
                ON CONFLICT (tweet_id, src_id, dst_id) DO NOTHING"""
        )

    # --- every author of an original is a publisher of the workspace -----------------------------------------------
    pub_stage = stage("pub", [("account", "bigint")], [np.unique(o_author)])
    c["publishers_new"] = run(
        f"""INSERT INTO monitor_publisher (workspace_id, account_id, monitored, created_at)
            SELECT %s, account, {"true" if d.postgres else "1"}, CURRENT_TIMESTAMP FROM {pub_stage} WHERE true
            ON CONFLICT (workspace_id, account_id) DO NOTHING""",
        [ws],
    )

    step("finding the cascades to compute", 0.98)
    # --- tweets whose cascade may have changed ------------------------------------------------------------------------
    affected = set(_lookup(tw_id, tw_pk, t_id[o_rows])[0].tolist()) | set(r_tweet.tolist())
    if len(fa):
        # a participant who gained a follow edge may gain spreading edges in every cascade it took part in
        fer_stage = stage("fer", [("account", "bigint")], [np.unique(fa)])
        timed(
            f"""SELECT DISTINCT r.tweet_id FROM {fer_stage} f {d.join} monitor_retweet r
                ON r.retweeter_id = f.account WHERE true"""
        )
        affected.update(row[0] for row in cur.fetchall())
    st.affected = sorted(affected)
    return c


def _stored_conflicts(st: Stager, ws: int, t_id, t_rt, t_user, t_time) -> np.ndarray:
    """Rows that contradict a tweet already stored in the workspace (its author, its time to the second, or
    being an original): strict mode raises ``InputError`` on the first, in upload order; skip-bad reports each
    such tweet id once (at its first row) and returns the mask of its rows, which the merge leaves out."""
    d = st.d
    t0 = time.perf_counter()
    rows = np.flatnonzero(t_id != 0)  # 0: a retweet whose own id is unknown (trees, TUDataset)
    if not len(rows):
        return np.zeros(len(t_id), bool)
    ids = np.unique(t_id[rows])
    chk = st.stage("chk", [("tweet_id", "bigint")], [ids])
    s_id, s_author, s_time = copy_out(
        st.cur,
        f"""SELECT t.tweet_id, a.twitter_id, {d.ts_to_epoch("t.created_at")} FROM {chk} s
            {d.join} monitor_tweet t ON t.workspace_id = %s AND t.tweet_id = s.tweet_id
            JOIN monitor_account a ON a.id = t.author_id ORDER BY t.tweet_id""",
        [ws],
        [("tweet_id", "bigint"), ("author", "bigint"), ("t", "float")],
    )
    st.timings["check stored tweets"] = round(time.perf_counter() - t0, 3)
    drop = np.zeros(len(t_id), bool)
    if not len(s_id):
        return drop
    pos = np.minimum(np.searchsorted(s_id, t_id[rows]), len(s_id) - 1)
    hit = s_id[pos] == t_id[rows]
    rows, pos = rows[hit], pos[hit]
    stored_sec = np.floor(np.round(s_time[pos], 3))
    is_rt = t_rt[rows] != NO_TWEET
    bad = is_rt | (t_user[rows] != s_author[pos]) | (np.floor(t_time[rows]) != stored_sec)
    rows, pos, is_rt = rows[bad], pos[bad], is_rt[bad]
    if not len(rows):
        return drop
    src, line = st.where()
    # one report per tweet id, at its first row in upload order (file, then line)
    order = np.lexsort((line[rows], src[rows], t_id[rows]))
    first = np.ones(len(order), bool)
    first[1:] = t_id[rows][order][1:] != t_id[rows][order][:-1]
    firsts = order[first]
    firsts = firsts[np.lexsort((line[rows][firsts], src[rows][firsts]))]
    for k in firsts.tolist():
        i, p = int(rows[k]), int(pos[k])
        stored = f"by user {int(s_author[p])} at {fmt_time(float(s_time[p]))}"
        if is_rt[k]:
            here = f"here it is a retweet of {int(t_rt[i])}"
        elif int(t_user[i]) != int(s_author[p]):
            here = f"here by user {int(t_user[i])}"
        else:
            here = f"here at {fmt_time(float(t_time[i]))}"
        n_rows = int(np.count_nonzero(t_id[rows] == t_id[i]))
        more = f" ({n_rows:,} rows of this upload left out)" if n_rows > 1 and st.mode != "strict" else ""
        rec = BadRecord(
            st.names[int(src[i])],
            int(line[i]) if line[i] >= 0 else None,
            None,
            f"conflicts with a stored tweet: tweet {int(t_id[i])} is stored as an original {stored}; {here}{more}",
            "conflicts with a stored tweet",
        )
        if st.mode == "strict":
            raise InputError(rec)
        st.report.add(rec)
    drop[rows] = True
    return drop


def _count(cur, sql: str, params) -> int:
    cur.execute(sql, params)
    return int(cur.fetchone()[0] or 0)


# PostgreSQL text cannot hold NUL: a NUL in a name or text (JSON \u0000, a stray byte in a CSV) is dropped
_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\x00": ""})


def _text_rows(cur, d, table: str, cols: tuple[str, ...], rows: list[tuple]) -> None:
    """Rows of ints and strings into a temporary table (PostgreSQL: one COPY text buffer per 100K rows)."""
    if d.postgres:
        with cur.cursor.copy(f"COPY {table} ({', '.join(cols)}) FROM STDIN") as cp:
            for a in range(0, len(rows), 100_000):
                cp.write(
                    "".join("\t".join(str(v).translate(_COPY_ESCAPES) for v in r) + "\n" for r in rows[a : a + 100_000])
                )
    else:
        cur.executemany(f"INSERT INTO {table} VALUES ({', '.join(['%s'] * len(cols))})", rows)


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
    strict = mode == "strict"
    max_record = int(getattr(settings, "SPREADWATCH_MAX_RECORD_BYTES", MAX_RECORD_BYTES))

    def skip_file(shown: str, message: str) -> None:
        """Skip-bad: a file that cannot be read at all is one bad record, and the upload goes on without it."""
        kind = next((k for k in ("empty file", "cannot tell the format") if k in message), "unreadable file")
        res.report.add(BadRecord(shown, None, None, message, kind))
        res.report.skipped_files.append(shown)

    with tempfile.TemporaryDirectory(prefix="spreadwatch-ingest-") as tmp, connection.cursor() as cur:
        inputs = expand_uploads(files, Path(tmp), None if strict else skip_file)
        typed = []
        for p, shown, fmt in inputs:
            try:
                typed.append((p, shown, _detect(p, shown, fmt)))
            except UploadError as exc:
                if strict or fmt not in ("", "auto"):
                    raise
                skip_file(shown, str(exc).removeprefix(f"{shown}: "))
        res.formats = sorted({f for _, _, f in typed})
        sizes = [max(_size(p), 1) for p, _, _ in typed]
        total = float(sum(sizes) or 1)
        st = Stager(cur, mode=mode, report=res.report)
        seen = SeenTweets()  # one for the whole upload: a tweet id must agree with itself across files
        done = 0.0
        for (path, shown, fmt), size in zip(typed, sizes):
            base = done

            def on_bytes(b: int, tot: int, base=base, size=size, shown=shown) -> None:
                frac = (base + (b / tot if tot else 0) * size) / total
                # live counts: records staged so far (tweets and retweets, follow edges)
                progress(f"reading {shown}: {st.rows:,} tweets and retweets, {st.n_follows:,} follows", 0.85 * frac)

            st.names.append(shown)
            _read_into(st, path, shown, fmt, mode, res.report, on_bytes, max_record=max_record, seen=seen)
            seen.rename(str(path), shown)  # later files name this one as uploaded
            done += size
            progress(f"read {shown}: {st.rows:,} tweets and retweets, {st.n_follows:,} follows", 0.85 * done / total)
        res.counts["rows_read"] = st.rows
        res.counts["missing_times"] = st.missing_times
        res.timings = {"read_s": round(time.perf_counter() - t0, 3)}
        if st.unknown_labels:
            res.notes.append(f"{st.unknown_labels:,} truth label(s) not one of {', '.join(sorted(_LABELS))}: unknown")
        if st.missing_times:
            res.notes.append(f"{st.missing_times:,} row(s) without a time were skipped")
        skipped = res.report.skipped_files
        if skipped:
            if store and st.empty:
                # skip-bad skipped every file it could not read, and nothing else is left: that is no upload
                first = next((r for r in res.report.shown if r.path in skipped), None)
                first_s = str(first) if first is not None else f"{skipped[0]}: cannot be read"
                more = f" and {len(skipped) - 1:,} more" if len(skipped) > 1 else ""
                raise UploadError(
                    f"{first_s} (skip-bad skipped this file{more}; nothing else in the upload could be stored)"
                )
            res.notes.append(
                f"{len(skipped):,} file(s) could not be read at all and were skipped: {', '.join(skipped[:5])}"
                + (" ..." if len(skipped) > 5 else "")
            )
        if not store:
            # a validation reports what the merge would refuse too (read-only: a temporary table, dropped)
            t_id, t_rt, t_user, t_time, _ = st.columns()
            _stored_conflicts(st, workspace_id, t_id, t_rt, t_user, t_time)
            st.drop()
        if store:
            t1 = time.perf_counter()
            res.counts.update(_merge(cur, st, workspace_id, collection_id, progress))
            res.tweet_pks = st.affected
            st.drop()
            res.timings["merge_s"] = round(time.perf_counter() - t1, 3)
            res.timings["merge_steps_s"] = st.timings
            for key, text in (
                ("conflicts_with_stored", "row(s) contradicting tweets already stored were skipped"),
                ("retweets_of_unknown_tweets", "retweet(s) of tweets not in the workspace were skipped"),
                ("self_retweets", "self-retweet(s) were dropped"),
                ("duplicate_retweets", "repeated retweet(s) by the same user: the earliest was kept"),
                ("self_follows", "self-follow edge(s) were ignored"),
            ):
                if res.counts.get(key):
                    res.notes.append(f"{res.counts[key]:,} {text}")
    progress("done", 1.0)
    return res


def _size(p: Path) -> int:
    if p.is_dir():
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return p.stat().st_size


def _read_into(
    st: Stager,
    path: Path,
    shown: str,
    fmt: str,
    mode: str,
    report: ReadReport,
    on_bytes,
    *,
    max_record: int = MAX_RECORD_BYTES,
    seen: SeenTweets | None = None,
) -> None:
    kw = {"mode": mode, "report": report, "max_record_bytes": max_record}
    with _shown_as(report, str(path), shown):
        if fmt in ("csv", "v1", "v2"):
            for chunk in iter_tweets(path, fmt, progress=on_bytes, seen=seen, **kw):
                st.add_tweets(chunk)
        elif fmt == "follows":
            for chunk in iter_follows(path, fmt, progress=on_bytes, **kw):
                st.add_follows(chunk)
        elif fmt == "npz" and npz_kind(path) == "collection":
            for chunk in iter_tweets(path, fmt, seen=seen, **kw):
                st.add_tweets(chunk)
            for chunk in iter_follows(path, fmt, **kw):
                st.add_follows(chunk)
        else:  # trees, tudataset, spreading-graph npz: read whole (labels and graphs come with the read)
            r = read(path, fmt, mode=mode, max_shown=report.max_shown, progress=on_bytes, max_record_bytes=max_record)
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
        report.skipped_files[:] = [_rename(f, real, shown) for f in report.skipped_files]


def _rename(path: str, real: str, shown: str) -> str:
    return shown + path[len(real) :] if path.startswith(real) else path
