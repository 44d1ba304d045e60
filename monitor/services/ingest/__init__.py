"""Loading an uploaded collection into the database: parse with ``compute.formats``, stage, merge.

The whole load of one collection is one transaction:

1. every file is stream-parsed a chunk at a time and its rows are copied into temporary *staging* tables
   (binary COPY on PostgreSQL), so a 1 GB upload never sits in memory as Python objects;
2. set-based ``INSERT ... SELECT ... ON CONFLICT`` statements merge the staging tables into the real ones,
   keyed by natural ids (workspace + Twitter ids), which is what makes re-uploading the same data a no-op;
3. the tweets the upload touched are returned so the compute planner can batch them.

An upload above ``SPREADWATCH_IMPORT_PART_ROWS`` staged rows goes through 1–2 in parts, still in the one
transaction (:class:`_Parts`, :mod:`.stager`): the import's memory is bounded by a part, and the stored rows,
counts, notes and bad records are those of one merge of the whole upload.

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

The package is cut along those steps, because each step has its own data and its own reader: ``reading``
(an input's format and its records into the staging area), ``stager`` (the staged columns and temporary
tables), ``merge`` (one function per table, in foreign-key order), ``conflicts`` (the check against stored
tweets, which a validation runs too) and ``columns`` (the named column tuples they pass along). One module
per table would split the merge's shared lookups (account and tweet keys) over eight files for no gain.
Archive safety (unpacking before anything is read) is :mod:`monitor.services.uploads`.
"""

from __future__ import annotations

import functools
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connection

from compute.formats import MAX_RECORD_BYTES, ReadReport
from compute.formats._report import BadRecord

from ...graph_files import ImportedFollows
from ...progress import READ_SHARE
from ..uploads import Upload, UploadError, expand_uploads
from .conflicts import stored_conflicts
from .merge import merge
from .reading import detect, input_size, read_into
from .seen import SpilledSeenTweets
from .side_load import SideLoad
from .stager import LABELS, Stager
from .unit import UnitGuard

__all__ = ["IngestResult", "load_files"]

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, float], None]

# what the merge counted that the analyst should read about, in the words of the notes
_MERGE_NOTES = (
    ("conflicts_with_stored", "row(s) contradicting tweets already stored were skipped"),
    ("retweets_of_unknown_tweets", "retweet(s) of tweets not in the workspace were skipped"),
    ("self_retweets", "self-retweet(s) were dropped"),
    ("duplicate_retweets", "repeated retweet(s) by the same user: the earliest was kept"),
    ("self_follows", "self-follow edge(s) were ignored"),
)


@dataclass
class IngestResult:
    """What one load read, stored and set aside."""

    counts: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)
    tweet_pks: list[int] = field(default_factory=list)  # tweets whose cascades changed
    report: ReadReport = field(default_factory=ReadReport)
    timings: dict = field(default_factory=dict)
    # the follower graph's new version, written in a thread while the import goes on (``graph_later``)
    _graph_file: Callable[[], float] | None = field(default=None, repr=False)

    def wait_graph_file(self, *, failing: bool = False) -> None:
        """Wait for the follower graph's file (:meth:`ImportedFollows.finish_later`), timed among the merge's steps;
        raises what writing it raised, unless ``failing`` (the import is failing already: its own error is the one
        to raise, this one is logged). Once only: later calls do nothing."""
        wait, self._graph_file = self._graph_file, None
        if wait is None:
            return
        try:
            self.timings.setdefault("merge_steps_s", {})["follower graph file"] = round(wait(), 3)
        except Exception:
            if not failing:
                raise
            log.warning("the follower graph's file failed beside a failing import", exc_info=True)


