"""Streaming byte input shared by the readers: transparent decompression, UTF-8 BOM, line-aligned blocks,
progress callbacks, and a vectorised parser for blocks of integer columns.

Every reader sees a file as a sequence of blocks of a few MB that end on a line boundary, each with the
1-based number of its first line, so memory stays bounded however large the file is and every record still
knows its line.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np

__all__ = [
    "Progress",
    "LineBlocks",
    "open_binary",
    "head_bytes",
    "input_size",
    "parse_int_block",
    "line_ranges",
    "is_compressed",
    "BOM",
]

BOM = b"\xef\xbb\xbf"
BLOCK_SIZE = 4 << 20
_INT64_MAX = np.iinfo(np.int64).max


class Progress:
    """Calls ``callback(bytes_done, bytes_total)`` as the files of one read are consumed."""

    def __init__(self, callback: Callable[[int, int], None] | None, total: int) -> None:
        self.callback = callback
        self.total = max(int(total), 0)
        self.base = 0

    def at(self, done_in_file: int) -> None:
        if self.callback is not None:
            self.callback(min(self.base + done_in_file, self.total), self.total)

    def file_done(self, size: int) -> None:
        self.base += size
        self.at(0)


def input_size(path: str | os.PathLike) -> int:
    """Bytes a read of ``path`` will consume (a folder: all files below it)."""
    p = Path(path)
    if p.is_file():
        return p.stat().st_size
    if p.is_dir():
        return sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    return 0


def open_binary(path: str | os.PathLike) -> tuple[BinaryIO, BinaryIO]:
    """Open ``path`` for reading bytes, decompressing gzip / bzip2 / xz by their magic bytes.

    Returns ``(stream, raw)``: ``raw.tell()`` is the position in the file on disk, for progress.
    """
    raw = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    codec = _codec(raw.read(6))
    raw.seek(0)
    return (raw if codec is None else codec(raw)), raw


def _codec(magic: bytes) -> Callable[[BinaryIO], BinaryIO] | None:
    """The decompressing reader that the file's first 6 bytes call for, or ``None`` for a plain file."""
    if magic[:2] == b"\x1f\x8b":
        return lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")
    if magic[:3] == b"BZh":
        return lambda raw: bz2.BZ2File(raw, "rb")
    if magic == b"\xfd7zXZ\x00":
        return lambda raw: lzma.LZMAFile(raw, "rb")
    return None


def head_bytes(path: str | os.PathLike, n: int = 1 << 16) -> bytes:
    """The first ``n`` bytes of a file's (decompressed) content, BOM removed."""
    stream, raw = open_binary(path)
    try:
        data = stream.read(n)
    except (OSError, EOFError, lzma.LZMAError):
        data = b""
    finally:
        stream.close()
        raw.close()
    return data[len(BOM) :] if data.startswith(BOM) else data


