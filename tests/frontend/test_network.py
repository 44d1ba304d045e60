"""The Network pages over the thesis' worked example: the empty state, starting a run from the form, the results
(summary, charts' data, brokers beside their influence rank, conversations), a component, an account's
neighbourhood, the downloads (CSV, GEXF, GraphML, read back with networkx) and 404 across workspaces.

The follower graph: a=101 and b=102 follow each other; c=103 follows a and b; d=104 follows b; e=105 follows b
and c; f=106 follows e. Eight edges, one weak component, one conversation (a <-> b)."""

from __future__ import annotations

import csv
import io
import json

import networkx as nx
import pytest
from django.urls import reverse

from monitor import services
from monitor.models import Account, ComputeRun
from tests.webapp import THESIS

FOLLOWS = {("102", "101"), ("103", "101"), ("101", "102"), ("103", "102"), ("104", "102"), ("105", "102")}
FOLLOWS |= {("105", "103"), ("106", "105")}


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


@pytest.fixture
def computed(loaded, run_tasks):
    """An exact network run of the follower graph, done."""
    run = run_tasks(
        services.compute_run_start, workspace=loaded, backend="cpu", algorithm="network", params={"samples": 0}
    )
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    return run


def _get(client, user, name, **kwargs):
    client.force_login(user)
    query = kwargs.pop("query", None)
    return client.get(reverse(name, kwargs=kwargs), query or {})


def _body(response) -> str:
    assert response.status_code == 200
    assert response.streaming
    return b"".join(response.streaming_content).decode()


def _read(text: str, fmt: str) -> nx.DiGraph:
    return (nx.read_gexf if fmt == "gexf" else nx.read_graphml)(io.BytesIO(text.encode()))


def test_the_network_page_says_there_is_no_run_yet_and_offers_the_form(client, alice, loaded):
    r = _get(client, alice, "network", ws=loaded.slug)
    assert r.status_code == 200
    html = r.content.decode()
    assert "No run yet" in html and "No network run of the follower graph has finished" in html
    assert 'name="samples"' in html and 'name="seed"' in html and 'name="backend"' in html
    assert 'aria-current="page">Network</a>' in html  # the navigation's link
    assert r.context["run"] is None and "network-charts" not in html


def test_it_starts_a_run_from_the_form_and_shows_its_results(client, alice, loaded, django_capture_on_commit_callbacks):
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        r = client.post(
            reverse("network-start", kwargs={"ws": loaded.slug}),
            {"graph": "follows", "samples": "0", "seed": "0", "backend": "cpu"},
        )
    assert r.status_code == 302 and r["Location"].endswith("/network/?graph=follows")
    run = ComputeRun.objects.get(workspace=loaded, algorithm="network")
    assert run.created_by == alice and run.params["samples"] == 0 and run.status == ComputeRun.Status.DONE
    page = client.get(r["Location"])
    html = page.content.decode()
    assert page.context["run"] == run and page.context["summary"].n_nodes == 6
    brokers = page.context["brokers"]
    # b bridges most; it only published (its influence is its tweets' reach), so it has no rank among the
    # spreaders, as on the ranking page, where e is first
    assert brokers[0]["twitter_id"] == 102 and brokers[0]["influence_rank"] is None
    assert {b["twitter_id"]: b["influence_rank"] for b in brokers}[105] == 1
    assert {b["twitter_id"] for b in brokers} == {101, 102, 103, 104, 105, 106}
    charts = json.loads(html.split('id="network-charts" type="application/json">')[1].split("</script>")[0])
    assert charts["components"] == [[6, 1]] and charts["shells"] == page.context["summary"].cores["shells"]
    assert page.context["conversation_drawing"]["edges"] == [[0, 1]]  # a <-> b, drawn once
    assert "docs/network.md" in html and reverse("docs", kwargs={"name": "network"}) in html
    assert "Brokers" in html and "Conversations" in html and "Components" in html


