"""Cost budgets in a real browser: the start forms show the run's estimate before it starts and update it as a
parameter changes; a run beyond the workspace's budget says why on the form (before and after the submit);
at 1440 px and 390 px without the page overflowing sideways."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from monitor.models import ComputeRun
from tests.browser.pages import field, screenshot
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _overflow(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.parametrize("width", [1440, 390])
def test_the_planner_shows_its_estimate_and_a_refusal_on_eps(page, login, loaded, width, monkeypatch):
    from compute import costs

    loaded.budget_run_seconds = 600
    loaded.save()
    login()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"/w/{loaded.slug}/publishers/102/counter-campaign/")
    form = page.get_by_role("form", name="Plan a counter-campaign")
    box = form.locator(".run-estimate")
    text = box.locator("[data-estimate-text]")
    expect(text).to_contain_text(re.compile(r"Estimated: about .* of worker time on one CPU worker"))
    expect(text).to_contain_text("budget: 10 min per run")
    first = text.inner_text()

    field(form, "Evaluation cascades").fill("1000000")  # a million Monte-Carlo cascades cost more
    expect(text).not_to_have_text(first)
    field(form, "Evaluation cascades").fill("20000")

    # the thesis' audience of 5 as if it were millions: eps 0.01 (100 times the RR sets of 0.1) is over 10 min
    monkeypatch.setattr(costs, "RR_SECONDS_PER_SET", 0.01)
    field(form, "ε").fill("0.01")
    errors = box.locator("[data-estimate-errors]")
    expect(errors).to_contain_text(re.compile(r"eps: 0\.01 with k \d+ needs about .* budget is 10 min"))
    expect(box).to_have_class(re.compile(r"\bover\b"))
    screenshot(page, f"budget-planner-refused-{width}")
    assert _overflow(page) <= 0

    form.get_by_role("button", name="Plan").click()
    expect(page.locator(".errorlist").first).to_contain_text(re.compile(r"eps: 0\.01 with k \d+ needs about"))
    assert not ComputeRun.objects.filter(algorithm="influence_max").exists()
    page.wait_for_load_state()  # the 400 page's styles applied before its width is measured
    screenshot(page, f"budget-planner-refused-submitted-{width}")
    assert _overflow(page) <= 0


@pytest.mark.parametrize("width", [1440, 390])
def test_the_network_form_updates_its_estimate_with_samples(page, login, loaded, width):
    login()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"/w/{loaded.slug}/network/")
    form = page.get_by_role("form", name="Start a network run")
    text = form.locator("[data-estimate-text]")
    expect(text).to_contain_text("Estimated: about")
    field(form, "Samples").fill("3")
    expect(text).to_contain_text("Estimated: about")
    field(form, "Samples").fill("-4")  # invalid: the endpoint's 400 is shown
    expect(form.locator("[data-estimate-errors]")).to_contain_text("samples: from 0 to")
    screenshot(page, f"budget-network-estimate-{width}")
    assert _overflow(page) <= 0


@pytest.mark.parametrize("width", [1440, 390])
def test_an_account_s_wtf_form_shows_its_estimate_and_the_run_page_estimate_beside_actual(
    page, login, loaded, width, settings
):
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 0  # the form as it reads before any list: "Compute look-alikes ..."
    login()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"/w/{loaded.slug}/accounts/102/")
    form = page.locator("form.wtf-start")
    text = form.locator("[data-estimate-text]")
    expect(text).to_contain_text("Estimated: about")
    form.locator("summary", has_text="Parameters").click()
    before = text.inner_text()
    field(form, "Iteration cap").fill("1000")
    expect(text).not_to_have_text(before)
    field(form, "Iteration cap").fill("100")
    form.get_by_role("button", name=re.compile("Compute look-alikes")).click()  # eager: computed in the request
    run = ComputeRun.objects.get(algorithm="wtf")
    assert run.status == ComputeRun.Status.DONE and run.estimate["drivers"]["seeds"] == 1
    page.goto(f"/w/{loaded.slug}/runs/{run.pk}/")
    expect(page.locator("[data-run-estimate]")).to_contain_text("of worker time on one CPU worker")
    expect(page.locator("[data-run-measured]")).to_contain_text("of worker time (its batches")
    screenshot(page, f"budget-run-page-{width}")
    assert _overflow(page) <= 0


@pytest.mark.parametrize("width", [1440, 390])
def test_the_estimate_wraps_while_it_is_being_asked_for(page, login, loaded, width):
    """While the estimate is asked for, the box is busy (Pico draws its spinner and, by default, stops the text
    from wrapping): its text still wraps, so a phone's page never scrolls sideways for that moment."""
    held = []
    login()
    page.set_viewport_size({"width": width, "height": 900})
    page.route("**/runs/estimate/?**", lambda route: held.append(route))  # never answered while the page is measured
    page.goto(f"/w/{loaded.slug}/accounts/102/")
    box = page.locator("form.wtf-start .run-estimate")
    expect(box).to_have_attribute("aria-busy", "true")
    screenshot(page, f"budget-estimate-busy-{width}")
    assert _overflow(page) <= 0
    assert box.bounding_box()["width"] <= width
    for route in held:
        route.continue_()
    page.unroute("**/runs/estimate/?**")
    expect(box.locator("[data-estimate-text]")).to_contain_text("Estimated: about")
    expect(box).not_to_have_attribute("aria-busy", "true")
