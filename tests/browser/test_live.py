"""The Live page in a browser: reached from the header, its numbers rendered by the server and then kept current
without a reload as records are applied; on the embedded default (``make demo``: no broker, no consumer) records
posted to the stream API are applied by the web process and the page says so; the stream tokens page (an owner
creates a token, sees its key once, revokes it). Each page is looked at at 1440 px and at 390 px (a phone) and
kept as a screenshot."""

from __future__ import annotations

import json
import urllib.request

import pytest
from playwright.sync_api import expect

from monitor import services
from monitor.models import Membership, StreamEvent, StreamToken
from monitor.services.stream import channel, in_process, stream_accept, stream_token_create
from monitor.services.stream.apply import apply_events
from tests.browser.pages import screenshot
from tests.browser.test_wtf import WIDEST, look
from tests.webapp import THESIS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _retweets(ws, start: int, n: int, *, applied: int) -> None:
    lines = [
        json.dumps({"tweet_id": str(start + i), "retweeted_tweet_id": "1000", "user_id": str(101 + i % 5),
                    "created_at": 1600000000 + i})
        for i in range(n)
    ]  # fmt: skip
    acc = stream_accept(workspace=ws, lines=list(enumerate(lines, 1)), source="firehose")
    ids = list(range(acc.first_id, acc.last_id + 1))
    apply_events(workspace_id=ws.pk, event_ids=ids[:applied])  # as a consumer applies them


@pytest.fixture
def streamed(ws_a, alice, import_files, monkeypatch):
    monkeypatch.setattr("frontend.views.live.REFRESH_MS", 500)
    services.membership_add(workspace=ws_a, user=alice, role=Membership.Role.OWNER)
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    _retweets(ws_a, 5000, 4, applied=3)
    StreamEvent.objects.filter(workspace=ws_a, status="queued").update(status="dead", error="its original never came")
    return ws_a


def test_the_live_page_shows_the_stream_and_keeps_it_current(login, streamed):
    page = login()
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Live").click()
    expect(page.get_by_role("heading", name="Live", level=1)).to_be_visible()
    cards = page.get_by_role("region", name="The stream now")
    expect(cards.locator('[data-live="dead"]')).to_have_text("1")
    expect(cards.locator('[data-live="backlog"]')).to_have_text("0")
    growing = page.locator('[data-live-rows="growing"] tr')
    expect(growing).to_have_count(1)
    expect(growing.first).to_contain_text("1000")
    expect(growing.first.locator("td").nth(1)).to_have_text("3")
    expect(page.locator('[data-live-rows="rising"] tr').first.get_by_role("link")).to_be_visible()
    expect(page.get_by_text("its original never came")).to_be_visible()
    look(page, "live", ".live-cards")
    look(page, "live-tables", ".live-grid")

    page.evaluate("window.__notReloaded = true")
    _retweets(streamed, 6000, 7, applied=5)  # 5 more applied, 2 still queued
    expect(cards.locator('[data-live="backlog"]')).to_have_text("2")
    expect(growing.first.locator("td").nth(1)).to_have_text("8")
    assert page.evaluate("window.__notReloaded") is True  # updated in place


def test_an_owner_creates_and_revokes_a_stream_token(login, streamed):
    page = login()
    page.goto(f"/w/{streamed.slug}/live/")
    page.get_by_role("button", name="Stream tokens").click()  # a link styled as a button
    expect(page.get_by_role("heading", name="Stream tokens", level=1)).to_be_visible()
    page.locator("#token-name").fill("firehose collector")
    page.get_by_role("button", name="Create token").click()
    message = page.get_by_role("status")
    expect(message).to_contain_text("copy it now: sws_")
    token = StreamToken.objects.get(workspace=streamed)
    row = page.get_by_role("row", name="firehose collector")
    expect(row).to_contain_text(token.prefix)
    expect(row).to_contain_text("active")
    look(page, "stream-tokens", "main")
    page.reload()
    expect(page.get_by_text("copy it now")).to_have_count(0)  # shown once
    row.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("row", name="firehose collector")).to_contain_text("revoked")
    token.refresh_from_db()
    assert token.revoked_at is not None


