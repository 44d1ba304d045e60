"""Network reads: which run a page shows (per graph kind and scope), the brokers beside their influence rank in a
fixed number of queries, the accounts paged, a component, the conversation graph and a neighbourhood with their
caps, and the data-version cache."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.http import Http404
from django.test.utils import CaptureQueriesContext

from monitor import selectors, services
from monitor.algorithms.network import GraphSpec
from monitor.models import Account, ComputeRun, Follow
from tests.webapp import EXPECTED_TOTAL, THESIS, follows_renewed


def _network(run_tasks, ws, **params) -> ComputeRun:
    run = run_tasks(services.compute_run_start, workspace=ws, backend="cpu", algorithm="network", params=params)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE, run.error
    return run


@pytest.fixture
def thesis(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def test_the_latest_finished_run_is_chosen_per_graph_and_scope(thesis, run_tasks):
    assert selectors.network_latest(thesis) is None
    follows = _network(run_tasks, thesis, samples=0)
    interactions = _network(run_tasks, thesis, graph="interactions", samples=0)
    collection = thesis.collections.get()
    scoped = run_tasks(
        services.compute_run_start,
        workspace=thesis,
        collection=collection,
        backend="cpu",
        algorithm="network",
        params={"collection": collection.pk, "samples": 0},
    )
    queued = services.compute_run_start(workspace=thesis, backend="cpu", algorithm="network", params={"samples": 0})
    assert selectors.network_latest(thesis) == follows  # not the queued one, not the collection's
    assert selectors.network_latest(thesis, graph="interactions") == interactions
    assert selectors.network_latest(thesis, collection=collection) == scoped
    assert selectors.network_latest(thesis, graph="interactions", collection=collection) is None
    assert [r.pk for r in selectors.network_runs(thesis)] == [queued.pk, interactions.pk, follows.pk]
    with pytest.raises(Http404):
        selectors.network_run_get(thesis, thesis.compute_runs.filter(algorithm="influence").first().pk)


def test_the_brokers_come_with_their_influence_rank_in_a_fixed_number_of_queries(thesis, run_tasks):
    run = _network(run_tasks, thesis, samples=0)
    names = {a.pk: a.screen_name for a in Account.objects.filter(workspace=thesis)}
    # the ranking page's order of the spreaders: b, the only publisher, is left out (its influence is its tweets'
    # reach), so it has no rank and e is first
    by_influence = [n for n in sorted(EXPECTED_TOTAL, key=lambda n: -EXPECTED_TOTAL[n]) if n != "b"]  # e f c a d
    counts = []
    for limit in (2, 6):
        with CaptureQueriesContext(connection) as q:
            brokers = selectors.network_brokers(thesis, run, limit=limit)
        counts.append(len(q.captured_queries))
        assert len(brokers) == limit
        for b in brokers:
            name = names[b["account"]]
            assert b["influence_rank"] == (None if name == "b" else by_influence.index(name) + 1)
    assert counts[0] == counts[1] == 3  # the page, its count, the ranks
    betweenness = [b["betweenness"] for b in brokers]
    assert betweenness == sorted(betweenness, reverse=True) and brokers[0]["screen_name"] == "b"


def test_an_account_without_influence_has_no_rank(thesis, run_tasks):
    a, f = (Account.objects.get(workspace=thesis, twitter_id=t) for t in (101, 106))
    x = Account.objects.create(workspace=thesis, twitter_id=777, screen_name="x")
    Follow.objects.bulk_create(
        [Follow(workspace=thesis, follower=x, followee=a), Follow(workspace=thesis, follower=f, followee=x)]
    )
    follows_renewed(thesis)
    run = _network(run_tasks, thesis, samples=0)
    row = next(b for b in selectors.network_brokers(thesis, run, limit=10) if b["account"] == x.pk)
    assert row["influence_rank"] is None and row["betweenness"] > 0


def test_the_accounts_page_by_any_number_and_a_component_is_found_by_its_number(thesis, run_tasks):
    run = _network(run_tasks, thesis, samples=0)
    rows, total = selectors.network_accounts(thesis, run, sort="in_degree", limit=3, offset=0)
    assert total == 6 and rows[0]["twitter_id"] == 102 and len(rows) == 3
    more, _ = selectors.network_accounts(thesis, run, sort="in_degree", limit=3, offset=3)
    assert {r["account"] for r in rows}.isdisjoint(r["account"] for r in more)
    with pytest.raises(ValueError, match="sort"):
        selectors.network_accounts(thesis, run, sort="pagerank")
    assert selectors.network_component(thesis, run, 0, limit=2)["size"] == 6
    with pytest.raises(Http404):
        selectors.network_component(thesis, run, 1)


def test_a_neighbourhood_is_capped_to_the_nearest_and_says_what_it_left_out(thesis):
    b = Account.objects.get(workspace=thesis, twitter_id=102)
    full = selectors.network_neighbourhood(thesis, b, depth=2, limit=None)
    assert len(full.ids) == 6 and full.hidden_nodes == 0 and len(full.src) == 8
    capped = selectors.network_neighbourhood(thesis, b, depth=2, limit=3)
    distance = dict(zip(capped.ids.tolist(), capped.attrs["distance"].tolist()))
    assert len(capped.ids) == 3 and distance[b.pk] == 0 and set(distance.values()) == {0.0, 1.0}
    assert capped.hidden_nodes == 3 and capped.hidden_edges == 8 - len(capped.src)
    assert np.isin(capped.src, capped.ids).all() and np.isin(capped.dst, capped.ids).all()
    x = Account.objects.create(workspace=thesis, twitter_id=777)
    assert selectors.network_neighbourhood(thesis, x) is None
    inter = selectors.network_neighbourhood(thesis, b, spec=GraphSpec("interactions"), direction="in")
    assert len(inter.ids) == 6 and inter.weights is not None and inter.weights.sum() == 9  # nine retweets of b


def test_the_conversation_graph_is_capped_to_the_largest_conversations(thesis, run_tasks):
    c, d, e = (Account.objects.get(workspace=thesis, twitter_id=t) for t in (103, 104, 105))
    Follow.objects.bulk_create(
        [
            Follow(workspace=thesis, follower=c, followee=e),
            Follow(workspace=thesis, follower=d, followee=e),
            Follow(workspace=thesis, follower=e, followee=d),
        ]
    )
    follows_renewed(thesis)
    run = _network(run_tasks, thesis, samples=0)
    whole = selectors.network_conversation_graph(thesis, run)
    assert len(whole.ids) == 5 and len(whole.src) == 3  # a-b, c-e, d-e: each pair once
    capped = selectors.network_conversation_graph(thesis, run, limit=3)
    kept = set(capped.ids.tolist())
    assert kept == {c.pk, d.pk, e.pk}  # conversation 0 is the largest: c-e-d
    assert capped.hidden_nodes == 2 and capped.hidden_edges == 1


def test_the_brokers_are_cached_under_the_data_version(thesis, run_tasks, settings):
    run = _network(run_tasks, thesis, samples=0)
    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    first = selectors.network_brokers(thesis, run, limit=3)
    with CaptureQueriesContext(connection) as q:
        assert selectors.network_brokers(thesis, run, limit=3) == first
    assert len(q.captured_queries) == 0


def test_a_drawing_carries_the_server_layout_cached_under_the_graph_itself(thesis, settings, monkeypatch):
    import compute.drawing
    from monitor.selectors import network as network_selectors

    settings.SPREADWATCH_READ_CACHE_SECONDS = 60
    b = Account.objects.get(workspace=thesis, twitter_id=102)
    sub = selectors.network_neighbourhood(thesis, b, depth=2, limit=None)
    calls = []
    real = compute.drawing.force_layout

    def counted(n, src, dst, **kw):
        calls.append(n)
        return real(n, src, dst, **kw)

    monkeypatch.setattr(network_selectors, "force_layout", counted)
    first = selectors.drawing(sub, centre=b.pk)
    xy = np.array([[n["x"], n["y"]] for n in first["nodes"]])
    assert xy.shape == (6, 2) and np.isfinite(xy).all()
    assert len({(x, y) for x, y in xy.tolist()}) == 6  # no two accounts on one spot
    # the same graph again: the positions come from the cache, identical
    again = selectors.drawing(sub, centre=b.pk)
    assert calls == [6] and [(n["x"], n["y"]) for n in again["nodes"]] == [tuple(p) for p in xy.tolist()]
    # another graph (one edge fewer) is laid out afresh: the key is the graph, not the page
    sub.src, sub.dst = sub.src[1:], sub.dst[1:]
    selectors.drawing(sub, centre=b.pk)
    assert calls == [6, 6]


def test_the_communities_table_lists_each_communitys_best_ranked_spreaders(thesis, run_tasks):
    run = _network(run_tasks, thesis, samples=0)
    summary = selectors.network_summary(run)
    rows = selectors.network_communities(thesis, run)
    assert [r["community"] for r in rows] == list(range(1, summary.communities["count"] + 1))
    assert sum(r["size"] for r in rows) == summary.n_nodes == 6
    names = {a.pk: a.screen_name for a in Account.objects.filter(workspace=thesis)}
    member = {r["screen_name"]: r["community"] for r in selectors.network_accounts(thesis, run, limit=10)[0]}
    brokers = {b["screen_name"]: b["influence_rank"] for b in selectors.network_brokers(thesis, run, limit=10)}
    for r in rows:
        ranks = [a["influence_rank"] for a in r["top"]]
        assert ranks == sorted(ranks) and len(ranks) <= selectors.network.COMMUNITY_TOP
        for a in r["top"]:  # a member of that community, with the rank the brokers' table gives it
            assert member[a["screen_name"]] == r["community"] and brokers[a["screen_name"]] == a["influence_rank"]
        ranked = [n for n, c in member.items() if c == r["community"] and brokers[n] is not None]
        assert r["spreaders"] == len(ranked)
    assert set(names.values()) == set(member)
    assert {a["screen_name"] for r in rows for a in r["top"]} <= {n for n, rank in brokers.items() if rank}


def test_a_community_is_found_by_its_number_and_a_run_without_them_has_none(thesis, run_tasks):
    run = _network(run_tasks, thesis, samples=0)
    one = selectors.network_community(thesis, run, 1)
    assert one["size"] == len(one["members"]) and {m["community"] for m in one["members"]} == {1}
    sub = selectors.network_community_graph(thesis, run, 1)
    assert sorted(sub.ids.tolist()) == sorted(m["account"] for m in one["members"])
    assert set(sub.attrs["community"].tolist()) == {1.0}
    with pytest.raises(Http404):
        selectors.network_community(thesis, run, 0)
    with pytest.raises(Http404):
        selectors.network_community(thesis, run, selectors.network_summary(run).communities["count"] + 1)
    off = _network(run_tasks, thesis, samples=0, communities=False)
    assert selectors.network_communities(thesis, off) == []
    with pytest.raises(Http404):
        selectors.network_community(thesis, off, 1)
    assert "community" not in selectors.network_component_graph(thesis, off, 0).attrs
    assert "community" in selectors.network_component_graph(thesis, run, 0).attrs
