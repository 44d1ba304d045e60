"""Who amplifies whom end to end: an analyst computes an account's look-alike accounts and likely next
amplifiers from its page, builds a publisher's watch list and subscribes to its alert with one button, and a
later upload in which an account of the list starts spreading the publisher raises the alert in the inbox.
Each page is looked at at 1440 px and at 390 px (a phone) and kept as a screenshot.

The worked example in two uploads: tweet 1000's cascade without d's retweet, then tweet 2000's with a retweet by
d. Walking a's followers, d and e are likely next amplifiers (they follow b and c, who follow a), so both are on
b's watch list; d starts spreading b with the second upload."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import screenshot, upload
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"wide": (1440, 900), "phone": (390, 844)}
D_DAY_1 = "1001,1000,104,2020-01-01T00:00:01Z,8,d"
D_DAY_2 = "2005,2000,104,2020-01-02T00:00:05Z,8,d"


def two_uploads(tmp_path):
    header, *rows = (THESIS / "tweets.csv").read_text().splitlines()
    rows = [r for r in rows if r != D_DAY_1]
    out = []
    for tid, extra in (("1000", []), ("2000", [D_DAY_2])):
        d = tmp_path / tid
        d.mkdir()
        lines = [r for r in rows if tid in r.split(",")[:2]] + extra
        (d / "tweets.csv").write_text("\n".join([header, *lines]) + "\n")
        out.append([d / "tweets.csv", THESIS / "follows.csv"])
    return out


# the elements of a section that reach past the screen's right edge, outside a horizontally scrolling table wrap
WIDEST = """(sel) => [...document.querySelectorAll(sel + ' *')]
  .filter(e => !e.closest('.table-wrap') && e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .map(e => e.tagName.toLowerCase() + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))
  .slice(0, 5)"""


def look(page: Page, name: str, section: str) -> None:
    """Screenshots at both widths; at each, the section is on screen and nothing of it reaches past the screen's
    edge (its tables scroll inside their own wrapper; the page around it is not this test's)."""
    for label, (w, h) in WIDTHS.items():
        page.set_viewport_size({"width": w, "height": h})
        page.locator(section).scroll_into_view_if_needed()
        expect(page.locator(section)).to_be_visible()
        screenshot(page, f"{name}-{label}")
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        wide = page.evaluate(WIDEST, section)
        assert overflow <= 0 or not wide, f"{name} at {w} px: {wide} overflow the screen"
    page.set_viewport_size({"width": 1280, "height": 900})


def test_it_computes_the_panels_and_alerts_when_a_watched_account_starts_spreading(page, login, ws_a, tmp_path):
    first, second = two_uploads(tmp_path)
    login()
    upload(page, ws_a.slug, first, name="tweet 1000")

    # the account page: both panels, not computed, then computed with their parameters
    page.goto(f"/w/{ws_a.slug}/accounts/105/")
    panels = page.locator("#wtf")
    expect(panels.locator("#wtf-lookalikes")).to_contain_text("Not computed yet.")
    expect(panels.locator("#wtf-amplifiers")).to_contain_text("Not computed yet.")
    expect(panels.get_by_role("link", name="How it is computed")).to_be_visible()
    panels.get_by_role("button", name="Compute look-alikes and likely next amplifiers").click()
    expect(page).to_have_url(re.compile(r"/accounts/105/#wtf$"))
    expect(page.locator(".messages")).to_contain_text("Computing the look-alike accounts")
    lookalikes = page.locator("#wtf-lookalikes")
    expect(lookalikes).to_contain_text("circle of trust")
    expect(lookalikes.get_by_role("link", name="@a")).to_be_visible()
    expect(page.locator("#wtf-amplifiers")).to_contain_text("PageRank")
    look(page, "wtf-account", "#wtf")

    # the publisher page: the watch list, who points to each, and its alert rule
    page.goto(f"/w/{ws_a.slug}/publishers/102/")
    watch = page.locator("#watchlist")
    expect(watch).to_contain_text("Not computed yet.")
    watch.get_by_role("button", name="Compute the watch list").click()
    expect(page).to_have_url(re.compile(r"/publishers/102/#watchlist$"))
    rows = page.locator("#watchlist table tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("@e")
    expect(rows.nth(1)).to_contain_text("104")  # d: no screen name yet, its only tweet comes with the second upload
    expect(rows.nth(1)).to_contain_text("@a #2")
    expect(rows.nth(1)).to_contain_text("Not yet")  # d has not spread b
    expect(rows.nth(0)).to_contain_text("Already spreads")
    look(page, "wtf-watchlist", "#watchlist")
    page.get_by_role("button", name=re.compile("Alert me when one of them starts spreading")).click()
    expect(page.locator("#watchlist")).to_contain_text("You are alerted when an account on this list starts spreading")

    # d starts spreading b: the rule fires on the upload's evaluation
    upload(page, ws_a.slug, second, name="tweet 2000")
    page.goto(f"/w/{ws_a.slug}/alerts/")
    expect(page.locator("main")).to_contain_text("@d, on the watch list of @b (a likely next amplifier of @a)")
    look(page, "wtf-alert-inbox", "main")
    page.goto(f"/w/{ws_a.slug}/publishers/102/")
    expect(page.locator("#watchlist table tbody tr").nth(1)).to_contain_text("Already spreads")


def test_the_panels_follow_a_run_going_and_show_its_lists_when_it_ends(page, login, ws_a, monkeypatch):
    from monitor.services import runs

    login()
    upload(page, ws_a.slug, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    queued: list[int] = []
    monkeypatch.setattr(runs, "_queue_batches", queued.extend)  # no worker takes the batch until the test does
    page.goto(f"/w/{ws_a.slug}/accounts/105/")
    page.locator("#wtf").get_by_role("button", name="Compute look-alikes and likely next amplifiers").click()
    progress = page.locator("#wtf .wtf-progress")
    expect(progress).to_contain_text("0 of 1 batch of seeds done")
    expect(page.locator("#wtf").get_by_role("button", name=re.compile("Compute"))).to_be_disabled()
    screenshot(page, "wtf-account-running")
    assert len(queued) == 1
    runs.compute_batch_run(batch_id=queued[0])  # the worker: progress.js sees the run end and reloads the page
    expect(page.locator("#wtf-lookalikes").get_by_role("link", name="@a")).to_be_visible(timeout=15_000)
    expect(page.locator("#wtf .wtf-progress")).to_have_count(0)
