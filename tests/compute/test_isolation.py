"""compute/ is a library: no Django, no Celery, and nothing beyond NumPy needed at import time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import sys, importlib, pkgutil
import compute
for m in ["structures", "results", "tables", "collection", "build", "algorithms", "algorithms.forward",
          "algorithms.backward", "algorithms.combine", "pipeline", "formats", "generators", "bench", "cli",
          "backends"]:
    importlib.import_module("compute." + m)
bad = sorted(k for k in sys.modules if k.split(".")[0] in {"django", "celery", "cupy", "numba", "msgspec"})
print(",".join(bad))
"""


def _run(extra_env: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env.update(extra_env)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_it_imports_without_django_settings_or_heavy_dependencies():
    res = _run({"SPREADWATCH_NO_NUMBA": "1"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""


def test_it_does_not_pull_in_django_or_celery_even_with_numba():
    res = _run({})
    assert res.returncode == 0, res.stderr
    loaded = set(filter(None, res.stdout.strip().split(",")))
    assert not loaded & {"django", "celery"}


def test_it_gives_the_same_results_without_numba(tmp_path):
    """The pure-Python fallback runs the very same kernel source: results must be identical."""
    script = r"""
import numpy as np, sys
sys.path.insert(0, "tests/compute")
from compute.algorithms.forward import forward
from compute.algorithms.backward import backward
from tests.compute.test_invariants import _random_collection
c, g = _random_collection(7, n_users=80, n_follows=600, n_casc=12)
sg = forward(c, g, orphans="attach", backend="cpu")
res = backward(sg, backend="cpu")
np.save(sys.argv[1], np.concatenate([sg.edge_src, sg.edge_dst, res.influence.view(np.int64)]))
"""
    outs = []
    for flag in ("1", "0"):
        path = tmp_path / f"out{flag}.npy"
        env = {k: v for k, v in os.environ.items()}
        env.update(PYTHONPATH=str(ROOT), SPREADWATCH_NO_NUMBA=flag)
        res = subprocess.run(
            [sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
        )
        assert res.returncode == 0, res.stderr
        outs.append(np.load(path))
    assert np.array_equal(outs[0], outs[1])
