"""Network analytics as a compute-run algorithm: a run stores what the engine computes on the workspace's graph,
betweenness split over many batches adds up bitwise to one worker's, a cancelled batch stores nothing, a batch
delivered twice stores once, and a batch that finds another graph than its plan fails instead of mixing two."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from compute.algorithms import network as engine
from compute.graphs import graph_from_edges, interaction_graph, undirected
from monitor import services
from monitor.algorithms import network
from monitor.algorithms.network import NETWORK, GraphSpec, load_graph
from monitor.models import (
    Account,
    CascadeGraph,
    ComputeBatch,
    ComputeRun,
    Follow,
    NetworkAccount,
    NetworkPartial,
    NetworkSummary,
    Retweet,
)
from tests.webapp import THESIS, follow_partition, follows_renewed


def _run(run_tasks, ws, **params) -> ComputeRun:
    run = run_tasks(services.compute_run_start, workspace=ws, backend="cpu", algorithm="network", params=params)
    run.refresh_from_db()
    return run


def _stored(run) -> dict[str, np.ndarray]:
    """The run's per-account rows as columns, by account pk ascending (the graph's node order)."""
    cols = [f.attname for f in NetworkAccount._meta.fields if f.name not in ("id", "run")]
    rows = list(NetworkAccount.objects.filter(run=run).order_by("account_id").values_list(*cols))
    return {c.removesuffix("_id"): np.array([r[i] for r in rows]) for i, c in enumerate(cols)}


@pytest.fixture
def thesis(ws_a, import_files):
    """The worked example: six accounts a..f (twitter ids 101..106), eight follow edges, two cascades."""
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _follow_graph(ws):
    pairs = np.array(list(Follow.objects.filter(workspace=ws).values_list("follower_id", "followee_id")), np.int64)
    return graph_from_edges(pairs[:, 0], pairs[:, 1])


def test_it_stores_what_the_engine_computes_on_the_follower_graph(thesis, run_tasks):
    run = _run(run_tasks, thesis, samples=0)
    assert run.status == ComputeRun.Status.DONE, (run.error, run.notes)
    assert run.algorithm == "network" and run.params["graph"] == "follows" and run.params["collection"] is None
    g = _follow_graph(thesis)
    rows = _stored(run)
    assert rows["account"].tolist() == g.ids.tolist() and g.n_nodes == 6
    d = engine.degrees(g, backend="cpu")
    assert rows["in_degree"].tolist() == d.in_degree.tolist()
    assert rows["out_degree"].tolist() == d.out_degree.tolist()
    assert rows["component"].tolist() == engine.components(g, backend="cpu").labels.tolist()
    assert rows["strong_component"].tolist() == engine.strong_components(g, backend="cpu").labels.tolist()
    assert rows["core"].tolist() == engine.core_numbers(g, backend="cpu").tolist()
    cl = engine.clustering(g, backend="cpu")
    assert rows["clustering"].tolist() == cl.local.tolist() and rows["triangles"].tolist() == cl.triangles.tolist()
    exact = engine.betweenness(undirected(g), samples=0, backend="cpu").values
    assert rows["betweenness"].astype(np.float64).tobytes() == exact.tobytes()
    # b (102) sits between its followers and a: 1 <-> 2 and 3 are the mutual follows a-b
    b = int(Account.objects.get(workspace=thesis, twitter_id=102).pk)
    assert rows["betweenness"][rows["account"] == b][0] == exact.max() > 0
    conv = engine.conversations(g, backend="cpu")
    assert rows["conversation_degree"].sum() == conv.graph.n_edges == 2  # a <-> b, once per direction
    s = NetworkSummary.objects.get(run=run)
    assert (s.n_nodes, s.n_edges, s.graph) == (6, 8, "follows")
    assert s.components["count"] == 1 and s.components["largest"] == [6]
    assert s.cores["shells"] == [[k, int(c)] for k, c in zip(*np.unique(rows["core"], return_counts=True))]
    assert s.transitivity == cl.transitivity
    assert s.betweenness["exact"] and s.betweenness["done"] and s.stability == {}  # exact: nothing to compare
    u, v, _w = s.conversation_arrays()
    assert sorted(zip(u.tolist(), v.tolist())) == [tuple(sorted(conv.graph.ids.tolist()))]
    assert s.conversations["nodes_after"] == 2 and s.fingerprint == network.fingerprint(g)
    assert not NetworkPartial.objects.filter(run=run).exists()  # added up, then deleted


def _random_workspace(ws, n: int = 260, m: int = 900, seed: int = 7) -> None:
    """A random follower graph of ``n`` accounts (two components, isolated pairs among them)."""
    rng = np.random.default_rng(seed)
    accounts = Account.objects.bulk_create(Account(workspace=ws, twitter_id=9000 + i) for i in range(n))
    pks = np.array([a.pk for a in accounts])
    src, dst = rng.integers(0, n - 40, m), rng.integers(0, n - 40, m)  # the last 40 form a second, smaller part
    src2, dst2 = rng.integers(n - 40, n, 60), rng.integers(n - 40, n, 60)
    pairs = {(int(a), int(b)) for a, b in zip(np.r_[src, src2], np.r_[dst, dst2]) if a != b}
    follow_partition(ws)
    Follow.objects.bulk_create(Follow(workspace=ws, follower_id=pks[a], followee_id=pks[b]) for a, b in pairs)
    follows_renewed(ws)


@pytest.mark.parametrize("samples", [0, 150])
def test_betweenness_split_over_many_batches_is_bitwise_what_one_worker_computes(ws_a, run_tasks, settings, samples):
    _random_workspace(ws_a)
    settings.SPREADWATCH_NETWORK_BLOCKS_PER_BATCH = 1
    many = _run(run_tasks, ws_a, samples=samples, seed=3)
    settings.SPREADWATCH_NETWORK_BLOCKS_PER_BATCH = 100
    one = _run(run_tasks, ws_a, samples=samples, seed=3)
    assert many.status == one.status == ComputeRun.Status.DONE
    blocks = NetworkSummary.objects.get(run=many).betweenness["blocks"]
    assert blocks >= 3 and many.n_batches == 1 + blocks and one.n_batches == 2
    split, whole = _stored(many)["betweenness"], _stored(one)["betweenness"]
    assert split.astype(np.float64).tobytes() == whole.astype(np.float64).tobytes()
    ref = engine.betweenness(undirected(_follow_graph(ws_a)), samples=samples, seed=3, backend="cpu")
    assert split.astype(np.float64).tobytes() == ref.values.tobytes()
    assert (NetworkSummary.objects.get(run=many).stability != {}) == (samples > 0)
    # each batch carried its own share of the sources: together, the plan's, once each
    shares = [b.params for b in ComputeBatch.objects.filter(run=many).order_by("index")][1:]
    assert [s["blocks"] for s in shares] == [[i, i + 1] for i in range(blocks)]
    assert np.concatenate([s["sources"] for s in shares]).tolist() == ref.sources.tolist()


def test_a_cancelled_run_stores_nothing(thesis, monkeypatch):
    run = services.compute_run_start(workspace=thesis, backend="cpu", algorithm="network", params={"samples": 0})
    batches = list(ComputeBatch.objects.filter(run=run).order_by("index"))
    real = engine.clustering

    def cancel_meanwhile(*args, **kwargs):  # the analyst cancels while the structural batch computes
        services.compute_run_cancel(run=run)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "clustering", cancel_meanwhile)
    done = services.compute_batch_run(batch_id=batches[0].pk)
    assert done.status == ComputeBatch.Status.CANCELLED
    for b in batches[1:]:
        services.compute_batch_run(batch_id=b.pk)
    assert not NetworkAccount.objects.filter(run=run).exists()
    assert not NetworkSummary.objects.filter(run=run).exists()
    assert not NetworkPartial.objects.filter(run=run).exists()
    assert ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.CANCELLED


def test_a_batch_delivered_twice_stores_its_rows_once(ws_a, run_tasks, settings):
    _random_workspace(ws_a, n=120, m=300)
    settings.SPREADWATCH_NETWORK_BLOCKS_PER_BATCH = 1
    run = services.compute_run_start(workspace=ws_a, backend="cpu", algorithm="network", params={"samples": 0})
    batches = list(ComputeBatch.objects.filter(run=run).order_by("index"))
    for b in batches[:2]:  # the structural batch and the first block, each computed twice from scratch
        services.compute_batch_run(batch_id=b.pk)
        ComputeBatch.objects.filter(pk=b.pk).update(status=ComputeBatch.Status.QUEUED)
        services.compute_batch_run(batch_id=b.pk)
    assert NetworkAccount.objects.filter(run=run).count() == _follow_graph(ws_a).n_nodes > 100
    assert NetworkPartial.objects.filter(run=run).count() == 1
    for b in batches[2:]:
        services.compute_batch_run(batch_id=b.pk)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == run.n_batches == len(batches)
    ref = engine.betweenness(undirected(_follow_graph(ws_a)), samples=0, backend="cpu").values
    assert _stored(run)["betweenness"].astype(np.float64).tobytes() == ref.tobytes()


def test_a_batch_that_finds_another_graph_than_its_plan_fails_and_stores_nothing(thesis):
    run = services.compute_run_start(workspace=thesis, backend="cpu", algorithm="network", params={"samples": 0})
    a, f = (Account.objects.get(workspace=thesis, twitter_id=t) for t in (101, 106))
    Follow.objects.create(workspace=thesis, follower=a, followee=f)  # an import meanwhile
    follows_renewed(thesis)
    from monitor.cache import bump_data_version

    bump_data_version(thesis.pk)
    batch = ComputeBatch.objects.get(run=run, index=0)
    with pytest.raises(network.GraphChanged, match="the graph changed since the run was planned"):
        services.compute_batch_run(batch_id=batch.pk)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.FAILED and "GraphChanged" in run.error
    assert not NetworkAccount.objects.filter(run=run).exists()


def test_the_interaction_graph_of_a_collection_with_and_without_spreading_edges(thesis, run_tasks):
    collection = thesis.collections.get()
    plain = _run(run_tasks, thesis, graph="interactions", collection=collection.pk, samples=0)
    assert plain.status == ComputeRun.Status.DONE, plain.error
    rt = list(Retweet.objects.filter(tweet__workspace=thesis).values_list("retweeter_id", "tweet__author_id"))
    g = interaction_graph(np.array([r for r, _ in rt]), np.array([a for _, a in rt]))
    rows = _stored(plain)
    assert rows["account"].tolist() == g.ids.tolist()
    assert rows["out_degree"].tolist() == g.out_degree.tolist()  # every retweeter -> b (102)
    assert NetworkSummary.objects.get(run=plain).n_edges == g.n_edges == 5
    spread = _run(run_tasks, thesis, graph="interactions", collection=collection.pk, spreading=True, samples=0)
    edges = [cg.edge_arrays() for cg in CascadeGraph.objects.filter(tweet__workspace=thesis)]
    gs = interaction_graph(
        np.array([r for r, _ in rt]),
        np.array([a for _, a in rt]),
        spreading_src=np.concatenate([s for s, _ in edges]),
        spreading_dst=np.concatenate([d for _, d in edges]),
    )
    assert NetworkSummary.objects.get(run=spread).n_edges == gs.n_edges > g.n_edges
    assert _stored(spread)["in_degree"].tolist() == gs.in_degree.tolist()


def test_it_keeps_the_graph_it_read_until_the_data_changes(thesis, django_assert_num_queries):
    spec = GraphSpec("follows")
    first = load_graph(thesis, spec)
    with django_assert_num_queries(0):
        assert load_graph(thesis, spec) is first
    from monitor.cache import bump_data_version

    bump_data_version(thesis.pk)
    again = load_graph(thesis, spec)
    assert again is not first and again.fingerprint == first.fingerprint


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"graph": "retweets"}, "graph: follows or interactions"),
        ({"samples": -1}, "samples: from 0"),
        ({"samples": "many"}, "samples: an integer"),
        ({"seed": True}, "seed: an integer"),
        ({"spreading": True}, "spreading: the spreading edges of cascades join the interaction graph only"),
        ({"depth": 2}, r"unknown: depth"),
        ({"communities": "yes"}, "communities: true or false"),
        ({"resolution": 0}, "resolution: above 0 and at most 1000"),
        ({"resolution": "fine"}, "resolution: a number"),
        ({"resolution": float("nan")}, "resolution: a number"),
    ],
)
def test_it_refuses_bad_parameters_naming_them(ws_a, params, message):
    with pytest.raises(ValueError, match=message):
        NETWORK.clean_params(params)
    with pytest.raises(ValidationError):
        services.compute_run_start(workspace=ws_a, algorithm="network", params=params)
    assert not ComputeRun.objects.filter(workspace=ws_a).exists()


def test_it_fills_in_the_defaults(ws_a):
    assert NETWORK.clean_params({}) == {
        "graph": "follows",
        "collection": None,
        "spreading": False,
        "samples": 256,
        "seed": 0,
        "communities": True,
        "resolution": 1.0,
    }


def test_it_refuses_a_collection_of_another_workspace(thesis, ws_b):
    collection = thesis.collections.get()
    with pytest.raises(ValidationError, match="no collection"):
        services.compute_run_start(
            workspace=ws_b, algorithm="network", params={"graph": "interactions", "collection": collection.pk}
        )


def test_purging_a_workspaces_data_deletes_its_network_results(thesis, run_tasks):
    run = _run(run_tasks, thesis, samples=0)
    assert NetworkAccount.objects.filter(run=run).exists()
    counts = services.workspace_purge(workspace=thesis, delete_workspace=False)
    assert counts["networkaccount"] == 6 and counts["networksummary"] == 1
    assert not NetworkAccount.objects.filter(run=run).exists() and not NetworkSummary.objects.filter(run=run).exists()


def _planted_workspace(ws, groups: int = 4, size: int = 15, seed: int = 11) -> list[list[int]]:
    """A follower graph of ``groups`` planted communities: dense follows inside each group of ``size`` accounts,
    one follow from each group to the next; returns each group's account pks."""
    rng = np.random.default_rng(seed)
    accounts = Account.objects.bulk_create(Account(workspace=ws, twitter_id=7000 + i) for i in range(groups * size))
    pks = [a.pk for a in accounts]
    members = [pks[g * size : (g + 1) * size] for g in range(groups)]
    pairs = set()
    for group in members:
        for a in group:
            for b in rng.choice(group, 6, replace=False):
                if a != b:
                    pairs.add((a, int(b)))
    for g in range(groups):
        pairs.add((members[g][0], members[(g + 1) % groups][1]))
    follow_partition(ws)
    Follow.objects.bulk_create(Follow(workspace=ws, follower_id=a, followee_id=b) for a, b in pairs)
    follows_renewed(ws)
    return members


