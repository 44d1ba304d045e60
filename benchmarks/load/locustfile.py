"""Locust model of analysts using the dashboard (issue 6's load test); run by benchmarks/load/run_load.sh.

Each simulated analyst is a logged-in session that opens a page, reads it for a random 1 to 5 s (Locust's
``between(1, 5)``: a mean of 3 s, less than a person needs to read a ranking, so the load errs on the heavy side),
then opens the next. Which page comes next is drawn by weight: rankings most (the product's main view),
then account pages, the rankings API (a script or notebook of the analyst), the overview and the cascade
explorer. Rankings vary the aggregate, the sort, the window and the page, as analysts do, so not every
request meets a warm cache. Each page kind is reported under its own name, so p50/p95/p99 come per page.

Environment: PAGES_JSON (a JSON object: page kind -> list of paths, written by run_load.sh), COOKIE
(``sessionid=...`` of the load user), THINK_MIN / THINK_MAX (seconds; 0 0 for a closed loop with no think time).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

from locust import HttpUser, between, task

PAGES: dict[str, list[str]] = json.loads(Path(os.environ["PAGES_JSON"]).read_text())
COOKIE = os.environ["COOKIE"]
THINK = (float(os.environ.get("THINK_MIN", "1")), float(os.environ.get("THINK_MAX", "5")))


class Analyst(HttpUser):
    wait_time = between(*THINK)

    def _open(self, kind: str) -> None:
        path = random.choice(PAGES[kind])
        with self.client.get(path, name=kind, headers={"Cookie": COOKIE}, catch_response=True) as r:
            if r.status_code != 200:
                r.failure(f"{r.status_code} on {path}")
            elif kind != "api-ranking" and b"</html>" not in r.content:
                r.failure(f"truncated page {path}")

    @task(3)
    def publisher_ranking(self):
        self._open("publisher")

    @task(2)
    def all_publishers_ranking(self):
        self._open("ranking")

    @task(2)
    def account(self):
        self._open("account")

    @task(2)
    def api_ranking(self):
        self._open("api-ranking")

    @task(1)
    def overview(self):
        self._open("overview")

    @task(1)
    def cascade(self):
        self._open("cascade")
