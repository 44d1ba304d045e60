"""The all-time snapshot's orders (``monitor.selectors.rankings._AllTime``) at the 10M-retweet benchmark's size:
4,317,200 (account, label, own) pairs over 2M accounts, random sums; each sort's first page timed in turn, as the
ranking page's aggregates and sorts ask for them, then a label filter. No database: the snapshot is built from
arrays as a process builds it from the all-time sums.

    .venv/bin/python benchmarks/snapshot_order_bench.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")


def main() -> int:
    import django

    django.setup()
    import numpy as np

    from monitor.selectors.rankings import _AllTime

    rng = np.random.default_rng(0)
    n = 4_317_200
    snap = _AllTime(
        rng.integers(0, 2_000_000, n),  # accounts
        rng.integers(0, 4, n),  # label codes
        rng.random(n) * 100,  # Σ influence
        rng.integers(1, 5, n),  # Σ T_v
        rng.random(n) < 0.05,  # own
        version=1,
    )
    for sort in ("total", "mean", "participation", "cascades"):
        t = time.perf_counter()
        snap.page(None, sort, 50, 0, spreaders_only=True)
        print(f"{sort:14s} {1000 * (time.perf_counter() - t):6.0f} ms")
    t = time.perf_counter()
    snap.page(["false"], "total", 50, 0, spreaders_only=True)
    print(f"{'label filter':14s} {1000 * (time.perf_counter() - t):6.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