def test_a_bad_form_answers_400_naming_the_field(client, alice, loaded):
    client.force_login(alice)
    r = client.post(
        reverse("network-start", kwargs={"ws": loaded.slug}),
        {"graph": "follows", "samples": "-3", "seed": "0", "backend": "cpu", "spreading": "on"},
    )
    assert r.status_code == 400
    assert r.context["form"].errors.keys() == {"samples", "spreading"}
    assert not ComputeRun.objects.filter(workspace=loaded, algorithm="network").exists()


def test_a_collections_network_page_starts_a_run_of_its_interaction_graph(client, alice, loaded, run_tasks):
    collection = loaded.collections.get()
    client.force_login(alice)
    r = _get(client, alice, "collection-network", ws=loaded.slug, pk=collection.pk, query={"graph": "interactions"})
    assert r.status_code == 200 and "No network run of the interaction graph has finished for this collection" in (
        r.content.decode()
    )
    r = run_tasks(
        client.post,
        reverse("collection-network-start", kwargs={"ws": loaded.slug, "pk": collection.pk}),
        {"graph": "interactions", "samples": "0", "seed": "1", "backend": "cpu", "spreading": "on"},
    )
    assert r.status_code == 302
    run = ComputeRun.objects.get(workspace=loaded, algorithm="network")
    assert run.collection == collection and run.params["collection"] == collection.pk and run.params["spreading"]
    page = client.get(r["Location"])
    assert page.context["run"] == run and page.context["summary"].graph == "interactions"
    # the workspace's page does not show a collection's run
    assert _get(client, alice, "network", ws=loaded.slug, query={"graph": "interactions"}).context["run"] is None


def test_a_finished_collections_page_links_its_network(client, alice, loaded):
    collection = loaded.collections.get()
    r = _get(client, alice, "collection", ws=loaded.slug, pk=collection.pk)
    assert reverse("collection-network", kwargs={"ws": loaded.slug, "pk": collection.pk}) in r.content.decode()


def test_a_run_still_going_shows_its_progress_and_a_cancel_button(client, alice, loaded):
    run = services.compute_run_start(workspace=loaded, backend="cpu", algorithm="network", params={"samples": 0})
    r = _get(client, alice, "network-run", ws=loaded.slug, pk=run.pk)
    html = r.content.decode()
    assert r.status_code == 200 and f"Run {run.pk} is queued" in html
    assert reverse("run-cancel", kwargs={"ws": loaded.slug, "pk": run.pk}) in html
    assert '<meta http-equiv="refresh"' in html
    page = _get(client, alice, "run", ws=loaded.slug, pk=run.pk).content.decode()  # and the run page links back
    assert reverse("network-run", kwargs={"ws": loaded.slug, "pk": run.pk}) in page


def test_a_component_page_lists_its_members_and_draws_them(client, alice, computed):
    ws = computed.workspace
    r = _get(client, alice, "network-component", ws=ws.slug, pk=computed.pk, query={"c": "0"})
    assert r.status_code == 200
    assert r.context["component"]["size"] == 6 and len(r.context["component"]["members"]) == 6
    drawing = r.context["drawing"]
    assert sorted(n["tid"] for n in drawing["nodes"]) == ["101", "102", "103", "104", "105", "106"]
    tids = [n["tid"] for n in drawing["nodes"]]
    assert {(tids[s], tids[d]) for s, d in drawing["edges"]} == FOLLOWS
    assert _get(client, alice, "network-component", ws=ws.slug, pk=computed.pk, query={"c": "1"}).status_code == 404
    assert _get(client, alice, "network-component", ws=ws.slug, pk=computed.pk, query={"c": "x"}).status_code == 400


