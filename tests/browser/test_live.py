"""The Live page in a browser: reached from the header, its numbers rendered by the server and then kept current
without a reload as records are applied; the stream tokens page (an owner creates a token, sees its key once,
revokes it). Each page is looked at at 1440 px and at 390 px (a phone) and kept as a screenshot."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from monitor import services
from monitor.models import Membership, StreamEvent, StreamToken
from monitor.services.stream import stream_accept
from monitor.services.stream.apply import apply_events
from tests.browser.test_wtf import look
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
