"""The 405 page (a GET on a POST-only URL: a cancel or retry button's address opened as a link) in a real browser,
at a desktop width (1440 px) and a phone's (390 px): the site's header, which method the address takes, a link
back to the page the address was opened from that works, and no sideways scrolling."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1440, 390])
def test_a_get_on_a_post_only_url_shows_the_405_page_with_a_way_back(page, login, ws_a, import_files, width):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    run = c.compute_runs.get()
    page.set_viewport_size({"width": width, "height": 900})
    login()
    run_page = f"/w/{ws_a.slug}/runs/{run.pk}/"
    page.goto(run_page)
    # the cancel button's address opened as a link from the run's page
    with page.expect_navigation() as nav:
        page.evaluate("url => { location.href = url }", f"{run_page}cancel/")
    r = nav.value
    assert r.status == 405 and r.headers["allow"] == "POST"
    expect(page.get_by_role("heading", name="Method not allowed")).to_be_visible()
    expect(page.locator("article")).to_contain_text("it takes POST, not GET")
    expect(page.locator(".site-header")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"error-405-{width}")
    page.get_by_role("link", name="Back to the previous page").click()
    page.wait_for_load_state()
    assert page.url.endswith(run_page), page.url
    expect(page.get_by_role("heading", level=1)).to_be_visible()
