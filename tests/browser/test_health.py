"""The staff's health page in the browser at a desktop width (1440 px) and a phone's (390 × 844): no wider than the
viewport, its sections present, the runs of a workspace with waiting ones shown, and reached from the header's
Health link. Screenshots go to ``tests/browser/artifacts/health-<width>.png``."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from monitor import services
from tests.browser.pages import screenshot
from tests.browser.test_workspaces_tokens import WIDE, WIDTHS
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_health_page_fits_and_shows_waiting_runs(page, login, admin_user, ws_a, settings, width):
    settings.SPREADWATCH_MAX_RUNS_IN_FLIGHT = 1
    services.collection_create(workspace=ws_a, files=[THESIS / "tweets.csv", THESIS / "follows.csv"], compute=False)
    from monitor.models import ComputeRun

    # the first run computes at once (eager); two more are held waiting by a run left in flight
    for _ in range(3):
        run = services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="network", params={"samples": 0})
        ComputeRun.objects.filter(pk=run.pk, status="done").update(status="running")
    login("admin", "admin-pass-123")
    w, h = WIDTHS[width]
    page.set_viewport_size({"width": w, "height": h})
    page.goto("/help/")
    if width == "desktop":
        page.get_by_role("navigation", name="Sections").get_by_role("link", name="Health").click()
    else:
        page.goto("/health/")
    page.wait_for_load_state("load")
    expect(page.get_by_role("heading", name="Health", level=1)).to_be_visible()
    for heading in ("Queues", "Runs in flight and waiting", "Outbox", "Stalled work", "Workers"):
        expect(page.get_by_role("heading", name=heading, level=2)).to_be_visible()
    row = page.locator(f'tr[data-workspace="{ws_a.slug}"]')
    expect(row.locator("[data-in-flight]")).to_have_text("1")
    expect(row.locator("[data-waiting]")).to_have_text("2")
    wide = page.evaluate(WIDE)
    screenshot(page, f"health-{w}")
    assert not wide, f"wider than {w} px ({wide})"
