"""The account page's tables (per day, per publisher, amplification, cascades, follower counts) are rendered once
per account and data version, and never outlive an import or a compute; the look-alike panels above them are not
part of it."""

from __future__ import annotations

import re

from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from monitor.cache import data_version, fragment_key
from tests.webapp import THESIS

B = 102  # the thesis example's b: it published tweet 1000 and spreads nobody else's


def _page(r) -> str:
    """The page less its CSRF tokens (masked anew in every response, and outside the cached fragment)."""
    assert r.status_code == 200
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", r.content.decode())


def _cascades_rows(page: str) -> str:
    return page[page.index("<h2>Cascades</h2>") :]


def test_a_repeated_account_page_is_served_from_its_rendered_tables_until_the_next_import(
    client, alice, ws_a, import_files, settings
):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    import_files(ws_a, [THESIS / "tweets.csv"])  # no follows yet: a, c, d, e, f all retweeted b's tweet
    client.force_login(alice)
    url = reverse("account", kwargs={"ws": ws_a.slug, "twitter_id": 104})  # d
    first = _page(client.get(url))
    acc = ws_a.accounts.get(twitter_id=104)
    key = fragment_key(data_version(ws_a), "account_tables", acc.pk, ws_a.name)
    tables = cache.get(key)
    assert tables and "<h2>Cascades</h2>" in tables and "<h2>Influence per day</h2>" in tables
    assert "Who amplifies whom" not in tables and "csrfmiddlewaretoken" not in tables  # the panels and forms stay live
    with CaptureQueriesContext(connection) as q:
        again = _page(client.get(url))
    assert again == first and tables in again
    assert not any("monitor_cascadeinfluence" in x["sql"] for x in q.captured_queries)
    version = data_version(ws_a)
    import_files(ws_a, [THESIS / "follows.csv"])  # recomputed: d's cascades change, and so its tables
    assert data_version(ws_a) != version
    after = _page(client.get(url))
    assert _cascades_rows(after) != _cascades_rows(first)


def test_a_renamed_workspace_shows_its_new_name_in_the_cached_tables(client, alice, ws_a, import_files, settings):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    url = reverse("account", kwargs={"ws": ws_a.slug, "twitter_id": 104})
    assert "Renamed for the test" not in _page(client.get(url))
    ws_a.name = "Renamed for the test"  # a rename bumps no data version: the tables vary on the name
    ws_a.save(update_fields=["name"])
    assert 'data-export-title="Renamed for the test: influence per day of @d"' in _page(client.get(url))


def test_without_the_read_cache_the_account_page_renders_its_tables_every_time(
    client, alice, ws_a, import_files, settings
):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 0
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    r = client.get(reverse("account", kwargs={"ws": ws_a.slug, "twitter_id": B}))
    assert r.status_code == 200 and r.context["fragment_key"] is None
    assert "<h2>Influence per day</h2>" in _page(r)
