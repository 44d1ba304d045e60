"""The publisher pages' rank chart (``selectors.rank_history``, a publisher's spreaders by week, all time) of the
ten busiest publishers of the workspace ``benchmarks/web_bench.py`` left in the database, the read cache off: the
sum over the ten, three times.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_1m_x .venv/bin/python benchmarks/rank_history_bench.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")
os.environ["SPREADWATCH_READ_CACHE_SECONDS"] = "0"


def main() -> int:
    import django

    django.setup()
    from monitor.models import Account, Workspace
    from monitor.selectors import history
    from monitor.services import warmup

    ws = Workspace.objects.filter(slug="bench-1m").first()
    if ws is None:
        print("no bench-1m workspace: run benchmarks/web_bench.py on this database first", file=sys.stderr)
        return 2
    publishers = warmup._busiest_publishers(ws, 10)
    sums = []
    for _ in range(3):
        t = time.perf_counter()
        for p in publishers:
            history.rank_history(ws, publisher=p, spreaders_only=True)
        sums.append(round(1000 * (time.perf_counter() - t)))
    accounts = Account.objects.filter(workspace=ws).count()
    print(json.dumps({"publishers": len(publishers), "accounts": accounts, "sum_ms": sums}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
