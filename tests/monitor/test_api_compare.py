"""REST API v1: compare publishers (GET /api/v1/workspaces/<slug>/compare/?p=…&p=…), the same numbers as the page
(worked out by hand in tests/monitor/selectors/test_compare), its refusals as 400s naming ``p``, and its schema
entry with a summary."""

from __future__ import annotations

import json

import pytest

from tests.monitor.selectors.test_compare import write_three

URL = "/api/v1/workspaces/newsroom/compare/"


@pytest.fixture
def three(ws_a):
    return write_three(ws_a)


def test_it_compares_three_publishers(api, three):
    body = api.get(URL + "?p=500&p=501&p=502&top=3").json()
    assert body["aggregate"] == "total" and body["top"] == 3
    assert [[r["screen_name"] for r in c["results"]] for c in body["columns"]] == [
        ["a", "b", "c"],
        ["b", "a", "f"],
        ["h", "f", "d"],
    ]
    assert [(p["a"], p["b"], p["overlap"], p["jaccard"]) for p in body["pairs"]] == [
        ("500", "501", 2, 0.5),
        ("500", "502", 0, 0.0),
        ("501", "502", 1, 0.2),
    ]
    a = body["shared"][0]
    assert (a["screen_name"], a["in_top"]) == ("a", 2)
    assert a["cells"] == [
        {"publisher": "500", "rank": 1, "score": 50.0},
        {"publisher": "501", "rank": 2, "score": 35.0},
        {"publisher": "502", "rank": None, "score": 1.0},
    ]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("?p=500", "Choose at least 2 publishers"),
        ("?p=500&p=500", "500 was chosen twice"),
        ("?p=500&p=77", "77 is not a publisher of this workspace"),
        ("?p=500&p=x", "not a Twitter id: 'x'"),
    ],
)
def test_it_refuses_what_cannot_be_compared(api, three, query, message):
    r = api.get(URL + query)
    assert r.status_code == 400
    assert message in r.json()["p"]


def test_its_schema_has_a_summary(client):
    doc = json.loads(client.get("/api/v1/schema/", {"format": "json"}).content)
    op = doc["paths"]["/api/v1/workspaces/{ws}/compare/"]["get"]
    assert op["summary"].startswith("Compare 2 to 5 publishers")
    assert {p["name"] for p in op["parameters"]} >= {"p", "aggregate", "top", "from", "to"}


def test_it_filters_by_truth_label_and_refuses_an_unknown_one(api, three):
    from tests.monitor.selectors.test_compare import _false_claim

    _false_claim(three["P"].workspace, three)
    body = api.get(URL + "?p=500&p=501&labels=false").json()
    assert [[r["screen_name"] for r in c["results"]] for c in body["columns"]] == [["g", "a"], ["g"]]
    r = api.get(URL + "?p=500&p=501&labels=fake")
    assert r.status_code == 400 and "not a truth label: 'fake'" in r.json()["labels"]