def load_files(
    files: list[Upload],
    *,
    workspace_id: int,
    collection_id: int,
    mode: str,
    store: bool,
    progress: ProgressFn | None = None,
    max_shown: int = 50,
    graph_later: bool = False,
    side_load: SideLoad | None = None,
) -> IngestResult:
    """Parse ``files`` (``(path, shown name, format)``) and, when ``store``, merge them into the workspace.

    Must run inside ``transaction.atomic()``: the caller rolls back on any exception (and for validate-only
    runs). Raises ``InputError`` (strict mode, first bad record) or :class:`UploadError`. ``graph_later``: the
    follower graph's file may still be being written when this returns; the caller must call
    :meth:`IngestResult.wait_graph_file` before its transaction ends, whatever happens. ``side_load``: the
    workspace's first follows and retweets are stored on its connections (:mod:`.side_load`; the caller closes it after
    its transaction has ended).
    """
    res = IngestResult(report=ReadReport(max_shown=max_shown))
    progress = progress or (lambda stage, frac: None)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="spreadwatch-ingest-") as tmp, connection.cursor() as cur:
        inputs = _typed_inputs(files, Path(tmp), mode, res.report)
        res.formats = sorted({f for _, _, f in inputs})
        st = Stager(cur, mode=mode, report=res.report, part_rows=settings.SPREADWATCH_IMPORT_PART_ROWS)
        st.side = side_load if store else None
        seen = SpilledSeenTweets(Path(tmp) / "seen")  # the earlier parts' references, in files of the folder
        parts = _Parts(res, st, workspace_id, collection_id, store, progress, seen)
        st.on_full = parts.flush
        try:
            parts.unit = UnitGuard(workspace_id, store=store, formats={shown: fmt for _, shown, fmt in inputs})
            # (on an exception the caller rolls back, which drops the temporary tables this transaction made)
            _read_all(st, inputs, mode, res.report, progress, parts)
            parts.seen.drop()
            # the files' records (lines; a v1.1 retweet and the original it embeds are one), what an analyst
            # counts in the file; the staged rows counted a v1.1 retweet's line twice
            res.counts["records_read"] = res.report.n_good
            res.counts["missing_times"] = st.missing_times
            read_s = round(time.perf_counter() - t0 - res.timings.get("merge_s", 0.0), 3)
            res.timings = {"read_s": read_s, **res.timings}  # reading first, as the pages list the steps
            _note_reading(res, st, store)
            parts.last()
            if not graph_later:
                res.wait_graph_file()
        except BaseException:
            res.wait_graph_file(failing=True)  # not left writing after the import's rollback
            raise
        finally:
            # the stager and the parts refer to each other through these: unlinked, both are freed as this returns,
            # not at the cyclic collector's next full pass, which a worker with frozen start-up objects makes
            # rarely (the last part's names and columns stayed under the compute: 10M benchmark, 2026-12-02 (third))
            st.on_full = st.on_locked = None
    # not "done": the import still finishes (planner statistics, the compute's plan) and the compute follows
    progress("stored" if store else "checked", 1.0)
    return res


class _Parts:
    """The merges of one load: of each part the stager fills (:mod:`.stager`), then of the last one; the counts
    add up and the tweets to compute are the union of the parts'. A validation checks each part against the
    stored tweets instead, as it would the whole upload."""

    def __init__(
        self,
        res: IngestResult,
        st: Stager,
        ws: int,
        coll: int,
        store: bool,
        progress: ProgressFn,
        seen: SpilledSeenTweets,
    ):
        self.res, self.st, self.ws, self.coll, self.store, self.progress = res, st, ws, coll, store, progress
        self.seen = seen  # the upload-wide duplicate check: one part's references in memory, the rest in files
        self.read_frac = 0.0  # how far reading is, for the progress of a part merged while reading
        self.affected: set[int] = set()
        self.unit: UnitGuard | None = None
        self.follows = ImportedFollows()  # the follower graph's file of the version this import makes

    def flush(self) -> None:
        """Merge the part staged so far (not the last one) and start the next."""
        st = self.st
        st.final = False
        k = st.part + 1

        def step(stage: str, frac: float) -> None:
            self.progress(f"part {k}: {stage}", self.read_frac)

        self._merge(step)
        st.next_part()
        self.seen.spill()
        self._seen_timing()

    def last(self) -> None:
        self.st.final = True
        self._merge(self.progress)
        self._seen_timing()  # again: the last part's chunks looked in the spilled runs too
        if self.store:
            self.res._graph_file = self.follows.finish_later(self.st.cur)
            self.res.tweet_pks = sorted(self.affected)
            for key, text in _MERGE_NOTES:
                if self.res.counts.get(key):
                    self.res.notes.append(f"{self.res.counts[key]:,} {text}")

    def _seen_timing(self) -> None:
        """The spilled duplicate check's seconds so far (moving each part's references and asking for them)."""
        if self.seen.spilled:
            self.st.timings["duplicate check, spilled"] = round(self.seen.seconds, 3)

    def _merge(self, progress: ProgressFn) -> None:
        st, res = self.st, self.res
        done = st.drop if st.final else st.release  # the temporary tables: dropped, or kept for the next part
        if self.unit is not None:
            self.unit.check(st)  # counts where the workspace counts retweeters: refused (monitor/services/units.py)
        if not self.store:
            # a validation reports what the merge would refuse too (read-only: a temporary table)
            stored_conflicts(st, self.ws, st.tweets())
            done()
            return
        t1 = time.perf_counter()
        if self.follows.ws is None:  # the first part: the version the import builds on, read under the lock
            st.on_locked = lambda cur: self.follows.start(cur, self.ws)
        else:
            st.on_locked = None
        st.merged_follows = None
        st.earlier_follows = self.follows.stored
        for key, n in merge(st.cur, st, self.ws, self.coll, progress).items():
            res.counts[key] = res.counts.get(key, 0) + n
        self.affected.update(st.affected)
        if st.merged_follows is not None:
            self.follows.add(st.merged_follows.follower, st.merged_follows.followee)
        st.affected = []
        if st.final and self.unit is not None:
            self.unit.settle(stored=bool(self.affected))  # the first tweets stored fix the workspace's unit
        done()
        res.timings["merge_s"] = round(res.timings.get("merge_s", 0.0) + time.perf_counter() - t1, 3)
        res.timings["merge_steps_s"] = st.timings
        if st.part:  # an upload above SPREADWATCH_IMPORT_PART_ROWS, merged in parts
            res.timings["parts"] = st.part + 1


