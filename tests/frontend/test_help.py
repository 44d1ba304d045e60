"""Plain words for the measure (issue 19, defect 6): a help page linked from every page's header (the measure,
the aggregates, what the reach units mean, where the data comes from, the API), a short "How to read this" on
the ranking, account and explorer pages, and the API docs linked from the dashboard."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.webapp import THESIS


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _headings(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<h2[^>]*>(.*?)</h2>", html, re.S)]


def test_the_help_page_explains_the_measure_the_aggregates_the_units_the_data_and_the_api(client, alice):
    client.force_login(alice)
    r = client.get(reverse("help"))
    assert r.status_code == 200
    html = r.content.decode()
    heads = _headings(html)
    for h in ("The measure", "Total, mean and participation", "Reach units", "Where the data comes from", "The API"):
        assert h in heads, heads
    assert "followers reached" in html and "retweeters reached" in html
    assert 'href="/api/v1/docs/"' in html and 'href="/api/v1/schema/"' in html
    # the worked example's numbers, so the words can be checked against something
    assert "118" in html


def test_the_help_page_is_open_without_a_login(client, db):
    r = client.get(reverse("help"))
    assert r.status_code == 200 and "The measure" in r.content.decode()


@pytest.mark.parametrize("name", ["overview", "ranking", "collections"])
def test_every_page_links_the_help_and_the_api_docs_from_the_header(client, alice, ws_a, name):
    client.force_login(alice)
    html = client.get(reverse(name, kwargs={"ws": ws_a.slug})).content.decode()
    header = html[html.index('<header class="site-header') : html.index("</header>")]
    assert f'href="{reverse("help")}"' in header
    assert 'href="/api/v1/docs/"' in header


@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("ranking", {}),
        ("publisher", {"publisher": 102}),
        ("account", {"twitter_id": 105}),
        ("cascade", {"tweet_id": 1000}),
    ],
)
def test_the_ranking_account_and_explorer_pages_say_how_to_read_them(client, alice, loaded, name, kwargs):
    client.force_login(alice)
    html = client.get(reverse(name, kwargs={"ws": loaded.slug, **kwargs})).content.decode()
    box = re.search(r'<details class="how-to-read"[^>]*>(.*?)</details>', html, re.S)
    assert box, name
    text = box.group(1)
    assert "How to read this" in text
    assert f'href="{reverse("help")}' in text
    assert len(re.sub(r"<[^>]+>", "", text).split()) > 40  # a few sentences, not a label
