"""Real processes for the fault tests: throwaway redis-server and PostgreSQL instances the test owns (it may stop,
kill and restart them; the shared services of ``make test`` are never touched), Celery workers started through
``tests/faults/_worker.py`` (with its hooks), and the snapshot of a workspace's computed results that a faulted
run must reproduce exactly."""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# scripts/ is not a package: load with_services.py by path, for its service helpers (free ports, initdb as postgres)
_spec = importlib.util.spec_from_file_location("spreadwatch_with_services", ROOT / "scripts" / "with_services.py")
ws_script = sys.modules.setdefault("spreadwatch_with_services", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(ws_script)

# generous: other test runs share the machine's two cores (FAULTS_WAIT_S shortens the wait, e.g. to see a failure)
START_S = 90.0
DONE_S = float(os.environ.get("FAULTS_WAIT_S", "180"))


def wait_for(cond: Callable[[], object], what: str, timeout: float = DONE_S, *, logs=()) -> object:
    """Poll ``cond`` until it is truthy; fail with ``what`` and the workers' log tails after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {w.name}:\n{w.tail()}" for w in logs)
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}\n{tails}")
        time.sleep(0.1)


# --- redis-server ------------------------------------------------------------------------------------------------


def stop_process(proc: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; returns once the process is gone."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Redis:
    """A redis-server on a fixed port and folder, so a restart keeps its address (and, with ``appendonly``, its
    data: docker/compose.yml runs the broker with ``--appendonly yes``)."""

    def __init__(self, folder: Path, *, appendonly: bool = True):
        self.folder = folder
        self.port = ws_script._free_port()
        self.appendonly = appendonly
        self.proc: subprocess.Popen | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.cache_url = f"redis://127.0.0.1:{self.port}/1"

    def start(self) -> None:
        exe = shutil.which("redis-server")
        assert exe, "redis-server is not installed (apt-get install redis-server)"
        argv = [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--dir", str(self.folder)]
        argv += ["--appendonly", "yes" if self.appendonly else "no", "--daemonize", "no"]
        log = open(self.folder / "redis.log", "ab")  # noqa: SIM115 (the server owns it until it exits)
        self.proc = subprocess.Popen(
            argv, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder, start_new_session=True
        )
        log.close()
        if not ws_script._wait_for_tcp(self.port, alive=lambda: self.proc.poll() is None):
            raise AssertionError(f"redis-server did not start:\n{ws_script._tail(self.folder / 'redis.log')}")

    def stop(self) -> None:
        """SIGTERM: Redis writes its append-only file and exits, like ``docker restart``."""
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def restart(self) -> None:
        self.stop()
        self.start()

    def client(self):
        import redis

        return redis.Redis.from_url(self.url)


@contextlib.contextmanager
def redis_server(*, appendonly: bool = True):
    folder = Path(tempfile.mkdtemp(prefix="spreadwatch-faults-redis-"))
    r = Redis(folder, appendonly=appendonly)
    try:
        r.start()
        yield r
    finally:
        if r.proc and r.proc.poll() is None:
            r.proc.kill()
            r.proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


# --- PostgreSQL --------------------------------------------------------------------------------------------------


class Postgres:
    """A throwaway cluster (initdb in a temporary folder; as root the tools run as the ``postgres`` user, as
    scripts/with_services.py does), restartable on the same port."""

    def __init__(self):
        found = ws_script._find_pg_binaries()
        assert found, "initdb/pg_ctl are not installed (apt-get install postgresql)"
        self.initdb, self.pg_ctl = found
        prefix, why = ws_script._as_postgres_prefix()
        assert prefix is not None, why
        self.prefix = prefix
        self.tmp = Path(tempfile.mkdtemp(prefix="spreadwatch-faults-pg-"))
        if prefix:
            import pwd

            pw = pwd.getpwnam("postgres")
            os.chown(self.tmp, pw.pw_uid, pw.pw_gid)
        self.data, self.log = self.tmp / "data", self.tmp / "postgres.log"
        self.port = ws_script._free_port()

    def url(self, db: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{db}"

    def _tool(self, argv: list[str], timeout: float = 60) -> None:
        done = ws_script._run_tool(ws_script._wrap(self.prefix, argv), cwd=self.tmp, timeout=timeout)
        assert done.returncode == 0, f"{argv[0]} failed:\n{done.stdout}{done.stderr}{ws_script._tail(self.log)}"

    def init(self) -> None:
        self._tool([self.initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C",
                    "--no-sync"])  # fmt: skip

    def start(self) -> None:
        opts = f"-k {self.tmp} -p {self.port} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off"
        self._tool([self.pg_ctl, "start", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o", opts])

    def stop(self, mode: str = "fast") -> None:
        """``fast``: what a restart by systemd or docker does; open sessions are terminated, their transactions
        rolled back."""
        self._tool([self.pg_ctl, "stop", "-D", str(self.data), "-m", mode, "-w", "-t", "60"])

    def close(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(Exception):
                self.stop("immediate")
        shutil.rmtree(self.tmp, ignore_errors=True)


# --- Celery workers ----------------------------------------------------------------------------------------------


class Worker:
    """``celery worker`` (``--pool=solo`` like the GPU worker, or ``prefork`` like the CPU worker of
    docker/compose.yml; one process either way) through the hook wrapper; its log is a file."""

    def __init__(self, name: str, folder: Path, env: dict[str, str], queues: str = "cpu", pool: str = "solo"):
        self.name = name
        self.log = folder / f"{name}.log"
        argv = [sys.executable, "-m", "tests.faults._worker", "worker", "-Q", queues, f"--pool={pool}", "-c", "1",
                "--without-heartbeat", "--without-mingle", "--without-gossip", "-l", "info",
                "-n", f"{name}-{os.getpid()}@%h"]  # fmt: skip
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def tail(self, n: int = 4000) -> str:
        return self.text()[-n:]

    def wait_ready(self) -> Worker:
        def ready():
            assert self.proc.poll() is None, f"{self.name} exited:\n{self.tail()}"
            return "ready." in self.text()

        wait_for(ready, f"{self.name} to start", START_S, logs=[self])
        return self

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        stop_process(self.proc)

    def task_ids(self, event: str) -> list[str]:
        """Ids of the compute_batch tasks this worker logged ``event`` for ("received", "succeeded")."""
        out = []
        for line in self.text().splitlines():
            if "monitor.tasks.compute_batch[" in line and f"] {event}" in line:
                out.append(line.split("monitor.tasks.compute_batch[", 1)[1].split("]", 1)[0])
        return out


class Beat(Worker):
    """``celery beat`` (the periodic tasks of ``CELERY_BEAT_SCHEDULE``: the stalled-work sweep and the outbox among
    them), through the same wrapper, with its schedule file in the test's folder."""

    def __init__(self, name: str, folder: Path, env: dict[str, str]):
        self.name = name
        self.log = folder / f"{name}.log"
        argv = [sys.executable, "-m", "tests.faults._worker", "beat", "-s", str(folder / f"{name}-schedule"),
                "-l", "info"]  # fmt: skip
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)

    def wait_ready(self) -> Beat:
        def ready():
            assert self.proc.poll() is None, f"{self.name} exited:\n{self.tail()}"
            return "Scheduler: Sending due task" in self.text() or "beat: Starting" in self.text()

        wait_for(ready, f"{self.name} to start", START_S, logs=[self])
        return self


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


