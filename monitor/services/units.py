"""A workspace's unit: what the reach of its cascades counts, fixed by its first data and never changed by later data.

The measure gives each participant n_v, its follower count. Data that carries no follower count at all (Twitter15/16
trees) gives everyone n_v = 1, and the reach counts *retweeters* reached; data that carries counts counts
*followers* reached, a participant whose count is unknown counting the same user's latest known count, else 0
(docs/measure.md). Until issue 40 that choice was made per cascade at every compute, from the counts stored at the
time: two streamed retweets carrying counts turned the biggest Twitter16 cascade from retweeters into followers,
every one of its 3,089 earlier participants falling from 1 to 0, and the stream answered 202.

The rule now (docs/measure.md, "A workspace's unit"):

* the first tweets a workspace receives, by upload or stream, fix its unit (``Workspace.unit``): ``followers`` when
  any of them carries a follower count, ``retweeters`` when none does; follows alone fix nothing;
* in a ``retweeters`` workspace, a record that carries a follower count is **refused**: the stream's intake answers
  400 naming the line and the field, nothing of the body stored; an upload fails naming the file, the line and the
  field, nothing stored; an event queued before the rule existed becomes a dead letter saying the same;
* in a ``followers`` workspace, records without a count are accepted, and every cascade counts followers, even one
  whose records carry no count at all (its participants count their user's latest known count in the cascade's
  computation, else 0): no cascade switches unit when its first count arrives.

So the stored data of a workspace carries counts exactly when its unit is ``followers``, and the compute of any
subset of its cascades, in any order of arrival, uses the unit a batch upload of all of it would.
"""

from __future__ import annotations

import json
import re

from ..models import Workspace

__all__ = [
    "FOLLOWERS",
    "RETWEETERS",
    "UNIT_LABELS",
    "count_field",
    "refusal",
    "unit_fix",
    "unit_for",
    "unit_of",
]

FOLLOWERS, RETWEETERS = "followers", "retweeters"
UNIT_LABELS = {FOLLOWERS: "followers reached", RETWEETERS: "retweeters reached", "": "not fixed yet"}
# the field that carries a follower count in an uploaded file of each format (for the refusal's message)
UPLOAD_COUNT_FIELDS = {
    "csv": "followers_count",
    "v1": "user.followers_count",
    "v2": "public_metrics.followers_count",
    "npz": "followers",
    "tudataset": "node_attributes",
}


def unit_for(has_counts: bool) -> str:
    """The unit data fixes when it is a workspace's first: followers when it carries any follower count."""
    return FOLLOWERS if has_counts else RETWEETERS


def unit_of(workspace_id: int) -> str:
    """The workspace's unit as committed now ("" while no tweet has fixed it)."""
    return Workspace.objects.filter(pk=workspace_id).values_list("unit", flat=True).first() or ""


def unit_fix(workspace_id: int, *, has_counts: bool) -> str:
    """The workspace's unit, fixed by this data when no earlier data has fixed it (``has_counts``: whether the data
    carries any follower count). Inside the caller's transaction: the row stays locked to its commit, and a rollback
    undoes the fixing. Two writers fixing at once: the second waits for the first's commit, then reads its unit."""
    if Workspace.objects.filter(pk=workspace_id, unit="").update(unit=unit_for(has_counts)):
        return unit_for(has_counts)
    return unit_of(workspace_id)


def refusal() -> str:
    """Why a record carrying a follower count is refused by a ``retweeters`` workspace (the reason of the error)."""
    return (
        "a follower count, but this workspace counts retweeters reached: its first data carried no follower counts, "
        "and a workspace's unit never changes (every earlier participant would fall from 1 to its count); leave the "
        "count out, or send this data to a workspace that counts followers"
    )


_STEP = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")


def count_field(id_field: str, line_text: str | None = None) -> str:
    """The field holding the follower count of a stream row whose tweet id is ``id_field`` (as the intake's rows
    name it: ``id_str``, ``retweeted_status.id_str``, ``data[2].id``...). A v1.1 status has it in its ``user``; a
    v2 tweet in its ``author``, else in the ``includes.users`` entry of its author, which ``line_text`` (the line
    as received) finds."""
    prefix = id_field.rpartition(".")[0]
    prefix = f"{prefix}." if prefix else ""
    if line_text is not None:
        found = _found_count_field(line_text, prefix)
        if found is not None:
            return found
    if not (prefix.startswith("data") or prefix.startswith("includes") or prefix.startswith("referenced_tweets")):
        return f"{prefix}user.followers_count"  # a v1.1 status or its embedded original
    return f"{prefix}author.public_metrics.followers_count"


def _found_count_field(text: str, prefix: str) -> str | None:
    """The count's field read from the line: the tweet object at ``prefix`` has a ``user`` (v1.1), else an
    ``author`` with ``public_metrics``, else an ``includes.users`` entry of its author (v2)."""
    try:
        obj = json.loads(text)
        tw = obj
        for name, index in _STEP.findall(prefix.rstrip(".")):
            tw = tw[name]
            for k in re.findall(r"\d+", index):
                tw = tw[int(k)]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(tw, dict):
        return None
    if isinstance(tw.get("user"), dict):
        return f"{prefix}user.followers_count"
    author = tw.get("author")
    if isinstance(author, dict) and isinstance(author.get("public_metrics"), dict):
        return f"{prefix}author.public_metrics.followers_count"
    uid = tw.get("author_id", author.get("id") if isinstance(author, dict) else None)
    users = (obj.get("includes") or {}).get("users") if isinstance(obj, dict) else None
    for j, u in enumerate(users or ()):
        if isinstance(u, dict) and str(u.get("id")) == str(uid):
            return f"includes.users[{j}].public_metrics.followers_count"
    return None
