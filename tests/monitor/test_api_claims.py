"""REST API v1 of the tweet search and claims: the search pages through its matches in each order and says how it
read the query; claims are saved, read, changed and deleted; a claim's timeline, spreaders and publishers are the
selectors' rows with string ids; bad input answers 400 naming the field, and another workspace's claims 404."""

from __future__ import annotations

import pytest

from monitor import selectors, services
from tests.claimed import claimed_csv
from tests.monitor.test_api_v1 import base


@pytest.fixture
def claimed(ws_a, alice, import_files, tmp_path):
    c = import_files(ws_a, [claimed_csv(tmp_path / "tweets.csv")])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def test_the_search_pages_through_its_matches_and_says_how_it_read_the_query(api, claimed):
    r = api.get(f"{base(claimed)}/search/tweets/", {"q": "5g", "sort": "newest", "limit": 2})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["count"] == 3 and body["capped"] is False and body["query"] == "word 5g"
    assert [t["tweet_id"] for t in body["results"]] == ["5", "2"]
    assert body["results"][1]["hashtags"] == ["5g", "covid19"] and body["results"][0]["author"] == "903"
    nxt = api.get(body["next"]).json()
    assert [t["tweet_id"] for t in nxt["results"]] == ["1"] and nxt["next"] is None
    assert nxt["results"][0]["domains"] == ["news.example.com", "example.com"]


@pytest.mark.parametrize(
    "params, field",
    [
        ({"q": ""}, "q"),
        ({"q": "-virus"}, "q"),
        ({"q": "virus", "sort": "best"}, "sort"),
        ({"q": "virus", "label": "fake"}, "label"),
        ({"q": "virus", "start": "yesterday"}, "start"),
        ({"q": "virus", "start": "2020-03-03", "end": "2020-03-01"}, "end"),
        ({"q": "virus", "limit": "5000"}, "limit"),
    ],
)
def test_a_bad_search_answers_400_naming_the_parameter(api, claimed, params, field):
    r = api.get(f"{base(claimed)}/search/tweets/", params)
    assert r.status_code == 400 and field in r.json(), r.content


def test_claims_are_saved_read_changed_and_deleted(api, claimed):
    r = api.post(f"{base(claimed)}/claims/", {"name": "5G", "query": "5g towers"}, format="json")
    assert r.status_code == 201, r.content
    claim = r.json()
    assert claim["name"] == "5G" and claim["tracked"] == [] and claim["created_by"] == "alice"
    url = f"{base(claimed)}/claims/{claim['id']}/"
    assert [c["name"] for c in api.get(f"{base(claimed)}/claims/").json()] == ["5G"]
    assert api.patch(url, {"query": "#5g"}, format="json").json()["query"] == "#5g"
    days = api.get(f"{url}timeline/").json()
    assert [(d["day"], d["tweets"], d["retweets"]) for d in days] == [
        ("2020-03-01", 1, 0),
        ("2020-03-02", 1, 3),
        ("2020-03-03", 0, 2),
    ]
    assert days[0]["by_label"]["false"] == 1
    spreaders = api.get(f"{url}spreaders/", {"limit": 2}).json()
    want = selectors.claim_spreaders(claimed, "#5g", limit=2)
    assert [(s["twitter_id"], s["total"]) for s in spreaders] == [(str(w["twitter_id"]), w["total"]) for w in want]
    assert [p["twitter_id"] for p in api.get(f"{url}publishers/").json()] == ["901"]
    r = api.post(f"{url}tracked/", {"account": "101"}, format="json")
    assert r.status_code == 200 and r.json()["tracked"] == ["101"]
    assert api.delete(f"{url}tracked/", {"account": "101"}, format="json").json()["tracked"] == []
    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404


@pytest.mark.parametrize(
    "body, field",
    [({"name": "", "query": "5g"}, "name"), ({"name": "x", "query": "-5g"}, "query"), ({"name": "x"}, "query")],
)
def test_a_claim_that_cannot_be_saved_answers_400_naming_the_field(api, claimed, body, field):
    r = api.post(f"{base(claimed)}/claims/", body, format="json")
    assert r.status_code == 400 and field in r.json(), r.content


def test_a_second_claim_with_the_same_name_is_refused(api, claimed):
    assert api.post(f"{base(claimed)}/claims/", {"name": "5G", "query": "5g"}, format="json").status_code == 201
    r = api.post(f"{base(claimed)}/claims/", {"name": "5G", "query": "towers"}, format="json")
    assert r.status_code == 400 and "already has a claim" in r.json()["name"][0]


def test_tracking_an_unknown_account_answers_400(api, claimed, alice):
    claim = services.claim_create(workspace=claimed, user=alice, name="5G", query="5g")
    r = api.post(f"{base(claimed)}/claims/{claim.pk}/tracked/", {"account": "424242"}, format="json")
    assert r.status_code == 400 and "424242" in r.json()["account"]


def test_another_workspaces_claim_answers_404(api, claimed, ws_b, bob):
    other = services.claim_create(workspace=ws_b, user=bob, name="Theirs", query="virus")
    for suffix in ("", "timeline/", "spreaders/", "publishers/"):
        assert api.get(f"{base(claimed)}/claims/{other.pk}/{suffix}").status_code == 404
    assert api.get(f"{base(ws_b)}/claims/").status_code in (403, 404)
