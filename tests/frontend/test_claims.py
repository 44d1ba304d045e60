"""Claims in the browser's pages: the header's search finds tweets by their words, hashtags and links (ordered,
paged, with "Save claim"); a claim saved from it has a page with its per-day chart and table, spreaders over a
window, publishers, newest tweets and tracked accounts; renaming, changing the search, deleting; a bad name, search
or account answers 400 with the message on its field; another workspace's claim answers 404."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from monitor import services
from monitor.models import Claim
from tests.claimed import claimed_csv


@pytest.fixture
def claimed(ws_a, import_files, tmp_path):
    import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    return ws_a


@pytest.fixture
def claim(claimed, alice):
    return services.claim_create(workspace=claimed, user=alice, name="5G towers", query="5g")


def _tweet_ids(html: str) -> list[str]:
    return re.findall(r'<a class="mono" href="/w/newsroom/tweets/(\d+)/"', html)


def test_the_header_search_finds_tweets_by_their_words_in_the_chosen_order(client, alice, claimed):
    client.force_login(alice)
    url = reverse("search", kwargs={"ws": claimed.slug})
    html = client.get(url, {"q": "5g", "sort": "newest"}).content.decode()
    assert "Tweets mentioning it" in html and "Read as word 5g." in html
    assert _tweet_ids(html) == ["5", "2", "1"] and "#covid19" in html and "Save claim" in html
    assert _tweet_ids(client.get(url, {"q": "5g", "sort": "oldest"}).content.decode()) == ["1", "2", "5"]
    assert _tweet_ids(client.get(url, {"q": "#covid19", "sort": "newest"}).content.decode()) == ["5", "2"]
    assert _tweet_ids(client.get(url, {"q": "example.com", "sort": "oldest"}).content.decode()) == ["1", "6"]


def test_a_screen_name_still_opens_its_account_when_no_tweet_mentions_it(client, alice, claimed):
    client.force_login(alice)
    r = client.get(reverse("search", kwargs={"ws": claimed.slug}), {"q": "pa"})
    assert r.status_code == 302 and r["Location"].endswith("/accounts/901/")


def test_a_search_that_finds_nothing_says_so(client, alice, claimed):
    client.force_login(alice)
    html = client.get(reverse("search", kwargs={"ws": claimed.slug}), {"q": "unicorns"}).content.decode()
    assert "Nothing matches “unicorns”" in html and "no tweet mentions it" in html


def test_saving_a_search_as_a_claim_opens_its_page(client, alice, claimed):
    client.force_login(alice)
    r = client.post(reverse("claim-create", kwargs={"ws": claimed.slug}), {"name": "5G", "query": "5g"})
    claim = Claim.objects.get(workspace=claimed)
    assert r.status_code == 302 and r["Location"] == reverse("claim", kwargs={"ws": claimed.slug, "pk": claim.pk})
    assert claim.created_by == alice and claim.query == "5g"


def test_the_claim_page_has_its_days_spreaders_publishers_and_tweets(client, alice, claim):
    client.force_login(alice)
    r = client.get(reverse("claim", kwargs={"ws": claim.workspace.slug, "pk": claim.pk}))
    html = r.content.decode()
    assert r.status_code == 200 and "<h1>5G towers</h1>" in html
    data = json.loads(re.search(r'<script id="claim-data" type="application/json">(.*?)</script>', html).group(1))
    assert [(d["day"], d["tweets"], d["retweets"], d["label_false"]) for d in data] == [
        ("2020-03-01", 1, 0, 1),
        ("2020-03-02", 1, 3, 1),
        ("2020-03-03", 1, 2, 0),
        ("2020-03-04", 0, 2, 0),
    ]
    assert 'id="claim-chart"' in html and "claim-chart.js" in html
    assert "Of its tweets, 3 were computed on spreading graphs rebuilt from the follower graph" in html
    ctx = r.context
    assert ctx["totals"]["tweets"] == 3 and ctx["totals"]["retweets"] == 7 and ctx["totals"]["false"] == 2
    assert ctx["spreaders"] and {r["twitter_id"] for r in ctx["spreaders"]} <= {101, 102, 103, 104, 106}
    assert {p["screen_name"] for p in ctx["publishers"]} == {"pa", "pc"}
    assert _tweet_ids(html)[:3] == ["5", "2", "1"]
    assert 'aria-current="page">Claims</a>' in html


def test_the_spreaders_follow_the_window(client, alice, claim):
    client.force_login(alice)
    url = reverse("claim", kwargs={"ws": claim.workspace.slug, "pk": claim.pk})
    r = client.get(url, {"window": "7d"})
    assert r.context["preset"] == "7d" and r.context["window"].start is not None
    assert client.get(url, {"window": "nonsense"}).context["preset"] == "all"


def test_tracking_and_untracking_an_account(client, alice, claim):
    client.force_login(alice)
    kw = {"ws": claim.workspace.slug, "pk": claim.pk}
    assert client.post(reverse("claim-track", kwargs=kw), {"account": "@PA"}).status_code == 302
    assert client.post(reverse("claim-track", kwargs=kw), {"account": "101"}).status_code == 302
    page = client.get(reverse("claim", kwargs=kw))
    tracked = [(t["account"].twitter_id, t["published"], t["retweeted"]) for t in page.context["tracked"]]
    assert tracked == [(901, 2, 0), (101, 0, 3)]
    pa = claim.workspace.accounts.get(twitter_id=901)
    assert client.post(reverse("claim-untrack", kwargs=kw), {"account": str(pa.pk)}).status_code == 302
    claim.refresh_from_db()
    assert claim.tracked == [claim.workspace.accounts.get(twitter_id=101).pk]


def test_a_bad_name_search_or_account_answers_400_on_its_field(client, alice, claim):
    client.force_login(alice)
    ws = claim.workspace
    r = client.post(reverse("claim-create", kwargs={"ws": ws.slug}), {"name": "5G towers", "query": "5g"})
    assert r.status_code == 400 and "already has a claim named" in r.content.decode()
    r = client.post(reverse("claim-create", kwargs={"ws": ws.slug}), {"name": "x", "query": "-5g"})
    assert r.status_code == 400 and 'id="claim-query-error"' in r.content.decode()
    kw = {"ws": ws.slug, "pk": claim.pk}
    r = client.post(reverse("claim-update", kwargs=kw), {"name": "", "query": "5g"})
    assert r.status_code == 400 and "give the claim a name" in r.content.decode()
    r = client.post(reverse("claim-update", kwargs=kw), {"name": "Renamed", "query": "-5g"})
    html = r.content.decode()  # the refused change is shown as typed, to be corrected
    assert r.status_code == 400 and 'value="Renamed"' in html and 'value="-5g"' in html and "not excluded" in html
    r = client.post(reverse("claim-track", kwargs=kw), {"account": "@nobody"})
    assert r.status_code == 400 and "no account &#x27;@nobody&#x27; in this workspace" in r.content.decode()
    claim.refresh_from_db()
    assert (claim.name, claim.query, claim.tracked) == ("5G towers", "5g", [])


def test_renaming_changing_the_search_and_deleting(client, alice, claim):
    client.force_login(alice)
    kw = {"ws": claim.workspace.slug, "pk": claim.pk}
    assert client.post(reverse("claim-update", kwargs=kw), {"name": "Towers", "query": "towers"}).status_code == 302
    claim.refresh_from_db()
    assert (claim.name, claim.query) == ("Towers", "towers")
    r = client.post(reverse("claim-delete", kwargs=kw))
    assert r.status_code == 302 and not Claim.objects.filter(pk=claim.pk).exists()


def test_a_claim_too_broad_to_show_says_so(client, alice, claim, monkeypatch):
    monkeypatch.setattr("monitor.selectors.claims.CLAIM_MAX_TWEETS", 1)
    client.force_login(alice)
    html = client.get(reverse("claim", kwargs={"ws": claim.workspace.slug, "pk": claim.pk})).content.decode()
    assert "This claim's search cannot be shown" in html and "narrow it" in html


def test_the_claims_list_and_its_empty_state(client, alice, claimed):
    client.force_login(alice)
    url = reverse("claims", kwargs={"ws": claimed.slug})
    assert "No claim yet" in client.get(url).content.decode()
    assert 'value="#5g"' in client.get(url, {"q": "#5g"}).content.decode()  # the search to save, filled in
    services.claim_create(workspace=claimed, user=alice, name="5G", query="5g")
    assert ">5G</a>" in client.get(url).content.decode()


def test_another_workspaces_claim_answers_404(client, bob, claim):
    client.force_login(bob)  # a member of "lab" only: alice's claim under lab's address is no claim of lab's
    kw = {"ws": "lab", "pk": claim.pk}
    assert client.get(reverse("claim", kwargs=kw)).status_code == 404
    for name in ("claim-update", "claim-delete", "claim-track", "claim-untrack"):
        assert client.post(reverse(name, kwargs=kw), {"name": "x", "query": "x", "account": "1"}).status_code == 404
    assert Claim.objects.filter(pk=claim.pk, name="5G towers").exists()
