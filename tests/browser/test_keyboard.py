"""Keyboard and labels: the upload form and the ranking filters are reached with Tab from the top of the page,
and every main field is found by its label (what a screen reader announces)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.pages import field, screenshot
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MAX_TABS = 60


def tab_order(page, stop_at: str) -> list[str]:
    """Press Tab from the top of the page until the element matching ``stop_at`` has the focus; returns the
    focused elements (id, else name, else tag and text) in order, without repeats."""
    page.locator("body").click(position={"x": 1, "y": 1})
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    seen: list[str] = []
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        key = page.evaluate(
            """() => { const e = document.activeElement;
                return e.id || e.name || (e.tagName + ':' + (e.textContent || '').trim().slice(0, 30)); }"""
        )
        if not seen or seen[-1] != key:
            seen.append(key)
        if page.evaluate("sel => document.activeElement.matches(sel)", stop_at):
            return seen
    raise AssertionError(f"{stop_at} not reached with {MAX_TABS} Tabs; the focus went through {seen}")


def test_it_reaches_the_upload_form_with_tab_and_labels_its_fields(page, login, ws_a):
    login()
    page.goto(f"/w/{ws_a.slug}/collections/new/")
    order = tab_order(page, "[data-upload-submit]")
    fields = [k for k in order if k.startswith("id_")]
    # the checked radio of a group takes the focus; the others are reached with the arrow keys
    assert fields == ["id_files", "id_name", "id_format", "id_mode_0", "id_validate_only", "id_compute"], order

    files = field(page, "Files")
    expect(files).to_have_attribute("type", "file")
    expect(field(page, "Name")).to_be_editable()
    expect(field(page, "Format")).to_have_value("auto")
    expect(page.get_by_role("group", name="Mode")).to_be_visible()
    expect(page.get_by_role("radio", name="Skip bad records and report them")).not_to_be_checked()
    expect(field(page, "Validate only")).not_to_be_checked()
    expect(field(page, "Compute")).to_be_checked()
    expect(files).to_have_accessible_description("Tweets and follows files; archives (.zip, .tar.gz) are unpacked.")

    # choose the mode with the keyboard: focus the checked radio, arrow to the next one
    page.get_by_role("radio", name="Strict: any bad record stores nothing").focus()
    page.keyboard.press("ArrowDown")
    expect(page.get_by_role("radio", name="Skip bad records and report them")).to_be_checked()
    field(page, "Validate only").focus()
    page.keyboard.press("Space")
    expect(field(page, "Validate only")).to_be_checked()


def test_it_reaches_the_ranking_filters_with_tab_and_labels_them(page, login, ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    login()
    page.goto(f"/w/{ws_a.slug}/ranking/")
    filters = page.get_by_role("form", name="Ranking options")
    expect(filters).to_be_visible()
    aggregate = field(filters, "Aggregate")
    window = field(filters, "Window")
    order = tab_order(page, 'form.filters select[name="window"]')
    assert "id_aggregate" in order and order[-1] == "id_window", order
    # the dates only show for "From ... to ...": choose it with the keyboard, then Tab reaches them
    window.focus()
    window.select_option("custom")
    expect(field(filters, "Start")).to_be_visible()
    page.keyboard.press("Tab")
    expect(field(filters, "Start")).to_be_focused()
    field(filters, "Start").fill("2020-01-02")
    field(filters, "End").fill("2020-01-02")
    aggregate.select_option("total")
    filters.get_by_role("button", name="Show").press("Enter")
    page.wait_for_url("**window=custom**")
    expect(page.locator("main")).to_contain_text("T = 1")  # only tweet 2000 is in that day
    screenshot(page, "ranking-custom-window")
