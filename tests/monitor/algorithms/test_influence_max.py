"""The counter-campaign planner as a compute-run algorithm: a run stores what the engine chooses on the
publisher's audience and what its evaluator measures, the same seed gives the same accounts on one batch or
many, the estimated model counts what the engine's own counter counts, a cancelled run stores nothing, a batch
delivered twice stores once, a batch that finds another model than its plan fails, and bad parameters are refused
naming them.

The worked example's follower graph: a=101 and b=102 follow each other; c=103 follows a and b; d=104 follows b;
e=105 follows b and c; f=106 follows e. b's audience (who can see b's tweets through follows) is a, c, d, e, f."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from compute.algorithms import influence_max as engine
from compute.graphs import graph_from_edges, subgraph
from monitor import services
from monitor.algorithms import influence_max as planner
from monitor.algorithms.influence_max import INFLUENCE_MAX, audience_nodes, edge_counts, load_audience
from monitor.models import (
    Account,
    CascadeGraph,
    ComputeBatch,
    ComputeRun,
    DailyInfluence,
    Follow,
    InfluenceMaxPartial,
    InfluenceMaxResult,
    InfluenceMaxSeed,
    Tweet,
)
from tests.webapp import THESIS, follow_partition, follows_renewed


@pytest.fixture
def thesis(ws_a, import_files):
    import_files(ws_a, [THESIS / "tweets.csv", THESIS / "follows.csv"])
    return ws_a


def _pk(ws, twitter_id: int) -> int:
    return Account.objects.get(workspace=ws, twitter_id=twitter_id).pk


def _run(run_tasks, ws, **params) -> ComputeRun:
    run = run_tasks(services.compute_run_start, workspace=ws, backend="cpu", algorithm="influence_max", params=params)
    run.refresh_from_db()
    return run


def _follow_graph(ws):
    pairs = np.array(list(Follow.objects.filter(workspace=ws).values_list("follower_id", "followee_id")), np.int64)
    return graph_from_edges(pairs[:, 0], pairs[:, 1])


def _audience_model(ws, publisher: int, p=0.01):
    """The publisher's audience and its model, built here from the Follow rows without the web side's loader."""
    full = _follow_graph(ws)
    reach = {publisher}
    frontier = [publisher]
    follows = list(Follow.objects.filter(workspace=ws).values_list("follower_id", "followee_id"))
    while frontier:  # breadth-first against the follow edges: the followers of what was reached
        nxt = [f for f, u in follows if u in frontier and f not in reach]
        reach |= set(nxt)
        frontier = nxt
    reach.discard(publisher)
    nodes = full.index_of(np.array(sorted(reach), np.int64))
    return engine.ic_model(subgraph(full, nodes), p=p)


def _seeds(run) -> list[int]:
    return list(InfluenceMaxSeed.objects.filter(run=run).order_by("rank").values_list("account_id", flat=True))


def test_it_plans_on_the_publisher_s_audience_and_stores_what_the_engine_chooses_and_measures(thesis, run_tasks):
    b = _pk(thesis, 102)
    run = _run(run_tasks, thesis, publisher=b, k=2, p=0.3, evaluate=3000, batches=1, seed=5)
    assert run.status == ComputeRun.Status.DONE, (run.error, run.notes)
    model = _audience_model(thesis, b, p=0.3)
    assert sorted(model.graph.ids.tolist()) == sorted(_pk(thesis, t) for t in (101, 103, 104, 105, 106))
    ref = engine.influence_max(model, k=2, method="imm", eps=0.1, seed=5, backend="cpu")
    assert _seeds(run) == ref.user_ids.tolist()
    res = InfluenceMaxResult.objects.get(run=run)
    assert (res.publisher_id, res.n_nodes, res.n_edges, res.k, res.method) == (b, 5, 3, 2, "imm")
    assert res.rr_sets == ref.rr_sets and res.curve == pytest.approx(ref.curve.tolist(), rel=1e-12)
    ev = engine.evaluate_spread(model, ref.nodes, runs=3000, seed=5, backend="cpu")
    assert res.spread == ev.mean and (res.spread_ci_low, res.spread_ci_high) == (ev.ci_low, ev.ci_high)
    assert res.spread_ci_low <= res.spread <= res.spread_ci_high <= res.total_weight == 5.0
    gains = list(InfluenceMaxSeed.objects.filter(run=run).order_by("rank").values_list("gain", flat=True))
    assert gains == pytest.approx(ref.gains.tolist(), rel=1e-12)
    assert not InfluenceMaxPartial.objects.filter(run=run).exists()  # merged, then deleted


def _random_workspace(ws, n: int = 300, m: int = 1500, seed: int = 11) -> int:
    """A random follower graph of ``n`` accounts and a publisher (the first) that many of them follow; returns
    the publisher's pk."""
    rng = np.random.default_rng(seed)
    accounts = Account.objects.bulk_create(Account(workspace=ws, twitter_id=5000 + i) for i in range(n))
    pks = np.array([a.pk for a in accounts])
    src, dst = rng.integers(1, n, m), rng.integers(0, n, m)
    pairs = {(int(a), int(b)) for a, b in zip(src, dst) if a != b}
    pairs |= {(int(f), 0) for f in rng.choice(np.arange(1, n), 30, replace=False)}
    follow_partition(ws)
    Follow.objects.bulk_create(Follow(workspace=ws, follower_id=pks[a], followee_id=pks[b]) for a, b in pairs)
    follows_renewed(ws)
    return int(pks[0])


