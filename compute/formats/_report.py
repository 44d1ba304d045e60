"""Bad records, the read report and the error sink every reader writes to.

A reader never raises or prints on its own: it hands each problem to a :class:`Sink`, which either raises
:class:`InputError` (``mode="strict"``) or counts the record in the :class:`ReadReport` (``mode="skip-bad"``).
That keeps the two modes identical up to the first bad record, so a strict run that passes and a skip-bad run
with ``n_bad == 0`` return the same data.

One rule for problems of a *whole file* (empty, no header, unreadable archive, a tree without a ROOT line, a
TUDataset whose files disagree...): the reader reports them with :meth:`Sink.bad_file`, which is one bad record
(``line`` is ``None``, or the header's line) that also lists the file in :attr:`ReadReport.skipped_files`.
Strict mode stops there like at any bad record; skip-bad mode skips that file and goes on with the others. (The
web upload then fails a skip-bad upload only when nothing else in it could be stored.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["BadRecord", "ReadReport", "InputError", "Sink", "LongLines", "MODES"]

MODES = ("strict", "skip-bad")


@dataclass(frozen=True)
class BadRecord:
    """One input record that could not be used.

    ``line`` is 1-based (``None`` for problems of a whole file or folder); ``field`` names the offending field
    as a dotted path (``"user.followers_count"``) or ``None``. ``kind`` is the short category the report
    counts by (``"not a number"``); ``reason`` is the full text (``"not a number: 'abc'"``).
    """

    path: str
    line: int | None
    field: str | None
    reason: str
    kind: str = ""

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        what = self.reason if self.field is None else f"field '{self.field}': {self.reason}"
        return f"{where}: {what}"

    @property
    def category(self) -> str:
        kind = self.kind or self.reason
        return kind if self.field is None else f"field '{self.field}': {kind}"

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "field": self.field, "reason": self.reason}


class InputError(ValueError):
    """Raised in strict mode on the first bad record; ``str(e)`` names file, line, field and reason."""

    def __init__(self, record: BadRecord) -> None:
        super().__init__(str(record))
        self.record = record


@dataclass
class ReadReport:
    """What a read found: good and bad record counts, the first ``max_shown`` bad records, counts by reason.

    A *record* is the input's own unit: a CSV row, a JSONL status, a v2 tweet, a tree line, an edge line, a
    TUDataset graph. ``n_skipped`` counts lines that are valid but carry no tweet (v1.1 stream ``delete`` /
    ``limit`` notices); blank lines are not counted at all. ``skipped_files`` lists the files (or archive
    members) skip-bad mode left out whole (:meth:`Sink.bad_file`).
    """

    n_good: int = 0
    n_bad: int = 0
    shown: list[BadRecord] = field(default_factory=list)
    max_shown: int = 20
    by_reason: Counter = field(default_factory=Counter)
    n_skipped: int = 0
    files: list[str] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)

    def add(self, record: BadRecord) -> None:
        self.n_bad += 1
        self.by_reason[record.category] += 1
        if len(self.shown) < self.max_shown:
            self.shown.append(record)

    def merge(self, other: ReadReport) -> None:
        """Add ``other``'s counts to this report (``read_many``)."""
        self.n_good += other.n_good
        self.n_bad += other.n_bad
        self.n_skipped += other.n_skipped
        self.by_reason.update(other.by_reason)
        self.files.extend(other.files)
        self.skipped_files.extend(other.skipped_files)
        room = self.max_shown - len(self.shown)
        if room > 0:
            self.shown.extend(other.shown[:room])

    def __str__(self) -> str:
        head = f"{self.n_good:,} good, {self.n_bad:,} bad record(s)"
        if self.n_skipped:
            head += f", {self.n_skipped:,} skipped (not tweets)"
        if not self.n_bad:
            return head
        reasons = "; ".join(f"{n:,} x {r}" for r, n in self.by_reason.most_common(10))
        lines = [f"{head}: {reasons}"]
        lines += [f"  {r}" for r in self.shown]
        if self.n_bad > len(self.shown):
            lines.append(f"  ... and {self.n_bad - len(self.shown):,} more")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {
            "n_good": self.n_good,
            "n_bad": self.n_bad,
            "n_skipped": self.n_skipped,
            "by_reason": dict(self.by_reason),
            "shown": [r.to_dict() for r in self.shown],
            "max_shown": self.max_shown,
            "files": list(self.files),
            "skipped_files": list(self.skipped_files),
        }


class Sink:
    """Where a reader of one file sends its bad records.

    ``before_raise`` lets a reader that converts columns lazily (a chunk at a time) check its pending rows
    first, so that strict mode always raises on the *first* bad record of the file, not the first one found.
    """

    def __init__(self, path: str, mode: str, report: ReadReport) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        self.path = path
        self.strict = mode == "strict"
        self.report = report
        self.before_raise: Callable[[], None] | None = None

    def bad(
        self, line: int | None, field: str | None, kind: str, detail: str | None = None, *, path: str | None = None
    ) -> None:
        """Report one bad record (raises ``InputError`` in strict mode)."""
        reason = kind if detail is None else f"{kind}: {detail}"
        record = BadRecord(self.path if path is None else path, line, field, reason, kind)
        if self.strict:
            hook, self.before_raise = self.before_raise, None
            if hook is not None:
                hook()  # raises for an earlier bad record still pending, if there is one
            raise InputError(record)
        self.report.add(record)

    def bad_file(
        self,
        kind: str,
        detail: str | None = None,
        *,
        line: int | None = None,
        field: str | None = None,
        path: str | None = None,
    ) -> None:
        """Report a problem that makes the whole file (or archive member) ``path`` unusable: one bad record, and
        the file is listed in ``report.skipped_files`` (raises ``InputError`` in strict mode)."""
        shown = self.path if path is None else path
        if not self.strict:
            self.report.skipped_files.append(shown)
        self.bad(line, field, kind, detail, path=path)

    def bad_sorted(self, records: list[tuple[int, str | None, str, str | None]]) -> None:
        """Report several records found together (by a vectorised check) in line order."""
        for line, field_, kind, detail in sorted(records, key=lambda r: r[0]):
            self.bad(line, field_, kind, detail)


class LongLines:
    """The ``LineBlocks`` callback that reports a line past the record limit (a bad record of its own); ``n``
    counts them (a file holding nothing else is not empty)."""

    def __init__(self, sink: Sink, limit: int, path: str | None = None) -> None:
        self.sink, self.path, self.limit, self.n = sink, path, limit, 0
        self.kind = f"record longer than {limit:,} bytes"

    def __call__(self, line: int) -> None:
        self.n += 1
        self.sink.bad(line, None, self.kind, path=self.path)