def test_an_accounts_neighbourhood_is_drawn_from_the_graph_as_it_is_now(client, alice, loaded):
    r = _get(client, alice, "neighbourhood", ws=loaded.slug, twitter_id=101, query={"depth": "1"})
    assert r.status_code == 200
    nodes = {n["tid"]: n for n in r.context["drawing"]["nodes"]}
    assert set(nodes) == {"101", "102", "103"} and nodes["101"]["centre"] and nodes["102"]["distance"] == 1
    r = _get(client, alice, "neighbourhood", ws=loaded.slug, twitter_id=101, query={"depth": "2", "direction": "in"})
    assert {n["tid"] for n in r.context["drawing"]["nodes"]} == {"101", "102", "103", "104", "105"}
    assert _get(client, alice, "neighbourhood", ws=loaded.slug, twitter_id=101, query={"depth": "9"}).status_code == 400
    # an account without an edge in the graph: an empty state, not an error
    Account.objects.create(workspace=loaded, twitter_id=999, screen_name="lonely")
    r = _get(client, alice, "neighbourhood", ws=loaded.slug, twitter_id=999)
    assert r.status_code == 200 and "Not in this graph" in r.content.decode()


def test_every_account_page_links_its_neighbourhood(client, alice, loaded):
    r = _get(client, alice, "account", ws=loaded.slug, twitter_id=104)
    assert reverse("neighbourhood", kwargs={"ws": loaded.slug, "twitter_id": 104}) in r.content.decode()


def test_the_per_account_table_downloads_as_csv(client, alice, computed):
    ws = computed.workspace
    text = _body(_get(client, alice, "network-accounts-export", ws=ws.slug, pk=computed.pk))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows[0]["twitter_id"] == "102" and len(rows) == 6
    by_id = {r["twitter_id"]: r for r in rows}
    assert by_id["102"]["in_degree"] == "4" and by_id["102"]["out_degree"] == "1"
    assert by_id["101"]["conversation_component"] == "0" and by_id["106"]["conversation_component"] == ""
    assert float(by_id["106"]["betweenness"]) == 0.0 and float(by_id["102"]["betweenness"]) > 0


@pytest.mark.parametrize("fmt", ["gexf", "graphml"])
def test_a_component_the_conversations_and_a_neighbourhood_download_as_graphs(client, alice, computed, fmt):
    ws = computed.workspace
    g = _read(_body(_get(client, alice, "network-component-export", ws=ws.slug, pk=computed.pk, fmt=fmt)), fmt)
    assert set(g.edges()) == FOLLOWS and g.is_directed()
    assert g.nodes["102"]["label"] == "b" and g.nodes["102"]["core"] == 2.0
    conv = _read(_body(_get(client, alice, "network-conversations-export", ws=ws.slug, pk=computed.pk, fmt=fmt)), fmt)
    assert set(conv.nodes()) == {"101", "102"} and conv.number_of_edges() == 1
    nb = _get(client, alice, "neighbourhood-export", ws=ws.slug, twitter_id=106, fmt=fmt, query={"depth": "2"})
    nb = _read(_body(nb), fmt)
    assert set(nb.nodes()) == {"106", "105", "102", "103"} and nb.nodes["105"]["distance"] == 1.0
    assert ("106", "105") in nb.edges() and ("105", "102") in nb.edges()


def test_another_workspaces_runs_and_collections_are_not_found(client, bob, computed):
    ws = computed.workspace
    client.force_login(bob)
    for name, kwargs in [
        ("network", {"ws": ws.slug}),
        ("network-run", {"ws": ws.slug, "pk": computed.pk}),
        ("network-run", {"ws": "lab", "pk": computed.pk}),
        ("network-component", {"ws": "lab", "pk": computed.pk}),
        ("network-accounts-export", {"ws": "lab", "pk": computed.pk}),
        ("collection-network", {"ws": "lab", "pk": ws.collections.get().pk}),
        ("neighbourhood", {"ws": "lab", "twitter_id": 101}),
    ]:
        assert client.get(reverse(name, kwargs=kwargs)).status_code == 404, name


def test_an_influence_run_is_not_a_network_run(client, alice, loaded):
    influence = loaded.compute_runs.get()
    assert _get(client, alice, "network-run", ws=loaded.slug, pk=influence.pk).status_code == 404


