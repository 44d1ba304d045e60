"""The embedded default (``make demo``: SQLite, tasks in the web process) under the load a new team puts on it:
uploads through the API at the same time, while another analyst logs in and browses. Each upload is the bundled
Twitter16 sample (818 cascade trees) zipped, the first real collection a newcomer tries.

Before the fix, an import failed with "database is locked" as soon as any other connection committed while it
ran (a login is enough), and a re-upload of the same trees did not finish (``tests/embedded.py``)."""

from __future__ import annotations

import threading

import pytest

from tests.embedded import LoginSession, twitter16_zip, upload_via_api

pytestmark = pytest.mark.services


def _browse_while(server, stop: threading.Event, seen: dict) -> None:
    """Bob logs in afresh and reloads two pages until ``stop``; every answer is recorded."""
    bob = LoginSession(server, "bob")
    while not stop.is_set():
        status, took = bob.login()
        seen["logins"].append((status, took))
        for path in ("/w/api1/", "/w/api1/collections/"):
            seen["pages"].append((path, bob.get(path)))


def test_it_imports_concurrent_api_uploads_while_an_analyst_logs_in(embedded_server, tmp_path):
    server = embedded_server
    archive = twitter16_zip(tmp_path)
    seen: dict = {"logins": [], "pages": []}
    stop = threading.Event()
    browsing = threading.Thread(target=_browse_while, args=(server, stop, seen))
    browsing.start()
    created: dict = {}
    try:
        uploads = [
            threading.Thread(target=lambda ws=ws: created.__setitem__(ws, upload_via_api(server, ws, archive)))
            for ws in ("api1", "api2")
        ]
        for t in uploads:
            t.start()
        for t in uploads:
            t.join()
        done = {ws: server.wait_collection(ws, c["id"]) for ws, c in created.items()}
        # the same trees again: every retweet is stored already, so the merge updates instead of inserting
        again = upload_via_api(server, "api1", archive)
        done["api1 again"] = server.wait_collection("api1", again["id"])
    finally:
        stop.set()
        browsing.join()
    for ws, c in done.items():
        assert c["status"] == "done", f"{ws}: {c['status']} {c.get('error')!r}\n{server.log()}"
    assert done["api1"]["counts"]["retweets_stored"] == 347_010
    assert done["api1 again"]["counts"].get("retweets_stored", 0) == 0
    assert seen["logins"], "the second analyst never logged in"
    assert all(status == 200 for status, _ in seen["logins"]), seen["logins"]
    assert all(status == 200 for _, status in seen["pages"]), seen["pages"]
