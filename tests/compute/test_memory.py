"""compute.memory: the soft ceiling checked at safe points, the hard backstop (RLIMIT_DATA) that turns one huge
allocation (NumPy's, Python's, numba's, in a parallel loop too) into a MemoryError the process survives, and the
limit restored afterwards. The hard limit is tried in a child process, so a mistake cannot starve the test run."""

from __future__ import annotations

import mmap
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from compute.memory import MB, Ceiling, MemoryCeilingExceeded, OverMemory, check_active, describe_bytes, rss_bytes

ROOT = Path(__file__).resolve().parents[2]
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_DATA and /proc are Linux's")


def _fresh_pages(nbytes: int) -> np.ndarray:
    """``nbytes`` of new, touched memory. A plain ``np.ones`` of 16 MB may come from heap memory that earlier tests
    of the same process freed but the allocator kept resident (glibc raises its mmap threshold after a large free),
    and then the resident size does not grow at all; an anonymous mapping always adds its pages."""
    a = np.frombuffer(mmap.mmap(-1, nbytes), dtype=np.float64)
    a.fill(1.0)
    return a


def test_the_soft_ceiling_raises_at_a_safe_point_once_the_memory_grew_above_it():
    with Ceiling(64 * MB, hard=False) as c:
        c.check()  # nothing grown yet
        held = [_fresh_pages(16 * MB) for _ in range(2)]  # 32 MB, touched
        c.check()
        held += [_fresh_pages(16 * MB) for _ in range(4)]  # 96 MB in all
        with pytest.raises(MemoryCeilingExceeded, match=r"its memory reached \d+ MB, above its ceiling of 64 MB") as e:
            check_active()  # the same check, for code without a stop callback
        assert e.value.used > 64 * MB and e.value.limit == 64 * MB
        assert isinstance(e.value, OverMemory) and isinstance(e.value, MemoryError)
        assert c.used() >= e.value.used - 8 * MB
    del held
    check_active()  # outside any ceiling: nothing to check


@linux
def test_the_ceiling_does_not_count_the_pages_of_a_mapped_file_which_the_machine_shares(tmp_path):
    """A GPU worker reads the whole of a follower graph's file to copy it to the device: the file's pages are the
    machine's page cache, not the batch's memory. A bigger4-sized graph's 1.4 GB of them stopped a GPU batch at a
    2 GB ceiling before."""
    path = tmp_path / "graph.bin"
    with open(path, "wb") as fh:
        for _ in range(6):
            fh.write(np.arange(2 * MB, dtype=np.int64).tobytes())  # 96 MB of data, not sparse
    with Ceiling(32 * MB, hard=False) as c:
        mapped = np.memmap(path, dtype=np.int64, mode="r")
        assert int(mapped[:: 4096 // 8].sum()) > 0  # every page read in
        c.check()  # 96 MB resident over its start, none of it the process's own
        held = _fresh_pages(48 * MB)  # but its own memory still counts
        with pytest.raises(MemoryCeilingExceeded):
            c.check()
    del mapped, held


@linux
def test_a_ceiling_for_a_cuda_process_counts_its_anonymous_pages_not_its_shared_ones():
    """The CUDA driver maps shared memory as a process copies to the device (about twice what it copies): on a GPU
    worker the ceiling counts the anonymous pages alone (``shared=False``)."""
    with Ceiling(32 * MB, hard=False, shared=False) as c:
        shared = _fresh_pages(48 * MB)  # an anonymous shared mapping: RssShmem
        c.check()
        own = np.frombuffer(mmap.mmap(-1, 48 * MB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS), dtype=np.float64)
        own.fill(1.0)  # a private one: RssAnon, as NumPy's and Python's memory
        with pytest.raises(MemoryCeilingExceeded):
            c.check()
    with Ceiling(32 * MB, hard=False) as c:  # elsewhere the shared pages are the process's too
        more = _fresh_pages(48 * MB)
        with pytest.raises(MemoryCeilingExceeded):
            c.check()
    del shared, own, more


def test_it_measures_resident_memory_and_describes_bytes():
    before = rss_bytes()
    a = np.ones(64 * MB // 8)
    assert rss_bytes() - before >= 48 * MB
    del a
    assert describe_bytes(2_254_857_830) == "2.1 GB" and describe_bytes(340 * MB) == "340 MB"
    with pytest.raises(ValueError, match="limit must be a positive number of bytes"):
        Ceiling(0)


CHILD = textwrap.dedent(
    """
    import resource, numpy as np, numba
    from compute.memory import MB, Ceiling

    @numba.njit
    def alloc(n):
        return np.ones(n).sum()

    @numba.njit(parallel=True)
    def palloc(n):
        s = 0.0
        for i in numba.prange(4):
            s += np.ones(n).sum()
        return s

    alloc(10), palloc(10)
    before = resource.getrlimit(resource.RLIMIT_DATA)
    cases = {
        "numpy": lambda: np.ones(1 << 28),
        "numba": lambda: alloc(1 << 28),
        "numba-parallel": lambda: palloc(1 << 27),
        "python": lambda: bytearray(1 << 31),
    }
    for name, f in cases.items():
        with Ceiling(128 * MB) as c:
            assert c.hard_set
            try:
                f()
                print(name, "allocated")
            except Exception as exc:
                e, kinds = exc, []
                while e is not None:
                    kinds.append(type(e).__name__)
                    e = e.__cause__
                print(name, "refused", "/".join(kinds))
        assert resource.getrlimit(resource.RLIMIT_DATA) == before
    print("alive", alloc(1000), np.ones(1 << 24).sum())
    """
)


@linux
def test_the_hard_limit_turns_one_huge_allocation_into_a_memory_error_the_process_survives():
    out = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert "numpy refused MemoryError" in lines
    assert "numba refused MemoryError" in lines
    # numba's parallel loops hand the MemoryError over as the cause of a SystemError (the runner looks for it)
    assert "numba-parallel refused SystemError/MemoryError" in lines
    assert "python refused MemoryError" in lines
    assert lines[-1] == "alive 1000.0 16777216.0"


@linux
def test_the_hard_limit_is_restored_and_left_alone_when_not_asked_for():
    import resource

    before = resource.getrlimit(resource.RLIMIT_DATA)
    with Ceiling(512 * MB, hard=False) as c:
        assert not c.hard_set and resource.getrlimit(resource.RLIMIT_DATA) == before
    with pytest.raises(RuntimeError), Ceiling(512 * MB) as c:
        assert c.hard_set and resource.getrlimit(resource.RLIMIT_DATA)[0] != before[0]
        raise RuntimeError("the block failed")
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
