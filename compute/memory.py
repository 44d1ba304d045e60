"""How much memory this process holds, and a ceiling on how much a piece of work may add to it.

A worker process runs one batch after another; a batch that takes more memory than its machine has gets the whole
process killed by the kernel's OOM killer, and with it every batch it would have run after. :class:`Ceiling` holds
a block of work to ``limit`` bytes over what the process held when the block began, two ways:

* **soft**: :meth:`Ceiling.check`, called by the work at its safe points (between chunks of sampling, between
  groups of cascades: where an analysis already asks whether it was cancelled), compares the growth of the
  process's own resident memory (:func:`private_bytes`: not the pages of files it maps, such as a follower graph's
  file, which are the machine's page cache, shared by every process that maps it) with the limit and raises
  :class:`MemoryCeilingExceeded`;
* **hard** (Linux): while the block runs, the soft limit of ``RLIMIT_DATA`` is set to the process's data size at
  the start plus ``limit`` plus a margin. Since Linux 4.7 that limit covers private anonymous mappings too, so an
  allocation that would cross it (NumPy's, Python's, numba's) fails with :class:`MemoryError` in the process
  instead of the kernel killing it. Restored when the block ends. Not for a process that uses CUDA: the driver's
  host mappings count there too, and a refused one is no clean error (the caller leaves ``hard`` off).

Both raise a :class:`MemoryError` (:class:`OverMemory` for the ones that say why), which unwinds the work and
frees what it held: the process lives on. :func:`release` hands freed memory back to the system afterwards.

Linux reads ``/proc/self``; elsewhere the soft check uses the peak resident size (``getrusage``) and there is no
hard limit. Nothing here imports Django.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import gc
import os
import sys

__all__ = [
    "MB",
    "Ceiling",
    "MemoryCeilingExceeded",
    "OverMemory",
    "check_active",
    "data_bytes",
    "describe_bytes",
    "peak_rss_bytes",
    "private_bytes",
    "release",
    "reset_peak",
    "rss_bytes",
]

MB = 1024**2
#: the hard limit sits this far above the soft one (at least): thread stacks, malloc's arenas and address space
#: reserved but never touched count in the data size and not in the resident size
HARD_MARGIN = 256 * MB


class OverMemory(MemoryError):
    """Work that stopped because it would not fit its memory; ``str()`` says why in a sentence for the reader."""


class MemoryCeilingExceeded(OverMemory):
    """The work's memory grew ``used`` bytes over its start, above its ``limit``."""

    def __init__(self, used: int, limit: int):
        self.used, self.limit = int(used), int(limit)
        super().__init__(
            f"its memory reached {describe_bytes(self.used)}, above its ceiling of {self.limit // MB:,} MB"
        )


def describe_bytes(n: int) -> str:
    """``2.1 GB``, ``340 MB``: for messages."""
    if n >= 1024**3:
        return f"{n / 1024**3:.1f} GB"
    return f"{max(n, 0) / MB:,.0f} MB"


def _page() -> int:
    return os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes() -> int:
    """The process's resident memory now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _page()
    except (OSError, IndexError, ValueError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def private_bytes(*, shared: bool = True) -> int:
    """The process's own resident memory (Linux: ``RssAnon + RssShmem``, ``RssAnon`` alone with ``shared=False``):
    what it holds that no one else does, without the resident pages of the files it maps (``RssFile``). Those are
    the machine's page cache: shared by every process mapping the same file (a follower graph's file is mapped by
    each worker of a machine, and a GPU worker reads all of it to copy it to the device) and reclaimed by the kernel
    when memory runs short, so they are no batch's to answer for. ``shared=False`` is for a CUDA process, whose
    driver maps shared memory as it copies to the device (a 1.2 GB graph uploaded from its file: ``RssShmem`` +2.2
    GB, ``RssAnon`` +2 MB on an H100 machine: ``benchmarks/gpu_upload_memory.py``). Where ``/proc/self/status``
    cannot be read, :func:`rss_bytes`."""
    got = _status_bytes("RssAnon", "RssShmem")  # one read of the file: a batch asks at every safe point
    if "RssAnon" not in got:
        return rss_bytes()
    return got["RssAnon"] + (got.get("RssShmem", 0) if shared else 0)


def _status_bytes(*fields: str) -> dict[str, int]:
    """The ``fields`` of ``/proc/self/status`` found there, in bytes, from one read of it."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                name, _, rest = line.partition(":")
                if name in fields:
                    out[name] = int(rest.split()[0]) * 1024
                    if len(out) == len(fields):
                        break
    except (OSError, ValueError, IndexError):
        pass
    return out


