"""Upload safety: unpacking zip / tar archives into the inputs they hold, refusing what would harm the server.

An archive is judged from its directory before anything is extracted (:func:`_check_archive`: total size,
member count, compression ratio) and no member may land outside the folder it is unpacked into
(:func:`_safe_member`), nor a tar member link out of it or be a device or pipe (:func:`_safe_tar_member`).
Only the first tar block is read to tell a tar from a compressed text file, so a decompression bomb is never
opened just to find out what it is. The refusals raise :class:`UploadError` in strict and skip-bad mode alike;
an archive that merely cannot be read is skipped in skip-bad mode.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

__all__ = [
    "ARCHIVE_MAX_BYTES",
    "ARCHIVE_MAX_MEMBERS",
    "ARCHIVE_MAX_RATIO",
    "UploadError",
    "expand_uploads",
    "too_many_files_message",
]


def too_many_files_message() -> str:
    """What an upload of more files than ``DATA_UPLOAD_MAX_NUMBER_FILES`` is told (the web form and the API)."""
    n = settings.DATA_UPLOAD_MAX_NUMBER_FILES
    return (
        f"An upload may hold at most {n} files. Put the files in one zip or tar archive and upload that, "
        f"or upload them in groups of {n}."
    )


class UploadError(ValueError):
    """A problem with an upload as a whole (an unreadable archive, an unknown format), named by file."""


#: One upload entry: ``(path on disk, name as uploaded, format name or "auto")``.
Upload = tuple[Path, str, str]


def expand_uploads(
    paths: list[Upload], workdir: Path, unreadable: Callable[[str, str], None] | None = None
) -> list[Upload]:
    """Unpack zip / tar uploads into ``workdir``. Each entry is ``(path, shown name, format)``; an archive
    becomes its Twitter15/16 folder, TUDataset folder or member files. Members may not escape ``workdir``, and
    an archive is checked against the limits of :func:`_check_archive` (size, member count, compression ratio)
    before anything is extracted. An archive that cannot be unpacked or holds no input raises
    :class:`UploadError`, or, given ``unreadable(shown, message)``, is passed to it and left out (skip-bad);
    the safety refusals always raise."""
    out: list[Upload] = []
    for path, shown, fmt in paths:
        kind = _archive_kind(path)
        if kind is None or fmt not in ("auto", ""):
            out.append((path, shown, fmt or "auto"))
            continue
        dest = workdir / f"x{len(out)}"
        dest.mkdir(parents=True)
        try:
            _extract(path, shown, kind, dest)
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


def _extract(path: Path, shown: str, kind: str, dest: Path) -> None:
    """Check the archive's directory against the limits and every member's path, then extract it all."""
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
                _safe_tar_member(dest, m, shown)
            tf.extractall(dest, filter="data")


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


_SPECIAL = {tarfile.FIFOTYPE: "a named pipe", tarfile.CHRTYPE: "a device", tarfile.BLKTYPE: "a device"}


def _safe_tar_member(dest: Path, m: tarfile.TarInfo, shown: str) -> None:
    """A tar member is a file, a folder, or a link to another member; a link out of the archive (a symlink or
    hard link to ``/etc/passwd`` or ``../..``) and a device or pipe are refused, as a member outside it is."""
    if m.issym() or m.islnk():
        # a symlink's target is relative to its own folder, a hard link's to the archive's root
        base = (dest / m.name).parent if m.issym() else dest
        target = (base / m.linkname).resolve()
        if (
            Path(m.linkname).is_absolute()
            or m.linkname.startswith(("/", "\\"))
            or not target.is_relative_to(dest.resolve())
        ):
            raise UploadError(f"{shown}: archive member {m.name!r} links outside the archive (to {m.linkname!r})")
    elif m.type in _SPECIAL:
        raise UploadError(f"{shown}: archive member {m.name!r} is {_SPECIAL[m.type]}, not a file")


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
