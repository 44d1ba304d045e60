"""The API answers of the analyses that read the follower graph carry ``inferred_graph``: null when the graph
holds only uploaded follows, else how much of it was inferred from cascade trees and from which uploads (the
pages show the same notice: tests/frontend/test_inferred_graph_notice.py)."""

from __future__ import annotations

import shutil

import pytest

from monitor import services
from monitor.models import ComputeRun
from tests.monitor.test_api_v1 import base
from tests.webapp import DATA, THESIS

TREES = DATA / "formats" / "trees" / "good"


@pytest.fixture
def trees(ws_a, alice, import_files, tmp_path):
    c = import_files(ws_a, [shutil.make_archive(str(tmp_path / "trees"), "zip", TREES)], name="Rumour trees")
    assert c.status == c.Status.DONE, c.error
    return ws_a, c


@pytest.fixture
def thesis(ws_a, alice, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def _network_run(ws, run_tasks, **params) -> ComputeRun:
    run = run_tasks(services.compute_run_start, workspace=ws, backend="cpu", algorithm="network", params=params)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    return run


def test_a_network_run_over_trees_says_its_graph_was_inferred(api, trees, run_tasks):
    ws, c = trees
    run = _network_run(ws, run_tasks)
    body = api.get(f"{base(ws)}/network/runs/{run.pk}/").json()
    n = c.counts["follows_new"]
    assert body["inferred_graph"] == {
        "inferred_follows": n,
        "uploaded_follows": n,
        "share": 1.0,
        "collections": [{"id": c.pk, "name": "Rumour trees"}],
    }
    interactions = _network_run(ws, run_tasks, graph="interactions")
    assert api.get(f"{base(ws)}/network/runs/{interactions.pk}/").json()["inferred_graph"] is None


def test_a_network_run_over_uploaded_follows_says_null(api, thesis, run_tasks):
    run = _network_run(thesis, run_tasks)
    body = api.get(f"{base(thesis)}/network/runs/{run.pk}/").json()
    assert "inferred_graph" in body and body["inferred_graph"] is None


def test_a_plan_over_trees_says_its_graph_was_inferred(api, trees, django_capture_on_commit_callbacks):
    ws, c = trees
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(f"{base(ws)}/publishers/100/counter-campaign/runs/", {"k": 1, "evaluate": 100}, format="json")
    assert r.status_code == 201, r.content
    body = api.get(f"{base(ws)}/counter-campaign/runs/{r.json()['id']}/").json()
    assert body["inferred_graph"]["collections"] == [{"id": c.pk, "name": "Rumour trees"}]


@pytest.mark.parametrize("path", ["accounts/101/wtf/", "publishers/100/watchlist/"])
def test_who_amplifies_whom_over_trees_says_its_graph_was_inferred(api, trees, path):
    ws, c = trees
    body = api.get(f"{base(ws)}/{path}").json()
    assert body["inferred_graph"]["inferred_follows"] == c.counts["follows_new"]


@pytest.mark.parametrize("path", ["accounts/102/wtf/", "publishers/102/watchlist/"])
def test_who_amplifies_whom_over_uploaded_follows_says_null(api, thesis, path):
    body = api.get(f"{base(thesis)}/{path}").json()
    assert "inferred_graph" in body and body["inferred_graph"] is None


def test_the_schema_documents_the_field(api):
    schema = api.get("/api/v1/schema/", HTTP_ACCEPT="application/json").content.decode()
    assert "InferredGraph" in schema and "inferred_follows" in schema
