"""A Celery worker with fault hooks: ``python -m tests.faults._worker worker -Q cpu ...`` (celery's own arguments).

Test code only; the product has no hooks. Before handing over to ``celery``, this patches functions of the worker
process so a test can stop a batch at a known point and do something to it from outside (kill the worker,
restart Redis or PostgreSQL, cancel the run), or make a CPU-only machine look like a GPU that runs out of memory.
Every hook is off unless its variable is set. Markers are files in ``$FAULTS_DIR`` holding the pid of the process
that wrote them (with a prefork pool, the pool process running the task); a paused worker waits for the file
``release`` or ``release-<marker>`` there (at most ``FAULTS_PAUSE_MAX_S``, 300 s, so a failed test leaves no
worker hanging), and never pauses at the same marker twice.

* ``FAULTS_PAUSE_IN_STORE=1``: the first batch to reach its store, in any process of this worker, pauses inside
  the store transaction, after its rows are written and before the commit (marker ``store-<batch pk>``).
* ``FAULTS_PAUSE_IN_COMPUTE=k``: the k-th batch of a solo worker pauses before it computes (marker
  ``compute-<batch pk>``).
* ``FAULTS_BARRIER=n``: this worker's first batch waits until n workers have reached the barrier (markers
  ``barrier-<pid>``), so n workers are provably computing at once.
* ``FAULTS_PAUSE_INGEST=1,2``: the imports this worker runs first and second pause inside their transaction,
  after every row is written (markers ``ingest-1``, ``ingest-2``).
* ``FAULTS_PAUSE_PARALLEL_READ=1``: the first import that reads a file on several processes
  (``compute/formats/_parallel.py``) pauses inside its transaction once the first range came back, its reader
  processes alive (marker ``parallel-read``; the file ``parallel-readers`` holds their pids, one a line).
* ``FAULTS_HOLD_CONNECTION=1``: at that pause, the worker also starts a process that holds a copy of the import's
  database socket and outlives the worker (its pid in the file ``holder``): what any process that inherited the
  connection and does not die with its parent leaves behind.
* ``FAULTS_PAUSE_EACH_DELIVERY=1``: every delivery of a batch pauses before it computes, at the marker
  ``compute-<batch pk>-<attempts>`` (its claims so far, this one included), so a test can kill it each time.
* ``FAULTS_MARK_BATCHES=1``: a batch's task, however it ends, leaves the marker ``ran-<batch pk>`` holding the pid of
  the process that ran it.
* ``FAULTS_PAUSE_ANALYSIS=1``: the first batch of a network analysis (betweenness) pauses before it computes
  (marker ``analysis-<batch pk>``): a long analysis that holds its worker for as long as the test wants.
* ``FAULTS_FAKE_GPU_NODES=n``: the worker resolves every backend to ``gpu`` and computes on the CPU reference,
  but any forward or backward phase over more than n participants raises CUDA's out-of-memory error first.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

DIR = Path(os.environ.get("FAULTS_DIR", "."))
PAUSE_MAX_S = float(os.environ.get("FAULTS_PAUSE_MAX_S", "300"))


def _mark(name: str) -> None:
    (DIR / name).write_text(str(os.getpid()))


def _wait_for(cond, what: str) -> None:
    deadline = time.monotonic() + PAUSE_MAX_S
    while not cond():
        if time.monotonic() > deadline:
            raise RuntimeError(f"fault hook: gave up waiting for {what}")
        time.sleep(0.05)


def _claim(name: str) -> bool:
    """True for the first caller among all the processes of this worker (a prefork pool has several)."""
    try:
        os.close(os.open(DIR / f"claim-{name}", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _pause(marker: str) -> None:
    if (DIR / marker).exists():  # once: not again when the same batch is redelivered (to a new pool process)
        return
    print(f"fault hook: paused at {marker}", flush=True)
    _mark(marker)
    _wait_for(lambda: (DIR / "release").exists() or (DIR / f"release-{marker}").exists(), "a release file")
    print(f"fault hook: released at {marker}", flush=True)


def install() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
    django.setup()
    from monitor.algorithms import influence
    from monitor.services import collections, runs

    counts = {"compute": 0, "ingest": 0}
    pause_compute = int(os.environ.get("FAULTS_PAUSE_IN_COMPUTE", "0"))
    pause_store = os.environ.get("FAULTS_PAUSE_IN_STORE") == "1"
    barrier = int(os.environ.get("FAULTS_BARRIER", "0"))
    real_compute_batch, real_store = influence._compute_batch, influence._store

    def compute_batch(batch, run, backend, stop):
        counts["compute"] += 1
        if barrier and counts["compute"] == 1:
            _mark(f"barrier-{os.getpid()}")
            _wait_for(lambda: len(list(DIR.glob("barrier-*"))) >= barrier, f"{barrier} workers at the barrier")
        if counts["compute"] == pause_compute:
            _pause(f"compute-{batch.pk}")
        return real_compute_batch(batch, run, backend, stop)

    def store(run, batch, res):
        real_store(run, batch, res)
        if pause_store and _claim("store"):
            _pause(f"store-{batch.pk}")

    influence._compute_batch, influence._store = compute_batch, store

    if os.environ.get("FAULTS_PAUSE_ANALYSIS") == "1":
        from monitor.algorithms.network import Network

        real_network = Network.compute

        def network_compute(self, *, run, batch, backend, stop):
            _pause(f"analysis-{batch.pk}")
            return real_network(self, run=run, batch=batch, backend=backend, stop=stop)

        Network.compute = network_compute

    if os.environ.get("FAULTS_PAUSE_EACH_DELIVERY") == "1":
        real_each = influence._compute_batch

        def compute_each(batch, run, backend, stop):
            batch.refresh_from_db(fields=["attempts"])
            _pause(f"compute-{batch.pk}-{batch.attempts}")
            return real_each(batch, run, backend, stop)

        influence._compute_batch = compute_each

    if os.environ.get("FAULTS_MARK_BATCHES") == "1":
        import monitor.services as services_pkg

        real_run = services_pkg.compute_batch_run

        def compute_batch_run(*args, **kwargs):
            try:
                return real_run(*args, **kwargs)
            finally:
                _mark(f"ran-{kwargs['batch_id']}")

        services_pkg.compute_batch_run = compute_batch_run

    pause_ingest = {int(k) for k in os.environ.get("FAULTS_PAUSE_INGEST", "").split(",") if k}
    if pause_ingest:
        real_load = collections.load_files

        def load_files(*args, **kwargs):
            res = real_load(*args, **kwargs)
            counts["ingest"] += 1
            if counts["ingest"] in pause_ingest:
                _pause(f"ingest-{counts['ingest']}")
            return res

        collections.load_files = load_files

    if os.environ.get("FAULTS_PAUSE_PARALLEL_READ") == "1":
        _pause_parallel_read(hold=os.environ.get("FAULTS_HOLD_CONNECTION") == "1")

    fake_gpu = int(os.environ.get("FAULTS_FAKE_GPU_NODES", "0"))
    if fake_gpu:
        real_both, real_backward, real_device = influence.batch.both_phases, influence.batch.backward, runs.device_name

        def fits(n: int, phase: str) -> None:
            if n > fake_gpu:
                _mark(f"oom-{phase}-{n}")
                raise RuntimeError(f"cudaErrorMemoryAllocation: out of memory (fake GPU of {fake_gpu} nodes, {n})")

        def both_phases(cascades, graph, *, orphans="strict", backend="auto"):
            if backend == "gpu":
                fits(cascades.n_nodes, "forward")
            return real_both(cascades, graph, orphans=orphans, backend="cpu")

        def backward(graphs, *, backend="auto"):
            if backend == "gpu":
                fits(graphs.cascades.n_nodes, "backward")
            return real_backward(graphs, backend="cpu")

        runs.resolve_backend = lambda name: "gpu"
        influence.batch.both_phases, influence.batch.backward = both_phases, backward
        runs.device_name = lambda b: f"fake GPU of {fake_gpu} nodes" if b == "gpu" else real_device(b)


def _pause_parallel_read(*, hold: bool) -> None:
    from compute.formats import _parallel

    real_iter = _parallel._Readers.__iter__

    def readers_iter(self):
        for i, r in enumerate(real_iter(self)):
            yield r
            if i == 0 and _claim("parallel-read"):  # the reading process asks for the next range: pause there
                (DIR / "parallel-readers").write_text("\n".join(str(p.pid) for p in self.procs))
                if hold:
                    _hold_connection()
                _pause("parallel-read")

    _parallel._Readers.__iter__ = readers_iter


def _hold_connection() -> None:
    """A process (its own session, so it outlives this one) holding the import's database socket, doing nothing."""
    from django.db import connection

    fd = connection.connection.fileno()
    holder = subprocess.Popen(
        ["sleep", str(int(PAUSE_MAX_S))],
        pass_fds=(fd,),
        start_new_session=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    (DIR / "holder").write_text(str(holder.pid))


if __name__ == "__main__":
    install()
    from celery.bin.celery import main

    sys.argv = ["celery", "-A", "monitor", *sys.argv[1:]]
    sys.exit(main())
