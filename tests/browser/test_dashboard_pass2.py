"""Issue 19's visible defects, at a desktop width (1440 px) and a phone's (390 × 844): no template text on any
page (defect 1), no page wider than the viewport and an alert inbox usable on a phone (10), the publisher's own
reach apart from its spreaders (5), "How to read this" and the help page (6), the header's search box (2).
Screenshots of every page at both widths go to ``tests/browser/artifacts/i19-<page>-<width>.png``."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.pages import screenshot
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = {"desktop": (1440, 900), "phone": (390, 844)}


@pytest.fixture
def loaded(ws_a, alice, import_files):
    """The worked example, a top-3 rule of b and its alerts (the inbox has rows)."""
    from monitor.alerts import services as alerts
    from monitor.selectors import account_get

    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    rule = alerts.rule_create(
        workspace=ws_a, owner=alice, name="top 3 of b", kind="top_k", k=3, publisher=account_get(ws_a, 102)
    )
    assert alerts.evaluate_workspace(workspace_id=ws_a.pk)
    return {"ws": ws_a, "collection": c.pk, "run": c.compute_runs.get().pk, "rule": rule.pk}


def _pages(o) -> dict[str, str]:
    w = f"/w/{o['ws'].slug}"
    return {
        "overview": f"{w}/",
        "ranking": f"{w}/ranking/",
        "publisher": f"{w}/publishers/102/",
        "account": f"{w}/accounts/105/",
        "tweet": f"{w}/tweets/1000/",
        "explorer": f"{w}/tweets/1000/explore/",
        "collections": f"{w}/collections/",
        "collection": f"{w}/collections/{o['collection']}/",
        "upload": f"{w}/collections/new/",
        "runs": f"{w}/runs/",
        "run": f"{w}/runs/{o['run']}/",
        "alerts": f"{w}/alerts/",
        "alert-rules": f"{w}/alerts/rules/",
        "alert-rule-new": f"{w}/alerts/rules/new/",
        "search": f"{w}/search/?q=10",
        "help": "/help/",
        "not-found": "/w/no-such-workspace/",
    }


def _overflow(page) -> str | None:
    """None when the page is no wider than the viewport, else its width and the elements that stick out."""
    return page.evaluate(
        """() => {
            const vw = document.documentElement.clientWidth;
            const sw = document.documentElement.scrollWidth;
            if (sw <= vw) return null;
            // the widest elements that stick out of the page (a table inside .table-wrap scrolls by itself)
            const out = [];
            for (const el of document.querySelectorAll("body *")) {
                const r = el.getBoundingClientRect();
                if (r.right > vw + 1 && !el.closest(".table-wrap")) out.push(
                    el.tagName.toLowerCase() + (el.className ? "." + String(el.className).split(" ")[0] : "")
                    + " " + Math.round(r.right) + " in " + el.parentElement.tagName.toLowerCase()
                    + (el.parentElement.className ? "." + String(el.parentElement.className).split(" ")[0] : "")
                    + " (" + JSON.stringify((el.textContent || "").trim().slice(0, 60)) + ")");
            }
            return sw + " px: " + out.slice(0, 6).join(", ");
        }"""
    )


def _at(page, width: str):
    w, h = WIDTHS[width]
    page.set_viewport_size({"width": w, "height": h})


@pytest.mark.parametrize("width", list(WIDTHS))
def test_no_page_shows_template_text_or_is_wider_than_the_viewport(page, login, loaded, width):
    login()
    _at(page, width)
    problems = []
    for name, url in _pages(loaded).items():
        page.goto(url)
        page.wait_for_load_state("load")
        text = page.locator("body").inner_text()
        for token in ("{#", "{%", "{{"):
            if token in text:
                problems.append(f"{name}: shows {token!r}")
        wide = _overflow(page)
        if wide:
            # once seen in CI under load and never here: an element wider than the page for a moment while the
            # page's scripts (the chart, the live estimate) were still laying it out; measure again once they
            # are done, so what fails is an overflow that stays, and say what stuck out
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(500)
            wide = _overflow(page)
        if wide:
            problems.append(f"{name}: wider than {WIDTHS[width][0]} px ({wide})")
        screenshot(page, f"i19-{name}-{WIDTHS[width][0]}")
    assert not problems, "\n".join(problems)


def test_the_alert_inbox_is_usable_on_a_phone(page, login, loaded):
    login()
    _at(page, "phone")
    page.goto(f"/w/{loaded['ws'].slug}/alerts/")
    first = page.locator(".alert-item").first
    expect(first).to_be_visible()
    # each alert's account, message and button are on screen, not in columns off its right edge
    for part in (first.locator(".alert-account"), first.locator(".alert-message"), first.get_by_role("button")):
        box = part.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    n = page.locator(".alert-item").count()
    first.get_by_role("button", name="Mark read").click()
    page.wait_for_load_state("load")
    expect(page.locator(".alert-item .badge", has_text="new")).to_have_count(n - 1)
    screenshot(page, "i19-alerts-after-read-390")


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_publisher_page_shows_its_own_reach_apart_and_how_to_read_it(page, login, loaded, width):
    login()
    _at(page, width)
    page.goto(f"/w/{loaded['ws'].slug}/publishers/102/")
    own = page.locator("section.own-reach")
    expect(own).to_be_visible()
    expect(own).to_contain_text("118")
    table = page.locator("table.ranking")
    expect(table.locator("tbody tr")).to_have_count(5)
    expect(table).not_to_contain_text("@b")
    how = page.locator("details.how-to-read")
    how.locator("summary").click()
    expect(how).to_contain_text("Share of reach")
    how.get_by_role("link", name=re.compile("More on the measure")).click()
    expect(page).to_have_url(re.compile(r"/help/$"))
    expect(page.get_by_role("heading", name="Reach units")).to_be_visible()
    screenshot(page, f"i19-help-from-publisher-{WIDTHS[width][0]}")


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_header_search_finds_an_account_by_screen_name_and_lists_prefix_matches(page, login, loaded, width):
    login()
    _at(page, width)
    page.goto(f"/w/{loaded['ws'].slug}/")
    box = page.get_by_role("searchbox", name=re.compile("Find an account"))
    expect(box).to_be_visible()
    box.fill("@e")
    box.press("Enter")
    expect(page).to_have_url(re.compile(r"/accounts/105/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("@e")
    box = page.get_by_role("searchbox", name=re.compile("Find an account"))
    box.fill("10")
    box.press("Enter")
    expect(page.get_by_role("heading", name=re.compile("^Accounts"))).to_be_visible()
    expect(page.locator(".search-results")).to_contain_text("@f")
    screenshot(page, f"i19-search-{WIDTHS[width][0]}")


def test_the_alert_forms_publisher_picker_filters_as_you_type(page, login, loaded):
    login()
    page.goto(f"/w/{loaded['ws'].slug}/alerts/rules/new/")
    page.get_by_role("searchbox", name=re.compile("Filter the publishers")).fill("b")
    expect(page.locator("select[name=publisher]")).to_have_value("102")
    page.get_by_role("searchbox", name=re.compile("Filter the publishers")).fill("nobody")
    expect(page.locator(".picker-status")).to_have_text("0 matches")


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_overviews_counts_never_break_inside_a_number(page, login, loaded, width):
    """Seven count cards at 1440 px showed "1,000,0 / 00" retweets on the 1M-retweet workspace: each count is one
    line inside its card, here with the largest counts a workspace shows (13 characters)."""
    login()
    _at(page, width)
    page.goto(f"/w/{loaded['ws'].slug}/")
    values = page.locator(".cards .value")
    assert values.count() >= 6  # six counts and the unread alerts (the rule has alerts)
    bad = page.evaluate(
        """() => [...document.querySelectorAll(".cards .value")].map(el => {
            el.textContent = "1,000,000,000";
            const card = el.closest("article"), lh = parseFloat(getComputedStyle(el).lineHeight);
            const r = el.getBoundingClientRect(), c = card.getBoundingClientRect();
            const out = r.right > c.right + 0.5 || el.scrollWidth > el.clientWidth + 0.5;
            return (r.height > 1.5 * lh ? "wraps " : "") + (out ? "sticks out " : "")
                + `text ${el.scrollWidth} px in a box of ${Math.round(r.width)} in a card of ${Math.round(c.width)}`
                + ` at ${getComputedStyle(el).fontSize}`;
        }).filter(s => /wraps|sticks/.test(s))"""
    )
    screenshot(page, f"i19-overview-counts-{WIDTHS[width][0]}")
    assert not bad, bad
