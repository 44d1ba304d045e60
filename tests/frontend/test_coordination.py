"""The Coordination pages over a collection with a planted coordinated group: the empty state and the form,
starting a run from it, the results (summary, clusters with their members and strips, the drawing), a cluster's
page, the account badge, the downloads (CSV, the command line's JSON, GEXF and GraphML read back with networkx),
400 naming a bad field, and 404 across workspaces."""

from __future__ import annotations

import csv
import io
import json

import networkx as nx
import pytest
from django.urls import reverse

from compute.algorithms.coordination import coordination
from frontend.views.coordination import strip
from monitor import services
from monitor.models import ComputeRun
from tests.coordinated import PLANTED, PLANTED_TWEETS, coordinated_csv


@pytest.fixture
def planted(ws_a, import_files, tmp_path):
    path, retweets = coordinated_csv(tmp_path / "tweets.csv")
    import_files(ws_a, [path])
    return ws_a, retweets


@pytest.fixture
def computed(planted, run_tasks):
    ws, _ = planted
    run = run_tasks(
        services.compute_run_start,
        workspace=ws,
        backend="cpu",
        algorithm="coordination",
        params={"window": 10, "min_count": 4},
    )
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    return run


def _get(client, user, name, query=None, **kwargs):
    client.force_login(user)
    return client.get(reverse(name, kwargs=kwargs), query or {})


def _body(response) -> str:
    assert response.status_code == 200 and response.streaming
    return b"".join(response.streaming_content).decode()


def test_the_page_says_there_is_no_run_yet_and_offers_the_form(client, alice, planted):
    ws, _ = planted
    r = _get(client, alice, "coordination", ws=ws.slug)
    html = r.content.decode()
    assert r.status_code == 200 and "No run yet" in html
    for name in ("method", "window", "min_count", "min_retweets", "threshold", "backend"):
        assert f'name="{name}"' in html
    assert 'aria-current="page">Coordination</a>' in html and 'data-algorithm="coordination"' in html


def test_it_starts_a_run_from_the_form_and_shows_the_clusters(client, alice, planted, run_tasks):
    ws, (tweet, account, time) = planted
    client.force_login(alice)
    form = {"method": "co-retweet", "window": "10", "min_count": "4", "min_retweets": "10", "threshold": "0.9"}
    r = run_tasks(client.post, reverse("coordination-start", kwargs={"ws": ws.slug}), {**form, "backend": "cpu"})
    assert r.status_code == 302
    run = ComputeRun.objects.get(workspace=ws, algorithm="coordination")
    assert run.params == {"method": "co-retweet", "collection": None, "window": 10.0, "min_count": 4}
    page = client.get(r["Location"])
    html = page.content.decode()
    assert page.context["run"] == run and page.context["summary"].n_clusters == 1
    (c,) = page.context["clusters"]
    assert c["size"] == 5 and c["edges"] == 10 and c["shared_tweets"] >= 4 and c["strip"]["bars"]
    assert {m["twitter_id"] for m in c["members"]} == set(PLANTED)
    assert 'id="clusters-h"' in html and '<svg class="strip"' in html
    drawing = page.context["drawing"]
    assert sorted(int(n["tid"]) for n in drawing["nodes"]) == list(PLANTED) and len(drawing["edges"]) == 10
    assert 'data-colour="cluster"' in html
    want = coordination(tweet, account, time, window=10, min_count=4, backend="cpu")
    assert page.context["summary"].pairs == want.pairs


def test_a_bad_form_answers_400_naming_the_field(client, alice, planted):
    ws, _ = planted
    client.force_login(alice)
    r = client.post(
        reverse("coordination-start", kwargs={"ws": ws.slug}),
        {"method": "similarity", "threshold": "0", "backend": "cpu"},
    )
    assert r.status_code == 400 and "threshold" in r.context["form"].errors
    assert not ComputeRun.objects.filter(algorithm="coordination").exists()


