"""The workspace's unit at the stream's intake (issue 40; :mod:`monitor.services.units` has the rule): a body whose
records carry a follower count is refused whole when the workspace counts retweeters reached, with a 400 naming the
first such line and its field, and the first tweets a workspace receives fix its unit.

Decided at intake, before the 202: once a body is accepted, its events are applied later by a consumer, and a
refusal then could only be a dead letter. The consumer checks again (``apply``), for events queued before this
check existed."""

from __future__ import annotations

import msgspec

from compute.formats._report import BadRecord

from ...models import Workspace
from ..units import FOLLOWERS, RETWEETERS, count_field, refusal, unit_fix
from .records import InputError, Record

__all__ = ["UnitRefused", "check_unit", "first_count"]


class UnitRefused(InputError):
    """A line carries a follower count and the workspace counts retweeters reached: the body is refused whole, like
    a bad line (every later line carrying a count would be refused too)."""


def check_unit(workspace: Workspace, records: list[Record], lines: list[tuple[int, str]], path: str) -> None:
    """Raise :class:`UnitRefused` (naming the first line and field that carries a follower count) when the workspace
    counts retweeters reached; fix the workspace's unit when these are its first tweets. Call it inside the intake's
    transaction, so that a body that is not stored fixes nothing.

    Free for a workspace that counts followers (the stream's usual case: v1.1 statuses all carry counts), which
    accepts records with and without counts. Otherwise the rows the intake read are looked at again, a few
    microseconds a record."""
    if workspace.unit == FOLLOWERS:
        return
    tweets = [r for r in records if r.kind != "follow"]
    if not tweets:
        return  # follows alone fix no unit
    first = first_count(tweets)
    unit = workspace.unit
    if not unit or first is not None:
        # the committed unit: the workspace object may predate its fixing (or a purge that unfixed it)
        unit = workspace.unit = unit_fix(workspace.pk, has_counts=first is not None)
    if unit == RETWEETERS and first is not None:
        line, field_name = first
        if field_name != "followers_count":  # a v1.1 or v2 row's id field: name the count's own field
            field_name = count_field(field_name, next((t for n, t in lines if n == line), None))
        raise UnitRefused(BadRecord(path, line, field_name, refusal(), "follower count in a retweeters workspace"))


def counted_id_field(rows: str) -> str | None:
    """The id field of the first of a record's rows (as the intake read them, :mod:`._rows`) that carries a
    follower count; None when none does."""
    return next((row[5] for row in msgspec.json.decode(rows) if row[4] >= 0), None)  # row[4] -1: no count


def first_count(records: list[Record]) -> tuple[int, str] | None:
    """(line, field) of the first record carrying a follower count: for a v1.1 or v2 record, the id field of the
    row that carries it (from the rows the intake read, :mod:`._rows`); for the tweets CSV's fields,
    ``followers_count``."""
    for r in records:
        if r.rows is not None:
            id_field = counted_id_field(r.rows)
            if id_field is not None:
                return r.line, id_field
        elif r.format == "csv":
            v = msgspec.json.decode(r.body).get("followers_count")
            if not (v is None or (isinstance(v, str) and not v.strip())):  # the reader's "unknown" (to_count)
                return r.line, "followers_count"
    return None