def test_the_same_seed_gives_the_same_accounts_on_one_batch_or_many(ws_a, run_tasks):
    publisher = _random_workspace(ws_a)
    params = {"publisher": publisher, "k": 8, "p": 0.05, "eps": 0.3, "seed": 3, "evaluate": 500}
    one = _run(run_tasks, ws_a, **params, batches=1)
    many = _run(run_tasks, ws_a, **params, batches=7)
    assert one.status == many.status == ComputeRun.Status.DONE, (one.error, many.error)
    assert many.n_batches == 7 and one.n_batches == 1
    assert _seeds(one) == _seeds(many) and len(_seeds(one)) == 8
    a, b = InfluenceMaxResult.objects.get(run=one), InfluenceMaxResult.objects.get(run=many)
    assert (a.rr_sets, a.curve, a.spread, a.edges_touched) == (b.rr_sets, b.curve, b.spread, b.edges_touched)
    assert a.rr_sets > 1000 and a.sampling_rr_sets > 0 and a.lower_bound > 0
    # what one process computes in one call
    model = load_audience(ws_a, one.params).model
    ref = engine.influence_max(model, k=8, method="imm", eps=0.3, seed=3, backend="cpu")
    assert _seeds(one) == ref.user_ids.tolist() and a.rr_sets == ref.rr_sets
    # each batch sampled its own share: together [0, theta) once each
    assert not InfluenceMaxPartial.objects.filter(run=many).exists()
    shares = [planner.share(a.rr_sets, j, 7) for j in range(7)]
    assert shares[0][0] == 0 and shares[-1][1] == a.rr_sets
    assert all(shares[j][1] == shares[j + 1][0] for j in range(6))


def test_the_audience_is_everyone_who_can_see_the_publisher_through_follows(thesis):
    g = _follow_graph(thesis)
    d = _pk(thesis, 104)
    assert audience_nodes(g, d).tolist() == []  # nobody follows d
    e = _pk(thesis, 105)
    assert g.ids[audience_nodes(g, e)].tolist() == [_pk(thesis, 106)]
    assert audience_nodes(g, 10**12).tolist() == []  # not in the graph at all


