"""REST API v1 of the counter-campaign planner: start a plan for a publisher and list its plans, read a plan
(chosen accounts with their gains, the reach with its interval, the curve, the baseline); validation errors name
the field, and another workspace's publishers and runs answer 404."""

from __future__ import annotations

import pytest

from monitor.models import ComputeRun, InfluenceMaxResult, InfluenceMaxSeed
from tests.monitor.test_api_v1 import base
from tests.webapp import THESIS, token_client


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


@pytest.fixture
def run(api, thesis, django_capture_on_commit_callbacks):
    body = {"k": 2, "p": 0.3, "evaluate": 1000, "batches": 2, "seed": 1, "backend": "cpu"}
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(f"{base(thesis)}/publishers/102/counter-campaign/runs/", body, format="json")
    assert r.status_code == 201, r.content
    return r.json()


def test_it_starts_a_plan_and_lists_it(api, thesis, run):
    assert run["algorithm"] == "influence_max" and run["n_batches"] == 2
    p = run["params"]
    assert (p["k"], p["p"], p["model"], p["method"], p["evaluate"], p["batches"], p["seed"]) == (
        2, 0.3, "uniform", "imm", 1000, 2, 1,
    )  # fmt: skip
    listed = api.get(f"{base(thesis)}/publishers/102/counter-campaign/runs/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == run["id"]
    assert api.get(f"{base(thesis)}/publishers/105/counter-campaign/runs/").json()["count"] == 0
    assert ComputeRun.objects.get(pk=run["id"]).status == ComputeRun.Status.DONE


def test_it_reads_a_plan(api, thesis, run):
    body = api.get(f"{base(thesis)}/counter-campaign/runs/{run['id']}/").json()
    assert body["run"]["status"] == "done"
    plan = body["plan"]
    res = InfluenceMaxResult.objects.get(run_id=run["id"])
    seeds = list(InfluenceMaxSeed.objects.filter(run_id=run["id"]).order_by("rank").select_related("account"))
    assert plan["publisher"] == "102" and plan["k"] == 2 and plan["method"] == "imm"
    assert [s["twitter_id"] for s in plan["seeds"]] == [str(s.account.twitter_id) for s in seeds]
    assert [s["marginal_gain"] for s in plan["seeds"]] == [s.gain for s in seeds]
    assert plan["spread"] == res.spread and plan["spread_ci"] == [res.spread_ci_low, res.spread_ci_high]
    assert plan["curve"] == res.curve and len(plan["curve"]) == 2
    assert plan["audience"] == {"accounts": 5, "follow_edges": 3, "total_weight": 5.0}
    assert [b["twitter_id"] for b in plan["baseline"]] == ["105", "106"]
    assert plan["baseline_spread"] == res.baseline["spread"] and plan["overlap"] == res.baseline["overlap"]


def test_a_plan_still_going_has_no_plan_yet(api, thesis):
    r = api.post(f"{base(thesis)}/publishers/102/counter-campaign/runs/", {"k": 2}, format="json")
    assert r.status_code == 201  # queued: nothing ran, the request's commit callbacks were not executed
    body = api.get(f"{base(thesis)}/counter-campaign/runs/{r.json()['id']}/").json()
    assert body["run"]["status"] == "queued" and body["plan"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [({"k": 0}, "k"), ({"method": "celf"}, "method"), ({"model": "lt"}, "model"), ({"evaluate": 5}, "params")],
)
def test_bad_parameters_answer_400_naming_them(api, thesis, body, field):
    r = api.post(f"{base(thesis)}/publishers/102/counter-campaign/runs/", body, format="json")
    assert r.status_code == 400 and field in r.json(), r.content
    assert not ComputeRun.objects.filter(algorithm="influence_max").exists()


def test_a_publisher_without_an_audience_is_refused(api, thesis):
    r = api.post(f"{base(thesis)}/publishers/104/counter-campaign/runs/", {"k": 2}, format="json")
    assert r.status_code == 400 and "no follower" in str(r.json())


def test_another_workspace_s_publishers_and_plans_answer_404(thesis, run, bob):
    other = token_client(bob)
    assert other.get(f"{base(thesis)}/counter-campaign/runs/{run['id']}/").status_code == 404
    assert other.get(f"{base(thesis)}/publishers/102/counter-campaign/runs/").status_code == 404
    assert other.get(f"/api/v1/workspaces/lab/counter-campaign/runs/{run['id']}/").status_code == 404
    assert (
        other.post("/api/v1/workspaces/lab/publishers/102/counter-campaign/runs/", {}, format="json").status_code == 404
    )
