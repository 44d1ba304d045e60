"""Tell an input's format from its content (not its name).

Order of the checks:

1. a folder: TUDataset if it holds exactly one ``DS_A.txt`` with its ``DS_graph_indicator.txt``; cascade trees
   if it has a ``tree/`` subfolder (or its own ``*.txt`` files start with tree lines);
2. a path that does not exist but is a TUDataset prefix (``.../DS`` with ``.../DS_A.txt``): TUDataset;
3. a file starting with the zip magic: ``npz`` (the archive kind is read from its array names);
4. a file named ``DS_*.txt`` of a complete TUDataset: TUDataset;
5. otherwise the first non-blank lines of the (decompressed, BOM-stripped) text decide:
   ``{...}`` lines are v2 when they have ``data`` / ``includes`` or v2-only tweet fields (``author_id``,
   ``edit_history_tweet_ids``, ``public_metrics``, ``referenced_tweets``, ...), v1.1 when they have ``user``,
   ``retweeted_status``, ``id_str`` or ``timestamp_ms`` (stream notices like ``delete`` are passed over);
   a ``['uid', 'tweet_id', 'delay']->[...]`` line is a single cascade tree; a header naming ``tweet_id`` and
   ``user_id`` is the tweets CSV; a header naming ``follower_id`` and ``followee_id``, ``#`` comment lines, or
   a first line of two integers is a follows file.

Anything else raises ``ValueError`` saying what the first line looked like.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path

from ._io import head_bytes
from .npz import npz_kind
from .tudataset import SUFFIXES, tudataset_files

__all__ = ["detect_format", "FORMATS"]

FORMATS = ("csv", "follows", "v1", "v2", "trees", "tudataset", "npz")

_V2_KEYS = (
    "author_id",
    "edit_history_tweet_ids",
    "public_metrics",
    "referenced_tweets",
    "author",
    "conversation_id",
    "possibly_sensitive",
    "reply_settings",
)
_V1_KEYS = ("user", "retweeted_status", "id_str", "timestamp_ms", "favorite_count", "in_reply_to_status_id")
_NOTICES = ("delete", "limit", "scrub_geo", "status_withheld", "user_withheld", "disconnect", "warning")
_TREE = re.compile(rb"""^\[\s*['"][^'"]*['"]\s*,.*\]\s*->\s*\[.*\]$""")
_TWO_INTS = re.compile(rb"^\s*\d+\s*[,\s]\s*\d+\s*$")
_HEAD = 1 << 20
_MAX_LINES = 200


def _json_kind(obj: object) -> str | None:
    if not isinstance(obj, dict):
        return None
    if "data" in obj or "includes" in obj:
        return "v2"
    if any(k in obj for k in _V1_KEYS):
        return "v1"
    if any(k in obj for k in _V2_KEYS):
        return "v2"
    return None


def _folder_kind(p: Path) -> str | None:
    if tudataset_files(p) is not None:
        return "tudataset"
    if (p / "tree").is_dir():
        return "trees"
    for f in sorted(p.glob("*.txt"))[:3]:
        first = head_bytes(f, 4096).split(b"\n", 1)[0].strip()
        if _TREE.match(first):
            return "trees"
    return None


def detect_format(path: str | os.PathLike) -> str:
    """The format name (one of :data:`FORMATS`) of the input at ``path``, judged by its content."""
    p = Path(path)
    if p.is_dir():
        kind = _folder_kind(p)
        if kind is None:
            raise ValueError(
                f"{path}: cannot tell the format of this folder: want tree/<source_id>.txt (+ label.txt) "
                "for cascade trees or DS_A.txt + DS_graph_indicator.txt for a TUDataset"
            )
        return kind
    if not p.exists():
        if tudataset_files(p) is not None:
            return "tudataset"
        raise FileNotFoundError(f"{path}: no such file or folder")
    with open(p, "rb") as fh:
        magic = fh.read(4)
    if magic == b"PK\x03\x04":
        if npz_kind(p) is None:
            try:
                with zipfile.ZipFile(p) as z:
                    z.namelist()
            except (zipfile.BadZipFile, OSError) as exc:
                raise ValueError(f"{path}: a zip/.npz archive that cannot be read (cut short?): {exc}") from None
            raise ValueError(f"{path}: a zip/.npz archive, but neither a spreading-graph nor a collection archive")
        return "npz"
    if p.name.endswith(SUFFIXES) and tudataset_files(p) is not None:
        return "tudataset"
    head = head_bytes(p, _HEAD)
    lines = head.split(b"\n")
    if len(head) == _HEAD and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut short
    seen_json = False
    first_line = None
    for raw in lines[:_MAX_LINES]:
        s = raw.strip()
        if not s:
            continue
        if first_line is None:
            first_line = s
        if s.startswith(b"{"):
            seen_json = True
            try:
                obj = json.loads(s)
            except ValueError:
                continue  # a bad line: the reader will report it; look at the next
            kind = _json_kind(obj)
            if kind is not None:
                return kind
            continue
        if seen_json:
            continue
        if _TREE.match(s):
            return "trees"
        if s.startswith(b"#") or _TWO_INTS.match(s):
            return "follows"
        cols = [c.strip().strip('"').lower() for c in s.decode("utf-8", "replace").split(",")]
        if "tweet_id" in cols and "user_id" in cols:
            return "csv"
        if "follower_id" in cols and "followee_id" in cols:
            return "follows"
        break
    if seen_json:
        raise ValueError(f"{path}: JSON lines, but not recognisably Twitter API v1.1 or v2 tweets")
    if first_line is None:
        raise ValueError(f"{path}: empty file, cannot tell its format")
    raise ValueError(
        f"{path}: cannot tell the format from the first line {first_line[:80].decode('utf-8', 'replace')!r}; "
        f"pass format= one of {', '.join(FORMATS)}"
    )
