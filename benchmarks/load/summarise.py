"""Print the load test's results (a run_load.sh results folder) as the Markdown tables docs/reliability.md shows.

python benchmarks/load/summarise.py benchmarks/results/load_<date>
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

ORDER = ["overview", "ranking", "publisher", "account", "cascade", "api-ranking", "Aggregated"]


def locust_table(stats: Path) -> list[str]:
    rows = {r["Name"]: r for r in csv.DictReader(stats.open())}
    out = [
        "| page | requests | failures | req/s | p50 ms | p95 ms | p99 ms | max ms |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in [n for n in ORDER if n in rows] + sorted(set(rows) - set(ORDER)):
        r = rows[name]
        label = "all pages" if name == "Aggregated" else name
        out.append(
            f"| {label} | {r['Request Count']} | {r['Failure Count']} | {float(r['Requests/s']):.1f} | {r['50%']} "
            f"| {r['95%']} | {r['99%']} | {float(r['Max Response Time']):.0f} |"
        )
    return out


def wrk_table(text: str) -> list[str]:
    out = [
        "| pages | requests/s | p50 ms | p95 ms | p99 ms | errors |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for block in text.split("## ")[1:]:
        title = block.splitlines()[0].split(":")[0]
        rps = re.search(r"Requests/sec:\s+([\d.]+)", block)
        lines = re.findall(
            r"p50 ([\d.]+) ms  p95 ([\d.]+) ms  p99 ([\d.]+) ms  max [\d.]+ ms  requests \d+  errors (\d+)", block
        )
        non2xx = sum(int(x) for x in re.findall(r"non-2xx \(this thread's counter, printed per thread\): (\d+)", block))
        if rps and lines:
            p50, p95, p99, errors = lines[-1]
            out.append(f"| {title} | {float(rps.group(1)):.1f} | {p50} | {p95} | {p99} | {int(errors) + non2xx} |")
    return out


def main(folder: str) -> None:
    d = Path(folder)
    for name, title in (
        ("analysts", "50 analysts (1-5 s think time), 60 s, read cache warm (between computes)"),
        (
            "analysts-after-compute",
            "50 analysts (1-5 s think time), 60 s, arriving as a compute run (with its warm-up) has finished",
        ),
        (
            "analysts-quiet",
            "50 analysts (1-5 s think time), 60 s, after a quiet spell longer than the read cache's old 300 s TTL",
        ),
        ("analysts-restart", "50 analysts (1-5 s think time), 60 s, web processes restarted (a deploy), cache kept"),
        ("analysts-cold", "50 analysts (1-5 s think time), 60 s, read cache emptied and web processes restarted"),
        ("analysts-nocache", "50 analysts (1-5 s think time), 30 s, read cache off (every request does its work)"),
    ):
        stats = d / f"{name}_stats.csv"
        if stats.exists():
            print(f"### {title}\n")
            print("\n".join(locust_table(stats)) + "\n")
    wrk = d / "wrk.txt"
    if wrk.exists():
        print("### capacity: wrk, 50 connections, no think time (warm cache)\n")
        print("\n".join(wrk_table(wrk.read_text())) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
