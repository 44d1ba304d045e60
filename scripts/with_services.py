#!/usr/bin/env python3
"""Run a command with a real PostgreSQL and a real Redis available, e.g. the test suite.

Usage:
    python scripts/with_services.py [--print-env] -- COMMAND [ARGS...]

For each service the first rule that works supplies it:

PostgreSQL
  1. DATABASE_URL, if set, is used as is (it must accept TCP connections at its host:port).
  2. A server on 127.0.0.1:5432: postgres://postgres@127.0.0.1:5432/spreadwatch (user postgres, trust auth).
  3. A throwaway cluster: initdb + pg_ctl (found on PATH or under /usr/lib/postgresql/*/bin/) start one
     on a free port in a temporary directory; it is stopped and deleted when the command ends.
     As root, initdb/pg_ctl run as the `postgres` system user (initdb refuses to run as root).

Redis
  1. REDIS_URL, if set, is used as is (it must accept TCP connections at its host:port).
  2. A server on 127.0.0.1:6379: redis://127.0.0.1:6379/15 (db 15, so tests don't clash with a dev instance).
  3. A throwaway redis-server (from PATH) on a free port, terminated when the command ends.

The command gets DATABASE_URL, REDIS_URL, CELERY_BROKER_URL (the Redis URL unless already set) and
SPREADWATCH_REQUIRE_SERVICES=1 in its environment; this script exits with the command's exit status.
If a service can't be provided, it says what it tried and exits 3 without running the command.

Options:
  --print-env   Print `export VAR=...` lines instead of running a command (for `eval "$(...)"`).
                Throwaway instances are refused in this mode: nothing would be left to stop them.
  -h, --help    Show this help.

Environment knobs:
  WITH_SERVICES_SKIP_DEFAULT_PORTS=1   Skip rule 2 (the default local ports), e.g. to exercise the
                                       throwaway instances on a machine that already runs both services.

Exit status: the command's (128+N if it died of signal N); 3 if a service is missing; 2 on a usage error;
127/126 if the command can't be found/executed.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from urllib.parse import parse_qs, unquote, urlsplit, urlunsplit

PROG = "with_services"
EXIT_MISSING = 3
DEFAULT_PG_URL = "postgres://postgres@127.0.0.1:5432/spreadwatch"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"
START_TIMEOUT_S = 30.0
# the throwaway services are stopped with these bounds so a wedged server can't hang `make test` forever
STOP_TIMEOUT_S = 15.0
SKIP_DEFAULT_PORTS_VAR = "WITH_SERVICES_SKIP_DEFAULT_PORTS"


def _log(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------------------------
# reachability


def _redact(url: str) -> str:
    """The URL with any password masked: these lines end up in CI logs."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return url


