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

__all__ = ["detect_format", "not_text_reason", "FORMATS"]

#: what a binary file is, by its first bytes (the common ones uploaded by mistake); else "a binary file"
_MAGIC = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"\xd0\xcf\x11\xe0", "an old Microsoft Office file (.xls, .doc)"),
    (b"SQLite format 3", "an SQLite database"),
    (b"\x7fELF", "a program"),
    (b"MZ", "a Windows program"),
    (b"Rar!", "a RAR archive (not read: use zip or tar)"),
    (b"7z\xbc\xaf", "a 7-Zip archive (not read: use zip or tar)"),
    (b"PAR1", "a Parquet file"),
)
_TEXT_SAMPLE = 64 * 1024
_READS = (
    "tweets CSV, follows CSV or edge list, Twitter API v1.1 or v2 JSON lines (UTF-8 text, may be gzip, bzip2 or "
    "xz compressed), Twitter15/16 trees, TUDataset or Spreadwatch .npz (in a zip or tar archive)"
)


def not_text_reason(head: bytes, *, strong_only: bool = False) -> str | None:
    """Why the first bytes of a (decompressed) file are not text this application can read, in plain words, or
    None when they are UTF-8 text. Binary files are named by their magic number where it is a common one;
    UTF-16/32 text and other encodings are told to be saved as UTF-8.

    ``strong_only``: only what no reader could make sense of line by line (a known binary kind, UTF-16/32, a
    tenth of NUL bytes), for a file whose text format the analyst chose: a few stray control or Latin-1 bytes
    are then bad records of their lines, as the readers report them."""
    sample = head[:_TEXT_SAMPLE]
    if not sample:
        return None
    for bom, name in ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
                      (b"\xfe\xff", "UTF-16")):  # fmt: skip
        if sample.startswith(bom):
            return f"this is {name} text; save it as UTF-8 and upload it again"
    for magic, name in _MAGIC:
        if sample.startswith(magic):
            return f"this is {name}, not data Spreadwatch reads ({_READS})"
    kind = "zip" if sample.startswith(b"PK\x03\x04") else "tar" if sample[257:262] == b"ustar" else None
    if kind:  # the web upload unpacks these before reading; the command line and a nested archive do not
        return (
            f"this is a {kind} archive: unpack it and name the files inside (e.g. the trees folder); the web "
            "upload unpacks zip and tar archives itself"
        )
    half_nul = sample[1::2].count(0) > len(sample) // 4 or sample[0::2].count(0) > len(sample) // 4
    if half_nul and sample.count(0) < len(sample) * 3 // 4:  # NULs in every other byte, not everywhere
        return "this looks like UTF-16 text without a byte-order mark; save it as UTF-8 and upload it again"
    nul = sample.count(0)
    control = sum(1 for b in sample if b < 32 and b not in (9, 10, 13))
    if nul > len(sample) // 10 or (not strong_only and (nul or control > len(sample) // 20)):
        return f"this is a binary file, not text: Spreadwatch reads {_READS}"
    if strong_only:
        return None
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start >= len(sample) - 3 and exc.reason == "unexpected end of data":
            return None  # a character cut by the sample's end
        line = sample.count(b"\n", 0, exc.start) + 1
        return (
            f"this text is not UTF-8 (byte 0x{sample[exc.start]:02x} on line {line}; probably Latin-1 or "
            "Windows-1252): save it as UTF-8 and upload it again"
        )
    return None


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
    reason = not_text_reason(head)
    if reason is not None:
        # say what the file is rather than print its first "line" in mojibake
        raise ValueError(f"{path}: cannot tell the format: {reason}")
    raise ValueError(
        f"{path}: cannot tell the format from the first line {first_line[:80].decode('utf-8', 'replace')!r}: "
        f"it is none of what Spreadwatch reads ({_READS}); if it is one of them, choose its format "
        f"({', '.join(FORMATS)})"
    )
