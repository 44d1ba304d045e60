"""Finding an account (issue 19, defect 2): a search box in every workspace page's header (ids, screen names,
prefixes of either; accounts, publishers, tweets), ``/w/<ws>/accounts/<screen name>/`` resolving to the account,
and a publisher picker that can be searched in the alert form."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from monitor import selectors
from tests.webapp import THESIS


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _search(client, alice, ws, q, follow=False):
    client.force_login(alice)
    return client.get(reverse("search", kwargs={"ws": ws.slug}), {"q": q}, follow=follow)


def test_the_selector_finds_accounts_publishers_and_tweets_by_id_name_and_prefix(loaded):
    found = selectors.search(loaded, "10")
    assert [a.twitter_id for a in found.accounts] == [101, 102, 103, 104, 105, 106]
    assert [p.twitter_id for p in found.publishers] == [102]
    assert [t.tweet_id for t in found.tweets] == [1000]
    assert [t.tweet_id for t in selectors.search(loaded, "2000").tweets] == [2000]
    assert [a.screen_name for a in selectors.search(loaded, "@b").accounts] == ["b"]
    assert [a.screen_name for a in selectors.search(loaded, "E").accounts] == ["e"]  # any case
    assert selectors.search(loaded, "zzz").empty
    assert selectors.search(loaded, "").empty and selectors.search(loaded, "@").empty


def test_an_id_prefix_is_read_as_ranges_of_the_index_not_a_scan(loaded):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as q:
        selectors.search(loaded, "10")
    sql = " ".join(x["sql"] for x in q.captured_queries)
    assert '"twitter_id"::text' not in sql and '"tweet_id"::text' not in sql and "CAST(" not in sql.upper()
    assert '"twitter_id" >= ' in sql and '"tweet_id" >= ' in sql
    assert len(q.captured_queries) <= 4


def test_the_search_page_lists_each_kind_with_links(client, alice, loaded):
    html = _search(client, alice, loaded, "10").content.decode()
    assert "<h2>Accounts" in html and "<h2>Publishers" in html and "<h2>Tweets" in html
    assert f'href="{reverse("account", kwargs={"ws": loaded.slug, "twitter_id": 105})}"' in html
    assert f'href="{reverse("publisher", kwargs={"ws": loaded.slug, "publisher": 102})}"' in html
    assert f'href="{reverse("tweet", kwargs={"ws": loaded.slug, "tweet_id": 1000})}"' in html
    # the box keeps what was asked
    assert re.search(r'<input[^>]*name="q"[^>]*value="10"', html)


def test_one_exact_match_goes_straight_to_the_account(client, alice, loaded):
    for q in ("@e", "e", "105"):
        r = _search(client, alice, loaded, q)
        assert r.status_code == 302 and r["Location"] == reverse(
            "account", kwargs={"ws": loaded.slug, "twitter_id": 105}
        ), q


def test_an_exact_tweet_id_goes_straight_to_the_tweet(client, alice, loaded):
    r = _search(client, alice, loaded, "2000")
    assert r.status_code == 302 and r["Location"] == reverse("tweet", kwargs={"ws": loaded.slug, "tweet_id": 2000})


def test_nothing_found_says_so(client, alice, loaded):
    r = _search(client, alice, loaded, "nobody-here")
    assert r.status_code == 200 and "Nothing matches" in r.content.decode()


def test_the_header_has_the_search_box_on_every_workspace_page(client, alice, loaded):
    client.force_login(alice)
    for name in ("overview", "ranking", "collections"):
        html = client.get(reverse(name, kwargs={"ws": loaded.slug})).content.decode()
        header = html[html.index('<header class="site-header') : html.index("</header>")]
        assert re.search(r'<form[^>]*role="search"[^>]*action="/w/newsroom/search/"', header), name
        assert 'name="q"' in header and 'type="search"' in header


def test_an_account_url_takes_a_screen_name(client, alice, loaded):
    client.force_login(alice)
    r = client.get(f"/w/{loaded.slug}/accounts/e/")
    assert r.status_code == 302 and r["Location"] == reverse("account", kwargs={"ws": loaded.slug, "twitter_id": 105})
    assert client.get(f"/w/{loaded.slug}/accounts/@E/").status_code == 302
    assert client.get(f"/w/{loaded.slug}/accounts/nobody/").status_code == 404


def test_another_workspace_finds_nothing(client, bob, loaded):
    client.force_login(bob)
    assert client.get(reverse("search", kwargs={"ws": loaded.slug}), {"q": "e"}).status_code == 404
    assert client.get("/w/lab/search/", {"q": "e"}).status_code == 200
    assert "Nothing matches" in client.get("/w/lab/search/", {"q": "e"}).content.decode()
    assert client.get("/w/lab/accounts/e/").status_code == 404


def test_the_alert_forms_publisher_picker_can_be_searched(client, alice, loaded):
    client.force_login(alice)
    html = client.get(reverse("alert-rule-new", kwargs={"ws": loaded.slug})).content.decode()
    select = re.search(r"<select[^>]*name=\"publisher\"[^>]*>", html).group(0)
    assert "data-searchable" in select
    assert "picker.js" in html
    # options name the account and its id, so either can be typed
    assert re.search(r'<option value="102"[^>]*>@b \(102\)</option>', html)
