"""The demo's upload with no broker, in background mode (``SPREADWATCH_EAGER_IN_BACKGROUND``): the upload
answers at once, the collection page follows the import live on one bar named by its phase (reading, storing,
computing, storing results, aggregates), and the bar says 100 % only when the page says Done. At 1440 px and
390 px (no horizontal overflow)."""

from __future__ import annotations

import re
import threading
import time

import pytest
from playwright.sync_api import expect

from monitor import jobs
from tests.browser.pages import IMPORT_TIMEOUT_MS, choose_files, screenshot, submit_upload, wait_until_done
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHASES = ["Reading", "Storing", "Computing", "Storing results", "Aggregates"]
# each phase is held this long after it is published, so the page (polling every 1.5 s) sees every one of them
# with the worked example, whose phases take milliseconds
HOLD_S = 2.5


@pytest.fixture
def slow_phases(monkeypatch, settings):
    """Background mode, and every phase held ``HOLD_S`` seconds on the background thread once it is published."""
    import monitor.services.collections as collections_service
    import monitor.services.runs as runs_service
    from monitor.progress import import_percent

    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True
    real_reporter, real_phase = collections_service._progress_reporter, runs_service._phase
    last = {"phase": None}

    def hold(phase):
        if phase != last["phase"]:
            last["phase"] = phase
            time.sleep(HOLD_S)

    def reporter(c):
        report = real_reporter(c)

        def progress(stage, frac):
            report(stage, frac)
            hold(import_percent(frac)[0])

        return progress

    def run_phase(run, batch, phase):
        real_phase(run, batch, phase)
        hold(phase)

    monkeypatch.setattr(collections_service, "_progress_reporter", reporter)
    monkeypatch.setattr(runs_service, "_phase", run_phase)
    yield
    jobs.background_idle(timeout=60)


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_the_collection_page_follows_every_phase_and_says_done_only_when_done(
    page, login, ws_a, slow_phases, width, height
):
    page.set_viewport_size({"width": width, "height": height})
    login()
    choose_files(page, ws_a.slug, [THESIS / "tweets.csv", THESIS / "follows.csv"], name="worked example")
    gate = threading.Event()
    jobs._background().submit(gate.wait, 60)  # the import waits until the page is shown
    try:
        submit_upload(page)  # answered before the import ran: the page shows it waiting
        expect(page.locator("[data-status-badge] .badge")).to_have_text("Queued")
        expect(page.locator("[data-progress-phase]")).to_have_text("Reading")
        expect(page.locator("[data-progress-step]")).to_have_text("(step 1 of 5)")
        expect(page.locator(".messages")).to_contain_text("the import has started")
        expect(page.get_by_role("button", name="Cancel import")).to_be_visible()
    finally:
        gate.set()

    bar = page.locator("[data-progress-bar]")
    values = []
    for i, name in enumerate(PHASES):
        expect(page.locator("[data-progress-phase]")).to_have_text(name, timeout=IMPORT_TIMEOUT_MS)
        expect(page.locator("[data-progress-step]")).to_have_text(f"(step {i + 1} of 5)")
        values.append(bar.evaluate("el => el.value"))
        assert values[-1] < 100
        expect(page.locator("[data-status-badge] .badge")).not_to_have_text("Done")
        expect(page.locator("[data-progress-percent]")).not_to_have_text("100 %")
        if name == "Computing":
            expect(page.locator("[data-progress-stage]")).to_have_text(re.compile(r"^Batch 1 of 1$|^Waiting"))
            # the page follows the status too: the facts say it, and the import can no longer be cancelled
            expect(page.locator("[data-status-fact]")).to_have_text("Computing")
            expect(page.get_by_role("button", name="Cancel import")).to_be_hidden()
            screenshot(page, f"upload-progress-computing-{width}")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert values == sorted(values) and values[0] < values[-1]

    wait_until_done(page)
    assert bar.evaluate("el => el.value") == 100
    expect(page.locator("[data-progress-percent]")).to_have_text("100 %")
    expect(page.locator("[data-progress-stage]")).to_have_text("Done")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    screenshot(page, f"upload-progress-done-{width}")
