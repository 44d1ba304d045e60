"""The Network page in a real browser: start a run from the page's form, read its results (summary, the log-log
charts, the brokers beside their influence rank, the conversations drawn), open a component and an account's
neighbourhood from there, at a desktop width (1440 px) and a phone's (390 px)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


NET = "window.spreadwatchNetwork"


def _drawn(page) -> dict:
    page.wait_for_function(f"() => {NET} && {NET}.graph.order > 0")
    page.locator("#net-cy").scroll_into_view_if_needed()
    box = page.locator("#net-cy").bounding_box()
    positions = page.evaluate(f"{NET}.graph.mapNodes(id => {NET}.position(id))")
    # every drawn node lies inside the visible graph area (the camera fits the server's layout)
    assert all(0 <= p["x"] <= box["width"] and 0 <= p["y"] <= box["height"] for p in positions), positions
    return {
        "labels": sorted(page.evaluate(f"{NET}.graph.mapNodes((id, a) => a.label)")),
        "edges": page.evaluate(f"{NET}.graph.size"),
        "box": box,
    }


@pytest.mark.parametrize("width", [1440, 390])
def test_it_starts_a_network_run_and_reads_its_results_and_a_neighbourhood(page, login, loaded, width):
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.get_by_role("link", name="Network", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Network")
    expect(page.get_by_role("heading", name="No run yet")).to_be_visible()
    screenshot(page, f"network-empty-{width}")

    # start an exact run from the form (the eager Celery of the tests computes it inside the request)
    form = page.get_by_role("form", name="Start a network run")
    form.get_by_label("Samples").fill("0")
    form.get_by_label("Backend").select_option("cpu")
    form.get_by_role("button", name="Start run").click()
    expect(page.locator(".messages")).to_contain_text("Network run")
    expect(page.get_by_role("heading", name=re.compile(r"Run \d+: the follower graph"))).to_be_visible()

    cards = page.get_by_role("region", name="Summary")
    expect(cards).to_contain_text("6")
    expect(cards).to_contain_text("accounts")
    # the charts are drawn (Chart.js sets their size), the brokers table leads with b, which has no rank among the
    # spreaders (it only published: its influence is its tweets' reach, left out as on the ranking page)
    page.wait_for_function("() => window.spreadwatchNetworkCharts && window.spreadwatchNetworkCharts.every(c => c)")
    assert page.locator("#components-chart").bounding_box()["height"] > 100
    first = page.locator("section[aria-labelledby='brokers-h'] tbody tr").first
    expect(first.locator("td").nth(1)).to_have_text("@b")
    expect(first.locator("td").nth(3)).to_have_text("–")
    # the conversation graph: a <-> b, drawn once
    drawn = _drawn(page)
    assert drawn["labels"] == ["@a", "@b"] and drawn["edges"] == 1
    assert drawn["box"]["width"] <= width
    # nothing overflows the page sideways
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    screenshot(page, f"network-results-{width}")

    # a node's numbers on hover
    pos = page.evaluate(f"{NET}.position({NET}.node('@b'))")
    page.mouse.move(drawn["box"]["x"] + pos["x"], drawn["box"]["y"] + pos["y"])
    expect(page.locator("#net-tip")).to_contain_text("betweenness")

    # the largest component, then a broker's neighbourhood
    page.locator("section[aria-labelledby='largest-h']").get_by_role("link", name="Open").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Component 0")
    assert _drawn(page)["edges"] == 8
    screenshot(page, f"network-component-{width}")

    page.goto(f"/w/{loaded.slug}/accounts/106/")
    page.get_by_role("button", name="Neighbourhood").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Neighbourhood of")
    page.get_by_label("Depth").select_option("2")
    page.get_by_role("button", name="Show").click()
    drawn = _drawn(page)
    assert drawn["labels"] == ["@b", "@c", "@e", "@f"] and drawn["edges"] == 4
    centre = page.evaluate(
        f"{NET}.graph.filterNodes((id, a) => a.centre).map(id => {NET}.graph.getNodeAttribute(id, 'label'))"
    )
    assert centre == ["@f"]
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    screenshot(page, f"network-neighbourhood-{width}")


@pytest.mark.parametrize("width", [1440, 390])
def test_the_communities_are_listed_drawn_in_colour_and_opened(page, login, loaded, run_tasks, width):
    from monitor import services

    run = run_tasks(
        services.compute_run_start, workspace=loaded, backend="cpu", algorithm="network", params={"samples": 0}
    )
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.goto(f"/w/{loaded.slug}/network/runs/{run.pk}/")
    section = page.locator("section[aria-labelledby='communities-h']")
    expect(section.get_by_role("heading", name="Communities")).to_be_visible()
    expect(section).to_contain_text("modularity is")
    rows = section.locator("tbody tr")
    assert rows.count() >= 1
    # e (105) is the workspace's first spreader: its community names it with its rank
    expect(section).to_contain_text("@e")
    expect(section).to_contain_text("#1")
    # the conversation graph is coloured by conversation; the choice recolours it by community, and says so
    _drawn(page)
    before = page.evaluate(f"{NET}.graph.mapNodes((id, a) => a.color)")
    drawing = page.locator(".network-drawing")
    drawing.get_by_label("Colour the drawing by").select_option("community")
    expect(drawing.locator("[data-colour-legend]")).to_contain_text("modularity community")
    after = page.evaluate(f"{NET}.graph.mapNodes((id, a) => a.color)")
    assert after != before or len(set(after)) == 1, (before, after)
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    screenshot(page, f"network-communities-{width}")

    section.get_by_role("link", name="Open").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Community 1")
    expect(page.locator("p.lead")).to_contain_text("to the partition's modularity")
    drawn = _drawn(page)
    assert drawn["edges"] >= 1 and drawn["box"]["width"] <= width
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    screenshot(page, f"network-community-{width}")
