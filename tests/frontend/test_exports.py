"""Exports: the ranking as CSV and JSON, a cascade and a publisher's amplification network as GEXF and GraphML,
all streamed, on pages and through the API, and never across workspaces."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET

import networkx as nx
import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from monitor import exports, selectors
from monitor.services import api_token_create
from tests.webapp import EXPECTED_TOTAL, THESIS

IDS = {"a": 101, "b": 102, "c": 103, "d": 104, "e": 105, "f": 106}
CASCADE_1000_EDGES = {("a", "b"), ("c", "b"), ("d", "b"), ("e", "b"), ("c", "a"), ("e", "c"), ("f", "e")}
CASCADE_1000_INFLUENCE = {"a": 15.0, "b": 63.0, "c": 28.0, "d": 8.0, "e": 48.0, "f": 32.0}
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "gexf": "application/gexf+xml",
    "graphml": "application/graphml+xml",
}


@pytest.fixture
def loaded(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


@pytest.fixture
def api(alice):
    c = APIClient()
    c.credentials(HTTP_AUTHORIZATION=f"Token {api_token_create(user=alice)[1]}")
    return c


def body(response, fmt: str, filename_part: str = "") -> str:
    """The streamed body, after checking that it streams as a download of the right type."""
    assert response.status_code == 200, response.content if not response.streaming else ""
    assert response.streaming
    assert response["Content-Type"] == CONTENT_TYPES[fmt]
    disposition = response["Content-Disposition"]
    assert disposition.startswith('attachment; filename="') and disposition.endswith(f'.{fmt}"')
    assert filename_part in disposition
    return b"".join(response.streaming_content).decode()


def read_graph(text: str, fmt: str) -> nx.DiGraph:
    reader = nx.read_gexf if fmt == "gexf" else nx.read_graphml
    g = reader(io.BytesIO(text.encode()))
    assert g.is_directed()
    return g


def by_name(g: nx.DiGraph) -> tuple[dict[str, dict], dict[tuple[str, str], dict]]:
    names = {n: g.nodes[n]["label"] for n in g.nodes}
    return {names[n]: g.nodes[n] for n in g.nodes}, {(names[s], names[d]): a for s, d, a in g.edges(data=True)}


def test_it_exports_the_publisher_ranking_as_csv_with_the_totals_in_order(client, alice, loaded):
    client.force_login(alice)
    r = client.get(reverse("publisher-export", kwargs={"ws": loaded.slug, "publisher": 102, "fmt": "csv"}))
    rows = list(csv.DictReader(io.StringIO(body(r, "csv", "publisher-102-ranking-total"))))
    assert list(rows[0]) == ["rank", "twitter_id", "screen_name", "total", "mean", "participation", "cascades", "unit"]
    assert [row["screen_name"] for row in rows] == list("befcad")
    assert {row["screen_name"]: float(row["total"]) for row in rows} == EXPECTED_TOTAL
    assert [row["twitter_id"] for row in rows] == [str(IDS[n]) for n in "befcad"]  # plain integers
    assert [row["rank"] for row in rows] == ["1", "2", "3", "4", "5", "6"]
    assert rows[0]["unit"] == "followers reached" and float(rows[0]["mean"]) == 59.0


def test_it_exports_the_workspace_ranking_as_json(client, alice, loaded):
    client.force_login(alice)
    r = client.get(reverse("ranking-export", kwargs={"ws": loaded.slug, "fmt": "json"}), {"aggregate": "total"})
    doc = json.loads(body(r, "json", "newsroom-ranking-total"))
    assert doc["workspace"] == "newsroom" and doc["publisher"] is None and doc["aggregate"] == "total"
    assert doc["window"] == {"from": None, "to": None}
    assert doc["tweets"] == 2 and doc["unit"] == "followers reached" and doc["count"] == 6
    assert [row["screen_name"] for row in doc["rows"]] == list("befcad")
    assert {row["screen_name"]: row["total"] for row in doc["rows"]} == EXPECTED_TOTAL
    assert doc["rows"][0]["twitter_id"] == "102"  # ids travel as strings


def test_it_exports_the_window_and_aggregate_of_the_ranking_page(client, alice, loaded):
    client.force_login(alice)
    url = reverse("publisher-export", kwargs={"ws": loaded.slug, "publisher": 102, "fmt": "json"})
    doc = json.loads(body(client.get(url, {"aggregate": "mean", "window": "7d"}), "json"))
    assert doc["aggregate"] == "mean" and doc["window"] == {"from": "2019-12-27", "to": "2020-01-02"}
    doc = json.loads(body(client.get(url, {"window": "custom", "start": "2020-01-02", "end": "2020-01-02"}), "json"))
    assert doc["tweets"] == 1 and doc["window"] == {"from": "2020-01-02", "to": "2020-01-02"}
    empty = client.get(url, {"window": "custom", "start": "2021-01-01", "end": "2021-01-31"})
    assert json.loads(body(empty, "json"))["rows"] == []


def test_it_streams_the_ranking_csv_in_chunks(loaded):
    publisher = selectors.account_get(loaded, 102)
    chunks = list(
        exports.ranking_csv(loaded, publisher=publisher, aggregate="total", window=selectors.Window(), chunk=2)
    )
    assert len(chunks) == 4  # the header, then three pages of two rows
    whole = "".join(exports.ranking_csv(loaded, publisher=publisher, aggregate="total", window=selectors.Window()))
    assert "".join(chunks) == whole
    parts = list(
        exports.ranking_json(loaded, publisher=publisher, aggregate="total", window=selectors.Window(), chunk=4)
    )
    assert len(parts) > 2
    assert (
        json.loads("".join(parts))["rows"]
        == json.loads(
            "".join(exports.ranking_json(loaded, publisher=publisher, aggregate="total", window=selectors.Window()))
        )["rows"]
    )


@pytest.mark.parametrize("fmt", ["gexf", "graphml"])
def test_it_exports_a_cascade_that_networkx_reads(client, alice, loaded, fmt):
    client.force_login(alice)
    r = client.get(reverse("tweet-graph", kwargs={"ws": loaded.slug, "tweet_id": 1000, "fmt": fmt}))
    text = body(r, fmt, "newsroom-tweet-1000")
    g = read_graph(text, fmt)
    assert sorted(g.nodes) == sorted(str(i) for i in IDS.values())  # node id = Twitter id
    nodes, edges = by_name(g)
    assert set(edges) == CASCADE_1000_EDGES and g.number_of_edges() == 7
    assert {n: a["influence"] for n, a in nodes.items()} == CASCADE_1000_INFLUENCE
    assert nodes["b"]["is_publisher"] is True and nodes["b"]["role"] == "publisher"
    assert not any(a["is_publisher"] for n, a in nodes.items() if n != "b")
    assert nodes["f"]["followers"] == 32.0
    if fmt == "graphml":
        assert g.graph["tweet"] == "1000" and g.graph["publisher"] == "102" and g.graph["unit"] == "followers"
        assert g.graph["label"] == "unknown" and "toward the publisher" in g.graph["description"]
    else:
        description = ET.fromstring(text).find("{http://gexf.net/1.3}meta/{http://gexf.net/1.3}description").text
        assert "tweet=1000" in description and "publisher=102" in description and "toward the publisher" in description


@pytest.mark.parametrize("fmt", ["gexf", "graphml"])
def test_it_exports_the_publisher_network_with_edge_weights_and_totals(client, alice, loaded, fmt):
    client.force_login(alice)
    r = client.get(reverse("publisher-network", kwargs={"ws": loaded.slug, "publisher": 102, "fmt": fmt}))
    g = read_graph(body(r, fmt, "newsroom-publisher-102-network"), fmt)
    nodes, edges = by_name(g)
    assert edges[("a", "b")]["weight"] == 2  # in both tweets
    assert edges[("c", "a")]["weight"] == 1
    assert set(edges) >= CASCADE_1000_EDGES
    assert {n: a["influence"] for n, a in nodes.items()} == EXPECTED_TOTAL
    assert nodes["a"]["cascades"] == 2 and nodes["a"]["cascades_unknown"] == 2 and nodes["a"]["cascades_false"] == 0
    assert nodes["b"]["is_publisher"] is True
    if fmt == "graphml":
        assert g.graph["cascades"] == 2 and g.graph["cascades_left_out"] == 0 and g.graph["max_cascades"] == 2000


def test_it_caps_the_cascades_of_a_network_and_says_how_many_were_left_out(loaded):
    publisher = selectors.account_get(loaded, 102)
    text = "".join(exports.publisher_network_graphml(loaded, publisher, max_cascades=1))
    g = read_graph(text, "graphml")
    assert g.graph["cascades"] == 1 and g.graph["cascades_left_out"] == 1 and g.graph["max_cascades"] == 1
    _nodes, edges = by_name(g)
    assert all(a["weight"] == 1 for a in edges.values())  # only the most recent tweet (2000) was read
    window = selectors.Window(None, selectors.data_span(loaded, publisher)[0])  # the first day only: tweet 1000
    g = read_graph("".join(exports.publisher_network_gexf(loaded, publisher, window=window)), "gexf")
    assert set(by_name(g)[1]) == CASCADE_1000_EDGES


def test_it_hides_exports_of_other_workspaces_behind_404(client, bob, loaded):
    client.force_login(bob)
    ws = loaded.slug
    urls = [
        reverse("ranking-export", kwargs={"ws": ws, "fmt": "csv"}),
        reverse("ranking-export", kwargs={"ws": ws, "fmt": "json"}),
        reverse("publisher-export", kwargs={"ws": ws, "publisher": 102, "fmt": "csv"}),
        reverse("publisher-network", kwargs={"ws": ws, "publisher": 102, "fmt": "gexf"}),
        reverse("publisher-network", kwargs={"ws": ws, "publisher": 102, "fmt": "graphml"}),
        reverse("tweet-graph", kwargs={"ws": ws, "tweet_id": 1000, "fmt": "gexf"}),
        reverse("tweet-graph", kwargs={"ws": ws, "tweet_id": 1000, "fmt": "graphml"}),
        f"/api/v1/workspaces/{ws}/ranking/export/?format=csv",
        f"/api/v1/workspaces/{ws}/publishers/102/ranking/export/?format=json",
        f"/api/v1/workspaces/{ws}/publishers/102/network/?format=gexf",
        f"/api/v1/workspaces/{ws}/tweets/1000/graph/?format=graphml",
    ]
    for url in urls:
        assert client.get(url).status_code == 404, url
    own = bob.workspaces.get().slug  # A's ids in B's URLs are missing, not forbidden
    assert client.get(reverse("tweet-graph", kwargs={"ws": own, "tweet_id": 1000, "fmt": "gexf"})).status_code == 404
    assert client.get(f"/api/v1/workspaces/{own}/publishers/102/network/").status_code == 404


def test_it_asks_for_a_login_before_an_export(client, loaded):
    r = client.get(reverse("ranking-export", kwargs={"ws": loaded.slug, "fmt": "csv"}))
    assert r.status_code == 302 and "/login/" in r["Location"]
    assert client.get(f"/api/v1/workspaces/{loaded.slug}/ranking/export/").status_code in (401, 403)


@pytest.mark.parametrize(
    "params, field",
    [
        ({"window": "custom", "start": "2020-02-01", "end": "2020-01-01"}, "window"),
        ({"window": "3d"}, "window"),
        ({"window": "custom", "start": "yesterday"}, "start"),
        ({"aggregate": "median"}, "aggregate"),
    ],
)
def test_it_answers_400_naming_the_field_for_bad_parameters(client, alice, loaded, params, field):
    client.force_login(alice)
    for url in (
        reverse("ranking-export", kwargs={"ws": loaded.slug, "fmt": "csv"}),
        reverse("publisher-export", kwargs={"ws": loaded.slug, "publisher": 102, "fmt": "json"}),
        reverse("publisher-network", kwargs={"ws": loaded.slug, "publisher": 102, "fmt": "gexf"}),
    ):
        r = client.get(url, params)
        assert r.status_code == 400, url
        assert r.content.decode().startswith(f"{field}:"), r.content


def test_it_refuses_a_bad_cascade_cap_on_the_network_page(client, alice, loaded):
    client.force_login(alice)
    url = reverse("publisher-network", kwargs={"ws": loaded.slug, "publisher": 102, "fmt": "graphml"})
    for bad in ("0", "many", "\u00b2", "999999"):
        r = client.get(url, {"max_cascades": bad})
        assert r.status_code == 400 and r.content.decode().startswith("max_cascades:"), bad
    g = read_graph(body(client.get(url, {"max_cascades": "1"}), "graphml"), "graphml")
    assert g.graph["cascades_left_out"] == 1


def test_it_exports_through_the_api_with_a_token(api, loaded):
    base = f"/api/v1/workspaces/{loaded.slug}"
    rows = list(csv.DictReader(io.StringIO(body(api.get(f"{base}/ranking/export/", {"format": "csv"}), "csv"))))
    assert {row["screen_name"]: float(row["total"]) for row in rows} == EXPECTED_TOTAL
    r = api.get(f"{base}/publishers/102/ranking/export/", {"as": "json", "aggregate": "participation"})
    doc = json.loads(body(r, "json", "publisher-102-ranking-participation"))
    assert doc["publisher"] == "102" and doc["aggregate"] == "participation" and len(doc["rows"]) == 6
    r = api.get(f"{base}/publishers/102/network/", {"format": "gexf", "from": "2020-01-01", "to": "2020-01-01"})
    g = read_graph(body(r, "gexf", "2020-01-01_2020-01-01"), "gexf")
    assert set(by_name(g)[1]) == CASCADE_1000_EDGES
    g = read_graph(body(api.get(f"{base}/tweets/1000/graph/", {"format": "graphml"}), "graphml"), "graphml")
    assert g.number_of_nodes() == 6 and g.number_of_edges() == 7
    # an Accept header asking for the export's type is not refused with 406
    r = api.get(f"{base}/tweets/1000/graph/", {"format": "gexf"}, HTTP_ACCEPT="application/gexf+xml")
    assert r.status_code == 200 and r.streaming


def test_it_refuses_bad_api_export_parameters_naming_the_field(api, loaded):
    base = f"/api/v1/workspaces/{loaded.slug}"
    for url, params, field in [
        (f"{base}/ranking/export/", {"format": "xlsx"}, "format"),
        (f"{base}/tweets/1000/graph/", {"format": "csv"}, "format"),
        (f"{base}/ranking/export/", {"from": "2020-13-01"}, "from"),
        (f"{base}/ranking/export/", {"from": "2020-02-01", "to": "2020-01-01"}, "from"),
        (f"{base}/ranking/export/", {"aggregate": "median"}, "aggregate"),
        (f"{base}/publishers/102/network/", {"max_cascades": "0"}, "max_cascades"),
    ]:
        r = api.get(url, params)
        assert r.status_code == 400 and field in r.json(), (url, params, r.content)


def test_it_links_the_downloads_from_the_pages(client, alice, loaded):
    client.force_login(alice)
    ws = loaded.slug
    html = client.get(reverse("publisher", kwargs={"ws": ws, "publisher": 102}), {"window": "30d"}).content.decode()
    for name, fmt in [("publisher-export", "csv"), ("publisher-export", "json")]:
        assert reverse(name, kwargs={"ws": ws, "publisher": 102, "fmt": fmt}) + "?window=30d" in html
    for fmt in ("gexf", "graphml"):
        assert reverse("publisher-network", kwargs={"ws": ws, "publisher": 102, "fmt": fmt}) + "?window=30d" in html
    html = client.get(reverse("ranking", kwargs={"ws": ws})).content.decode()
    assert reverse("ranking-export", kwargs={"ws": ws, "fmt": "csv"}) in html
    html = client.get(reverse("tweet", kwargs={"ws": ws, "tweet_id": 1000})).content.decode()
    for fmt in ("gexf", "graphml"):
        assert reverse("tweet-graph", kwargs={"ws": ws, "tweet_id": 1000, "fmt": fmt}) in html
    html = client.get(reverse("account", kwargs={"ws": ws, "twitter_id": 102})).content.decode()
    assert reverse("publisher-network", kwargs={"ws": ws, "publisher": 102, "fmt": "gexf"}) in html


def test_it_exports_what_the_filtered_page_shows(client, alice, ws_a, import_files, run_tasks):
    """The page's label filter travels with the download link: false only keeps tweet 1000's numbers."""
    import csv as _csv
    import io

    from monitor import services
    from monitor.models import Tweet

    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    Tweet.objects.filter(workspace=ws_a, tweet_id=1000).update(label="false")
    run_tasks(services.compute_run_start, workspace=ws_a, backend="cpu")
    client.force_login(alice)
    r = client.get(f"/w/{ws_a.slug}/publishers/102/export.csv", {"labels": "false"})
    rows = list(_csv.DictReader(io.StringIO(b"".join(r.streaming_content).decode())))
    assert {row["screen_name"]: float(row["total"]) for row in rows} == {
        "b": 63.0, "e": 48.0, "f": 32.0, "c": 28.0, "a": 15.0, "d": 8.0
    }  # fmt: skip