class LineBlocks:
    """Iterate over ``(block, first_line)`` where each block is whole lines (the last may lack its newline).

    ``saw_data`` tells afterwards whether the file held anything but whitespace (an empty file is an error the
    reader reports). With ``max_line`` set, a line longer than that many bytes (newline not counted) is never
    held whole: once it passes the limit, ``too_long(line_number)`` is called (the reader reports it; in strict
    mode that raises) and the rest of the line is skipped up to its newline, so memory stays bounded by the block
    size plus the limit. Without ``max_line`` a line is kept whole however long it is.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        progress: Progress | None = None,
        block_size: int = BLOCK_SIZE,
        *,
        max_line: int | None = None,
        too_long: Callable[[int], None] | None = None,
        start: int = 0,
        end: int | None = None,
    ):
        self.path = path
        # a byte range of an uncompressed file that starts at a line (offset 0 or just after a newline): line
        # numbers count from its start; ``newlines`` is how many it held, once :meth:`lines` is done
        self.start, self.end = start, end
        self.newlines = 0
        self.progress = progress
        self.block_size = block_size
        self.saw_data = False
        if max_line is not None and too_long is None:
            raise ValueError("max_line needs a too_long callback")
        self.max_line = max_line
        self.too_long = too_long

    def _read_size(self) -> int:
        # a line that lies inside one read is shorter than the read, so only lines continued from the previous
        # read need a length check when reads are no longer than the limit
        return self.block_size if self.max_line is None else max(1, min(self.block_size, self.max_line))

    def _long(self, line: int) -> None:
        self.saw_data = True
        self.too_long(line)

    def _open(self) -> tuple[BinaryIO, BinaryIO]:
        """``open_binary``, or the byte range ``start:end`` of the plain file."""
        if not self.start and self.end is None:
            return open_binary(self.path)
        raw = open(self.path, "rb")  # noqa: SIM115 - closed by the caller
        raw.seek(self.start)
        return _Range(raw, self.end), raw

    def __iter__(self) -> Iterator[tuple[bytes, int]]:
        stream, raw = self._open()
        limit = self.max_line
        size = self._read_size()
        try:
            line = 1  # the number of the line that starts ``carry`` (or the next block)
            carry = b""
            skipping = False  # inside an over-long line, looking for its end
            first = True
            while True:
                chunk = stream.read(size)
                if not chunk:
                    break
                if first:
                    first = False
                    if not self.start and chunk.startswith(BOM):
                        chunk = chunk[len(BOM) :]
                if skipping:
                    nl = chunk.find(b"\n")
                    if nl < 0:
                        continue
                    skipping = False
                    line += 1
                    chunk = chunk[nl + 1 :]
                    if not chunk:
                        continue
                data = carry + chunk if carry else chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    if limit is not None and len(data) > limit:
                        carry, skipping = b"", True
                        self._long(line)
                    else:
                        carry = data
                    continue
                if limit is not None and carry:
                    nl = len(carry) + chunk.find(b"\n")  # the end of the line ``carry`` began
                    if nl > limit:
                        self._long(line)
                        data, line = data[nl + 1 :], line + 1
                        cut -= nl + 1
                        if cut < 0:
                            carry = data
                            continue
                block, carry = data[: cut + 1], data[cut + 1 :]
                if not self.saw_data and block.strip():
                    self.saw_data = True
                yield block, line
                line += block.count(b"\n")
                if self.progress is not None:
                    self.progress.at(raw.tell())
            if carry and not skipping:
                if not self.saw_data and carry.strip():
                    self.saw_data = True
                yield carry, line
        finally:
            stream.close()
            raw.close()

    def lines(self) -> Iterator[tuple[int, memoryview | bytes]]:
        """Iterate over ``(line_number, line)`` for the non-empty lines (no newline kept).

        Lines are zero-copy ``memoryview`` slices of the block read (a line split across two reads is joined
        into ``bytes``), so a 5 KB JSON line costs no copy before the decoder sees it; a line that is only
        blanks is passed on too (the reader decides). Over-long lines go to ``too_long`` (see the class).
        """
        stream, raw = self._open()
        limit = self.max_line
        size = self._read_size()
        try:
            line = 0
            carry = b""
            skipping = False
            first = True
            progress = self.progress
            while True:
                chunk = stream.read(size)
                if not chunk:
                    break
                if first:
                    first = False
                    if not self.start and chunk.startswith(BOM):
                        chunk = chunk[len(BOM) :]
                find = chunk.find
                end = find(b"\n")
                if end < 0:
                    if skipping:
                        continue
                    if limit is not None and len(carry) + len(chunk) > limit:
                        carry, skipping = b"", True
                        self._long(line + 1)
                    else:
                        carry += chunk  # at most ``limit`` bytes: the joins stay few
                    continue
                line += 1
                if skipping:
                    skipping = False
                elif carry:
                    if limit is not None and len(carry) + end > limit:
                        self._long(line)
                    else:
                        self.saw_data = True
                        yield line, carry + chunk[:end]
                elif end:
                    self.saw_data = True
                    yield line, chunk[:end]
                carry = b""
                view = memoryview(chunk)
                pos = end + 1
                while True:
                    end = find(b"\n", pos)
                    if end < 0:
                        break
                    line += 1
                    if end > pos:
                        self.saw_data = True
                        yield line, view[pos:end]
                    pos = end + 1
                carry = chunk[pos:]
                if progress is not None:
                    progress.at(raw.tell())
            self.newlines = line
            if carry and not skipping:
                self.saw_data = True
                yield line + 1, carry
        finally:
            stream.close()
            raw.close()


class _Range:
    """Reads of an open file that stop at byte ``end`` (``None``: its end)."""

    def __init__(self, raw: BinaryIO, end: int | None) -> None:
        self.raw, self.end = raw, end

    def read(self, n: int) -> bytes:
        if self.end is not None:
            n = min(n, self.end - self.raw.tell())
            if n <= 0:
                return b""
        return self.raw.read(n)

    def close(self) -> None:
        self.raw.close()


def line_ranges(path: str | os.PathLike, size: int, target: int, max_scan: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` byte ranges of about ``target`` bytes that cover a plain file of ``size`` bytes, each
    ending just after a newline (the last at the end of the file), so no line is cut. With ``max_scan``, a cut
    with no newline within that many bytes (a line past the record limit) is not searched further: the rest of
    the file is the last range."""
    ranges, start = [], 0
    with open(path, "rb") as f:
        while start + target < size:
            pos = start + target
            f.seek(pos)
            cut = -1
            scanned = 0
            while cut < 0 and (max_scan is None or scanned < max_scan):
                buf = f.read(1 << 16)
                if not buf:
                    break
                nl = buf.find(b"\n")
                if nl >= 0:
                    cut = pos + nl + 1
                pos += len(buf)
                scanned += len(buf)
            if cut < 0 or cut >= size:
                break
            ranges.append((start, cut))
            start = cut
    ranges.append((start, size))
    return ranges


