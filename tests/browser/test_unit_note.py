"""A workspace's unit in a browser (issue 40): the Live and Upload pages say what reach counts and which records
are refused, and an upload carrying follower counts into a workspace that counts retweeters fails naming its file,
line and field, storing nothing. Looked at at 1440 px and 390 px, kept as screenshots."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from monitor.models import Tweet
from monitor.services.units import unit_fix
from tests.browser.pages import upload
from tests.browser.test_wtf import look

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_pages_say_the_unit_and_an_upload_with_counts_is_refused_naming_the_field(login, ws_a, tmp_path):
    unit_fix(ws_a.pk, has_counts=False)  # as after a Twitter15/16 upload: its trees carry no follower counts
    page = login()
    page.goto(f"/w/{ws_a.slug}/live/")
    note = page.locator(".unit-note")
    expect(note).to_contain_text("Reach here counts retweeters reached")
    expect(note).to_contain_text("Records that carry follower counts are refused (400, naming the line and the field)")
    look(page, "unit-live", ".unit-note")
    page.goto(f"/w/{ws_a.slug}/collections/new/")
    expect(page.locator(".unit-note")).to_contain_text("the upload fails, naming the file, line and field")
    look(page, "unit-upload", ".unit-note")

    csv = tmp_path / "counted.csv"
    csv.write_text(
        "tweet_id,retweeted_tweet_id,user_id,created_at,followers_count\n"
        "1000,,7,2020-01-01T00:00:00Z,\n"
        "1001,1000,8,2020-01-01T00:05:00Z,350\n"
    )
    upload(page, ws_a.slug, [csv], status="Failed")
    expect(page.get_by_text("counted.csv:3: field 'followers_count': a follower count, but this workspace counts "
                            "retweeters reached")).to_be_visible()  # fmt: skip
    look(page, "unit-upload-refused", "main")
    assert not Tweet.objects.filter(workspace=ws_a).exists()
