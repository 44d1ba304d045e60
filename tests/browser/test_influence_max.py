"""The counter-campaign planner in a real browser: from a publisher's ranking to its planner, plan K accounts, read
the chosen accounts, the reach with its interval, the curve and the top spreaders beside them, download the CSV;
looked at on a desktop (1440 px) and a phone (390 px) without the page overflowing sideways."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from monitor.models import ComputeRun, InfluenceMaxResult, InfluenceMaxSeed
from monitor.numbers import readable
from tests.browser.pages import field, screenshot
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _overflow(page) -> int:
    """How far the page is wider than the viewport (0: nothing to scroll sideways)."""
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


def test_an_analyst_plans_a_counter_campaign_for_a_publisher(page, login, loaded):
    login()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(f"/w/{loaded.slug}/publishers/102/")
    page.get_by_role("button", name="Plan a counter-campaign").click()  # a link styled as a button
    expect(page).to_have_url(re.compile(rf"/w/{loaded.slug}/publishers/102/counter-campaign/$"))
    expect(page.get_by_role("heading", name="No plan yet")).to_be_visible()
    screenshot(page, "counter-campaign-empty")

    form = page.get_by_role("form", name="Plan a counter-campaign")
    field(form, "Accounts (K)").fill("3")
    field(form, "p").fill("0.3")
    field(form, "Evaluation cascades").fill("2000")
    field(form, "Batches").fill("2")
    form.get_by_role("button", name="Plan").click()  # Celery is eager: the plan is computed in the request

    expect(page.locator("ul.messages")).to_contain_text(re.compile(r"Plan \d+ queued"))
    run = ComputeRun.objects.get(algorithm="influence_max")
    assert run.status == ComputeRun.Status.DONE, run.error
    res = InfluenceMaxResult.objects.get(run=run)
    seeds = list(InfluenceMaxSeed.objects.filter(run=run).order_by("rank").select_related("account"))
    rows = page.locator("table[data-seeds] tbody tr")
    expect(rows).to_have_count(3)
    for row, s in zip(rows.all(), seeds, strict=True):
        expect(row.locator("td").nth(1)).to_contain_text(s.account.screen_name)
    expect(page.locator("[data-spread]")).to_have_text(readable(res.spread))  # the number format of every page
    explanation = page.locator("[data-explanation]")
    expect(explanation).to_contain_text("95 % confidence")
    expect(explanation.get_by_role("link", name="docs/influence_max.md")).to_have_attribute(
        "href", "/docs/influence_max/"
    )
    expect(page.locator("table[data-baseline] tbody tr")).to_have_count(3)  # e, f, c: b's top spreaders
    # the curve is drawn: Chart.js sized the canvas and holds the curve's K points
    page.wait_for_function("() => window.Chart && Chart.getChart('im-curve')")
    assert page.evaluate("() => Chart.getChart('im-curve').data.datasets[0].data.length") == 3
    assert _overflow(page) <= 0
    screenshot(page, "counter-campaign-1440")

    with page.expect_download() as download:
        page.get_by_role("link", name="CSV").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith("rank,twitter_id,screen_name,marginal_gain")
    assert len(text.splitlines()) == 4

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(rows).to_have_count(3)
    assert _overflow(page) <= 0  # wide tables scroll inside their frame
    screenshot(page, "counter-campaign-390")
