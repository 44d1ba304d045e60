"""A newcomer's first real upload on the embedded default (``make demo``: SQLite, tasks in the web process): the
bundled Twitter16 sample zipped (818 cascade trees), uploaded through the web form while a second analyst logs in
and reloads pages, at 1440 and 390 px. The import and its compute end Done, the second analyst's pages all
answer, and the collection page shows what was stored.

Before the fix every such upload failed at "Storing accounts" with "database is locked" (``tests/embedded.py``).
The server is a separate process on the embedded default, not pytest-django's live server (PostgreSQL)."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import TIMEOUT_MS
from tests.browser.pages import field, screenshot
from tests.embedded import PASSWORD, twitter16_zip

pytestmark = [pytest.mark.browser, pytest.mark.services]

IMPORT_S = 600


def _context(browser, server, width: int):
    context = browser.new_context(
        base_url=server.url, viewport={"width": width, "height": 900}, reduced_motion="reduce"
    )
    context.set_default_timeout(TIMEOUT_MS)
    return context


def _login(page, username: str) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()
    expect(page).not_to_have_url(re.compile(r"/login/"))


@pytest.mark.parametrize("width", [1440, 390])
def test_it_uploads_the_twitter16_sample_through_the_form_while_another_analyst_logs_in(
    browser, embedded_server, tmp_path, width
):
    server, ws = embedded_server, f"form{width}"
    archive = twitter16_zip(tmp_path)
    errors: list[str] = []
    ana_context, bob_context = _context(browser, server, width), None
    try:
        ana = ana_context.new_page()
        ana.on("pageerror", lambda exc: errors.append(f"ana {ana.url}: {exc}"))
        _login(ana, "ana")
        ana.goto(f"/w/{ws}/collections/new/")
        field(ana, "Files").set_input_files(str(archive))
        ana.get_by_role("button", name="Upload").click()
        ana.wait_for_url(re.compile(r"/collections/\d+/$"), timeout=IMPORT_S * 1000)
        collection_url = ana.url

        # while it imports and computes: bob logs in afresh and reloads pages, over and over
        answers: list[tuple[str, int]] = []
        deadline = time.monotonic() + IMPORT_S
        status = ""
        while time.monotonic() < deadline:
            if bob_context is not None:
                bob_context.close()
            bob_context = _context(browser, server, width)
            bob = bob_context.new_page()
            bob.on("pageerror", lambda exc, p=bob: errors.append(f"bob {p.url}: {exc}"))
            bob.set_default_navigation_timeout(IMPORT_S * 1000)
            _login(bob, "bob")
            for path in (f"/w/{ws}/", f"/w/{ws}/collections/", collection_url):
                answers.append((path, bob.goto(path).status))
            status = ana.locator("[data-status-badge] .badge").inner_text()
            if status not in ("Queued", "Importing", "Computing"):
                break
            ana.wait_for_timeout(500)
        # the collection page reloads itself when the import ends
        expect(ana.locator("[data-status-badge] .badge")).to_have_text("Done", timeout=IMPORT_S * 1000)
        assert all(code == 200 for _, code in answers), answers
        main = ana.locator("main")
        expect(main).not_to_contain_text("database is locked")
        expect(main).to_contain_text("347,010")  # retweets stored
        no_overflow = ana.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert no_overflow, f"the collection page is wider than {width} px"
        screenshot(ana, f"embedded-upload-{width}")
    finally:
        ana_context.close()
        if bob_context is not None:
            bob_context.close()
    assert not errors, "JavaScript errors on the pages:\n" + "\n".join(errors)