def test_a_run_stores_the_communities_the_engine_finds_with_networkxs_modularity(ws_a, run_tasks):
    import networkx as nx

    from compute.algorithms import communities as community_engine

    members = _planted_workspace(ws_a)
    run = _run(run_tasks, ws_a, samples=0, seed=5, resolution=1.0)
    assert run.status == ComputeRun.Status.DONE, (run.error, run.notes)
    rows = _stored(run)
    u = undirected(_follow_graph(ws_a))
    found = community_engine.communities(u, seed=5, resolution=1.0, backend="cpu")
    assert rows["community"].tolist() == found.labels.tolist()
    # the planted groups are found, one community each, numbered by size (all the same size: by smallest node)
    label = dict(zip(rows["account"].tolist(), rows["community"].tolist(), strict=True))
    assert sorted({label[pk] for pk in group} for group in members) == [{1}, {2}, {3}, {4}]
    s = NetworkSummary.objects.get(run=run).communities
    ng = nx.Graph()
    ng.add_nodes_from(range(u.n_nodes))
    src = np.repeat(np.arange(u.n_nodes), np.diff(u.indptr))
    ng.add_edges_from(zip(src.tolist(), np.asarray(u.indices).tolist(), strict=True))
    parts = [set(np.flatnonzero(found.labels == c).tolist()) for c in range(1, found.labels.max() + 1)]
    assert s["modularity"] == pytest.approx(nx.community.modularity(ng, parts), abs=1e-12)
    assert (s["count"], s["resolution"], s["seed"], s["singletons"]) == (4, 1.0, 5, 0)
    assert [row[:2] for row in s["largest"]] == [[c, 15] for c in range(1, 5)]
    # each row's modularity term: its inside edges over m less (its degree sum / 2m)^2; together, the modularity
    m = ng.number_of_edges()
    for c, _size, inside, degree_sum, term in s["largest"]:
        part = parts[c - 1]
        assert inside == ng.subgraph(part).number_of_edges()
        assert degree_sum == sum(d for _n, d in ng.degree(part))
        assert term == pytest.approx(inside / m - (degree_sum / (2 * m)) ** 2, abs=1e-12)
    assert sum(row[4] for row in s["largest"]) == pytest.approx(s["modularity"], abs=1e-12)
    assert s["distribution"] == [[15, 4]]


