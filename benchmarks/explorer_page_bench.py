"""The cascade explorer's page build (``selectors.cascade_explorer_page`` at the explorer's default 20,000 drawn
accounts, what a run's warm-up builds for the largest cascades) on the workspace ``benchmarks/web_bench.py`` left
in the database: the largest cascades, each built once per variant, median / min / max.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_1m_x .venv/bin/python benchmarks/explorer_page_bench.py on
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/sw_1m_x .venv/bin/python benchmarks/explorer_page_bench.py freeze

``on``: the cyclic garbage collector as a fresh process has it; ``freeze``: the process's start-up objects frozen
first (``gc.freeze``, as ``monitor.boot.freeze_long_lived`` does in the web and worker processes). Variants: the
page's JSON written by the standard library's ``json`` (before 2026-11-30) and by msgspec (the product).
"""

from __future__ import annotations

import gc
import json
import sys
import time

from _setup import web_bench_workspace


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "on"
    ws = web_bench_workspace("explorer_page_bench")
    if ws is None:
        return 2
    from django.core.serializers.json import DjangoJSONEncoder
    from django.urls import get_resolver

    from monitor import selectors
    from monitor.models import Tweet
    from monitor.selectors import explorer

    tweets = list(Tweet.objects.filter(workspace=ws).order_by("-n_participants")[:10])
    limit = selectors.EXPLORER_LIMIT

    def with_json(t):
        data = explorer.cascade_explorer_data.__wrapped__(ws, t, limit=limit)
        return json.dumps(data, cls=DjangoJSONEncoder).translate(explorer._SCRIPT_SAFE)

    def product(t):
        return explorer.cascade_explorer_page.__wrapped__(ws, t, limit=limit)

    with_json(tweets[-1]), product(tweets[-1])  # every module imported, as in a serving process
    len(get_resolver().url_patterns)
    if mode == "freeze":
        gc.collect()
        gc.freeze()
    for name, build in (("json", with_json), ("msgspec", product)):
        ms = []
        for t in tweets[:8]:
            t0 = time.perf_counter()
            build(t)
            ms.append(1000 * (time.perf_counter() - t0))
        ms.sort()
        sizes = f"{tweets[7].n_participants:,}-{tweets[0].n_participants:,}"
        print(
            json.dumps(
                {
                    "gc": mode,
                    "writer": name,
                    "median_ms": round((ms[3] + ms[4]) / 2),
                    "min_ms": round(ms[0]),
                    "max_ms": round(ms[-1]),
                    "cascades": f"8 of {sizes} accounts",
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
