"""The ranking page's results are rendered once per query and data version, and never outlive a compute."""

from __future__ import annotations

import re

from django.urls import reverse

from monitor.cache import data_version
from tests.webapp import EXPECTED_TOTAL, THESIS


def _page(r) -> str:
    """The page less its CSRF tokens (masked anew in every response, and outside the cached fragment)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", r.content.decode())


def test_a_repeated_ranking_is_served_from_its_rendered_fragment_until_the_next_compute(
    client, alice, ws_a, import_files, settings
):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    import_files(ws_a, [THESIS / "tweets.csv"])  # no follows yet: b reaches 4
    client.force_login(alice)
    url = reverse("ranking", kwargs={"ws": ws_a.slug}) + "?aggregate=total"
    first = _page(client.get(url))
    assert data_version(ws_a) is not None
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as q:
        again = _page(client.get(url))
    assert again == first
    from django.core.cache import cache

    from monitor.cache import fragment_key

    key = fragment_key(data_version(ws_a), "ranking_results", url)
    assert cache.get(key) and cache.get(key) in again  # the results came from the rendered fragment
    assert not any("monitor_dailyinfluence" in x["sql"] for x in q.captured_queries)
    version = data_version(ws_a)
    import_files(ws_a, [THESIS / "follows.csv"])  # recomputed: a new data version, the fragment is not reused
    assert data_version(ws_a) != version
    after = _page(client.get(url))
    assert after != first
    assert f"{EXPECTED_TOTAL['b']:g}" in after  # 118, the new total of b


def test_without_the_read_cache_nothing_is_rendered_into_the_cache(client, alice, ws_a, import_files, settings):
    settings.SPREADWATCH_READ_CACHE_SECONDS = 0
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    assert data_version(ws_a) is None
    r = client.get(reverse("ranking", kwargs={"ws": ws_a.slug}))
    assert r.status_code == 200 and r.context["fragment_key"] is None
