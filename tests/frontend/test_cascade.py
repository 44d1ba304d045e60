"""The cascade explorer page: the graph data it draws, the cut for large cascades, access."""

from __future__ import annotations

import itertools
import json
import re

from django.urls import reverse

from tests.webapp import THESIS


def _data(html: str) -> dict:
    m = re.search(r'<script id="cascade-data" type="application/json">(.*?)</script>', html, re.S)
    assert m, "no graph data on the page"
    return _rows(json.loads(m.group(1)))


def _rows(data: dict) -> dict:
    """The explorer's columns as one dict per node and an (src id, dst id) pair per edge, as its script makes
    them (frontend/static/frontend/cascade.js)."""
    cols, ends = data["nodes"], data["edges"]
    assert len({len(v) for v in cols.values()}) <= 1, "the node columns differ in length"
    nodes = [dict(zip(cols, values, strict=True)) for values in zip(*cols.values(), strict=True)]
    for n in nodes:
        n["role"] = data["roles"][n["role"]]
    edges = [(cols["id"][s], cols["id"][d]) for s, d in zip(ends["src"], ends["dst"], strict=True)]
    return {**data, "nodes": nodes, "edges": edges}


def test_it_draws_the_worked_examples_cascade(client, alice, ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    r = client.get(reverse("cascade", kwargs={"ws": ws_a.slug, "tweet_id": 1000}))
    assert r.status_code == 200
    data = _data(r.content.decode())
    by_pk = {n["id"]: n for n in data["nodes"]}
    names = {pk: n["name"] for pk, n in by_pk.items()}
    assert {names[s] + names[d] for s, d in data["edges"]} == {"ab", "cb", "db", "eb", "ca", "ec", "fe"}
    assert {n["name"]: n["inf"] for n in data["nodes"]} == {"a": 15, "b": 63, "c": 28, "d": 8, "e": 48, "f": 32}
    assert {n["name"]: n["role"] for n in data["nodes"]}["b"] == "publisher"
    # each node carries its own account's Twitter id (read by key after the participants on PostgreSQL)
    assert {n["name"]: n["tid"] for n in data["nodes"]} == {
        k: str(v) for k, v in zip("abcdef", range(101, 107), strict=True)
    }
    assert data["timeline"] == {"n": 5, "points": [[1.0, 1], [2.0, 2], [3.0, 3], [4.0, 4], [5.0, 5]]}
    assert data["hidden"] == {"nodes": 0, "edges": 0}
    # each drawn retweeter's delay after the tweet, the publisher's 0 (the time colouring reads them)
    assert {n["name"]: n["delay"] for n in data["nodes"]} == {
        "b": 0.0,
        "d": 1.0,
        "a": 2.0,
        "c": 3.0,
        "e": 4.0,
        "f": 5.0,
    }


def test_it_cuts_a_large_cascade_and_says_what_is_hidden(client, alice, ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    r = client.get(reverse("cascade", kwargs={"ws": ws_a.slug, "tweet_id": 1000}), {"limit": 10})
    assert r.status_code == 200
    # the page's own floor is 10 nodes; cut further through the selector to see the rule
    from monitor import selectors

    t = ws_a.tweets.get(tweet_id=1000)
    data = _rows(selectors.cascade_explorer_data(ws_a, t, limit=3))
    assert [n["name"] for n in data["nodes"]] == ["b", "e", "f"]  # the publisher, then by influence
    assert data["hidden"] == {"nodes": 3, "edges": 5}
    b, e, f = (n["id"] for n in data["nodes"])
    assert {(s, d) for s, d in data["edges"]} == {(e, b), (f, e)}  # the edges among the drawn nodes


def test_it_hides_another_workspaces_cascade(client, bob, ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(bob)
    assert client.get(reverse("cascade", kwargs={"ws": ws_a.slug, "tweet_id": 1000})).status_code == 404
    own = bob.workspaces.get().slug
    assert client.get(reverse("cascade", kwargs={"ws": own, "tweet_id": 1000})).status_code == 404


def test_it_shows_amplification_on_the_account_page(client, alice, ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    client.force_login(alice)
    html = client.get(reverse("account", kwargs={"ws": ws_a.slug, "twitter_id": 105})).content.decode()
    section = html[html.index("Whom it amplified") : html.index("Cascades</h2>")]
    assert "102" in section and "103" in section and "106" in section  # b, c amplified; f amplified e


def test_the_timeline_keeps_every_retweet_of_a_small_cascade_and_samples_a_large_one():
    from monitor.selectors.explorer import TIMELINE_POINTS, _timeline

    assert _timeline([3.0, 1.0, 2.0]) == {"n": 3, "points": [[1.0, 1], [2.0, 2], [3.0, 3]]}
    big = _timeline([float(i) for i in range(100_000, 0, -1)])
    pts = big["points"]
    assert big["n"] == 100_000 and len(pts) == TIMELINE_POINTS
    assert pts[0] == [1.0, 1] and pts[-1] == [100_000.0, 100_000]  # the curve's two ends are exact
    assert all(a[0] <= b[0] and a[1] < b[1] for a, b in itertools.pairwise(pts))
    assert all(d == float(r) for d, r in pts)  # each point is a real (delay, rank) of the data
    assert _timeline([]) == {"n": 0, "points": []}