@contextlib.contextmanager
def oom_killer(worker: Worker, limit_mb: int):
    """A stand-in for the kernel's OOM killer on a machine with little memory: every 20 ms, a process of
    ``worker`` (its pool processes, or itself) whose resident memory is above ``limit_mb`` is killed with SIGKILL,
    as the kernel would. Yields the list of (pid, MB) it killed. Linux only (/proc)."""
    import threading

    killed: list[tuple[int, int]] = []
    done = threading.Event()

    def watch():
        while not done.wait(0.02):
            main = worker.proc.pid
            for pid in [main, *_children(main)]:
                rss = _rss_bytes(pid)
                if rss > limit_mb * 2**20:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        killed.append((pid, rss // 2**20))

    t = threading.Thread(target=watch, name="fake-oom-killer", daemon=True)
    t.start()
    try:
        yield killed
    finally:
        done.set()
        t.join(timeout=5)


def stop_all(workers: list[Worker]) -> None:
    """Cold shutdown (SIGQUIT) of every worker at once: the tests are over, nothing they run matters any more,
    and a warm one costs a second or two each. Killed if that takes over 30 s."""
    for w in workers:
        if w.proc.poll() is None:
            w.proc.send_signal(signal.SIGQUIT)
    for w in workers:
        w.stop()


# --- what a run stored -------------------------------------------------------------------------------------------


def assert_same(got: dict[str, list], want: dict[str, list]) -> None:
    """Equal row for row; floats to 1e-9 relative (SQL sums may add in another order)."""
    assert got.keys() == want.keys()
    for name in want:
        g, w = got[name], want[name]
        assert len(g) == len(w), f"{name}: {len(g)} rows, want {len(w)}"
        for a, b in zip(g, w):
            same = len(a) == len(b) and all(
                math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9)
                if isinstance(x, float) and isinstance(y, float)
                else x == y
                for x, y in zip(a, b)
            )
            assert same, f"{name}: {a} != {b}"


def results(ws) -> dict[str, list]:
    """Every row a compute run writes for ``ws``, sorted, without ids or times that differ between runs."""
    from monitor.models import CascadeGraph, CascadeInfluence, DailyInfluence, PublisherDay, Tweet

    def rows(qs, *fields):
        return sorted(tuple(row) for row in qs.values_list(*fields))

    return {
        "influence": rows(
            CascadeInfluence.objects.filter(tweet__workspace=ws),
            "tweet_id", "account_id", "publisher_id", "day", "label", "influence", "followers", "role",
        ),
        "graphs": rows(CascadeGraph.objects.filter(tweet__workspace=ws), "tweet_id", "n_edges", "edges"),
        "daily": rows(
            DailyInfluence.objects.filter(workspace=ws),
            "publisher_id", "account_id", "day", "label", "influence", "cascades",
        ),
        "publisher_days": rows(PublisherDay.objects.filter(workspace=ws), "publisher_id", "day", "label", "tweets",
                               "reach"),
        "tweets": rows(
            Tweet.objects.filter(workspace=ws),
            "pk", "compute_status", "n_participants", "n_edges", "n_orphans", "reach", "unit",
        ),
    }  # fmt: skip


def aggregates_from_rows(ws) -> dict[str, list]:
    """The daily aggregates as they must be for the per-cascade rows stored now (whatever subset that is)."""
    from django.db.models import Count, Sum
    from django.db.models.functions import TruncDate

    from monitor.models import CascadeInfluence, Tweet

    daily = (
        CascadeInfluence.objects.filter(tweet__workspace=ws)
        .values("publisher_id", "account_id", "day", "label")
        .annotate(s=Sum("influence"), n=Count("*"))
        .values_list("publisher_id", "account_id", "day", "label", "s", "n")
    )
    pdays = (
        Tweet.objects.filter(workspace=ws, compute_status="computed")
        .annotate(d=TruncDate("created_at"))
        .values("author_id", "d", "label")
        .annotate(n=Count("*"), s=Sum("reach"))
        .values_list("author_id", "d", "label", "n", "s")
    )
    return {
        "daily": sorted(tuple(row) for row in daily),
        "publisher_days": sorted(tuple(float(v) if k == 4 else v for k, v in enumerate(row)) for row in pdays),
    }


def clean_recompute(ws, app) -> dict[str, list]:
    """Recompute every cascade of ``ws`` in this process, with no fault, and return its results: the reference
    a faulted run is compared with (rows are replaced per cascade, so this also repairs anything a fault left)."""
    from monitor import services

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        run = services.compute_run_start(workspace=ws, backend="cpu")  # autocommit: its batches run at once
    finally:
        app.conf.task_always_eager = eager
    run.refresh_from_db()
    assert run.status == "done", run.error
    return results(ws)


def queued(broker: Redis, queue: str = "cpu") -> list[tuple[bytes, str, str]]:
    """The messages waiting in a queue, oldest first: (raw message, task id, args repr)."""
    import json

    out = []
    for raw in reversed(broker.client().lrange(queue, 0, -1)):  # kombu LPUSHes and BRPOPs: the right end is oldest
        headers = json.loads(raw)["headers"]
        out.append((raw, headers["id"], headers["argsrepr"]))
    return out


def run_ended(run_pk: int) -> bool:
    from monitor.models import ComputeRun

    return ComputeRun.objects.get(pk=run_pk).status in ("done", "failed", "cancelled")