def test_a_run_without_communities_stores_none_and_a_higher_resolution_finds_smaller_ones(ws_a, run_tasks):
    _planted_workspace(ws_a)
    off = _run(run_tasks, ws_a, samples=0, communities=False)
    assert off.status == ComputeRun.Status.DONE
    assert set(_stored(off)["community"].tolist()) == {None}
    assert NetworkSummary.objects.get(run=off).communities == {}
    fine = _run(run_tasks, ws_a, samples=0, resolution=8.0)
    s = NetworkSummary.objects.get(run=fine).communities
    assert s["resolution"] == 8.0 and s["count"] > 4
    assert sum(size * k for size, k in s["distribution"]) == 60
    labels = _stored(fine)["community"]
    assert sorted(set(labels.tolist())) == list(range(1, s["count"] + 1))


def test_a_cancel_while_the_communities_are_found_stores_nothing(thesis, monkeypatch):
    from compute.algorithms import communities as community_engine

    run = services.compute_run_start(workspace=thesis, backend="cpu", algorithm="network", params={"samples": 0})
    batch = ComputeBatch.objects.filter(run=run).order_by("index").first()
    real = community_engine.communities

    def cancel_meanwhile(*args, **kwargs):
        services.compute_run_cancel(run=run)
        return real(*args, **kwargs)

    monkeypatch.setattr(community_engine, "communities", cancel_meanwhile)
    done = services.compute_batch_run(batch_id=batch.pk)
    assert done.status == ComputeBatch.Status.CANCELLED
    assert not NetworkAccount.objects.filter(run=run).exists()
    assert not NetworkSummary.objects.filter(run=run).exists()