def test_the_estimated_model_counts_exposures_and_retweets_along_each_follow_edge(thesis, run_tasks):
    g = _follow_graph(thesis)
    exposures, retweets = edge_counts(thesis, g)
    # the engine's definition, counted here one cascade at a time: each cascade u took part in exposed each
    # follower f of u once; f retweeted along f -> u when u's spreading graph says f got it from u
    took_part: dict[int, int] = {}
    got_from: dict[tuple[int, int], int] = {}
    for t in Tweet.objects.filter(workspace=thesis):
        for u in {t.author_id, *t.retweets.values_list("retweeter_id", flat=True)}:
            took_part[u] = took_part.get(u, 0) + 1
    for cg in CascadeGraph.objects.filter(tweet__workspace=thesis):
        for f, u in set(zip(*(a.tolist() for a in cg.edge_arrays()))):
            got_from[(f, u)] = got_from.get((f, u), 0) + 1
    src, dst = g.edges()
    pairs = list(zip(g.ids[src].tolist(), g.ids[dst].tolist()))
    assert exposures.tolist() == [took_part.get(u, 0) for _f, u in pairs]
    assert retweets.tolist() == [got_from.get((f, u), 0) for f, u in pairs]
    assert retweets.sum() > 0 and (retweets <= exposures).all()
    b = _pk(thesis, 102)
    run = _run(run_tasks, thesis, publisher=b, k=2, model="estimated", strength=10, evaluate=500, batches=2)
    assert run.status == ComputeRun.Status.DONE, run.error
    res = InfluenceMaxResult.objects.get(run=run)
    assert res.model == "estimated" and res.estimated["strength"] == 10.0 and res.estimated["exposures"] > 0
    assert "estimated from the collection" in res.model_description
    # the model the run used is the engine's estimator applied to these counts on the audience's edges
    model = load_audience(thesis, run.params).model
    sub_exposures, sub_retweets = edge_counts(thesis, model.graph)
    est = engine.estimate_edge_probabilities(sub_exposures, sub_retweets, strength=10.0)
    assert model.probs.tolist() == est.probs.tolist()


def test_the_weighted_cascade_splits_a_follower_s_attention_over_everything_it_follows(thesis):
    b = _pk(thesis, 102)
    params = INFLUENCE_MAX.clean_params({"publisher": b, "model": "wc"})
    model = load_audience(thesis, params).model
    full = _follow_graph(thesis)
    src, _dst = model.graph.edges()
    for s, p in zip(model.graph.ids[src].tolist(), model.probs.tolist(), strict=True):
        assert p == 1.0 / full.out_degree[full.index_of(np.array([s]))[0]]
    # c follows a and b: inside b's audience it follows only a, yet each of its followees gets half its attention
    c = model.graph.index_of(np.array([_pk(thesis, 103)]))[0]
    assert model.probs[src == c].tolist() == [0.5]


def test_followers_as_the_unit_weigh_each_account_by_its_latest_follower_count(thesis, run_tasks):
    b = _pk(thesis, 102)
    run = _run(run_tasks, thesis, publisher=b, k=1, unit="followers", evaluate=500, batches=1)
    assert run.status == ComputeRun.Status.DONE, run.error
    res = InfluenceMaxResult.objects.get(run=run)
    # followers_count in tweets.csv: a 1, c 4, d 8, e 16, f 32
    assert res.unit == "followers" and res.total_weight == 1 + 4 + 8 + 16 + 32


@pytest.mark.parametrize("method", ["degree", "influence", "random", "imgpu"])
def test_the_other_methods_run_in_one_batch_and_are_evaluated_the_same_way(thesis, run_tasks, method):
    b = _pk(thesis, 102)
    run = _run(run_tasks, thesis, publisher=b, k=2, method=method, p=0.2, evaluate=1000, seed=2)
    assert run.status == ComputeRun.Status.DONE, run.error
    assert run.n_batches == 1 and run.params["batches"] == 1
    model = _audience_model(thesis, b, p=0.2)
    scores = load_audience(thesis, run.params).scores if method == "influence" else None
    ref = engine.influence_max(model, k=2, method=method, seed=2, scores=scores, backend="cpu")
    assert _seeds(run) == ref.user_ids.tolist()
    res = InfluenceMaxResult.objects.get(run=run)
    assert res.spread == engine.evaluate_spread(model, ref.nodes, runs=1000, seed=2, backend="cpu").mean
    if method == "influence":  # the top spreaders by influence are the baseline itself
        assert res.baseline["overlap"] == 2 and res.baseline["spread"] == res.spread


