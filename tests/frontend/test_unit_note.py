"""The Live and Upload pages say what the workspace's reach counts (issue 40): its unit, fixed by its first data,
decides which records they refuse."""

from __future__ import annotations

import pytest
from django.urls import reverse

from monitor.services.units import unit_fix

pytestmark = pytest.mark.django_db


def _pages(client, ws) -> list[str]:
    return [client.get(reverse(name, kwargs={"ws": ws.slug})).content.decode() for name in ("live", "upload")]


def test_the_live_and_upload_pages_say_what_reach_counts_and_what_is_refused(client, alice, ws_a):
    client.force_login(alice)
    for page in _pages(client, ws_a):
        assert 'data-unit="none"' in page and "No tweets yet: the first ones fix what reach counts" in page
    unit_fix(ws_a.pk, has_counts=False)
    live, upload = _pages(client, ws_a)
    for page in (live, upload):
        assert 'data-unit="retweeters"' in page and "counts <strong>retweeters reached</strong>" in page
        assert "Records that carry follower counts are refused" in page
    assert "(400, naming the line and the field)" in live and "the upload fails, naming the file" in upload


def test_a_workspace_that_counts_followers_says_so(client, alice, ws_a):
    client.force_login(alice)
    unit_fix(ws_a.pk, has_counts=True)
    for page in _pages(client, ws_a):
        assert 'data-unit="followers"' in page and "counts <strong>followers reached</strong>" in page
        assert "refused" not in page.split('data-unit="followers"')[1].split("</p>")[0]
