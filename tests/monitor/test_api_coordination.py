"""REST API v1 of coordinated accounts: start a run (only the method's parameters kept), read its summary, its
clusters and one of them, and its edges page by page as the command line's JSON rows; bad parameters answer 400
naming them, and another workspace's runs answer 404."""

from __future__ import annotations

import pytest

from compute.algorithms.coordination import coordination
from monitor.models import ComputeRun
from tests.coordinated import PLANTED, coordinated_csv
from tests.monitor.test_api_v1 import base
from tests.webapp import token_client


@pytest.fixture
def planted(ws_a, alice, import_files, tmp_path):
    path, retweets = coordinated_csv(tmp_path / "tweets.csv")
    c = import_files(ws_a, [path])
    assert c.status == c.Status.DONE, c.error
    return ws_a, retweets


def _start(api, ws, django_capture_on_commit_callbacks, **body):
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(f"{base(ws)}/coordination/runs/", {"backend": "cpu", **body}, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def test_it_starts_a_run_keeping_the_methods_own_parameters_and_lists_it(
    api, planted, django_capture_on_commit_callbacks
):
    ws, _ = planted
    run = _start(api, ws, django_capture_on_commit_callbacks, window=30, threshold=0.5)
    assert run["algorithm"] == "coordination" and run["params"] == {
        "method": "co-retweet",
        "collection": None,
        "window": 30.0,
        "min_count": 2,
    }
    assert ComputeRun.objects.get(pk=run["id"]).status == ComputeRun.Status.DONE
    listed = api.get(f"{base(ws)}/coordination/runs/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == run["id"]
    body = api.get(f"{base(ws)}/coordination/runs/{run['id']}/").json()
    assert body["run"]["status"] == "done" and body["summary"]["method"] == "co-retweet"
    assert body["summary"]["n_edges"] >= 10 and body["summary"]["backend"] == "cpu"


def test_the_edges_are_the_command_lines_json_page_by_page(api, planted, django_capture_on_commit_callbacks):
    ws, (tweet, account, time) = planted
    run = _start(api, ws, django_capture_on_commit_callbacks, window=300, min_count=1)
    want = coordination(tweet, account, time, window=300, min_count=1, backend="cpu").rows()
    url = f"{base(ws)}/coordination/runs/{run['id']}/edges/"
    got, page = [], api.get(url, {"limit": 10}).json()
    assert page["count"] == len(want) and page["previous"] is None
    while True:
        got += page["results"]
        if page["next"] is None:
            break
        page = api.get(page["next"]).json()
    assert got == want
    one = api.get(url, {"cluster": 1, "limit": 1000}).json()
    assert one["count"] == sum(r["cluster"] == 1 for r in want)
    assert api.get(url, {"cluster": "x"}).status_code == 400 and api.get(url, {"limit": 0}).status_code == 400


def test_the_clusters_and_one_cluster(api, planted, django_capture_on_commit_callbacks):
    ws, _ = planted
    run = _start(api, ws, django_capture_on_commit_callbacks, window=10, min_count=4)
    clusters = api.get(f"{base(ws)}/coordination/runs/{run['id']}/clusters/").json()
    assert clusters["count"] == 1
    (c,) = clusters["results"]
    assert (c["cluster"], c["size"], c["edges"], c["mean_weight"]) == (1, 5, 10, 4.0)
    assert all(isinstance(m["twitter_id"], str) for m in c["members"])
    one = api.get(f"{base(ws)}/coordination/runs/{run['id']}/clusters/1/").json()
    assert sorted(m["twitter_id"] for m in one["members"]) == [str(t) for t in PLANTED]
    assert all(t["members"] >= 2 and isinstance(t["tweet_id"], str) for t in one["tweets"])
    assert api.get(f"{base(ws)}/coordination/runs/{run['id']}/clusters/2/").status_code == 404


def test_bad_parameters_answer_400_naming_them(api, planted):
    ws, _ = planted
    for body, field in (
        ({"method": "pagerank"}, "method"),
        ({"window": -1}, "window"),
        ({"method": "similarity", "threshold": 0}, "threshold"),
        ({"min_count": 0}, "min_count"),
    ):
        r = api.post(f"{base(ws)}/coordination/runs/", body, format="json")
        assert r.status_code == 400 and field in r.json(), (body, r.content)
    assert not ComputeRun.objects.filter(algorithm="coordination").exists()


def test_the_estimate_answers_before_a_run(api, planted):
    ws, _ = planted
    r = api.get(f"{base(ws)}/runs/estimate/", {"algorithm": "coordination", "method": "co-retweet", "window": "30"})
    assert r.status_code == 200, r.content
    body = r.json()
    assert body["fits"] and body["estimate"]["drivers"]["pairs"] > 0 and body["estimate"]["drivers"]["retweets"] > 200


def test_another_workspaces_runs_are_not_found(api, planted, bob, ws_b, django_capture_on_commit_callbacks):
    ws, _ = planted
    run = _start(api, ws, django_capture_on_commit_callbacks)
    other = token_client(bob)
    assert other.get(f"{base(ws)}/coordination/runs/{run['id']}/").status_code == 404
    assert other.get(f"{base(ws_b)}/coordination/runs/{run['id']}/").status_code == 404
    assert other.get(f"{base(ws_b)}/coordination/runs/{run['id']}/edges/").status_code == 404
    assert other.get(f"{base(ws_b)}/coordination/runs/").json()["count"] == 0
