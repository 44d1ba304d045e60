"""Claims in a real browser: search the tweets from the header's box, change the order, save the search as a
claim, read its page (the per-day chart drawn, spreaders, publishers), track an account from the spreaders and
set up an alert for the claim, at a desktop width (1440 px) and a phone's (390 px), without the page growing wider
than the screen."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot
from tests.claimed import claimed_csv

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def claimed(ws_a, import_files, tmp_path):
    import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    return ws_a


def _fits(page, width):
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1


@pytest.mark.parametrize("width", [1440, 390])
def test_a_search_saved_as_a_claim_has_its_page_and_an_alert(page, login, claimed, width):
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.goto(f"/w/{claimed.slug}/")
    box = page.get_by_role("searchbox").first
    box.fill("5g")
    box.press("Enter")
    hits = page.locator("ol.hit-list > li")
    expect(hits).to_have_count(3)
    expect(hits.first).to_contain_text("The virus spreads by 5G")  # the most relevant: 5G three times
    page.get_by_label("Order").select_option("newest")
    expect(page.locator("ol.hit-list > li").first).to_contain_text("Cause towers 5G")
    _fits(page, width)
    screenshot(page, f"claims-search-{width}")
    page.get_by_label("Follow this search as a claim").fill("5G towers")
    page.get_by_role("button", name="Save claim").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("5G towers")
    expect(page.get_by_role("region", name="Summary")).to_contain_text("3")
    page.wait_for_function("() => document.getElementById('claim-chart').chart !== undefined")
    assert page.evaluate("document.getElementById('claim-chart').chart.data.datasets.length") >= 2
    spreaders = page.locator("section[aria-labelledby='spreaders-h'] tbody tr")
    assert spreaders.count() >= 1
    publishers = page.locator("section[aria-labelledby='publishers-h'] tbody tr")
    expect(publishers).to_have_count(2)
    _fits(page, width)
    screenshot(page, f"claims-page-{width}")
    spreaders.first.get_by_role("button", name="Track").click()
    expect(page.locator("section[aria-labelledby='tracked-h'] tbody tr")).to_have_count(1)
    page.get_by_role("link", name="Set up an alert for this claim").click()
    expect(page.locator("#id_claim")).to_have_value(str(claimed.claims.get().pk))
    page.locator("#id_name").fill("5G: tracked accounts")
    page.get_by_role("button", name="Create the rule").click()
    expect(page.locator(".messages")).to_contain_text("Created the rule")
    _fits(page, width)


def test_a_bad_search_says_why_in_the_form(page, login, claimed):
    login()
    page.goto(f"/w/{claimed.slug}/claims/")
    page.get_by_label("Name", exact=True).fill("Nothing")
    page.get_by_label("Search", exact=True).fill("-virus")
    page.get_by_role("button", name="Save claim").click()
    expect(page.locator("#claim-query-error")).to_contain_text("not excluded")
