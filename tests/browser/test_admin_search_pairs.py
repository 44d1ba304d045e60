"""The admin's list of the phrase search's pairs indexes (``SearchPairs``, docs/claims.md) in the browser at a
desktop width (1440 px) and a phone's (390 × 844): a workspace's row with its index, its number of common words and
its build time, the change page's words, and nothing to add or change. Screenshots go to
``tests/browser/artifacts/admin-search-pairs-<width>.png``."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from monitor.models import SearchPairs
from tests.browser.pages import screenshot
from tests.browser.test_workspaces_tokens import WIDTHS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_admin_lists_each_workspaces_pairs_index(page, login, admin_user, ws_a, width):
    SearchPairs.objects.create(
        workspace=ws_a, lexemes=["bo", "co", "da"], index_name=f"tweetdocument_pairs_{ws_a.pk}_1", documents=250_000,
        checked_version=3, build_seconds=61.5,
    )  # fmt: skip
    login("admin", "admin-pass-123")
    w, h = WIDTHS[width]
    page.set_viewport_size({"width": w, "height": h})
    page.goto("/admin/monitor/searchpairs/")
    expect(page.get_by_role("heading", name="Select search pairs index to view", level=1)).to_be_visible()
    row = page.locator("#result_list tbody tr").first
    expect(row).to_contain_text(f"tweetdocument_pairs_{ws_a.pk}_1")
    expect(row.locator("td.field-words")).to_have_text("3")
    expect(page.get_by_role("link", name="Add search pairs index")).to_have_count(0)
    screenshot(page, f"admin-search-pairs-{w}")
    row.locator("th a").click()
    expect(page.locator(".field-lexemes")).to_contain_text('"bo"')
    expect(page.get_by_role("button", name="Save")).to_have_count(0)
