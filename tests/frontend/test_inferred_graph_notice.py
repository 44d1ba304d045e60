"""The pages whose results read the follower graph (network analytics, the counter-campaign planner, the
account page's look-alikes and likely next amplifiers, the publisher page's watch list) say so when that graph
was inferred from cascade trees: the trees format has no follower graph, its reader makes each retweeter follow
the account it retweeted from, and those results then partly restate the cascades. Before, only docs/formats.md
said it.

The trees sample (tests/data/formats/trees/good): 100 published, 101 and 102 retweeted from 100, 103 from 101 and
102; 200 published, 201 retweeted it. The thesis' worked example uploads its follows."""

from __future__ import annotations

import shutil

import pytest
from django.urls import reverse

from monitor import services
from monitor.models import ComputeRun
from tests.webapp import DATA, THESIS

TREES = DATA / "formats" / "trees" / "good"
NOTICE = "data-inferred-graph"


@pytest.fixture
def trees_ws(ws_a, import_files, tmp_path):
    c = import_files(ws_a, [shutil.make_archive(str(tmp_path / "trees"), "zip", TREES)], name="Rumour trees")
    assert c.status == c.Status.DONE and c.counts["follows_new"], c.error
    return ws_a


@pytest.fixture
def follows_ws(ws_a, import_files):
    c = import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    assert c.status == c.Status.DONE, c.error
    return ws_a


def _page(client, user, name, query=None, **kwargs) -> str:
    client.force_login(user)
    r = client.get(reverse(name, kwargs=kwargs), query or {})
    assert r.status_code == 200
    return r.content.decode()


PAGES = [
    ("network", {}, "The components, cores, brokers and conversations here"),
    ("counter-campaign", {"publisher": 100}, "The audience and the spread of a plan here"),
    ("account", {"twitter_id": 101}, "Look-alikes and likely next amplifiers walk those edges"),
    ("publisher", {"publisher": 100}, "Look-alikes and likely next amplifiers walk those edges"),  # the watch list
]


@pytest.mark.parametrize("name, kwargs, says", PAGES)
def test_it_says_the_follower_graph_came_from_the_cascades(client, alice, trees_ws, name, kwargs, says):
    html = _page(client, alice, name, ws=trees_ws.slug, **kwargs)
    assert html.count(NOTICE) == 1
    assert "This follower graph was inferred from the cascades themselves." in html
    assert says in html
    assert "Rumour trees</a>" in html  # names the upload, linked


@pytest.mark.parametrize("name, kwargs, says", PAGES)
def test_uploaded_follows_get_no_notice(client, alice, follows_ws, name, kwargs, says):
    kwargs = {k: 102 for k in kwargs}  # the worked example's publisher
    html = _page(client, alice, name, ws=follows_ws.slug, **kwargs)
    assert NOTICE not in html and "inferred from the cascades" not in html


def test_trees_beside_uploaded_follows_say_partly_and_count_them(client, alice, trees_ws, import_files):
    # the worked example's 8 follows: 2 of them (103 follows 101 and 102) the trees had inferred already
    follows = import_files(trees_ws, [THESIS / "follows.csv"])
    assert follows.status == follows.Status.DONE and follows.counts["follows_new"] == 6, follows.error
    inferred = trees_ws.collections.get(name="Rumour trees").counts["follows_new"]
    html = _page(client, alice, "network", ws=trees_ws.slug)
    assert "This follower graph was partly inferred from the cascades themselves." in html
    assert f"{inferred} of the {inferred + 6} follows uploaded to this workspace" in html


def test_the_interaction_graph_tab_gets_no_notice(client, alice, trees_ws):
    html = _page(client, alice, "network", {"graph": "interactions"}, ws=trees_ws.slug)
    assert NOTICE not in html


def test_a_finished_network_run_of_the_follower_graph_keeps_the_notice(client, alice, trees_ws, run_tasks):
    run = run_tasks(services.compute_run_start, workspace=trees_ws, backend="cpu", algorithm="network", params={})
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    html = _page(client, alice, "network-run", ws=trees_ws.slug, pk=run.pk)
    assert html.count(NOTICE) == 1 and "before this run" in html
