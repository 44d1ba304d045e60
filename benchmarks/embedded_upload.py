"""The embedded default (``make demo``: SQLite, tasks in the web process) under a real upload: how long an API
upload of a generated v1.1 collection takes to import and compute, and how long a second analyst's login waits
meanwhile (SQLite has one writer: a login writes its session and last-login time, so it waits for the import's
store step to commit).

    .venv/bin/python benchmarks/embedded_upload.py --retweets 100000 200000 600000 --json out.json

Each size gets a fresh server and data folder (``tests/embedded.py``); the login loop runs from the moment the
upload is answered until the collection is Done. Results: ``benchmarks/embedded.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]


def one(retweets: int, data_root: Path) -> dict:
    from _setup import generated_collection

    from tests.embedded import EmbeddedServer, LoginSession

    files = generated_collection(data_root / f"gen{retweets}", retweets)
    with tempfile.TemporaryDirectory(prefix="sw-embedded-bench-") as tmp:
        server = EmbeddedServer(Path(tmp)).start()
        try:
            logins: list[tuple[int, float]] = []
            stop = threading.Event()

            def browse():
                bob = LoginSession(server, "bob")
                while not stop.is_set():
                    logins.append(bob.login())
                    bob.get("/w/api1/")
                    time.sleep(0.2)

            t0 = time.perf_counter()
            handles = [f.open("rb") for f in files]
            try:
                r = server.api(
                    "POST",
                    "/workspaces/api1/collections/",
                    files=[("files", (f.name, h)) for f, h in zip(files, handles)],
                )
            finally:
                for h in handles:
                    h.close()
            r.raise_for_status()
            answered = time.perf_counter() - t0
            browsing = threading.Thread(target=browse)
            browsing.start()
            try:
                c = server.wait_collection("api1", r.json()["id"], timeout=3600)
            finally:
                stop.set()
                browsing.join()
            total = time.perf_counter() - t0
        finally:
            server.stop()
    waits = [took for _, took in logins]
    return {
        "retweets": retweets,
        "bytes": sum(f.stat().st_size for f in files),
        "status": c["status"],
        "error": c.get("error", ""),
        "upload_answered_s": round(answered, 1),
        "until_done_s": round(total, 1),
        "timings": c.get("timings"),
        "logins": len(logins),
        "logins_failed": sum(1 for status, _ in logins if status != 200),
        "login_wait_median_s": round(statistics.median(waits), 2) if waits else None,
        "login_wait_max_s": round(max(waits), 2) if waits else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--retweets", type=int, nargs="+", default=[100_000])
    ap.add_argument("--data", default=str(ROOT / "var" / "bench-embedded"), help="folder for the generated files")
    ap.add_argument("--json", help="write the results here too")
    args = ap.parse_args()
    results = []
    for n in args.retweets:
        res = one(n, Path(args.data))
        print(json.dumps(res), flush=True)
        results.append(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