def is_compressed(path: str | os.PathLike) -> bool:
    """Whether :func:`open_binary` would decompress ``path``."""
    with open(path, "rb") as f:
        return _codec(f.read(6)) is not None


# byte classes for the integer-block check: 0 anything else, 1 digit, 2 blank / tab / CR, 3 newline, 4 comma
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[ord("0") : ord("9") + 1] = 1
_CLASS[[ord(" "), ord("\t"), ord("\r")]] = 2
_CLASS[ord("\n")] = 3
_CLASS[ord(",")] = 4


def _check_block(a: np.ndarray, ncols: int) -> np.ndarray | None:
    """Index (within the block) of each data line if every non-blank line of the byte array ``a`` holds exactly
    ``ncols`` unsigned integer tokens separated by blanks or single commas; ``None`` if any line needs a closer
    look. Only whole-array passes: no per-line Python, no searching.
    """
    if not len(a):
        return np.zeros(0, dtype=np.int64)
    cls = _CLASS[a]
    if not cls.all():
        return None  # a byte that is no digit, blank, comma or newline
    digit = cls == 1
    starts = np.empty(len(a), dtype=np.uint8)
    starts[0] = digit[0]
    np.greater(digit[1:], digit[:-1], out=starts[1:])  # a digit after a non-digit starts a token
    line_start = np.flatnonzero(cls == 3) + 1
    line_start = np.concatenate(([0], line_start[line_start < len(a)]))
    per_line = np.add.reduceat(starts, line_start, dtype=np.int64)  # tokens on each line (a line holds its "\n")
    if np.any((per_line != 0) & (per_line != ncols)):
        return None
    if (cls == 4).any():
        if ncols == 1:
            return None
        # each comma needs a digit as its nearest non-blank neighbour on both sides: between two tokens of one
        # line, never two in a row, never first or last on a line
        solid = np.flatnonzero(cls != 2)
        k = np.flatnonzero(cls[solid] == 4)
        if k[0] == 0 or k[-1] == len(solid) - 1:
            return None
        if not ((cls[solid[k - 1]] == 1).all() and (cls[solid[k + 1]] == 1).all()):
            return None
    return np.flatnonzero(per_line)


