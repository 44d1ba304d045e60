"""An analyst's main flows in a real browser: log in, upload (file chooser and drop zone), watch the import,
read a publisher's ranking, explore a cascade, read the report of bad records."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.pages import choose_files, ranking_rows, screenshot, submit_upload, upload, wait_until_done
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WORKED_EXAMPLE = [THESIS / "tweets.csv", THESIS / "follows.csv"]
# b's page ranks the accounts that spread b's tweets; b's own reach (118) is shown apart from them
EXPECTED = [("@e", 96.0), ("@f", 64.0), ("@c", 32.0), ("@a", 16.0), ("@d", 8.0)]


@pytest.fixture
def loaded(ws_a, import_files):
    """The worked example, imported and computed without the browser (for the tests that only read it)."""
    import_files(ws_a, WORKED_EXAMPLE)
    return ws_a


def test_it_logs_in_through_the_form_and_lands_on_the_workspace_overview(page, login, ws_a):
    page.goto(f"/w/{ws_a.slug}/")
    expect(page).to_have_url(re.compile(r"/login/"))
    screenshot(page, "login")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("wrong-password")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".form-errors")).to_be_visible()
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("alice-pass-123")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(rf"/w/{ws_a.slug}/$"))
    expect(page.get_by_text("Signed in as")).to_contain_text("alice")
    expect(page.get_by_role("link", name="Overview")).to_have_attribute("aria-current", "page")
    screenshot(page, "overview-empty")


def test_it_uploads_the_worked_example_and_ranks_publisher_b(page, login, ws_a):
    login()
    choose_files(page, ws_a.slug, WORKED_EXAMPLE, name="worked example")
    # upload.js lists the chosen files with their sizes and a total
    expect(page.locator("[data-file-list] li")).to_have_count(3)
    expect(page.locator("[data-file-list]")).to_contain_text("tweets.csv")
    expect(page.locator("[data-file-list]")).to_contain_text("2 files")
    screenshot(page, "upload-chosen")
    submit_upload(page)
    wait_until_done(page)
    bar = page.locator("[data-progress-bar]")
    assert bar.evaluate("el => el.value") == 100
    expect(page.locator("[data-progress-percent]")).to_have_text("100 %")
    expect(page.get_by_role("heading", name="worked example")).to_be_visible()
    screenshot(page, "collection-done")

    page.goto(f"/w/{ws_a.slug}/publishers/102/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Spreaders of")
    assert ranking_rows(page) == EXPECTED
    expect(page.locator("section.own-reach")).to_contain_text("118")
    screenshot(page, "publisher-ranking")

    page.goto(f"/w/{ws_a.slug}/")
    expect(page.locator("main")).to_contain_text("@b")
    screenshot(page, "overview")


def test_it_adds_dropped_files_to_the_upload_form(page, login, ws_a):
    login()
    choose_files(page, ws_a.slug, [THESIS / "tweets.csv"])
    expect(page.locator("[data-dropzone]")).to_have_class(re.compile(r"\benhanced\b"))
    # a drop of follows.csv on the zone: the DataTransfer is built in the page from the file's content
    page.locator("[data-dropzone]").evaluate(
        """(zone, file) => {
            const dt = new DataTransfer();
            dt.items.add(new File([file.text], file.name, {type: "text/csv"}));
            for (const type of ["dragenter", "dragover", "drop"]) {
                zone.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt}));
            }
        }""",
        {"name": "follows.csv", "text": (THESIS / "follows.csv").read_text()},
    )
    names = page.locator('input[name="files"]').evaluate("el => Array.from(el.files, f => f.name)")
    assert names == ["tweets.csv", "follows.csv"]  # the chosen file is kept, the dropped one added
    expect(page.locator("[data-file-list]")).to_contain_text("follows.csv")
    expect(page.locator("[data-dropzone]")).not_to_have_class(re.compile(r"\bdragover\b"))
    submit_upload(page)
    wait_until_done(page)
    page.goto(f"/w/{ws_a.slug}/publishers/102/")
    assert ranking_rows(page) == EXPECTED


def test_it_draws_the_cascade_and_shows_a_node_s_influence_on_hover(page, login, loaded):
    login()
    page.goto(f"/w/{loaded.slug}/tweets/1000/explore/")
    page.wait_for_function("() => window.spreadwatchCascade && window.spreadwatchCascade.graph.order > 0")
    cy = "window.spreadwatchCascade"
    assert page.evaluate(f"{cy}.graph.order") == 6
    assert page.evaluate(f"{cy}.graph.size") == 7
    labels = sorted(page.evaluate(f"{cy}.graph.mapNodes((id, a) => a.label)"))
    assert labels == ["@a", "@b", "@c", "@d", "@e", "@f"]
    # every drawn node lies inside the visible graph area
    box = page.locator("#cy").bounding_box()
    positions = page.evaluate(f"{cy}.graph.mapNodes(id => {cy}.position(id))")
    assert all(0 <= p["x"] <= box["width"] and 0 <= p["y"] <= box["height"] for p in positions), positions
    tip = page.locator("#cy-tip")
    expect(tip).to_be_hidden()
    pos = page.evaluate(f"{cy}.position({cy}.nodeByLabel('@e'))")
    page.mouse.move(box["x"] + pos["x"], box["y"] + pos["y"])
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("influence")
    expect(tip).to_contain_text("@e")
    expect(tip).to_contain_text("influence 48")  # e's share of tweet 1000 (96 over both tweets)
    screenshot(page, "cascade-explorer")
    page.mouse.move(box["x"] + 2, box["y"] + 2)
    expect(tip).to_be_hidden()
    # colour by the time of the retweet: d retweeted first (dark), f last (light); the legend follows
    page.get_by_label("Colour by").select_option("time")
    colours = page.evaluate(f"Object.fromEntries({cy}.graph.mapNodes((id, a) => [a.label, a.color]))")
    assert colours["@d"] != colours["@f"] and colours["@b"] == "#c0392b", colours
    expect(page.locator('[data-legend="time"]')).to_be_visible()
    expect(page.locator('[data-legend="role"]')).to_be_hidden()


BAD_TWEETS = (
    "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count,screen_name\n"
    "1000,,102,2020-01-01T00:00:00Z,2,b\n"
    "1001,1000,104,not-a-date,8,d\n"
    "1002,1000,101,2020-01-01T00:00:02Z,1,a\n"
    "1003,1000,103,2020-01-01T00:00:03Z,many,c\n"
)


def bad_records(page) -> list[list[str]]:
    """The rows (file, line, field, reason) of the collection page's table of bad records."""
    report = page.locator("section").filter(has=page.get_by_role("heading", name="Validation report"))
    expect(report).to_be_visible()
    table = report.locator("table").filter(has=page.get_by_role("columnheader", name="Line", exact=True))
    return [[c.strip() for c in row.locator("td").all_inner_texts()] for row in table.locator("tbody tr").all()]


