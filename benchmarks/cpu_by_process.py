"""Which processes use the machine's cores while a command runs: every half second, the CPU each process name took
(100 = one core), from ``/proc`` (Linux). Run a benchmark under it to see whether a phase keeps both cores busy or
passes work back and forth between one Python process and one PostgreSQL backend.

    .venv/bin/python benchmarks/cpu_by_process.py --out F -- /tmp/bench.sh ...   # any command

Each line: seconds since the start, then ``name=percent`` for the names that used any CPU in that half second (a
process counts from its first whole interval: what it used in the interval it started in is left out).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path


def _sample() -> dict[str, tuple[str, int]]:
    """pid -> (process name, CPU ticks so far)."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue  # ended meanwhile
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        out[pid] = (name, int(fields[11]) + int(fields[12]))  # utime + stime
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--every", type=float, default=0.5)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("give the command to run after --")
    hz = os.sysconf("SC_CLK_TCK")
    proc = subprocess.Popen(command)
    t0 = time.monotonic()
    before = _sample()
    with args.out.open("w") as out:
        while proc.poll() is None:
            time.sleep(args.every)
            now = _sample()
            by_name: dict[str, int] = {}
            for pid, (name, ticks) in now.items():
                if pid in before:
                    by_name[name] = by_name.get(name, 0) + ticks - before[pid][1]
            before = now
            used = sorted(((v, k) for k, v in by_name.items() if v > 0), reverse=True)
            cells = " ".join(f"{k}={100 * v / hz / args.every:.0f}" for v, k in used)
            out.write(f"{time.monotonic() - t0:.1f} {cells}\n")
            out.flush()
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
