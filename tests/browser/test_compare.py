"""Compare publishers in a real browser, as an analyst gets there: from a publisher's page ("Compare with…"),
adding publishers with the searchable picker, reading the overlap matrix, the side-by-side top lists and the
shared accounts, downloading the CSV; and the error a bad link gets. At 1440 px and 390 px, with no page wider
than the viewport. Screenshots: ``tests/browser/artifacts/compare-<state>-<width>.png``."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot
from tests.monitor.selectors.test_compare import write_three

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def three(ws_a):
    return write_three(ws_a)


def _overflow(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.parametrize("width", [1440, 390])
def test_an_analyst_compares_three_publishers(page, login, ws_a, three, width, tmp_path):
    page.set_viewport_size({"width": width, "height": 844 if width < 500 else 900})
    login()
    page.goto(f"/w/{ws_a.slug}/publishers/500/")
    page.get_by_role("button", name="Compare with…").click()  # a link styled as a button
    expect(page).to_have_url(re.compile(rf"/w/{ws_a.slug}/compare/\?p=500$"))
    expect(page.get_by_text("Choose one more publisher to compare their spreaders.")).to_be_visible()
    assert _overflow(page) <= 0
    screenshot(page, f"compare-one-{width}")

    # the picker: type a screen name, the list narrows to it, Add
    picker = page.get_by_role("form", name="Add a publisher")
    picker.get_by_role("searchbox", name=re.compile("Filter the publishers")).fill("q")
    expect(picker.locator("select[name=p]")).to_have_value("501")
    picker.get_by_role("button", name="Add").click()
    expect(page.get_by_role("heading", name="Overlap of the top 10")).to_be_visible()
    picker = page.get_by_role("form", name="Add a publisher")
    picker.get_by_role("searchbox", name=re.compile("Filter the publishers")).fill("502")
    picker.get_by_role("button", name="Add").click()
    expect(page).to_have_url(re.compile(r"\?p=500&p=501&p=502$"))

    # top 5 (the fixture's lists are five long at most)
    options = page.get_by_role("form", name="Comparison options")
    options.get_by_label("Spreaders").select_option("5")
    options.get_by_role("button", name="Show").click()
    expect(page.get_by_role("heading", name="Overlap of the top 5")).to_be_visible()
    matrix = page.locator("table.overlap tbody tr")
    expect(matrix).to_have_count(3)
    # P and R share a and d of seven accounts
    expect(matrix.nth(0).locator("td").nth(2)).to_have_text(re.compile(r"2\s*J 0\.29"))
    expect(page.get_by_role("heading", name="Shared accounts (5)")).to_be_visible()
    first = page.locator("table.shared-table tbody tr").first
    expect(first.locator("th")).to_have_text("@a")
    expect(first.locator("td").nth(0)).to_have_text("3")
    expect(page.locator(".compare-column")).to_have_count(3)
    expect(page.locator(".compare-column").first.locator("tbody tr.shared")).to_have_count(4)  # a, b, c, d
    assert _overflow(page) <= 0
    screenshot(page, f"compare-three-{width}")

    with page.expect_download() as info:
        page.get_by_role("button", name="Download CSV").click()
    d = info.value
    assert d.suggested_filename == "newsroom-compare-500-501-502-top5-total.csv"
    path = tmp_path / d.suggested_filename
    d.save_as(path)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("publisher_twitter_id,publisher_screen_name,rank,twitter_id")
    assert len(lines) == 1 + 5 + 5 + 4

    # remove one: back to two
    page.get_by_role("link", name="Remove @R from the comparison").click()
    expect(page).to_have_url(re.compile(r"p=500&p=501"))
    expect(page.locator(".compare-column")).to_have_count(2)


@pytest.mark.parametrize("width", [1440, 390])
def test_a_bad_link_says_what_is_wrong(page, login, ws_a, three, width):
    page.set_viewport_size({"width": width, "height": 844})
    login()
    r = page.goto(f"/w/{ws_a.slug}/compare/?p=500&p=500&p=999")
    assert r.status == 400
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("These publishers cannot be compared")
    expect(alert).to_contain_text("Each publisher once: 500 was chosen twice.")
    assert _overflow(page) <= 0
    screenshot(page, f"compare-error-{width}")