def test_the_methods_documentation_pages_are_served_and_nothing_else(client):
    r = client.get(reverse("docs", kwargs={"name": "measure"}))  # public: the repository's own documentation
    assert r.status_code == 200 and "influence" in r.content.decode().lower()
    assert client.get(reverse("docs", kwargs={"name": "deploy"})).status_code == 404  # not a method page
    assert client.get(reverse("docs", kwargs={"name": "secrets"})).status_code == 404


def test_the_conversation_edges_are_counted_once_on_the_page_in_the_api_and_in_the_downloads(client, alice, computed):
    # issue 40: the page said 3,506 conversation edges where the GEXF held 1,753 (each two-way pair counted in
    # both directions). One definition, undirected edges: a <-> b is one edge; before, 7 pairs are joined
    ws = computed.workspace
    page = _get(client, alice, "network-run", ws=ws.slug, pk=computed.pk)
    conv = page.context["summary"].conversations
    assert (conv["nodes_before"], conv["edges_before"], conv["nodes_after"], conv["edges_after"]) == (6, 7, 2, 1)
    assert "6 accounts and 7 edges to 2 accounts and 1 edges (undirected" in " ".join(page.content.decode().split())
    gexf = _read(
        _body(_get(client, alice, "network-conversations-export", ws=ws.slug, pk=computed.pk, fmt="gexf")), "gexf"
    )
    assert gexf.number_of_edges() == conv["edges_after"]
    api = client.get(f"/api/v1/workspaces/{ws.slug}/network/runs/{computed.pk}/").json()
    assert api["summary"]["conversations"]["edges_after"] == 1


def test_a_summary_stored_with_directed_conversation_counts_reads_as_undirected(client, alice, computed):
    from monitor.models import NetworkSummary

    summary = NetworkSummary.objects.get(run=computed)
    summary.conversations = {k: v for k, v in summary.conversations.items() if k != "edges"}
    summary.conversations.update(edges_before=8, edges_after=2)  # as runs before issue 40 stored them
    summary.save()
    page = _get(client, alice, "network-run", ws=computed.workspace.slug, pk=computed.pk)
    conv = page.context["summary"].conversations
    assert (conv["edges_before"], conv["edges_after"]) == (7, 1)


def test_a_share_that_is_not_whole_is_never_written_as_100_or_0_percent():
    # issue 40: "the largest holds 100 %" beside 99.9 % in the table below it
    from frontend.templatetags.spreadwatch import percent, share

    assert percent(0.9993) == percent(0.9993, 1) == "99.9 %"
    assert percent(0.99996) == "99.996 %" and percent(1.0) == "100 %" and percent(0.5) == "50 %"
    assert percent(0.00004) == "0.004 %" and percent(0) == "0 %" and percent(None) == "–"
    assert share(0.9996) == "99.96 %" and share(1.0) == "100 %"


def test_the_results_show_the_communities_with_their_best_ranked_spreaders(client, alice, computed):
    ws = computed.workspace
    page = _get(client, alice, "network-run", ws=ws.slug, pk=computed.pk)
    html = page.content.decode()
    summary = page.context["summary"]
    rows = page.context["communities"]
    assert summary.communities["count"] == len(rows) >= 1 and sum(r["size"] for r in rows) == 6
    assert 'id="communities-h"' in html and "modularity communities" in html
    assert f"{summary.communities['modularity']:.4f}" in html
    community = reverse("network-community", kwargs={"ws": ws.slug, "pk": computed.pk})
    assert f"{community}?c=1" in html
    # e (105) is the first spreader of the ranking: its community lists it first, with its rank
    e = next(r for r in rows if any(a["twitter_id"] == 105 for a in r["top"]))
    assert e["top"][0]["twitter_id"] == 105 and e["top"][0]["influence_rank"] == 1
    # the brokers' table names each broker's community
    assert all(b["community"] >= 1 for b in page.context["brokers"]) and '<th scope="col" class="num">Community' in html
    # the conversation drawing's nodes carry their community: the page offers to colour by it
    assert all(n["community"] >= 1 for n in page.context["conversation_drawing"]["nodes"])
    assert "data-colour-by" in html and 'value="community"' in html


