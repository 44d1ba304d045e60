"""Cost budgets through the REST API: a run whose estimate exceeds the workspace's budget is refused with a 400
keyed by the parameter that drives the cost (the message names it, the estimate and the limit, and what would
fit); one that fits starts with its estimate recorded; the estimate endpoint answers before anything starts."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from monitor.db import copy_in
from monitor.models import Account, ComputeRun
from tests.monitor.test_api_v1 import base
from tests.webapp import THESIS, follow_partition


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def follower_graph(ws, nodes: int, edges: int, seed: int = 0) -> None:
    """``nodes`` accounts and ``edges`` random follows among them, written with COPY (a graph the size of a real
    workspace's, where exact betweenness takes hours on one worker)."""
    rng = np.random.default_rng(seed)
    twitter = np.arange(10**9, 10**9 + nodes, dtype=np.int64)
    Account.objects.bulk_create((Account(workspace=ws, twitter_id=int(t)) for t in twitter), batch_size=10_000)
    with connection.cursor() as cur:
        cur.execute(
            "SELECT id FROM monitor_account WHERE workspace_id = %s AND twitter_id >= %s ORDER BY id", [ws.pk, 10**9]
        )
        pks = np.array([r[0] for r in cur.fetchall()], np.int64)
        a = rng.integers(0, nodes, int(edges * 1.2))
        b = rng.integers(0, nodes, int(edges * 1.2))
        keys = np.unique((a * nodes + b)[a != b])[:edges]
        src, dst = pks[keys // nodes], pks[keys % nodes]
        follow_partition(ws)
        copy_in(cur, "monitor_follow", [("workspace_id", "bigint"), ("follower_id", "bigint"),
                ("followee_id", "bigint")], [np.full(len(src), ws.pk, np.int64), src, dst])  # fmt: skip
    from monitor.cache import bump_data_version

    bump_data_version(ws.pk)


def test_exact_betweenness_on_a_big_graph_is_refused_naming_samples(api, ws_a):
    """Attack 3 of the issue: samples=1000000000 means exact betweenness; on a graph of 60,000 accounts and
    600,000 follows that is hours of one worker, beyond the default budget of 30 minutes."""
    follower_graph(ws_a, 60_000, 600_000)
    r = api.post(f"{base(ws_a)}/network/runs/", {"samples": 1_000_000_000, "backend": "cpu"}, format="json")
    assert r.status_code == 400, r.content
    msg = r.json()["samples"][0]
    assert "samples: 1,000,000,000" in msg and "exact betweenness" in msg, msg
    assert "this workspace's budget is 30 min" in msg and "lower samples to at most" in msg, msg
    assert not ComputeRun.objects.filter(algorithm="network").exists()
    # the largest value the message offers does fit
    fit = int(msg.split("lower samples to at most ")[1].split(")")[0].replace(",", ""))
    ok = api.post(f"{base(ws_a)}/network/runs/", {"samples": fit, "backend": "cpu"}, format="json")
    assert ok.status_code == 201, ok.content
    est = ComputeRun.objects.get(pk=ok.json()["id"]).estimate
    assert est["seconds"] <= 1800 and est["drivers"]["sources"] == fit and est["budget"]["run_seconds"] == 1800


def test_a_counter_campaign_with_a_tiny_eps_is_refused_naming_eps(api, thesis):
    """Attack 4 of the issue: k=500, eps=1e-9 needs about 1e18 times more RR sets than eps=1 (theta grows as
    1 / eps^2); its memory alone is far beyond the budget."""
    url = f"{base(thesis)}/publishers/102/counter-campaign/runs/"
    r = api.post(url, {"k": 500, "eps": 1e-9, "backend": "cpu"}, format="json")
    assert r.status_code == 400, r.content
    msg = r.json()["eps"][0]
    assert msg.startswith("eps: 1e-09 with k 500 needs about") and "RR sets" in msg, msg
    assert "this workspace's budget is 30 min" in msg and "raise eps to at least" in msg, msg
    assert not ComputeRun.objects.filter(algorithm="influence_max").exists()


def test_a_run_within_the_budget_starts_with_its_estimate(api, thesis):
    r = api.post(f"{base(thesis)}/network/runs/", {"samples": 0, "backend": "cpu"}, format="json")
    assert r.status_code == 201, r.content
    est = ComputeRun.objects.get(pk=r.json()["id"]).estimate
    assert est["algorithm"] == "network" and est["drivers"]["sources"] == 6 and est["drivers"]["nodes"] == 6
    assert 0 < est["seconds"] < 1 and est["held"] is True
    assert r.json()["estimate"]["seconds"] == est["seconds"]


def test_a_workspace_s_own_budget_is_the_one_held(api, thesis):
    thesis.budget_run_seconds = 1
    thesis.save()
    r = api.post(f"{base(thesis)}/publishers/102/counter-campaign/runs/", {"k": 2, "eps": 0.001}, format="json")
    assert r.status_code == 400 and "budget is 1.0 s" in r.json()["eps"][0], r.content


def test_the_estimate_endpoint_answers_before_a_run_starts(api, thesis):
    url = f"{base(thesis)}/runs/estimate/"
    ok = api.get(url, {"algorithm": "network", "samples": 0})
    assert ok.status_code == 200, ok.content
    body = ok.json()
    assert body["fits"] is True and body["errors"] == {} and body["estimate"]["drivers"]["sources"] == 6
    assert body["budget"] == {"run_seconds": 1800, "run_memory_bytes": 2048 * 2**20}
    over = api.get(url, {"algorithm": "influence_max", "publisher": "102", "k": 500, "eps": "1e-9"}).json()
    assert over["fits"] is False and "eps" in over["errors"]
    bad = api.get(url, {"algorithm": "influence_max", "publisher": "102", "k": "x"})
    assert bad.status_code == 400 and "k" in str(bad.json())
    assert not ComputeRun.objects.exclude(algorithm="influence").exists()  # the upload's run only


def test_the_estimate_endpoint_is_in_the_api_schema(client):
    import json

    doc = json.loads(client.get("/api/v1/schema/", {"format": "json"}).content)
    op = doc["paths"]["/api/v1/workspaces/{ws}/runs/estimate/"]["get"]
    names = {p["name"] for p in op["parameters"]}
    assert {"algorithm", "samples", "eps", "k", "max_iter", "accounts", "publisher"} <= names