def _tcp_ok(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _unix_ok(path: str, timeout: float = 1.0) -> bool:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(path)
            return True
    except OSError:
        return False


def _postgres_targets(url: str) -> list[str | tuple[str, int]]:
    """Where libpq would connect for `url`: (host, port) pairs, or unix socket paths (host given as a directory)."""
    parts = urlsplit(url)
    port = parts.port or 5432
    # libpq also takes the host from the query string (`?host=/run/postgresql`) and a percent-encoded socket dir
    host = parse_qs(parts.query).get("host", [None])[0] or unquote(parts.hostname or "")
    if host.startswith("/"):
        return [f"{host}/.s.PGSQL.{port}"]
    if not host:
        # no host: libpq's default is its unix socket directory, which differs between builds
        return [f"{d}/.s.PGSQL.{port}" for d in ("/var/run/postgresql", "/run/postgresql", "/tmp")]
    return [(host, port)]


def _redis_targets(url: str) -> list[str | tuple[str, int]]:
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return [parts.path]
    return [(parts.hostname or "localhost", parts.port or 6379)]


def _reachable(targets: Sequence[str | tuple[str, int]]) -> bool:
    return any(_unix_ok(t) if isinstance(t, str) else _tcp_ok(*t) for t in targets)


def _describe(targets: Sequence[str | tuple[str, int]]) -> str:
    return " or ".join(t if isinstance(t, str) else f"{t[0]}:{t[1]}" for t in targets)


def _free_port() -> int:
    # the kernel picks an unused port; there is a small race until the server binds it, which is acceptable here
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for_tcp(port: int, alive: Callable[[], bool], timeout: float = START_TIMEOUT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _tcp_ok("127.0.0.1", port, timeout=0.5):
            return True
        if not alive():
            return False
        time.sleep(0.1)
    return False


def _skip_default_ports() -> bool:
    return os.environ.get(SKIP_DEFAULT_PORTS_VAR, "").strip().lower() in {"1", "true", "yes", "on"}


# ---------------------------------------------------------------------------------------------------------------------
# planning: decide where each service comes from before starting anything, so that a missing Redis is reported
# before initdb runs, and every missing service is reported at once


@dataclass
class Plan:
    service: str  # "PostgreSQL" / "Redis"
    url: str | None = None  # known now (env var, default port); None for a throwaway instance or a missing service
    rule: str = ""
    start: Callable[[contextlib.ExitStack], tuple[str, str]] | None = None  # starts a throwaway: (url, rule)
    error: str | None = None  # set when the service can't be provided; the first line of the message
    tried: list[str] = field(default_factory=list)


def _find_pg_binaries() -> tuple[str, str] | None:
    """initdb and pg_ctl of one installation: PATH first, then Debian/Ubuntu's versioned directories, newest first."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl:
        return initdb, pg_ctl

    def version(bindir: str) -> tuple[int, ...]:
        name = Path(bindir).parent.name
        return tuple(int(p) for p in name.split(".") if p.isdigit())

    for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True):
        initdb, pg_ctl = os.path.join(bindir, "initdb"), os.path.join(bindir, "pg_ctl")
        if os.access(initdb, os.X_OK) and os.access(pg_ctl, os.X_OK):
            return initdb, pg_ctl
    return None


def _as_postgres_prefix() -> tuple[list[str] | None, str]:
    """How to run PostgreSQL's tools: ([] as ourselves, or a runuser prefix as root; None if impossible), why."""
    if os.geteuid() != 0:
        return [], ""
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return None, "running as root and there is no `postgres` system user to run initdb as"
    if shutil.which("runuser"):
        return ["runuser", "-u", "postgres", "--"], ""
    if shutil.which("su"):
        return ["su", "-s", "/bin/sh", "-c"], ""  # _wrap adds the command as one shell string, then the user
    return None, "running as root and neither runuser nor su is available to switch to the `postgres` user"


def _wrap(prefix: list[str], argv: list[str]) -> list[str]:
    if prefix and prefix[0] == "su":
        return [*prefix, shlex.join(argv), "postgres"]
    return [*prefix, *argv]


def plan_postgres(allow_throwaway: bool) -> Plan:
    plan = Plan("PostgreSQL")
    env_url = os.environ.get("DATABASE_URL")
    if env_url:
        try:
            targets = _postgres_targets(env_url)
        except ValueError as exc:
            plan.error = f"DATABASE_URL={_redact(env_url)} can't be parsed ({exc})"
            return plan
        if _reachable(targets):
            plan.url, plan.rule = env_url, "from DATABASE_URL"
        else:
            plan.error = (
                f"DATABASE_URL={_redact(env_url)} is set, but nothing accepts connections at {_describe(targets)}"
            )
        # an explicit URL is never silently replaced by another server
        return plan

    plan.tried.append("DATABASE_URL: not set")
    if _skip_default_ports():
        plan.tried.append(f"127.0.0.1:5432: skipped ({SKIP_DEFAULT_PORTS_VAR} is set)")
    elif _tcp_ok("127.0.0.1", 5432):
        plan.url, plan.rule = DEFAULT_PG_URL, "local default port"
        return plan
    else:
        plan.tried.append("127.0.0.1:5432: nothing accepts connections")

    binaries = _find_pg_binaries()
    if binaries is None:
        plan.tried.append("initdb/pg_ctl: not on PATH nor under /usr/lib/postgresql/*/bin/")
    else:
        prefix, why_not = _as_postgres_prefix()
        if prefix is None:
            plan.tried.append(f"throwaway cluster with {binaries[0]}: {why_not}")
        elif not allow_throwaway:
            plan.tried.append(f"throwaway cluster with {binaries[0]}: refused with --print-env (nothing would stop it)")
        else:
            initdb, pg_ctl = binaries
            plan.start = lambda stack: _start_postgres(stack, initdb, pg_ctl, prefix)
            return plan
    plan.error = "no PostgreSQL available"
    return plan


def plan_redis(allow_throwaway: bool) -> Plan:
    plan = Plan("Redis")
    env_url = os.environ.get("REDIS_URL")
    if env_url:
        try:
            targets = _redis_targets(env_url)
        except ValueError as exc:
            plan.error = f"REDIS_URL={_redact(env_url)} can't be parsed ({exc})"
            return plan
        if _reachable(targets):
            plan.url, plan.rule = env_url, "from REDIS_URL"
        else:
            plan.error = f"REDIS_URL={_redact(env_url)} is set, but nothing accepts connections at {_describe(targets)}"
        return plan

    plan.tried.append("REDIS_URL: not set")
    if _skip_default_ports():
        plan.tried.append(f"127.0.0.1:6379: skipped ({SKIP_DEFAULT_PORTS_VAR} is set)")
    elif _tcp_ok("127.0.0.1", 6379):
        plan.url, plan.rule = DEFAULT_REDIS_URL, "local default port"
        return plan
    else:
        plan.tried.append("127.0.0.1:6379: nothing accepts connections")

    redis_server = shutil.which("redis-server")
    if redis_server is None:
        plan.tried.append("redis-server: not on PATH")
    elif not allow_throwaway:
        plan.tried.append(f"throwaway {redis_server}: refused with --print-env (nothing would stop it)")
    else:
        plan.start = lambda stack: _start_redis(stack, redis_server)
        return plan
    plan.error = "no Redis available"
    return plan


HOW_TO = {
    "PostgreSQL": [
        "set DATABASE_URL=postgres://user@host:port/db to a server that accepts connections,",
        "or start PostgreSQL on 127.0.0.1:5432 with a `postgres` user (trust auth),",
        "or install PostgreSQL's server binaries (initdb, pg_ctl; e.g. apt-get install postgresql)",
        "for a throwaway cluster.",
    ],
    "Redis": [
        "set REDIS_URL=redis://host:port/0 to a server that accepts connections,",
        "or start Redis on 127.0.0.1:6379,",
        "or install redis-server (e.g. apt-get install redis-server) for a throwaway one.",
    ],
}


def _missing_message(plans: Sequence[Plan]) -> str:
    lines = []
    for plan in plans:
        if plan.error is None:
            continue
        lines.append(f"{PROG}: {plan.service} is missing: {plan.error}.")
        if plan.tried:
            lines.append("  tried:")
            lines.extend(f"    - {t}" for t in plan.tried)
        lines.append("  to provide it:")
        lines.extend(f"    {h}" for h in HOW_TO[plan.service])
    lines.append(f"{PROG}: not running the command (exit {EXIT_MISSING}).")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------------------
# throwaway instances; each registers its own cleanup on the ExitStack as soon as there is something to clean


def _tail(path: Path, n: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def _run_tool(argv: list[str], cwd: Path, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """Run initdb/pg_ctl in a session of its own, and on any interruption kill that whole process group.

    The session keeps a terminal's Ctrl-C from reaching the server directly (we stop it in order at exit); killing
    the group, not just the process, matters as root, where the process is runuser/su and initdb its child.
    """
    proc = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def _start_postgres(stack: contextlib.ExitStack, initdb: str, pg_ctl: str, prefix: list[str]) -> tuple[str, str]:
    tmp = Path(tempfile.mkdtemp(prefix="spreadwatch-pg-"))
    stack.callback(shutil.rmtree, tmp, ignore_errors=True)
    if prefix:
        # the tools run as `postgres`, which must own the data directory and be able to write the socket and log
        pw = pwd.getpwnam("postgres")
        os.chown(tmp, pw.pw_uid, pw.pw_gid)
    data, log = tmp / "data", tmp / "postgres.log"
    port = _free_port()

    # --locale=C: the caller's LANG may name a locale this machine lacks, which makes initdb fail;
    # --no-sync: a throwaway cluster needs no durability, and fsync dominates initdb's time
    init = _wrap(
        prefix, [initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"]
    )
    done = _run_tool(init, cwd=tmp)
    if done.returncode != 0:
        raise ServiceError(f"initdb failed (exit {done.returncode}):\n{done.stdout}{done.stderr}")

    # fsync etc. off: nothing in a throwaway cluster needs to survive a crash, and the tests run faster
    settings = "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    options = f"-k {tmp} -p {port} {settings}"
    start = _wrap(
        prefix, [pg_ctl, "start", "-D", str(data), "-l", str(log), "-w", "-t", str(int(START_TIMEOUT_S)), "-o", options]
    )
    # register the stop before starting: pg_ctl may time out with the postmaster still coming up
    stack.callback(_stop_postgres, prefix, pg_ctl, data)
    done = _run_tool(start, cwd=tmp)
    if done.returncode != 0:
        raise ServiceError(f"pg_ctl start failed (exit {done.returncode}):\n{done.stdout}{done.stderr}{_tail(log)}")
    # pg_ctl -w waits for the server to accept connections; checking TCP too proves it listens where we say it does
    if not _wait_for_tcp(port, alive=lambda: True):
        raise ServiceError(f"PostgreSQL did not accept connections on 127.0.0.1:{port}:\n{_tail(log)}")
    url = f"postgres://postgres@127.0.0.1:{port}/spreadwatch"
    return url, f"throwaway cluster from {Path(initdb).resolve().parent}, data in {tmp}"


def _stop_postgres(prefix: list[str], pg_ctl: str, data: Path) -> None:
    if not (data / "postmaster.pid").exists():
        return
    stop = _wrap(prefix, [pg_ctl, "stop", "-D", str(data), "-m", "immediate", "-w"])
    try:
        _run_tool(stop, cwd=data.parent, timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        _log(f"pg_ctl stop timed out; the throwaway cluster in {data} may still be running")


def _start_redis(stack: contextlib.ExitStack, redis_server: str) -> tuple[str, str]:
    tmp = Path(tempfile.mkdtemp(prefix="spreadwatch-redis-"))
    stack.callback(shutil.rmtree, tmp, ignore_errors=True)
    log = tmp / "redis.log"
    port = _free_port()
    argv = [redis_server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    argv += ["--daemonize", "no", "--dir", str(tmp)]  # --dir: nothing lands in the caller's cwd
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=tmp, start_new_session=True)
    stack.callback(_stop_process, proc)
    if not _wait_for_tcp(port, alive=lambda: proc.poll() is None):
        raise ServiceError(f"redis-server did not accept connections on 127.0.0.1:{port}:\n{_tail(log)}")
    return f"redis://127.0.0.1:{port}/0", f"throwaway redis-server, pid {proc.pid}"


def _stop_process(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class ServiceError(Exception):
    """A throwaway instance failed to start."""


# ---------------------------------------------------------------------------------------------------------------------
# signals and the child


class _Signalled(BaseException):
    """Raised by the signal handler while services start, so `finally`/ExitStack clean up what already started."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@dataclass
class _ChildState:
    proc: subprocess.Popen[bytes] | None = None
    launching: bool = False
    signals: int = 0
    last_signal: int | None = None
    kill_at: float | None = None


def _in_terminal_foreground() -> bool:
    """Whether a Ctrl-C at the terminal reaches our process group (and so the child, which shares it) directly."""
    try:
        return os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except (OSError, ValueError, AttributeError):
        return False


def _install_handlers(state: _ChildState, handled: Sequence[int]) -> None:
    def handler(signum: int, _frame: FrameType | None) -> None:
        state.signals += 1
        state.last_signal = signum
        proc = state.proc
        if proc is None:
            if state.launching:
                return  # _run sees state.signals once Popen returns, and stops the child
            raise _Signalled(signum)
        if proc.poll() is not None:
            return
        if signum == signal.SIGINT and state.signals == 1:
            # the child shares our process group, so a terminal's Ctrl-C already reached it: let it stop gracefully
            # (pytest tears down on KeyboardInterrupt); a SIGINT sent only to us is passed on
            if not _in_terminal_foreground():
                proc.send_signal(signal.SIGINT)
            return
        # SIGTERM/SIGHUP, or a second Ctrl-C: terminate the child, and kill it if it doesn't go in time
        proc.terminate()
        if state.kill_at is None:
            state.kill_at = time.monotonic() + STOP_TIMEOUT_S

    for sig in handled:
        signal.signal(sig, handler)


def _wait_child(state: _ChildState) -> int:
    proc = state.proc
    assert proc is not None
    while True:
        try:
            # a bounded wait so the kill deadline set by a signal handler is acted on
            returncode = proc.wait(timeout=0.25)
            break
        except subprocess.TimeoutExpired:
            if state.kill_at is not None and time.monotonic() >= state.kill_at:
                proc.kill()
    # a shell reports death by signal N as 128+N; our own exit status can't be negative
    return 128 - returncode if returncode < 0 else returncode


def _run(command: list[str], env: dict[str, str], state: _ChildState) -> int:
    state.launching = True
    try:
        state.proc = subprocess.Popen(command, env=env)
    except FileNotFoundError:
        _log(f"command not found: {command[0]}")
        return 127
    except PermissionError:
        _log(f"command not executable: {command[0]}")
        return 126
    if state.signals:
        # a signal arrived while the child was being launched: the handler couldn't pass it on yet
        state.proc.terminate()
        state.kill_at = time.monotonic() + STOP_TIMEOUT_S
    return _wait_child(state)


# ---------------------------------------------------------------------------------------------------------------------
# main


def _parse(argv: list[str]) -> tuple[bool, list[str]] | int:
    """(print_env, command), or an exit status when it only printed help or a usage error."""
    if "--" in argv:
        split = argv.index("--")
        options, command = argv[:split], argv[split + 1 :]
    else:
        # without `--`, options end at the first word that isn't one
        split = next((i for i, a in enumerate(argv) if not a.startswith("-")), len(argv))
        options, command = argv[:split], argv[split:]
    print_env = False
    for opt in options:
        if opt in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        if opt == "--print-env":
            print_env = True
        else:
            print(f"{PROG}: unknown option {opt!r} (see --help)", file=sys.stderr)
            return 2
    if print_env and command:
        print(f"{PROG}: --print-env takes no command", file=sys.stderr)
        return 2
    if not print_env and not command:
        print(f"{PROG}: no command given; usage: with_services.py [--print-env] -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    return print_env, command


def main(argv: list[str] | None = None) -> int:
    parsed = _parse(sys.argv[1:] if argv is None else argv)
    if isinstance(parsed, int):
        return parsed
    print_env, command = parsed

    plans = [plan_postgres(allow_throwaway=not print_env), plan_redis(allow_throwaway=not print_env)]
    if any(p.error for p in plans):
        print(_missing_message(plans), file=sys.stderr, flush=True)
        return EXIT_MISSING

    state = _ChildState()
    handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.getsignal(sig) for sig in handled}
    try:
        with contextlib.ExitStack() as stack:
            try:
                if not print_env:
                    _install_handlers(state, handled)
                return _provide_and_run(plans, command, print_env, stack, state)
            except _Signalled as sig:
                _log(f"interrupted by signal {sig.signum} while starting services; cleaning up")
                return 128 + sig.signum
            finally:
                # cleanup (the ExitStack unwinding now) must not be cut short by another Ctrl-C,
                # or a cluster and its temp dir are left behind
                if not print_env:
                    for sig in handled:
                        signal.signal(sig, signal.SIG_IGN)
    finally:
        # main() is also called in-process (tests); give the caller its handlers back
        for sig, prev in previous.items():
            if prev is not None:
                signal.signal(sig, prev)


def _provide_and_run(
    plans: list[Plan], command: list[str], print_env: bool, stack: contextlib.ExitStack, state: _ChildState
) -> int:
    try:
        for plan in plans:
            if plan.start is not None:
                _log(f"starting a throwaway {plan.service} ...")
                plan.url, plan.rule = plan.start(stack)
            _log(f"{plan.service} at {_redact(plan.url or '')} ({plan.rule})")
    except ServiceError as exc:
        _log(f"{exc}")
        return EXIT_MISSING

    pg, redis = plans
    exports = {
        "DATABASE_URL": pg.url or "",
        "REDIS_URL": redis.url or "",
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL") or redis.url or "",
        "SPREADWATCH_REQUIRE_SERVICES": "1",
        # a test database of this run's own, so two runs against one server (CI and a developer, two
        # checkouts) do not drop each other's
        "SPREADWATCH_TEST_DATABASE": os.environ.get("SPREADWATCH_TEST_DATABASE") or f"test_spreadwatch_{os.getpid()}",
    }
    if print_env:
        for name, value in exports.items():
            print(f"export {name}={shlex.quote(value)}")
        return 0

    returncode = _run(command, {**os.environ, **exports}, state)
    if state.last_signal is not None and returncode == 0:
        # the child swallowed our SIGTERM/SIGINT and exited 0; the caller still asked us to stop
        returncode = 128 + state.last_signal
    return returncode


if __name__ == "__main__":
    sys.exit(main())
