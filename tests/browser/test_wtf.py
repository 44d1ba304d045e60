"""Who amplifies whom end to end: an analyst computes an account's look-alike accounts and likely next
amplifiers from its page, builds a publisher's watch list and subscribes to its alert with one button, and a
later upload in which an account of the list starts spreading the publisher raises the alert in the inbox.
Each page is looked at at 1440 px and at 390 px (a phone) and kept as a screenshot. What the analyst reads: scores
as a percentage of the list's first with the exact value in a tooltip, "not converged" with what to change (the
iteration cap, raised from the form, converges it), the watch list's accounts that already spread the publisher
apart from the new ones, and while a recompute runs, the lists shown named as the previous result.

The worked example in two uploads: tweet 1000's cascade without d's retweet, then tweet 2000's with a retweet by
d. Walking a's followers, d and e are likely next amplifiers (they follow b and c, who follow a), so both are on
b's watch list; d starts spreading b with the second upload."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import Page, expect

from tests.browser.pages import screenshot, upload
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"wide": (1440, 900), "phone": (390, 844)}
D_DAY_1 = "1001,1000,104,2020-01-01T00:00:01Z,8,d"
D_DAY_2 = "2005,2000,104,2020-01-02T00:00:05Z,8,d"


@pytest.fixture(autouse=True)
def stored_only(settings):
    """Most tests here follow the lists a run stores: computing them when a page opens is off, except in the tests
    of that, which turn it on."""
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 0


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
    # the first account's score is the list's 100, its exact value a hover away; the rest read against it
    first = page.locator("#wtf-lookalikes tbody tr").first.locator("td").nth(2)
    expect(first).to_have_text("100")
    expect(first.locator("data")).to_have_attribute("title", re.compile(r"^Money similarity .*: [0-9.e-]+ exactly"))
    expect(lookalikes).to_contain_text("as a percentage of #1")
    # e's walks reach the cycle a <-> b: PageRank is not converged at the cap of 100, and the page says what to do
    expect(page.locator("#wtf-lookalikes .wtf-converged")).to_contain_text("PageRank stopped at its cap of 100")
    expect(page.locator("#wtf-lookalikes .wtf-converged")).to_contain_text("set Iteration cap to 150")
    look(page, "wtf-account", "#wtf")

    # the publisher page: the watch list, who points to each, and its alert rule
    page.goto(f"/w/{ws_a.slug}/publishers/102/")
    watch = page.locator("#watchlist")
    expect(watch).to_contain_text("Not computed yet.")
    watch.get_by_role("button", name="Compute the watch list").click()
    expect(page).to_have_url(re.compile(r"/publishers/102/#watchlist$"))
    # d has not spread b: the list to watch; e already spreads it: apart, behind a count
    rows = page.locator("#watchlist table").first.locator("tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.nth(0)).to_contain_text("104")  # d: no screen name yet, its only tweet comes with the second upload
    expect(rows.nth(0)).to_contain_text("@a #2")
    already = page.locator("#watchlist details.wtf-already")
    expect(already.locator("summary")).to_have_text("1 already spreads @b: show")
    expect(already.locator("table")).to_be_hidden()
    already.locator("summary").click()
    expect(already.locator("tbody tr")).to_have_count(1)
    expect(already.locator("tbody tr").first).to_contain_text("@e")
    look(page, "wtf-watchlist", "#watchlist")
    page.get_by_role("button", name=re.compile("Alert me when one of them starts spreading")).click()
    expect(page.locator("#watchlist")).to_contain_text("You are alerted when an account on this list starts spreading")

    # d starts spreading b: the rule fires on the upload's evaluation
    upload(page, ws_a.slug, second, name="tweet 2000")
    page.goto(f"/w/{ws_a.slug}/alerts/")
    expect(page.locator("main")).to_contain_text("@d, on the watch list of @b (a likely next amplifier of @a)")
    look(page, "wtf-alert-inbox", "main")
    page.goto(f"/w/{ws_a.slug}/publishers/102/")
    expect(page.locator("#watchlist")).to_contain_text("Every account on the list already spreads @b")
    expect(page.locator("#watchlist details.wtf-already summary")).to_have_text("2 already spread @b: show")


def test_a_cold_workspace_s_account_page_opens_with_both_panels_filled_within_2_s(page, login, ws_a, settings):
    settings.SPREADWATCH_WTF_ON_OPEN_EDGES = 3_000_000  # the default
    login()
    upload(page, ws_a.slug, [THESIS / "tweets.csv", THESIS / "follows.csv"])  # its warm-up leaves the panels cold
    t = time.perf_counter()
    page.goto(f"/w/{ws_a.slug}/accounts/101/")  # a: walking its followers, d and e are its likely next amplifiers
    amplifiers = page.locator("#wtf-amplifiers")
    expect(amplifiers.get_by_role("link", name="@d")).to_be_visible(timeout=2_000)
    expect(amplifiers.get_by_role("link", name="@e")).to_be_visible(timeout=1)
    expect(page.locator("#wtf-lookalikes .wtf-on-open")).to_have_text("when this page was first opened", timeout=1)
    assert time.perf_counter() - t < 2.0
    expect(page.locator("#wtf .wtf-progress")).to_have_count(0)
    expect(page.locator("#wtf").get_by_role("button", name="Store both lists with a run")).to_be_enabled()
    look(page, "wtf-account-on-open", "#wtf")


def test_lists_estimated_by_a_local_method_say_so_at_both_widths(page, login, ws_a, django_capture_on_commit_callbacks):
    """A run started through the API with ``method=fora``: each panel names the method, its epsilon and walks, and
    that it is not the exact method."""
    from monitor.services import compute_run_start

    login()
    upload(page, ws_a.slug, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    params = {"accounts": ["105"], "method": "fora", "epsilon": 1e-4, "walks": 20000}
    with django_capture_on_commit_callbacks(execute=True):
        compute_run_start(workspace=ws_a, algorithm="wtf", params=params)
    page.goto(f"/w/{ws_a.slug}/accounts/105/")
    for panel in ("#wtf-lookalikes", "#wtf-amplifiers"):
        note = page.locator(f"{panel} .wtf-method")
        expect(note).to_contain_text("PageRank estimated by fora (ε = 0.0001, 20,000 walks per unit of residual;")
        expect(note).to_contain_text("not the exact method")
    expect(page.locator("#wtf-lookalikes").get_by_role("link", name="@a")).to_be_visible()
    look(page, "wtf-account-fora", "#wtf")


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


def test_a_recompute_names_the_lists_shown_the_previous_result_and_a_higher_cap_converges(
    page, login, ws_a, monkeypatch
):
    from monitor.services import runs

    login()
    upload(page, ws_a.slug, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    page.goto(f"/w/{ws_a.slug}/accounts/105/")
    wtf = page.locator("#wtf")
    wtf.get_by_role("button", name="Compute look-alikes and likely next amplifiers").click()
    expect(page.locator("#wtf-lookalikes .wtf-converged")).to_contain_text("Not converged")
    first_run = int(re.search(r"run (\d+)", page.locator("#wtf-lookalikes .wtf-params").inner_text()).group(1))

    # the advice, followed: the iteration cap raised in the form; no worker takes the batch until the test does
    queued: list[int] = []
    monkeypatch.setattr(runs, "_queue_batches", queued.extend)
    wtf.locator("summary", has_text="Parameters").click()
    wtf.get_by_label("Iteration cap").fill("150")
    wtf.get_by_role("button", name="Recompute both lists").click()
    expect(page.locator("#wtf .wtf-progress")).to_be_visible()
    for key in ("lookalikes", "amplifiers"):
        previous = page.locator(f"#wtf-{key} .wtf-previous")
        expect(previous).to_contain_text("Previous result")
        expect(previous).to_contain_text(f"by run {first_run}")
        expect(previous).to_contain_text(f"Run {first_run + 1} is recomputing it")
    look(page, "wtf-account-recomputing", "#wtf")

    assert len(queued) == 1
    runs.compute_batch_run(batch_id=queued[0])  # the worker: progress.js sees the run end and reloads the page
    expect(page.locator("#wtf .wtf-progress")).to_have_count(0, timeout=15_000)
    expect(page.locator("#wtf .wtf-previous")).to_have_count(0)
    expect(page.locator("#wtf .wtf-converged")).to_have_count(0)
    expect(page.locator("#wtf-lookalikes .wtf-params")).to_contain_text("(both converged)")
    expect(page.locator("#wtf-lookalikes .wtf-params")).to_contain_text(f"run {first_run + 1}")
