"""REST API v1 of who amplifies whom: start an account's run and read its lists, start a publisher's watch list
and read it, download both, and 404 for another workspace's accounts."""

from __future__ import annotations

import csv
import io
import json

import pytest

from monitor.models import ComputeRun
from tests.webapp import THESIS, token_client


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def base(ws) -> str:
    return f"/api/v1/workspaces/{ws.slug}"


def test_it_starts_an_accounts_run_and_reads_its_lists(api, thesis, run_tasks):
    url = f"{base(thesis)}/accounts/101/wtf/"
    empty = {"account": "101", "screen_name": "a", "results": [], "run": None, "inferred_graph": None}
    assert api.get(url).json() == empty  # inferred_graph: the thesis' follows are uploaded, none inferred
    r = run_tasks(api.post, url, {"top": 5}, format="json")
    assert r.status_code == 201, r.content
    assert r.json()["algorithm"] == "wtf" and r.json()["params"]["accounts"] == ["101"]
    got = api.get(url).json()
    assert got["run"] is None and [x["direction"] for x in got["results"]] == ["followers", "follows"]
    followers = got["results"][0]
    assert [(e["twitter_id"], e["screen_name"], e["rank"]) for e in followers["relevance"]] == [
        ("105", "e", 1),
        ("104", "d", 2),
    ]
    assert followers["top"] == 5 and followers["circle"] == 1000 and followers["in_graph"] is True


def test_a_run_by_a_local_method_reports_it_and_does_not_answer_a_precise_run(api, thesis, run_tasks):
    url = f"{base(thesis)}/accounts/101/wtf/"
    r = run_tasks(api.post, url, {"top": 5, "method": "fora", "epsilon": 1e-4, "walks": 2e4}, format="json")
    assert r.status_code == 201, r.content
    params = r.json()["params"]
    assert (params["method"], params["epsilon"], params["walks"]) == ("fora", 1e-4, 2e4)
    got = api.get(url).json()["results"]
    assert {(x["direction"], x["method"], x["epsilon"], x["walks"]) for x in got} == {
        ("followers", "fora", 1e-4, 2e4),
        ("follows", "fora", 1e-4, 2e4),
    }
    # on the thesis' six accounts the estimate finds the exact lists
    assert [e["twitter_id"] for e in got[0]["relevance"]] == ["105", "104"]
    r = api.get(f"{base(thesis)}/accounts/101/wtf/export/", {"format": "csv"})
    rows = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    assert rows and {x["method"] for x in rows} == {"fora"}
    # the precise run computes again: an estimate does not answer it
    run = ComputeRun.objects.get(pk=run_tasks(api.post, url, {"top": 5}, format="json").json()["id"])
    assert not any("reused" in n for n in run.notes), run.notes
    got = api.get(url).json()["results"]
    assert {(x["method"], x["epsilon"], x["walks"]) for x in got} == {("exact", None, None)}


def test_a_run_by_plain_walks_stores_its_walks_and_no_epsilon(api, thesis, run_tasks):
    url = f"{base(thesis)}/accounts/101/wtf/"
    r = run_tasks(api.post, url, {"top": 5, "method": "walks", "walks": 5e4}, format="json")
    assert r.status_code == 201, r.content
    params = r.json()["params"]
    assert params["method"] == "walks" and params["walks"] == 5e4 and "epsilon" not in params
    got = api.get(url).json()["results"]
    assert {(x["direction"], x["method"], x["epsilon"], x["walks"]) for x in got} == {
        ("followers", "walks", None, 5e4),
        ("follows", "walks", None, 5e4),
    }
    assert [e["twitter_id"] for e in got[0]["relevance"]] == ["105", "104"]  # the thesis' lists, as exact


@pytest.mark.parametrize(
    "params, field",
    [
        ({"method": "monte-carlo"}, "method"),
        ({"method": "walks", "epsilon": 1e-6}, "epsilon"),
        ({"method": "walks", "walks": 0}, "walks"),
        ({"method": "push", "epsilon": 2}, "epsilon"),
        ({"method": "fora", "walks": 0.5}, "walks"),
        ({"method": "exact", "epsilon": 1e-6}, "epsilon"),
        ({"method": "push", "walks": 1e6}, "walks"),
    ],
)
def test_a_bad_method_or_its_numbers_are_refused_by_name(api, thesis, params, field):
    r = api.post(f"{base(thesis)}/accounts/101/wtf/", params, format="json")
    assert r.status_code == 400, r.content
    assert field in json.dumps(r.json()), r.json()
    assert not ComputeRun.objects.filter(algorithm="wtf").exists()


def test_it_refuses_bad_parameters(api, thesis):
    r = api.post(f"{base(thesis)}/accounts/101/wtf/", {"direction": "sideways", "top": 0}, format="json")
    assert r.status_code == 400 and set(r.json()) == {"direction", "top"}
    assert not ComputeRun.objects.filter(algorithm="wtf").exists()


def test_it_starts_and_reads_a_publishers_watch_list(api, thesis, run_tasks):
    url = f"{base(thesis)}/publishers/102/watchlist/"
    assert api.get(url).json()["run"] is None
    r = run_tasks(api.post, url, {"spreaders": 5}, format="json")
    assert r.status_code == 201, r.content
    got = api.get(url).json()
    assert got["run"] == r.json()["id"] and got["params"]["spreaders"] == 5 and got["active"] is None
    assert [s["screen_name"] for s in got["spreaders"]] == ["e", "f", "c", "a", "d"]
    assert [
        (a["twitter_id"], a["already_spreading"], [p["twitter_id"] for p in a["pointed_by"]]) for a in got["accounts"]
    ] == [
        ("105", True, ["101"]),
        ("104", True, ["101"]),
    ]


def test_it_downloads_both(api, thesis, run_tasks):
    run_tasks(api.post, f"{base(thesis)}/accounts/105/wtf/", {}, format="json")
    run_tasks(api.post, f"{base(thesis)}/publishers/102/watchlist/", {}, format="json")
    r = api.get(f"{base(thesis)}/accounts/105/wtf/export/", {"format": "csv"})
    assert r.status_code == 200 and r["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    assert {(x["direction"], x["list"], x["twitter_id"]) for x in rows} >= {("follows", "similarity", "101")}
    r = api.get(f"{base(thesis)}/publishers/102/watchlist/export/", {"format": "json"})
    assert [a["twitter_id"] for a in json.loads(b"".join(r.streaming_content))["accounts"]] == ["105", "104"]
    assert api.get(f"{base(thesis)}/publishers/102/watchlist/export/", {"format": "xml"}).status_code == 400


def test_it_answers_404_to_another_workspace(thesis, bob):
    c = token_client(bob)
    b = base(thesis)
    for u in (
        "accounts/105/wtf/",
        "accounts/105/wtf/export/",
        "publishers/102/watchlist/",
        "publishers/102/watchlist/export/",
    ):
        assert c.get(f"{b}/{u}").status_code == 404, u
    assert c.post(f"{b}/accounts/105/wtf/", {}, format="json").status_code == 404
    assert c.post(f"{b}/publishers/102/watchlist/", {}, format="json").status_code == 404
    assert c.get("/api/v1/workspaces/lab/accounts/105/wtf/").status_code == 404
    assert not ComputeRun.objects.filter(algorithm="wtf").exists()
