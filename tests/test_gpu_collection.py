"""``make test-gpu`` on the GPU machine: the engine's tests are collected, the web folders are not, whether or
not Django is installed there (``benchmarks/gpu_stack.sh`` installs it for the worker benchmarks)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_without_pytest_django_only_the_engines_tests_are_collected():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "--co", "-p", "no:cacheprovider", "-p", "no:django"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    ids = [line for line in out.stdout.splitlines() if "::" in line]
    assert ids and all(line.startswith("tests/compute/") for line in ids), ids[:5]
    assert "error" not in out.stdout.lower().splitlines()[-1]
