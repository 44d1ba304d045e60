"""What the stream intake's unit check costs (issue 40; ``monitor.services.stream.unit_check``): per 10,000 v1.1
retweets carrying no follower count, the case where it does the most work (a workspace that counts retweeters, or
has no unit yet, and a body it takes: every record's rows are looked at), beside what the intake's reading of the
same lines costs (``read_lines``). In a workspace that counts followers the check is one string comparison.

    .venv/bin/python benchmarks/stream_unit_check_bench.py [--repeat 7]

No database: both steps are Python over the lines.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "monitor.settings")

import django

django.setup()

from monitor.services.stream.records import read_lines  # noqa: E402
from monitor.services.stream.unit_check import first_count  # noqa: E402


def status(i: int) -> str:
    user = {"id_str": str(10_000 + i % 500), "screen_name": f"u{i % 500}"}  # no followers_count
    original = {"id_str": "1001", "created_at": "Wed Jan 01 00:00:00 +0000 2020", "text": "claim",
                "user": {"id_str": "7"}}  # fmt: skip
    return json.dumps({"id_str": str(2_000_000 + i), "created_at": "Wed Jan 01 00:05:00 +0000 2020", "user": user,
                       "retweeted_status": original})  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    a = ap.parse_args()
    lines = [(k, status(k)) for k in range(1, 10_001)]
    read, check = [], []
    for _ in range(a.repeat):
        t = time.perf_counter()
        got = read_lines(lines)
        read.append(time.perf_counter() - t)
        t = time.perf_counter()
        assert first_count(got.records) is None
        check.append(time.perf_counter() - t)
    ms = lambda xs: f"min {min(xs) * 1000:.1f} ms, median {statistics.median(xs) * 1000:.1f} ms"  # noqa: E731
    print(f"10,000 v1.1 retweets: read_lines {ms(read)}; unit check {ms(check)}")


if __name__ == "__main__":
    main()