def test_a_cluster_page_lists_members_shared_tweets_and_the_timeline(client, alice, computed):
    ws = computed.workspace
    r = _get(client, alice, "coordination-cluster", {"c": "1"}, ws=ws.slug, pk=computed.pk)
    assert r.status_code == 200
    html = r.content.decode()
    cluster = r.context["cluster"]
    assert sorted(m["twitter_id"] for m in cluster["members"]) == list(PLANTED)
    assert {t["tweet_id"] for t in cluster["tweets"] if t["members"] == 5} == set(PLANTED_TWEETS)
    assert r.context["strip"]["unit"] == "hour" and r.context["strip"]["bins"] == 10 and "Coordinated cluster 1" in html
    assert reverse("docs", kwargs={"name": "coordination"}) in html
    assert _get(client, alice, "coordination-cluster", {"c": "2"}, ws=ws.slug, pk=computed.pk).status_code == 404
    assert _get(client, alice, "coordination-cluster", {"c": "x"}, ws=ws.slug, pk=computed.pk).status_code == 400


def test_a_coordinated_accounts_page_carries_the_badge(client, alice, computed):
    ws = computed.workspace
    html = _get(client, alice, "account", ws=ws.slug, twitter_id=PLANTED[0]).content.decode()
    assert "Coordinated" in html and "cluster 1</a> of 5 accounts" in html and "4 coordinated partners" in html
    other = _get(client, alice, "account", ws=ws.slug, twitter_id=100).content.decode()
    assert "coordination-badge" not in other


def test_the_downloads_are_the_command_lines_rows_and_graphs(client, alice, computed, planted):
    ws, (tweet, account, time) = planted
    want = coordination(tweet, account, time, window=10, min_count=4, backend="cpu").rows()
    text = _body(_get(client, alice, "coordination-edges-export", ws=ws.slug, pk=computed.pk, fmt="json"))
    assert json.loads(text) == want
    rows = list(csv.DictReader(io.StringIO(_body(_get(client, alice, "coordination-edges-export", ws=ws.slug,
                                                        pk=computed.pk, fmt="csv")))))  # fmt: skip
    assert [(r["a"], r["b"], int(r["weight"]), int(r["cluster"])) for r in rows] == [
        (w["a"], w["b"], w["weight"], w["cluster"]) for w in want
    ]
    for fmt in ("gexf", "graphml"):
        body = _body(_get(client, alice, "coordination-graph-export", ws=ws.slug, pk=computed.pk, fmt=fmt))
        g = (nx.read_gexf if fmt == "gexf" else nx.read_graphml)(io.BytesIO(body.encode()))
        assert not g.is_directed() and sorted(map(int, g.nodes())) == list(PLANTED) and g.number_of_edges() == 10
        assert {d["cluster"] for _n, d in g.nodes(data=True)} == {1}
        assert {d["weight"] for _a, _b, d in g.edges(data=True)} == {4}
    one = _get(client, alice, "coordination-graph-export", {"c": "2"}, ws=ws.slug, pk=computed.pk, fmt="gexf")
    assert one.status_code == 404


def test_another_workspaces_runs_are_not_found(client, bob, computed):
    ws = computed.workspace
    assert _get(client, bob, "coordination-run", ws=ws.slug, pk=computed.pk).status_code == 404
    assert _get(client, bob, "coordination-cluster", ws=ws.slug, pk=computed.pk).status_code == 404


def test_the_strip_has_a_bar_per_hour_within_a_week_and_per_day_beyond():
    s = strip([["2020-01-01T00", 4], ["2020-01-01T03", 2]], width=40, height=10)
    assert (s["unit"], s["bins"], s["peak"], len(s["bars"])) == ("hour", 4, 4, 2)
    assert s["bars"][0]["x"] == 0 and s["bars"][1]["x"] == 30 and s["bars"][0]["h"] == 10 and s["bars"][1]["h"] == 5
    assert s["bars"][1]["title"] == "2020-01-01 03:00: 2 retweets"
    d = strip([["2020-01-01T05", 4], ["2020-01-01T09", 1], ["2020-01-10T00", 2]], width=100, height=10)
    assert (d["unit"], d["bins"], d["peak"]) == ("day", 10, 5)
    assert [b["title"] for b in d["bars"]] == ["2020-01-01: 5 retweets", "2020-01-10: 2 retweets"]
    assert strip([]) is None
