"""Pages that agree with themselves (issue 40), in a real browser at a desktop width (1440 px) and a phone's
(390 px): the overview's top spreaders leave the publisher out as its page does, the runs table shows each
algorithm's own parameters and results, the collection page fits a phone's screen with its counts readable, and
the network page counts its conversation edges as its downloads do."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from monitor import services
from monitor.models import Account, ComputeRun
from tests.browser.pages import screenshot
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [1440, 390]


@pytest.fixture
def loaded(ws_a, import_files):
    """The thesis' worked example, imported and computed (b, 102, is its only publisher): the collection, b and
    the arguments that start a run on it."""
    collection = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    b = Account.objects.get(workspace=ws_a, twitter_id=102)
    start = {"workspace": ws_a, "backend": "cpu"}
    return collection, b, start


def _no_sideways_scroll(page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("width", WIDTHS)
def test_the_overview_and_the_ranking_leave_the_publisher_out_like_its_page(page, login, loaded, width):
    page.set_viewport_size({"width": width, "height": 900})
    login()
    top = page.locator("section", has=page.get_by_role("heading", name="Top spreaders", exact=True))
    names = top.locator("table tbody tr td:nth-child(2)").all_inner_texts()
    assert names == ["@e", "@f", "@c", "@a", "@d"], names  # b, the publisher, is not its own #1
    expect(top.locator("caption")).to_contain_text("its own tweets left out")
    _no_sideways_scroll(page, width)
    screenshot(page, f"consistent-overview-{width}")
    page.get_by_role("link", name="Ranking", exact=True).click()
    rows = page.locator("table.ranking tbody tr td:nth-child(2)").all_inner_texts()
    assert rows == ["@e", "@f", "@c", "@a", "@d"], rows


@pytest.mark.parametrize("width", WIDTHS)
def test_the_runs_table_shows_each_algorithms_own_parameters(page, login, loaded, run_tasks, width):
    _, b, start = loaded
    run_tasks(services.compute_run_start, **start, algorithm="network", params={"samples": 0})
    run_tasks(
        services.compute_run_start,
        **start,
        algorithm="influence_max",
        params={"publisher": b.pk, "k": 2, "p": 0.3, "evaluate": 2000},
    )
    assert not ComputeRun.objects.exclude(status=ComputeRun.Status.DONE).exists()
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.get_by_role("link", name="Compute runs", exact=True).click()
    rows = page.locator("table tbody tr")
    network = rows.filter(has_text="Network analytics")
    expect(network.locator("[data-run-params]")).to_contain_text("graph follows")
    expect(network.locator("[data-run-params]")).to_contain_text("betweenness exact")
    expect(network.locator("[data-run-results]")).to_have_text("6 accounts, 8 edges")
    planner = rows.filter(has_text="Counter-campaign planner")
    expect(planner.locator("[data-run-params]")).to_contain_text("publisher @b, K 2, model uniform p = 0.3")
    expect(planner.locator("[data-run-results]")).to_contain_text("2 accounts chosen")
    influence = rows.filter(has_text="Influence measure")
    expect(influence.locator("[data-run-params]")).to_contain_text("orphans strict")
    expect(influence.locator("[data-run-results]")).to_contain_text("2 cascades")
    for row in (network, planner):
        text = row.inner_text()
        assert "orphans" not in text and "cascades" not in text and "recompute" not in text, text
    _no_sideways_scroll(page, width)
    screenshot(page, f"consistent-runs-{width}")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_collection_page_fits_the_screen_with_its_counts_readable(page, login, loaded, width):
    collection, _, _ = loaded
    # the counts of a million-retweet import (seven digits), as the issue saw them
    collection.counts = {k: 1_196_902 + i for i, k in enumerate(collection.counts)}
    collection.save(update_fields=["counts"])
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.goto(f"/w/newsroom/collections/{collection.pk}/")
    expect(page.get_by_role("heading", name="Counts")).to_be_visible()
    page.locator("details.steps summary").first.click()  # the storing steps, by name
    _no_sideways_scroll(page, width)  # it was 413 px wide at 390, the counts clipped
    counts = page.locator("section", has=page.get_by_role("heading", name="Counts")).locator("dl.facts")
    for cell in page.locator("dl.facts dt, dl.facts dd").all():
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, (cell.inner_text(), box)
    expect(counts).to_contain_text("Records read (lines of the files)")
    screenshot(page, f"consistent-collection-{width}")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_network_page_counts_conversation_edges_as_its_downloads_do(page, login, loaded, run_tasks, width):
    *_, start = loaded
    run = run_tasks(services.compute_run_start, **start, algorithm="network", params={"samples": 0})
    page.set_viewport_size({"width": width, "height": 900})
    login()
    page.goto(f"/w/newsroom/network/runs/{run.pk}/")
    conv = page.locator("section[aria-labelledby='conv-h']")
    text = " ".join(conv.locator("p").first.inner_text().split())
    assert "from 6 accounts and 7 edges to 2 accounts and 1 edges (undirected" in text, text
    with page.expect_download() as got:
        conv.get_by_role("link", name="GEXF").click()
    gexf = Path(got.value.path()).read_text()
    assert gexf.count("<edge ") == 1
    _no_sideways_scroll(page, width)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_api_reference_loads_nothing_from_another_host(page, login, loaded, live_server, width):
    # issue 40: /api/v1/redoc/ fetched Google Fonts and a logo from cdn.redoc.ly (console errors offline); the
    # address now leads to Swagger UI, served whole from the installed packages
    page.set_viewport_size({"width": width, "height": 900})
    login()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto("/api/v1/redoc/")
    page.wait_for_load_state("networkidle")
    assert page.url.endswith("/api/v1/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Spreadwatch API")
    local = urlparse(live_server.url).hostname
    outside = [u for u in requests if urlparse(u).scheme in ("http", "https") and urlparse(u).hostname != local]
    assert not outside and not errors, (outside, errors)
    screenshot(page, f"consistent-api-docs-{width}")