def test_the_baseline_is_the_publisher_s_top_spreaders_by_influence_scored_with_the_same_cascades(thesis, run_tasks):
    b = _pk(thesis, 102)
    run = _run(run_tasks, thesis, publisher=b, k=3, p=0.2, evaluate=2000, batches=2)
    res = InfluenceMaxResult.objects.get(run=run)
    # the publisher's ranking without itself: e 96, f 64, c 32 (a 16, d 8)
    assert res.baseline["accounts"] == [_pk(thesis, t) for t in (105, 106, 103)]
    assert res.baseline["scores"] == [96.0, 64.0, 32.0]
    model = load_audience(thesis, run.params).model
    top = model.graph.index_of(np.array(res.baseline["accounts"]))
    ev = engine.evaluate_spread(model, top, runs=2000, seed=0, backend="cpu")
    assert (res.baseline["spread"], res.baseline["ci_low"], res.baseline["ci_high"]) == (ev.mean, ev.ci_low, ev.ci_high)
    seeds = list(InfluenceMaxSeed.objects.filter(run=run).order_by("rank"))
    assert res.baseline["overlap"] == sum(s.in_baseline for s in seeds)
    # the publisher's ranking page less the publisher: the baseline's numbering
    ranks = {_pk(thesis, t): r for r, t in enumerate((105, 106, 103, 101, 104), 1)}
    assert all(s.influence_rank == ranks[s.account_id] for s in seeds)


def test_without_any_influence_there_is_no_baseline_to_compare(thesis, run_tasks):
    DailyInfluence.objects.filter(workspace=thesis).delete()
    run = _run(run_tasks, thesis, publisher=_pk(thesis, 102), k=2, evaluate=500, batches=1)
    res = InfluenceMaxResult.objects.get(run=run)
    assert res.baseline["accounts"] == [] and "spread" not in res.baseline and res.baseline["overlap"] == 0
    assert not InfluenceMaxSeed.objects.filter(run=run, influence_rank__isnull=False).exists()


def test_a_cancelled_run_stores_nothing(thesis, monkeypatch):
    run = services.compute_run_start(
        workspace=thesis,
        backend="cpu",
        algorithm="influence_max",
        params={"publisher": _pk(thesis, 102), "k": 2, "batches": 3, "evaluate": 500},
    )
    batches = list(ComputeBatch.objects.filter(run=run).order_by("index"))
    real = engine.rr_sets

    def cancel_meanwhile(*args, **kwargs):  # the analyst cancels while the first batch samples
        services.compute_run_cancel(run=run)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "rr_sets", cancel_meanwhile)
    assert services.compute_batch_run(batch_id=batches[0].pk).status == ComputeBatch.Status.CANCELLED
    for b in batches[1:]:
        services.compute_batch_run(batch_id=b.pk)
    assert not InfluenceMaxPartial.objects.filter(run=run).exists()
    assert not InfluenceMaxResult.objects.filter(run=run).exists()
    assert not InfluenceMaxSeed.objects.filter(run=run).exists()
    assert ComputeRun.objects.get(pk=run.pk).status == ComputeRun.Status.CANCELLED


def test_a_batch_delivered_twice_stores_its_part_once(thesis):
    run = services.compute_run_start(
        workspace=thesis,
        backend="cpu",
        algorithm="influence_max",
        params={"publisher": _pk(thesis, 102), "k": 2, "batches": 3, "evaluate": 500},
    )
    batches = list(ComputeBatch.objects.filter(run=run).order_by("index"))
    services.compute_batch_run(batch_id=batches[0].pk)
    ComputeBatch.objects.filter(pk=batches[0].pk).update(status=ComputeBatch.Status.QUEUED)
    services.compute_batch_run(batch_id=batches[0].pk)
    assert InfluenceMaxPartial.objects.filter(run=run).count() == 1
    for b in batches[1:]:
        services.compute_batch_run(batch_id=b.pk)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.DONE and run.batches_done == 3
    assert InfluenceMaxSeed.objects.filter(run=run).count() == 2
    assert InfluenceMaxResult.objects.filter(run=run).count() == 1


