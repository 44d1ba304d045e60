"""The publisher pages' rank chart (``selectors.rank_history``, a publisher's spreaders by week, all time) of the
ten busiest publishers of the workspace ``benchmarks/web_bench.py`` left in the database, the read cache off: the
sum over the ten, three times.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_1m_x .venv/bin/python benchmarks/rank_history_bench.py
"""

from __future__ import annotations

import json
import time

from _setup import web_bench_workspace


def main() -> int:
    ws = web_bench_workspace("rank_history_bench")
    if ws is None:
        return 2
    from monitor.models import Account
    from monitor.selectors import history
    from monitor.services import warmup

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