def _int_block_kernel(buf, ncols, out, out_line):
    """One pass over the bytes of a block: the same rules as :func:`_check_block` + ``np.fromstring``.

    Returns the number of rows written to ``out`` (with each row's line index in ``out_line``), or -1 when any
    line is not plainly ``ncols`` unsigned integers (the caller then reads the block line by line).
    """
    n = len(buf)
    rows = 0
    line = 0
    ntok = 0
    in_tok = False
    comma = False  # a comma seen since the last token, still waiting for the next one
    val = 0
    limit = (2**63 - 1) // 10
    for i in range(n + 1):
        c = buf[i] if i < n else 10
        if 48 <= c <= 57:
            if not in_tok:
                if ntok >= ncols:
                    return -1
                in_tok = True
                comma = False
                val = 0
            d = c - 48
            if val > limit or (val == limit and d >= 7):
                return -1  # at or past int64's maximum (NumPy's path cannot tell that one from overflow)
            val = val * 10 + d
            continue
        if in_tok:
            out[rows, ntok] = val
            ntok += 1
            in_tok = False
        if c == 32 or c == 9 or c == 13:
            continue
        if c == 44:
            if comma or ntok == 0 or ntok >= ncols:
                return -1
            comma = True
            continue
        if c != 10:
            return -1
        if comma or (ntok != 0 and ntok != ncols):
            return -1
        if ntok:
            out_line[rows] = line
            rows += 1
        ntok = 0
        if i < n:
            line += 1
    return rows


_KERNEL = None


def _kernel():
    """The compiled kernel when numba is present (compiled on first use, cached on disk), else ``False``."""
    global _KERNEL
    if _KERNEL is None:
        from .._jit import HAVE_NUMBA, njit

        _KERNEL = njit(_int_block_kernel) if HAVE_NUMBA else False
    return _KERNEL


def parse_int_block(block: bytes, ncols: int, *, with_lines: bool = False, use_numba: bool | None = None):
    """Parse a block of lines of ``ncols`` non-negative integers (blank / comma separated) into an
    int64 ``(rows, ncols)`` array; ``None`` when any line is not plainly that (comments, signs, letters,
    wrong column count, values past int64), so the caller re-reads the block line by line for exact errors.
    ``with_lines`` also returns each row's line index within the block (blank lines are allowed and skipped).

    With numba this is one compiled pass over the bytes (several hundred MB/s); without, a handful of NumPy
    whole-array passes (:func:`_check_block`) and ``np.fromstring``. Both accept exactly the same blocks.
    """
    a = np.frombuffer(block, dtype=np.uint8)
    kernel = _kernel() if use_numba is not False else False
    if kernel:
        cap = block.count(b"\n") + 1
        out = np.empty((cap, ncols), dtype=np.int64)
        out_line = np.empty(cap, dtype=np.int64)
        rows = kernel(a, ncols, out, out_line)
        if rows < 0:
            return None
        values, line_idx = out[:rows], out_line[:rows]
        return (values, line_idx) if with_lines else values
    line_idx = _check_block(a, ncols)
    if line_idx is None:
        return None
    rows = len(line_idx)
    if rows == 0:
        empty = np.zeros((0, ncols), dtype=np.int64)
        return (empty, line_idx) if with_lines else empty
    text = block.replace(b",", b" ") if ncols > 1 else block
    try:
        values = np.fromstring(text, dtype=np.int64, sep=" ")
    except ValueError:
        return None
    if len(values) != rows * ncols or (values == _INT64_MAX).any():
        return None  # int64 saturates on overflow: let the careful path name the value
    values = values.reshape(rows, ncols)
    return (values, line_idx) if with_lines else values