def _skip_file(report: ReadReport, shown: str, message: str) -> None:
    """Skip-bad: a file that cannot be read at all is one bad record, and the upload goes on without it."""
    kind = next((k for k in ("empty file", "cannot tell the format") if k in message), "unreadable file")
    report.add(BadRecord(shown, None, None, message, kind))
    report.skipped_files.append(shown)


def _typed_inputs(files: list[Upload], workdir: Path, mode: str, report: ReadReport) -> list[Upload]:
    """The inputs of the upload (archives unpacked into ``workdir``), each with its format decided."""
    strict = mode == "strict"
    skip_file = functools.partial(_skip_file, report)
    typed = []
    for p, shown, fmt in expand_uploads(files, workdir, None if strict else skip_file):
        try:
            typed.append((p, shown, detect(p, shown, fmt)))
        except UploadError as exc:
            if strict or fmt not in ("", "auto"):
                raise
            skip_file(shown, str(exc).removeprefix(f"{shown}: "))
    return typed


def _read_all(
    st: Stager, inputs: list[Upload], mode: str, report: ReadReport, progress: ProgressFn, parts: _Parts
) -> None:
    """Stage every input in turn; reading is the import's first ``READ_SHARE`` (85 %) of its progress, by bytes."""
    max_record = int(getattr(settings, "SPREADWATCH_MAX_RECORD_BYTES", MAX_RECORD_BYTES))
    sizes = [max(input_size(p), 1) for p, _, _ in inputs]
    total = float(sum(sizes) or 1)
    seen = parts.seen  # one for the whole upload: a tweet id must agree with itself across files
    done = 0.0
    for (path, shown, fmt), size in zip(inputs, sizes):
        base, first = done, report.n_good

        # live counts: the file's records read so far, as the report counts them (a line of a JSONL or CSV file,
        # a v1.1 retweet with the original it carries being one; a tree file's lines). Not the staged rows: a
        # v1.1 retweet stages two (itself and its original), and a tree archive, read whole, stages none until
        # it is read, which said "0 tweets" for most of a Twitter16 import
        def on_bytes(b: int, tot: int, base=base, size=size, shown=shown, first=first) -> None:
            frac = (base + (b / tot if tot else 0) * size) / total
            parts.read_frac = READ_SHARE * frac
            progress(f"reading {shown}: {report.n_good - first:,} records", READ_SHARE * frac)

        st.names.append(shown)
        read_into(st, path, shown, fmt, mode, report, on_bytes, max_record=max_record, seen=seen)
        seen.rename(str(path), shown)  # later files name this one as uploaded
        done += size
        progress(f"read {shown}: {report.n_good - first:,} records", READ_SHARE * done / total)


def _note_reading(res: IngestResult, st: Stager, store: bool) -> None:
    """Notes on what reading left out; an upload of which skip-bad could store nothing fails here."""
    if st.unknown_labels:
        res.notes.append(f"{st.unknown_labels:,} truth label(s) not one of {', '.join(sorted(LABELS))}: unknown")
    if st.missing_times:
        res.notes.append(f"{st.missing_times:,} row(s) without a time were skipped")
    skipped = res.report.skipped_files
    if not skipped:
        return
    if store and st.empty:
        # skip-bad skipped every file it could not read, and nothing else is left: that is no upload
        first = next((r for r in res.report.shown if r.path in skipped), None)
        first_s = str(first) if first is not None else f"{skipped[0]}: cannot be read"
        more = f" and {len(skipped) - 1:,} more" if len(skipped) > 1 else ""
        raise UploadError(f"{first_s} (skip-bad skipped this file{more}; nothing else in the upload could be stored)")
    res.notes.append(
        f"{len(skipped):,} file(s) could not be read at all and were skipped: {', '.join(skipped[:5])}"
        + (" ..." if len(skipped) > 5 else "")
    )