def test_a_batch_that_finds_another_model_than_its_plan_fails_and_stores_nothing(thesis):
    run = services.compute_run_start(
        workspace=thesis,
        backend="cpu",
        algorithm="influence_max",
        params={"publisher": _pk(thesis, 102), "k": 2, "batches": 1, "evaluate": 500},
    )
    f, d = (Account.objects.get(workspace=thesis, twitter_id=t) for t in (106, 104))
    Follow.objects.create(workspace=thesis, follower=f, followee=d)  # an import meanwhile
    follows_renewed(thesis)
    from monitor.cache import bump_data_version

    bump_data_version(thesis.pk)
    with pytest.raises(planner.ModelChanged, match="changed since the run was planned"):
        services.compute_batch_run(batch_id=ComputeBatch.objects.get(run=run).pk)
    run.refresh_from_db()
    assert run.status == ComputeRun.Status.FAILED and "ModelChanged" in run.error
    assert not InfluenceMaxResult.objects.filter(run=run).exists()


def test_it_refuses_a_publisher_of_another_workspace_or_without_an_audience(thesis, ws_b):
    with pytest.raises(ValidationError, match="no account"):
        services.compute_run_start(workspace=ws_b, algorithm="influence_max", params={"publisher": _pk(thesis, 102)})
    with pytest.raises(ValidationError, match="no follower"):
        services.compute_run_start(workspace=thesis, algorithm="influence_max", params={"publisher": _pk(thesis, 104)})
    assert not ComputeRun.objects.filter(algorithm="influence_max").exists()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "publisher: the account whose audience"),
        ({"publisher": 1, "k": 0}, "k: from 1 to 500"),
        ({"publisher": 1, "k": "many"}, "k: an integer"),
        ({"publisher": 1, "model": "lt"}, "model: one of uniform, wc, estimated"),
        ({"publisher": 1, "p": 0}, "p: above 0"),
        ({"publisher": 1, "p": 1.5}, "p: above 0 up to 1"),
        ({"publisher": 1, "method": "celf"}, "method: one of imm"),
        ({"publisher": 1, "eps": 0}, "eps: above 0"),
        ({"publisher": 1, "evaluate": 10}, "evaluate: from 100"),
        ({"publisher": 1, "unit": "tweets"}, "unit: one of accounts, followers"),
        ({"publisher": 1, "batches": 0}, "batches: from 1"),
        ({"publisher": 1, "samples": 3}, "unknown: samples"),
    ],
)
def test_it_refuses_bad_parameters_naming_them(ws_a, params, message):
    with pytest.raises(ValueError, match=message):
        INFLUENCE_MAX.clean_params(params)
    with pytest.raises(ValidationError):
        services.compute_run_start(workspace=ws_a, algorithm="influence_max", params=params)
    assert not ComputeRun.objects.filter(workspace=ws_a).exists()


def test_it_fills_in_the_defaults_and_records_only_the_parameters_that_apply():
    assert INFLUENCE_MAX.clean_params({"publisher": 7}) == {
        "publisher": 7,
        "k": 50,
        "model": "uniform",
        "p": 0.01,
        "strength": None,
        "unit": "accounts",
        "method": "imm",
        "eps": 0.1,
        "seed": 0,
        "evaluate": 20_000,
        "batches": 4,
    }
    est = INFLUENCE_MAX.clean_params({"publisher": 7, "model": "estimated", "method": "degree", "p": 0.5})
    assert (est["p"], est["strength"], est["batches"]) == (None, 20.0, 1)


def test_purging_a_workspace_s_data_deletes_its_plans(thesis, run_tasks):
    run = _run(run_tasks, thesis, publisher=_pk(thesis, 102), k=2, evaluate=200, batches=1)
    halfway = services.compute_run_start(
        workspace=thesis, backend="cpu", algorithm="influence_max", params={"publisher": _pk(thesis, 102), "batches": 2}
    )
    services.compute_batch_run(batch_id=halfway.batches.get(index=0).pk)  # one part stored, not yet merged
    counts = services.workspace_purge(workspace=thesis, delete_workspace=False)
    assert (counts["influencemaxresult"], counts["influencemaxseed"], counts["influencemaxpartial"]) == (1, 2, 1)
    assert not InfluenceMaxResult.objects.filter(run=run).exists()
    assert not InfluenceMaxSeed.objects.exists() and not InfluenceMaxPartial.objects.exists()
