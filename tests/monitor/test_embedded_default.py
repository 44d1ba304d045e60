"""The embedded default (``make demo``: SQLite, tasks in the web process) under the load a new team puts on it:
uploads through the API at the same time, while another analyst logs in and browses. Each upload is the bundled
Twitter16 sample (818 cascade trees) zipped, the first real collection a newcomer tries.

Before the fix, an import failed with "database is locked" as soon as any other connection committed while it
ran (a login is enough), and a re-upload of the same trees did not finish (``tests/embedded.py``). A login
during an import waited for the import's write lock (its session row and ``last_login``); it no longer writes
to the database in the request (``monitor/embedded.py``)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
import requests

from tests.claimed import claimed_csv
from tests.embedded import EmbeddedServer, LoginSession, twitter16_zip, upload_via_api

pytestmark = pytest.mark.services

# the pages an analyst reloads while another's upload is imported: none of them may write to the database
BROWSED = (
    "/",
    "/w/api2/",
    "/w/api2/ranking/",
    "/w/api2/collections/",
    "/w/api2/collections/new/",
    "/w/api2/runs/",
    "/w/api2/network/",
    "/w/api2/live/",
    "/w/api2/alerts/",
    "/w/api2/compare/",
    "/help/",
)


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


def test_it_logs_in_and_browses_while_an_import_holds_the_write_lock(embedded_server):
    """An import holds SQLite's one write lock for its whole store step: here the test holds it, and a login and
    the pages an analyst reloads answer meanwhile. The login's ``last_login`` is recorded once the lock is free."""
    server = embedded_server
    db = server.data_dir / "spreadwatch.sqlite3"
    con = sqlite3.connect(db, timeout=60, isolation_level=None)
    before = con.execute("SELECT last_login FROM auth_user WHERE username = 'bob'").fetchone()[0]
    bob = LoginSession(server, "bob", timeout=20)
    con.execute("BEGIN IMMEDIATE")
    try:
        try:
            status, _ = bob.login()
            pages = {path: bob.get(path) for path in BROWSED}
        except requests.Timeout as exc:  # LoginSession waits this long at most (see below)
            pytest.fail(f"a request waited for the write lock: {exc}")
    finally:
        con.execute("ROLLBACK")
    assert status == 200
    assert pages == dict.fromkeys(BROWSED, 200)
    deadline = time.monotonic() + 30
    while con.execute("SELECT last_login FROM auth_user WHERE username = 'bob'").fetchone()[0] == before:
        assert time.monotonic() < deadline, "the login's last_login was never recorded"
        time.sleep(0.2)
    con.close()


def test_it_finishes_an_upload_after_the_server_was_killed_during_its_import(tmp_path):
    """``make demo`` stopped hard during an import, then ``make serve``: the upload was left "importing" for
    ever, its task lost with the process. The new process resumes it (``recovery.resume_in_process``)."""
    server = EmbeddedServer(tmp_path / "data")
    server.data_dir.mkdir()
    archive = twitter16_zip(tmp_path)
    try:
        server.start()
        c = upload_via_api(server, "api1", archive)
        deadline = time.monotonic() + 120
        while server.collection("api1", c["id"])["status"] != "ingesting":
            assert time.monotonic() < deadline, "the import never started"
            time.sleep(0.1)
        time.sleep(1)  # inside its transaction
        server.kill()
        server.serve()
        assert LoginSession(server, "bob").login()[0] == 200  # any first request resumes it
        done = server.wait_collection("api1", c["id"], timeout=300)
    finally:
        server.stop()
    assert done["status"] == "done", f"{done['status']} {done.get('error')!r}\n{server.log()}"
    assert done["counts"]["retweets_stored"] == 347_010


def test_the_tweet_search_and_a_claim_work_on_the_embedded_default(embedded_server, tmp_path):
    """SQLite has no full-text index: the search reads its terms by regular expressions (monitor/selectors/
    claims.py); what it finds must be what PostgreSQL finds (tests/monitor/selectors/test_claims.py)."""
    server = embedded_server
    c = upload_via_api(server, "claims", claimed_csv(tmp_path / "tweets.csv"))
    assert server.wait_collection("claims", c["id"])["status"] == "done", server.log()

    def found(q: str) -> set[str]:
        r = server.api("GET", "/workspaces/claims/search/tweets/", params={"q": q, "sort": "newest"})
        assert r.status_code == 200, r.text
        return {t["tweet_id"] for t in r.json()["results"]}

    assert found("5g") == {"1", "2", "5"}
    assert found("#5G") == {"1", "2"}
    assert found('"towers cause"') == {"1", "3"}
    assert found("example.com") == {"1", "6"}
    assert found("https://example.com/story/1") == {"6"}
    assert found("virus -#5g") == {"3"}
    assert found("vaccines OR nothing") == {"3", "4", "6"}
    r = server.api("GET", "/workspaces/claims/search/tweets/", params={"q": "5g"})
    assert r.json()["results"][0]["tweet_id"] == "2"  # relevance here: the terms matched, then the newest
    claim = server.api("POST", "/workspaces/claims/claims/", json={"name": "5G", "query": "5g"}).json()
    days = server.api("GET", f"/workspaces/claims/claims/{claim['id']}/timeline/").json()
    assert [(d["day"], d["tweets"], d["retweets"]) for d in days] == [
        ("2020-03-01", 1, 0),
        ("2020-03-02", 1, 3),
        ("2020-03-03", 1, 2),
        ("2020-03-04", 0, 2),
    ]
