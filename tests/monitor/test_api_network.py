"""REST API v1 of network analytics: start a run, read its summary, its accounts (paged), a component, the
communities and one of them, and an account's neighbourhood; validation errors name the field, and another
workspace's objects answer 404."""

from __future__ import annotations

import pytest

from monitor.models import ComputeRun
from tests.monitor.test_api_v1 import base
from tests.webapp import THESIS, token_client


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


@pytest.fixture
def run(api, thesis, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(f"{base(thesis)}/network/runs/", {"samples": 0, "backend": "cpu"}, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def test_it_starts_a_network_run_and_lists_it(api, thesis, run):
    assert run["algorithm"] == "network" and run["params"] == {
        "graph": "follows",
        "collection": None,
        "spreading": False,
        "samples": 0,
        "seed": 0,
        "communities": True,
        "resolution": 1.0,
    }
    listed = api.get(f"{base(thesis)}/network/runs/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == run["id"]
    assert ComputeRun.objects.get(pk=run["id"]).status == ComputeRun.Status.DONE


def test_it_reads_a_runs_summary(api, thesis, run):
    body = api.get(f"{base(thesis)}/network/runs/{run['id']}/").json()
    assert body["run"]["status"] == "done"
    s = body["summary"]
    assert (s["graph"], s["n_nodes"], s["n_edges"]) == ("follows", 6, 8)
    assert s["components"]["largest"] == [6] and s["betweenness"]["done"] and s["betweenness"]["exact"]
    assert s["conversations"]["nodes_after"] == 2


def test_it_pages_the_accounts_by_any_number(api, thesis, run):
    url = f"{base(thesis)}/network/runs/{run['id']}/accounts/"
    first = api.get(url, {"limit": 2}).json()
    assert first["count"] == 6 and first["sort"] == "betweenness"
    assert first["results"][0]["twitter_id"] == "102" and len(first["results"]) == 2
    rest = api.get(url, {"limit": 10, "offset": 2}).json()["results"]
    assert len(rest) == 4 and all(isinstance(r["twitter_id"], str) for r in rest)
    by_in = api.get(url, {"sort": "in_degree", "limit": 1}).json()["results"][0]
    assert (by_in["twitter_id"], by_in["in_degree"]) == ("102", 4)
    bad = api.get(url, {"sort": "pagerank"})
    assert bad.status_code == 400 and "sort" in bad.json()


def test_it_gives_a_components_members(api, thesis, run):
    url = f"{base(thesis)}/network/runs/{run['id']}/component/"
    body = api.get(url, {"c": 0}).json()
    assert body["size"] == 6 and {m["twitter_id"] for m in body["members"]} == {str(i) for i in range(101, 107)}
    assert api.get(url, {"c": 3}).status_code == 404
    assert api.get(url, {"c": "x"}).status_code == 400


def test_it_gives_an_accounts_neighbourhood(api, thesis):
    url = f"{base(thesis)}/accounts/106/neighbourhood/"
    body = api.get(url, {"depth": 2}).json()
    assert {n["twitter_id"]: n["distance"] for n in body["nodes"]} == {"106": 0, "105": 1, "102": 2, "103": 2}
    assert ["106", "105"] in body["edges"] and ["105", "102"] in body["edges"]
    inter = api.get(url, {"graph": "interactions"}).json()  # f retweeted b twice: one edge of weight 2
    assert inter["edges"] == [["106", "102", 2.0]]
    assert api.get(url, {"depth": 7}).status_code == 400
    assert api.get(url, {"direction": "sideways"}).status_code == 400


def test_it_refuses_bad_run_parameters_naming_them(api, thesis):
    r = api.post(f"{base(thesis)}/network/runs/", {"graph": "follows", "spreading": True}, format="json")
    assert r.status_code == 400 and "spreading" in str(r.json())
    r = api.post(f"{base(thesis)}/network/runs/", {"samples": -1}, format="json")
    assert r.status_code == 400 and "samples" in r.json()
    for bad in (0, -2, "fine", 1001):
        r = api.post(f"{base(thesis)}/network/runs/", {"resolution": bad}, format="json")
        assert r.status_code == 400 and "resolution" in r.json(), (bad, r.content)
    r = api.post(f"{base(thesis)}/network/runs/", {"communities": "sometimes"}, format="json")
    assert r.status_code == 400 and "communities" in r.json()
    assert not ComputeRun.objects.filter(algorithm="network").exists()


def test_another_workspaces_runs_collections_and_accounts_are_not_found(thesis, run, bob, ws_b):
    other = token_client(bob)
    assert other.get(f"{base(thesis)}/network/runs/{run['id']}/").status_code == 404
    assert other.get(f"{base(ws_b)}/network/runs/{run['id']}/").status_code == 404
    assert other.get(f"{base(ws_b)}/network/runs/{run['id']}/accounts/").status_code == 404
    assert other.get(f"{base(ws_b)}/accounts/102/neighbourhood/").status_code == 404
    collection = thesis.collections.get().pk
    r = other.post(f"{base(ws_b)}/network/runs/", {"collection": collection}, format="json")
    assert r.status_code == 404
    assert other.get(f"{base(ws_b)}/network/runs/").json()["count"] == 0


def test_it_gives_the_communities_and_each_accounts_community(api, thesis, run):
    summary = api.get(f"{base(thesis)}/network/runs/{run['id']}/").json()["summary"]["communities"]
    assert summary["count"] >= 1 and summary["resolution"] == 1.0 and summary["seed"] == 0
    assert -0.5 <= summary["modularity"] <= 1
    rows = api.get(f"{base(thesis)}/network/runs/{run['id']}/communities/").json()
    assert [r["community"] for r in rows] == list(range(1, summary["count"] + 1))
    assert sum(r["size"] for r in rows) == 6
    assert all(isinstance(a["twitter_id"], str) and a["influence_rank"] >= 1 for r in rows for a in r["top"])
    accounts = api.get(f"{base(thesis)}/network/runs/{run['id']}/accounts/", {"limit": 10}).json()["results"]
    of = {a["twitter_id"]: a["community"] for a in accounts}
    url = f"{base(thesis)}/network/runs/{run['id']}/community/"
    one = api.get(url, {"c": 1}).json()
    assert one["community"] == 1 and one["size"] == rows[0]["size"] == len(one["members"])
    assert {m["twitter_id"] for m in one["members"]} == {t for t, c in of.items() if c == 1}
    assert one["contribution"] == pytest.approx(rows[0]["contribution"])
    assert api.get(url, {"c": 0}).status_code == 400  # below the first number
    assert api.get(url, {"c": summary["count"] + 1}).status_code == 404


def test_a_run_started_without_communities_has_none(api, thesis, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(f"{base(thesis)}/network/runs/", {"samples": 0, "communities": False}, format="json")
    assert r.status_code == 201 and r.json()["params"]["communities"] is False
    pk = r.json()["id"]
    assert api.get(f"{base(thesis)}/network/runs/{pk}/").json()["summary"]["communities"] == {}
    assert api.get(f"{base(thesis)}/network/runs/{pk}/communities/").json() == []
    assert api.get(f"{base(thesis)}/network/runs/{pk}/community/", {"c": 1}).status_code == 404
    accounts = api.get(f"{base(thesis)}/network/runs/{pk}/accounts/").json()["results"]
    assert {a["community"] for a in accounts} == {None}