def _status_kb(field: str) -> int | None:
    return _status_bytes(field).get(field)


def data_bytes() -> int | None:
    """The process's data size as ``RLIMIT_DATA`` counts it (``VmData``: heap and private writable mappings);
    ``None`` where it cannot be read."""
    return _status_kb("VmData")


def peak_rss_bytes() -> int | None:
    """The process's peak resident size since it began, or since :func:`reset_peak` (``VmHWM``; Linux)."""
    return _status_kb("VmHWM")


def reset_peak() -> bool:
    """Start the peak resident size (``VmHWM``) again from now (Linux 4.0+); False where it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def trim() -> None:
    """Hand free heap pages back to the system (glibc's ``malloc_trim``; well under a millisecond)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def release() -> None:
    """Collect garbage and hand free heap pages back to the system, so a process that freed a large batch's memory
    shows it freed. The collection walks every object of the process (a quarter of a second for 3M objects): for
    after a batch that failed, not before each batch."""
    gc.collect()
    trim()


_active: contextvars.ContextVar[Ceiling | None] = contextvars.ContextVar("compute_memory_ceiling", default=None)


def check_active() -> None:
    """:meth:`Ceiling.check` of the ceiling the calling work runs under, if any (a safe point for code that has no
    ``stop`` callback of its own)."""
    c = _active.get()
    if c is not None:
        c.check()


class Ceiling:
    """Hold the block it guards to ``limit`` bytes over the process's memory at its start (see the module).

    ``with Ceiling(limit) as c: ... c.check() ...``; ``hard=False`` leaves ``RLIMIT_DATA`` alone (a CUDA process,
    or where the operator turned it off), ``shared=False`` counts the process's anonymous pages alone (a CUDA process:
    :func:`private_bytes`). :attr:`hard_set` says whether the hard limit is in force now,
    :attr:`hard_used` whether it was at any time (after the block: for the message of a refused allocation)."""

    def __init__(self, limit: int, *, hard: bool = True, shared: bool = True):
        if int(limit) <= 0:
            raise ValueError(f"limit must be a positive number of bytes, not {limit!r}")
        self.limit = int(limit)
        self.hard = hard
        self.shared = shared  # whether shared-memory pages count (:func:`private_bytes`); not in a CUDA process
        self.hard_set = False
        self.hard_used = False  # stays True after the block: whether the hard limit was in force in it
        self.baseline = 0
        self._files = 0
        self._peak_reset = False
        self._saved: tuple[int, int] | None = None
        self._token = None

    def __enter__(self) -> Ceiling:
        # what the last batch freed and the allocator kept is not this one's; no garbage collection here: it walks
        # every object of the process at every batch (seconds in a long-lived process), and memory the last batch
        # left to the collector is reused before the process grows, so it can only make this batch look smaller
        trim()
        self.baseline = private_bytes(shared=self.shared)
        self._files = rss_bytes() - self.baseline  # the mapped files' resident pages, not counted
        self._peak_reset = reset_peak()
        if self.hard:
            self._set_hard()
        self._token = _active.set(self)
        return self

    def __exit__(self, *exc) -> None:
        if self._token is not None:
            _active.reset(self._token)
            self._token = None
        self._restore()

    def _set_hard(self) -> None:
        data = data_bytes()
        if data is None or not sys.platform.startswith("linux"):
            return
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        want = data + self.limit + max(HARD_MARGIN, self.limit // 2)
        if soft != resource.RLIM_INFINITY and soft <= want:
            return  # a lower limit was set by the operator: it stays
        if hard != resource.RLIM_INFINITY:
            want = min(want, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (want, hard))
        self._saved = (soft, hard)
        self.hard_set = self.hard_used = True

    def _restore(self) -> None:
        if self._saved is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_DATA, self._saved)
            self._saved = None
            self.hard_set = False

    def used(self) -> int:
        """Bytes of its own (:func:`private_bytes`) the block added over its start: the peak where the system keeps
        one per block (the peak resident size less the mapped files' pages as they were at the start: an upper
        bound), else now."""
        now = private_bytes(shared=self.shared)
        peak = peak_rss_bytes() if self._peak_reset else None
        return max(now, (peak or 0) - self._files) - self.baseline

    def check(self) -> None:
        """Raise :class:`MemoryCeilingExceeded` when the block's own resident memory (:func:`private_bytes`) grew
        above the limit."""
        grown = private_bytes(shared=self.shared) - self.baseline
        if grown > self.limit:
            raise MemoryCeilingExceeded(grown, self.limit)
