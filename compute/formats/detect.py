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

A UTF-16 or UTF-32 file raises ``ValueError`` naming its encoding (every format here is UTF-8). Anything else
raises ``ValueError`` saying what the first line looked like.

The checks themselves are the formats' own hooks (:class:`.registry.Sniff`, beside each reader); this module
only walks them: path hooks first (by priority), then the JSON hooks on each JSON line, then the line hooks on
the first other line, in registry order.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ._io import head_bytes
from .registry import FORMATS

__all__ = ["detect_format", "FORMATS"]

_HEAD = 1 << 20
_MAX_LINES = 200
_BY_PATH = sorted((s for s in FORMATS.values() if s.sniff.path), key=lambda s: -s.sniff.priority)
_BY_JSON = [s for s in FORMATS.values() if s.sniff.json]
_BY_LINE = [s for s in FORMATS.values() if s.sniff.line]


_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
)


def foreign_encoding(head: bytes) -> str | None:
    """The name of the wide Unicode encoding ``head`` (a file's first bytes) is in, or None. Every format read
    here is UTF-8 (or ASCII); a UTF-16 file (what some spreadsheets save as "Unicode text") would otherwise be
    reported by a garbled first line. Found by its byte-order mark, or without one by text whose every other
    byte is a NUL."""
    for bom, name in _WIDE_BOMS:
        if head.startswith(bom):
            return name
    sample = head[:4096]
    if len(sample) >= 8:
        even, odd = sample[0::2], sample[1::2]
        if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
            return "UTF-16 (little-endian, no byte-order mark)"
        if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
            return "UTF-16 (big-endian, no byte-order mark)"
    return None


def detect_format(path: str | os.PathLike) -> str:
    """The format name (one of :data:`FORMATS`) of the input at ``path``, judged by its content."""
    p = Path(path)
    for spec in _BY_PATH:
        try:
            if spec.sniff.path(p):
                return spec.name
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    if p.is_dir():
        raise ValueError(
            f"{path}: cannot tell the format of this folder: want tree/<source_id>.txt (+ label.txt) "
            "for cascade trees or DS_A.txt + DS_graph_indicator.txt for a TUDataset"
        )
    if not p.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    head = head_bytes(p, _HEAD)
    encoding = foreign_encoding(head)
    if encoding:
        raise ValueError(
            f"{path}: the file is {encoding}, not UTF-8: save it as UTF-8 (in a spreadsheet: CSV UTF-8) and "
            "upload it again"
        )
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
            if isinstance(obj, dict):
                kind = next((spec.name for spec in _BY_JSON if spec.sniff.json(obj)), None)
                if kind is not None:
                    return kind
            continue
        if seen_json:
            continue
        kind = next((spec.name for spec in _BY_LINE if spec.sniff.line(s)), None)
        if kind is not None:
            return kind
        break
    if seen_json:
        raise ValueError(f"{path}: JSON lines, but not recognisably Twitter API v1.1 or v2 tweets")
    if first_line is None:
        raise ValueError(f"{path}: empty file, cannot tell its format")
    raise ValueError(
        f"{path}: cannot tell the format from the first line {first_line[:80].decode('utf-8', 'replace')!r}; "
        f"pass format= one of {', '.join(FORMATS)}"
    )
