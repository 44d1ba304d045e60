"""kill -9 of an import worker while its reader processes parse a large v1.1 file (``compute/formats/_parallel.py``):
the readers die with it, no database session is left holding the import's row lock, and beat's stalled-work sweep
queues the import again for another worker, which imports the whole file once.

The readers are forked inside the import's transaction. Before they let go of what they inherited, they kept the
worker's database socket open after it died, blocked on their pipe: the session, its transaction and its row lock
lived on, and the sweep took the locked row for a live worker, for ever. The second test keeps a copy of the socket
in a process that does not die with the worker (what any careless fork leaves): the sweep must then end that
orphaned session itself, since its heartbeat is stale, and go on as for any stalled import.

Files of 256 KiB and more are read in parallel here (``SPREADWATCH_READ_PARALLEL_BYTES``, 32 MiB by default), in
ranges of 64 KiB, so a 2 MB file has the readers blocked on their pipes at the pause."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest
from django.db import connection

from monitor import services
from monitor.models import Collection, Retweet

from .harness import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

STALL = {"SPREADWATCH_STALL_SECONDS": "4"}
PARALLEL = {
    "SPREADWATCH_READ_WORKERS": "2",
    "SPREADWATCH_READ_PARALLEL_BYTES": str(256 << 10),
    "SPREADWATCH_READ_RANGE_BYTES": str(64 << 10),
    # two ranges ahead each: the readers wait on their bound, alive, while the import is paused (with the default
    # GiB ahead they would read this whole file and end before the kill)
    "SPREADWATCH_READ_AHEAD_BYTES": str(4 * (64 << 10)),
}
GONE_WITHIN_S = 10
RECOVERED_WITHIN_S = float(os.environ.get("FAULTS_WAIT_S", "60"))


@pytest.fixture(scope="module")
def large_v1(tmp_path_factory) -> Path:
    """A generated v1.1 JSONL file of about 2 MB (5,000 retweets and their originals), no bad line."""
    from compute.generators import generate

    folder = tmp_path_factory.mktemp("large-v1")
    generate("twitter", folder, retweets=5000, fmt="v1", seed=3)
    path = folder / "tweets.jsonl"
    assert path.stat().st_size > 32 * int(PARALLEL["SPREADWATCH_READ_RANGE_BYTES"])
    return path


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for its parent to reap it holds nothing any more)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _import_lockers() -> set[int]:
    """The database sessions, other than this test's, holding a lock on the collections table (an import's row
    lock comes with one for its whole transaction)."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT DISTINCT pid FROM pg_locks WHERE relation = 'monitor_collection'::regclass AND granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND pid <> pg_backend_pid()"
        )
        return {r[0] for r in cur.fetchall()}


def _session_alive(pid: int) -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid])
        return cur.fetchone() is not None


def _kill_left(pids: list[int]) -> None:
    """Whatever this test's worker left running (the readers on the code before the fix, the holder)."""
    for pid in pids:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _killed_during_a_parallel_read(faults, path: Path, ws, **env: str):
    """Worker A paused in the middle of a parallel read, readers alive, then killed with -9. Returns the
    collection, the readers' pids, the import's database session (its pid) and when A was killed."""
    a = faults.worker("a", queues="ingest", FAULTS_PAUSE_PARALLEL_READ="1", **STALL, **PARALLEL, **env).wait_ready()
    c = services.collection_create(workspace=ws, files=[path], compute=False)  # sent at once
    wait_for(lambda: faults.marker("parallel-read"), "the import to pause in a parallel read", logs=[a])
    readers = [int(p) for p in (faults.dir / "parallel-readers").read_text().split()]
    assert len(readers) == 2 and all(_alive(p) for p in readers)
    [session] = wait_for(_import_lockers, "the import's row lock", logs=[a])
    a.kill9()
    return c, readers, session, time.monotonic()


def _assert_imported_once_by_another_worker(c: Collection, path: Path, session: int) -> None:
    c.refresh_from_db()
    assert c.status == Collection.Status.DONE and c.attempts == 2, c.error
    lines = sum(1 for line in path.open() if line.strip())
    assert c.counts["records_read"] == lines and c.report["read"]["n_bad"] == 0  # the whole file, read once
    assert Retweet.objects.filter(tweet__workspace=c.workspace).count() == c.counts["retweets_stored"] > 0
    assert not _session_alive(session)  # the killed worker's session ended, its transaction rolled back
    assert not _import_lockers()


def test_an_import_worker_killed_during_a_parallel_read_takes_its_readers_and_its_session_with_it(
    ws_a, large_v1, faults
):
    c, readers, session, killed_at = _killed_during_a_parallel_read(faults, large_v1, ws_a)
    try:
        wait_for(lambda: not any(_alive(p) for p in readers), "the readers to die with their worker", GONE_WITHIN_S)
        wait_for(lambda: not _import_lockers(), "the import's row lock to be released", GONE_WITHIN_S)
        b = faults.worker("b", queues="ingest,default", **STALL, **PARALLEL).wait_ready()
        beat = faults.beat(**STALL).wait_ready()
        wait_for(
            lambda: Collection.objects.get(pk=c.pk).status not in ("queued", "ingesting"),
            "the import to end",
            RECOVERED_WITHIN_S,
            logs=[b, beat],
        )
        assert time.monotonic() - killed_at < RECOVERED_WITHIN_S
        assert "monitor.tasks.requeue_stalled" in b.text()  # the sweep queued it again
        _assert_imported_once_by_another_worker(c, large_v1, session)
    finally:
        _kill_left(readers)


def test_the_sweep_ends_the_session_of_a_dead_import_worker_that_another_process_keeps_open(ws_a, large_v1, faults):
    c, readers, session, killed_at = _killed_during_a_parallel_read(faults, large_v1, ws_a, FAULTS_HOLD_CONNECTION="1")
    holder = int((faults.dir / "holder").read_text())
    try:
        time.sleep(1)
        assert _alive(holder) and _import_lockers() == {session}  # the socket is held: the session lives on
        b = faults.worker("b", queues="ingest,default", **STALL, **PARALLEL).wait_ready()
        beat = faults.beat(**STALL).wait_ready()
        wait_for(
            lambda: Collection.objects.get(pk=c.pk).status not in ("queued", "ingesting"),
            "the import to end",
            RECOVERED_WITHIN_S,
            logs=[b, beat],
        )
        assert time.monotonic() - killed_at < RECOVERED_WITHIN_S
        assert f"ended its database session (pid {session})" in b.text()
        assert _alive(holder)  # the sweep ended the session, not the process holding its socket
        _assert_imported_once_by_another_worker(c, large_v1, session)
    finally:
        _kill_left([*readers, holder])