@pytest.fixture
def embedded(ws_a, alice, import_files, monkeypatch, settings):
    """``make demo``'s web server: the worked example imported, then no broker and tasks in the background, so
    nothing but the web process can apply the stream. The applier is stopped before the database is flushed."""
    monkeypatch.setattr("frontend.views.live.REFRESH_MS", 500)
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    settings.SPREADWATCH_EAGER_IN_BACKGROUND = True
    settings.SPREADWATCH_STREAM_POLL_MS = 500
    yield ws_a
    assert in_process.stop(timeout=30)


def _post_stream(base_url: str, key: str, objs: list[dict]) -> dict:
    """POST the records to the stream API over HTTP, as a feeding process does."""
    body = "".join(json.dumps(o) + "\n" for o in objs).encode()
    req = urllib.request.Request(
        base_url + "/api/v1/stream/",
        data=body,
        method="POST",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 202
        return json.loads(r.read())


@pytest.mark.parametrize("width, height", [(1440, 900), (390, 844)])
def test_on_the_embedded_default_posted_records_are_applied_by_the_web_process(
    login, live_server, embedded, width, height
):
    key = stream_token_create(workspace=embedded, name="feeder")[1]
    page = login()
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"/w/{embedded.slug}/live/")
    cards = page.get_by_role("region", name="The stream now")
    expect(cards.locator('[data-live="consumers"]')).to_have_text("Web process")
    expect(cards.locator('[data-live="consumers_label"]')).to_have_text("applies the records")
    note = page.locator("[data-live-note]")
    expect(note).to_contain_text("are applied by this web process as they arrive")
    expect(page.get_by_text("within seconds")).to_have_count(0)
    expect(page.locator('[data-live-rows="growing"] tr.empty')).to_have_count(1)

    page.evaluate("window.__notReloaded = true")
    retweets = [
        {"tweet_id": str(7000 + i), "retweeted_tweet_id": "1000", "user_id": str(101 + i % 5),
         "created_at": 1600000000 + i}
        for i in range(6)
    ]  # fmt: skip
    got = _post_stream(live_server.url, key, retweets)
    assert got["accepted"] == 6
    growing = page.locator('[data-live-rows="growing"] tr')
    expect(growing.first).to_contain_text("1000")
    expect(growing.first.locator("td").nth(1)).to_have_text("6")  # six arrived, all of them applied
    expect(cards.locator('[data-live="backlog"]')).to_have_text("0")
    expect(page.locator('[data-live-rows="rising"] tr').first.get_by_role("link")).to_be_visible()
    assert page.evaluate("window.__notReloaded") is True  # followed in place
    assert not StreamEvent.objects.filter(workspace=embedded, status__in=("queued", "waiting")).exists()

    label = "wide" if width > 1000 else "phone"
    page.locator(".live-cards").scroll_into_view_if_needed()
    screenshot(page, f"live-embedded-{label}")
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    wide = page.evaluate(WIDEST, "main")
    assert overflow <= 0 or not wide, f"the Live page at {width} px: {wide} overflow the screen"


def test_the_page_follows_consumers_starting_and_stopping(login, streamed):
    """A deployment (Redis heartbeats; the suite's Celery has no background mode): with no consumer the page says
    records wait and names stream_consume; a consumer starting and stopping is followed without a reload."""
    page = login()
    page.goto(f"/w/{streamed.slug}/live/")
    card = page.locator('[data-live-card="consumers"]')
    note = page.locator("[data-live-note]")
    expect(card.locator('[data-live="consumers"]')).to_have_text("0")
    expect(card).to_have_class("attention")
    expect(note).to_have_text(
        "No consumer is running: records wait, queued, until one is started with manage.py stream_consume."
    )
    expect(note.locator("code")).to_have_text("manage.py stream_consume")
    page.evaluate("window.__notReloaded = true")
    channel.heartbeat(streamed.pk, "worker-1:42")
    try:
        expect(card.locator('[data-live="consumers"]')).to_have_text("1")
        expect(note).to_contain_text("are applied by 1 running consumer (manage.py stream_consume).")
        expect(card).not_to_have_class("attention")
    finally:
        channel.leave(streamed.pk, "worker-1:42")
    expect(card.locator('[data-live="consumers"]')).to_have_text("0")
    expect(note).to_contain_text("No consumer is running")
    assert page.evaluate("window.__notReloaded") is True
