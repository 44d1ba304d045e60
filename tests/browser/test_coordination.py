"""The Coordination page in a real browser: start a run from the form, read the clusters (the drawing coloured by
cluster, the strip of each cluster's retweets), open a cluster and reach a coordinated account's badge, at a
desktop width (1440 px) and a phone's (390 px)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot
from tests.coordinated import PLANTED, coordinated_csv

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NET = "window.spreadwatchNetwork"


@pytest.fixture
def planted(ws_a, import_files, tmp_path):
    path, _ = coordinated_csv(tmp_path / "tweets.csv")
    import_files(ws_a, [path])
    return ws_a


@pytest.mark.parametrize("width", [1440, 390])
def test_it_finds_the_planted_cluster_from_the_form_and_opens_it(page, login, planted, width):
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.get_by_role("link", name="Coordination", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Coordination")
    expect(page.get_by_role("heading", name="No run yet")).to_be_visible()
    form = page.get_by_role("form", name="Start a coordination run")
    form.get_by_label("Window (seconds)").fill("10")
    form.get_by_label("Minimum tweets").fill("4")
    form.get_by_label("Backend").select_option("cpu")
    # the live estimate answers for these parameters before the run is started
    expect(form.locator("[data-estimate-text]")).to_contain_text("pairs", timeout=10_000)
    form.get_by_role("button", name="Start run").click()
    expect(page.locator(".messages")).to_contain_text("Coordination run")
    cards = page.get_by_role("region", name="Summary")
    expect(cards).to_contain_text("clusters")
    rows = page.locator("section[aria-labelledby='clusters-h'] tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first.locator("td").nth(1)).to_have_text("5")
    assert rows.first.locator("svg.strip rect").count() >= 1
    page.wait_for_function(f"() => {NET} && {NET}.graph.order === 5")
    assert page.evaluate(f"{NET}.graph.size") == 10
    assert len(set(page.evaluate(f"{NET}.graph.mapNodes((id, a) => a.color)"))) == 1  # one cluster, one colour
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    screenshot(page, f"coordination-results-{width}")

    rows.first.get_by_role("link", name="Open").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Coordinated cluster 1")
    members = page.locator("section[aria-labelledby='members-h'] tbody tr")
    expect(members).to_have_count(5)
    expect(page.locator("section[aria-labelledby='tweets-h'] tbody tr").first).to_contain_text("5")
    assert page.locator(".coord-strip rect").count() >= 1
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    screenshot(page, f"coordination-cluster-{width}")

    members.first.locator("a").first.click()
    expect(page.locator(".coordination-badge")).to_contain_text("cluster 1")
    expect(page.locator(".coordination-badge")).to_contain_text("4 coordinated partners")
    assert int(page.url.rstrip("/").split("/")[-1]) in PLANTED
    screenshot(page, f"coordination-badge-{width}")