def test_a_community_page_lists_its_members_and_a_component_is_coloured_by_community(client, alice, computed):
    ws = computed.workspace
    r = _get(client, alice, "network-community", ws=ws.slug, pk=computed.pk, query={"c": "1"})
    assert r.status_code == 200 and r.context["kind"] == "community"
    members = r.context["component"]["members"]
    assert r.context["component"]["size"] == len(members) >= 1 and {m["community"] for m in members} == {1}
    html = r.content.decode()
    assert "<h1>Community 1</h1>" in html and "modularity" in html
    assert reverse("network-community-export", kwargs={"ws": ws.slug, "pk": computed.pk, "fmt": "gexf"}) in html
    assert {n["community"] for n in r.context["drawing"]["nodes"]} == {1.0}
    count = computed.network_summary.communities["count"]
    for bad in ("0", str(count + 1)):
        assert _get(client, alice, "network-community", ws=ws.slug, pk=computed.pk, query={"c": bad}).status_code == 404
    assert _get(client, alice, "network-community", ws=ws.slug, pk=computed.pk, query={"c": "x"}).status_code == 400
    comp = _get(client, alice, "network-component", ws=ws.slug, pk=computed.pk, query={"c": "0"})
    assert comp.context["colour"] == "community" and 'data-colour="community"' in comp.content.decode()


def test_the_community_is_in_the_csv_and_an_integer_attribute_of_the_graph_downloads(client, alice, computed):
    ws = computed.workspace
    rows = list(
        csv.DictReader(io.StringIO(_body(_get(client, alice, "network-accounts-export", ws=ws.slug, pk=computed.pk))))
    )
    community = {r["twitter_id"]: int(r["community"]) for r in rows}
    assert set(community) == {str(i) for i in range(101, 107)} and min(community.values()) == 1
    for fmt in ("gexf", "graphml"):
        g = _read(_body(_get(client, alice, "network-component-export", ws=ws.slug, pk=computed.pk, fmt=fmt)), fmt)
        assert {n: d["community"] for n, d in g.nodes(data=True)} == community
        assert all(isinstance(d["community"], int) for _n, d in g.nodes(data=True))
        one = _get(client, alice, "network-community-export", ws=ws.slug, pk=computed.pk, fmt=fmt, query={"c": "1"})
        g = _read(_body(one), fmt)
        assert set(g.nodes()) == {t for t, c in community.items() if c == 1}


def test_the_form_starts_a_run_without_communities_or_refuses_a_bad_resolution(client, alice, loaded, run_tasks):
    client.force_login(alice)
    url = reverse("network-start", kwargs={"ws": loaded.slug})
    form = {"graph": "follows", "samples": "0", "seed": "0", "backend": "cpu", "resolution": "1"}
    page = client.get(reverse("network", kwargs={"ws": loaded.slug})).content.decode()
    assert 'name="communities"' in page and "checked" in page.split('name="communities"')[1].split(">")[0]
    bad = client.post(url, {**form, "communities": "on", "resolution": "0"})
    assert bad.status_code == 400 and "resolution" in bad.context["form"].errors
    assert not ComputeRun.objects.filter(workspace=loaded, algorithm="network").exists()
    r = run_tasks(client.post, url, form)  # the box unticked
    assert r.status_code == 302
    run = ComputeRun.objects.get(workspace=loaded, algorithm="network")
    assert run.params["communities"] is False and run.status == ComputeRun.Status.DONE
    html = client.get(reverse("network-run", kwargs={"ws": loaded.slug, "pk": run.pk})).content.decode()
    assert 'id="communities-h"' not in html and "data-colour-by" not in html
