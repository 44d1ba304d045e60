"""The input formats, one entry each: every list of formats in the application is derived from :data:`FORMATS`.

Detection (:func:`.detect.detect_format`), the readers' dispatch (:func:`compute.formats.read` and the
streaming ``iter_*``), the CLI's ``--format`` choices, the upload form, the API's ``format`` field and the web
import (which streams some formats and reads others whole) all read this registry, so adding a format is one
:class:`FormatSpec` here plus its own reader module (``docs/adding-a-format.md`` walks through it).

The order of :data:`FORMATS` is the order users see the formats in (choices, error messages) and the order the
content hooks of :class:`Sniff` are tried in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import csv_tweets, follows, npz, trees, tudataset, twitter_v1, twitter_v2
from ._fields import Ctx

__all__ = ["AUTO", "FORMATS", "FormatSpec", "Sniff", "format_choices"]

#: The choice that means "detect each input's format from its content".
AUTO = "auto"
_AUTO_LABEL = "Detect from the content"

#: ``reader(path, ctx)`` yields ``(kind, object)`` pairs, ``kind`` one of :data:`KINDS`.
Reader = Callable[[str, Ctx], Iterator[tuple[str, object]]]
#: What a reader may yield: ``TweetTable`` chunks, ``FollowTable`` chunks, ``SpreadingGraphs``, ``FollowerGraph``.
KINDS = frozenset({"tweets", "follows", "graphs", "follower_graph"})


@dataclass(frozen=True)
class Sniff:
    """How :func:`.detect.detect_format` recognises a format from an input's content. Every hook is optional;
    no two formats' hooks may both accept one input (the ``priority`` below only settles real ambiguities).

    A hook may raise ``ValueError(reason)`` for an input that is clearly this format's but unreadable;
    detection names the file."""

    #: the input as a whole, looked at before its content: a folder, a prefix path, a file's magic or name
    path: Callable[[Path], bool] | None = None
    #: one JSON object of a JSON-lines file (lines that no hook accepts are passed over: stream notices)
    json: Callable[[dict], bool] | None = None
    #: the first non-blank line of a text file that is not JSON
    line: Callable[[bytes], bool] | None = None
    #: path hooks are tried from the highest priority down (then in registry order)
    priority: int = 0


@dataclass(frozen=True)
class FormatSpec:
    """One input format: its name on every floor, its label for people, its reader and what it yields."""

    name: str  # the ``format=`` value (CLI, upload form, API, CollectionFile.format)
    label: str  # shown to analysts in the upload form
    reader: Reader
    holds: frozenset[str]  # the kinds its reader yields (a subset of KINDS)
    streams: bool  # the web import reads it a chunk at a time; False: read whole (graphs, labels)
    text: bool = False  # its tweets carry screen names and texts
    sniff: Sniff = field(default_factory=Sniff)
    #: for a format holding different things per file: the spec of this input (``holds``, ``streams``)
    narrow: Callable[[str | Path], FormatSpec] | None = None

    def of(self, path: str | Path) -> FormatSpec:
        """This format as the input at ``path`` holds it."""
        return self.narrow(path) if self.narrow is not None else self

    @property
    def has_tweets(self) -> bool:
        return "tweets" in self.holds

    @property
    def has_follows(self) -> bool:
        """Follow edges as ``FollowTable`` chunks, or as a follower graph that ``iter_follows`` turns into them."""
        return bool({"follows", "follower_graph"} & self.holds)


def _npz_of(path: str | Path) -> FormatSpec:
    # a collection archive streams its tweets and its follower graph's edges; a spreading-graph archive (or
    # an unreadable one, which the reader reports) is read whole
    spec = FORMATS["npz"]
    if npz.npz_kind(path) == "collection":
        return replace(spec, holds=frozenset({"tweets", "follower_graph"}), streams=True, narrow=None)
    return replace(spec, holds=frozenset({"graphs"}), streams=False, narrow=None)


FORMATS: dict[str, FormatSpec] = {
    spec.name: spec
    for spec in (
        FormatSpec(
            "csv",
            "Tweets CSV",
            csv_tweets.read_csv_tweets,
            frozenset({"tweets"}),
            streams=True,
            sniff=Sniff(line=csv_tweets.sniff_line),
        ),
        FormatSpec(
            "follows",
            "Follows CSV / edge list",
            follows.read_follows,
            frozenset({"follows"}),
            streams=True,
            sniff=Sniff(line=follows.sniff_line),
        ),
        FormatSpec(
            "v1",
            "Twitter API v1.1 JSONL",
            twitter_v1.read_v1,
            frozenset({"tweets"}),
            streams=True,
            text=True,
            sniff=Sniff(json=twitter_v1.sniff_json),
        ),
        FormatSpec(
            "v2",
            "Twitter API v2 JSONL (twarc2)",
            twitter_v2.read_v2,
            frozenset({"tweets"}),
            streams=True,
            text=True,
            sniff=Sniff(json=twitter_v2.sniff_json),
        ),
        FormatSpec(
            "trees",
            "Twitter15/16 cascade trees (zip or tar of the folder)",
            trees.read_trees,
            frozenset({"tweets", "follows"}),
            streams=False,  # labels come from label.txt, read with the trees
            sniff=Sniff(path=trees.sniff_path, line=trees.sniff_line),
        ),
        FormatSpec(
            "tudataset",
            "TUDataset spreading graphs (zip or tar)",
            tudataset.read_tudataset,
            frozenset({"graphs"}),
            streams=False,
            # a folder holding both a TUDataset and a tree/ folder is read as the TUDataset
            sniff=Sniff(path=tudataset.sniff_path, priority=1),
        ),
        FormatSpec(
            "npz",
            "Spreadwatch archive (.npz)",
            npz.read_npz,
            frozenset({"tweets", "follower_graph", "graphs"}),
            streams=False,
            # the zip magic is certain: looked at before a TUDataset file name
            sniff=Sniff(path=npz.sniff_path, priority=2),
            narrow=_npz_of,
        ),
    )
}


def format_choices() -> list[tuple[str, str]]:
    """``(name, label)`` of "auto" and of every format, in registry order: for a form or an API field."""
    return [(AUTO, _AUTO_LABEL), *((spec.name, spec.label) for spec in FORMATS.values())]