def test_it_reports_every_bad_record_with_its_line_when_validating_only(page, login, ws_a, tmp_path):
    bad = tmp_path / "tweets.csv"
    bad.write_text(BAD_TWEETS)
    login()
    upload(
        page,
        ws_a.slug,
        [bad],
        name="validate bad",
        mode="Skip bad records",
        validate_only=True,
        status="Validated (nothing stored)",
    )
    rows = bad_records(page)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("tweets.csv", "3", "created_at"),
        ("tweets.csv", "5", "followers_count"),
    ]
    expect(page.locator("main")).to_contain_text("yes: nothing is stored")
    screenshot(page, "collection-validate-only")


def test_it_stops_a_strict_upload_at_the_bad_record_and_says_where(page, login, ws_a, tmp_path):
    bad = tmp_path / "tweets.csv"
    bad.write_text(BAD_TWEETS)
    login()
    upload(page, ws_a.slug, [bad], name="strict bad", mode="Strict", status="Failed")
    alert = page.locator("article.alert")
    expect(alert).to_contain_text("The import failed")
    expect(alert).to_contain_text("tweets.csv:3")
    expect(alert).to_contain_text("created_at")
    expect(alert).to_contain_text("Nothing from this upload was stored")
    rows = bad_records(page)
    assert [(r[0], r[1], r[2]) for r in rows] == [("tweets.csv", "3", "created_at")]
    screenshot(page, "collection-strict-failed")
