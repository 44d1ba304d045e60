"""The cost models: what drives each analysis's estimate, IMM's theta bound holding against the sampling phase,
and the values the models offer as fitting a budget really fitting it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from compute import costs
from compute.algorithms import influence_max as engine
from compute.generators.im_graphs import paper_graph
from compute.influence_model import ic_model


def test_betweenness_is_exact_at_samples_0_or_beyond_the_nodes():
    for samples in (0, 1000, 10**9):
        est = costs.betweenness_cost(nodes=1000, edges=5000, arcs=9000, samples=samples)
        assert est.drivers["exact"] and est.drivers["sources"] == 1000
    sampled = costs.betweenness_cost(nodes=1000, edges=5000, arcs=9000, samples=10)
    assert not sampled.drivers["exact"] and sampled.drivers["sources"] == 10
    assert sampled.seconds < costs.betweenness_cost(nodes=1000, edges=5000, arcs=9000, samples=0).seconds


def test_betweenness_grows_as_sources_times_the_graph():
    small = costs.betweenness_cost(nodes=10_000, edges=50_000, arcs=100_000, samples=0)
    big = costs.betweenness_cost(nodes=100_000, edges=500_000, arcs=1_000_000, samples=0)
    assert 90 < big.seconds / small.seconds < 110  # 10x the sources x 10x the graph


def test_communities_add_their_search_to_the_structural_batch_linearly_in_the_arcs():
    off = costs.betweenness_cost(nodes=1000, edges=5000, arcs=9000, samples=10)
    on = costs.betweenness_cost(nodes=1000, edges=5000, arcs=9000, samples=10, communities=True)
    assert on.seconds - off.seconds == pytest.approx(costs.COMMUNITY_SECONDS_PER_ARC * 9000)
    assert on.drivers["communities_seconds"] == pytest.approx(costs.COMMUNITY_SECONDS_PER_ARC * 9000)
    assert off.drivers["communities_seconds"] == 0 and on.drivers["communities"] and not off.drivers["communities"]
    big = costs.betweenness_cost(nodes=1000, edges=50_000, arcs=90_000, samples=10, communities=True)
    assert big.drivers["communities_seconds"] == pytest.approx(10 * on.drivers["communities_seconds"])
    # the samples offered as fitting leave room for the communities
    est = costs.betweenness_cost(nodes=1_200_000, edges=8_400_000, arcs=16_000_000, samples=10**9, communities=True)
    fit = est.fit_time(1800)
    again = costs.betweenness_cost(nodes=1_200_000, edges=8_400_000, arcs=16_000_000, samples=fit, communities=True)
    assert again.seconds <= 1800


def test_the_samples_offered_as_fitting_do_fit():
    est = costs.betweenness_cost(nodes=1_200_000, edges=8_400_000, arcs=16_000_000, samples=10**9)
    assert est.seconds > 1800
    fit = est.fit_time(1800)
    assert fit is not None and fit > 0
    assert costs.betweenness_cost(nodes=1_200_000, edges=8_400_000, arcs=16_000_000, samples=fit).seconds <= 1800
    over = costs.betweenness_cost(nodes=1_200_000, edges=8_400_000, arcs=16_000_000, samples=fit + 50)
    assert over.seconds > 1800


@pytest.fixture(scope="module")
def model():
    return ic_model(paper_graph("nethept", scale=0.2, seed=3), p=0.05)


def _estimate(model, k, eps, pilot=None, evaluate=1000):
    pilot = pilot or costs.imm_pilot(model, k=k, seed=0)
    top = float(np.sort(model.weights)[::-1][:k].sum())
    return costs.influence_max_cost(
        nodes=model.n_nodes, edges=model.n_edges, total_weight=model.total_weight, top_weights=top, k=k, eps=eps,
        method="imm", evaluate=evaluate, batches=2, pilot=pilot,
    )  # fmt: skip


def test_imm_theta_never_exceeds_the_bound_computed_before_sampling(model):
    for k, eps in ((5, 0.3), (20, 0.2)):
        est = _estimate(model, k, eps)
        size = engine.imm_sample_size(model, k=k, eps=eps, seed=0, backend="cpu")
        assert size.theta <= est.drivers["theta_bound"]
        assert est.drivers["theta"] <= est.drivers["theta_bound"]
        # the likely theta is near the one the sampling phase finds (within 3x either way on this graph)
        assert size.theta / 3 <= est.drivers["theta"] <= 3 * size.theta, (size.theta, est.drivers)


def test_imm_theta_grows_as_one_over_eps_squared(model):
    pilot = costs.imm_pilot(model, k=10, seed=0)
    a = _estimate(model, 10, 0.1, pilot)
    b = _estimate(model, 10, 0.01, pilot)
    assert 90 < b.drivers["theta_bound"] / a.drivers["theta_bound"] < 110
    tiny = _estimate(model, 10, 1e-9, pilot)
    assert tiny.seconds > 1e9 and tiny.peak_bytes > 2**50


def test_the_eps_offered_as_fitting_does_fit(model):
    pilot = costs.imm_pilot(model, k=10, seed=0)
    est = _estimate(model, 10, 1e-4, pilot)
    assert est.seconds > 60
    eps = est.fit_time(60)
    assert eps is not None and 1e-4 < eps <= 1
    assert _estimate(model, 10, eps, pilot).seconds <= 60
    mem = est.fit_memory(64 * 2**20)
    assert mem is not None and _estimate(model, 10, mem, pilot).peak_bytes <= 64 * 2**20


def test_the_pilot_measures_the_rr_sets(model):
    pilot = costs.imm_pilot(model, k=10, seed=0, sets=2000)
    rr = engine.rr_sets(model, seed=0, start=0, stop=2000, backend="cpu")
    assert pilot.sets == 2000
    assert math.isclose(pilot.mean_size, len(rr.nodes) / 2000)
    assert math.isclose(pilot.mean_edges, rr.edges_touched / 2000)
    assert 0 < pilot.spread <= model.total_weight


def test_wtf_counts_pagerank_iterations_up_to_the_bound_that_always_converges():
    a = costs.wtf_cost(nodes=10_000, edges=100_000, seeds=64, directions=1, circle=1000, max_iter=100)
    b = costs.wtf_cost(nodes=10_000, edges=100_000, seeds=64, directions=1, circle=1000, max_iter=1000)
    assert a.drivers["iterations"] == 100 and b.drivers["iterations"] == costs.PPR_ITERATIONS_MAX
    both = costs.wtf_cost(nodes=10_000, edges=100_000, seeds=64, directions=2, circle=1000, max_iter=100)
    assert math.isclose(both.seconds, 2 * a.seconds)
    assert a.drivers["blocks"] == 1
    assert (
        costs.wtf_cost(nodes=10_000, edges=100_000, seeds=65, directions=1, circle=1000, max_iter=100).drivers["blocks"]
        == 2
    )


def test_the_influence_measure_is_linear_in_participants():
    a = costs.influence_measure_cost(cascades=10, nodes=1000, largest_batch_nodes=500)
    b = costs.influence_measure_cost(cascades=20, nodes=2000, largest_batch_nodes=500)
    assert math.isclose(b.seconds, 2 * a.seconds) and a.peak_bytes == b.peak_bytes


def test_an_estimate_is_plain_json():
    import json

    est = costs.betweenness_cost(nodes=10, edges=20, arcs=30, samples=0)
    d = json.loads(json.dumps(est.as_dict()))
    assert d["algorithm"] == "network" and d["time_param"] == "samples" and d["drivers"]["sources"] == 10


def test_the_wtf_block_is_the_engine_s():
    from compute.algorithms.wtf import BATCH

    assert costs.WTF_BLOCK == BATCH


def test_the_pilot_takes_fewer_sets_where_one_set_reaches_most_of_the_audience(monkeypatch):
    dense = ic_model(paper_graph("nethept", scale=0.2, seed=3), p=1.0)  # every edge live: a set is a reach
    monkeypatch.setattr(costs, "PILOT_WORK", 50_000)
    pilot = costs.imm_pilot(dense, k=5, seed=0)
    assert 2 <= pilot.sets < 4000 and pilot.sets * pilot.mean_edges <= 3 * 50_000


def test_a_local_wtf_method_costs_its_work_bound_not_the_graph():
    small = costs.wtf_cost(nodes=1_000, edges=10_000, seeds=10, directions=1, circle=100, max_iter=100,
                           method="fora", epsilon=1e-6, walks=1e6)  # fmt: skip
    big = costs.wtf_cost(nodes=1_000, edges=10_000_000, seeds=10, directions=1, circle=100, max_iter=100,
                         method="fora", epsilon=1e-6, walks=1e6)  # fmt: skip
    exact = costs.wtf_cost(nodes=1_000, edges=10_000_000, seeds=10, directions=1, circle=100, max_iter=100)
    money = 10 * 100 * costs.MONEY_SECONDS_PER_MEMBER_ITER * 100  # Money grows with the degree: take it out
    assert math.isclose(big.seconds - money * 10_000, small.seconds - money * 10, rel_tol=1e-9)
    assert big.seconds < exact.seconds
    more = costs.wtf_cost(nodes=1_000, edges=10_000, seeds=10, directions=1, circle=100, max_iter=100,
                          method="fora", epsilon=1e-6, walks=2e6)  # fmt: skip
    walk_s = 10 * costs.WALK_SECONDS_PER_STEP * 1e6 / 0.15
    assert math.isclose(more.seconds - small.seconds, walk_s, rel_tol=1e-9)
    assert more.time_param == "seeds" and more.drivers["method"] == "fora"
