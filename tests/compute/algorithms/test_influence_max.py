"""Influence maximisation (issue 16): the IC model and estimator, RR sets (unbiased, splittable), greedy coverage,
IMM's guarantee against exhaustive search, IMGPU's traversal, the baselines and the Monte-Carlo evaluator."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import compute.algorithms.influence_max as im
from compute.algorithms import _influence_max_kernels as kern
from compute.graphs import graph_from_edges

from .im_oracle import best_seed_set, exact_spread, reach_worlds, tiny_graph


def random_graph(seed: int, n: int = 400, m: int = 2400):
    """A follower graph whose followees are skewed (a few accounts followed by many)."""
    rng = np.random.default_rng(seed)
    follower = rng.integers(0, n, m)
    followee = np.minimum((rng.pareto(1.3, m) * 8).astype(np.int64), n - 1)
    keep = follower != followee
    return graph_from_edges(follower[keep] + 1000, followee[keep] + 1000)


# --------------------------------------------------------------------------------------------------------------
# Model and estimator
# --------------------------------------------------------------------------------------------------------------


def test_it_builds_uniform_weighted_cascade_and_given_models():
    g = graph_from_edges([1, 1, 2, 3], [2, 3, 3, 1])
    assert im.ic_model(g, p=0.2).probs.tolist() == [0.2] * 4
    # row 1 follows 2 accounts, rows 2 and 3 one each: 1 / accounts the follower follows
    assert im.ic_model(g, p="wc").probs.tolist() == [0.5, 0.5, 1.0, 1.0]
    given = im.ic_model(g, p=np.array([0.1, 0.2, 0.3, 0.4]), kind="estimated")
    assert given.kind == "estimated" and given.p is None
    for bad in ({"p": 0.0}, {"p": 1.5}, {"p": "x"}, {"p": np.ones(3)}, {"weights": -np.ones(3)}):
        with pytest.raises(ValueError):
            im.ic_model(g, **bad)


def test_the_estimator_shrinks_each_edge_to_the_prior_by_its_exposures():
    est = im.estimate_edge_probabilities(np.array([0, 10, 1000]), np.array([0, 5, 100]), prior=0.02, strength=20)
    assert est.probs[0] == pytest.approx(0.02)  # never exposed: the prior
    assert est.probs[1] == pytest.approx((5 + 0.4) / 30)
    assert est.probs[2] == pytest.approx((100 + 0.4) / 1020)  # close to its rate 0.1
    pooled = im.estimate_edge_probabilities(np.array([10, 10]), np.array([1, 3]))
    assert pooled.prior == pytest.approx(0.2) and pooled.exposures == 20 and pooled.retweets == 4
    with pytest.raises(ValueError, match="exceed"):
        im.estimate_edge_probabilities(np.array([1]), np.array([2]))


def test_edge_positions_finds_follow_edges_by_external_id():
    g = graph_from_edges([5, 5, 7], [7, 9, 9])
    pos = im.edge_positions(g, [5, 7, 9, 5], [9, 9, 5, 42])
    assert pos.tolist() == [1, 2, -1, -1]


# --------------------------------------------------------------------------------------------------------------
# RR sets
# --------------------------------------------------------------------------------------------------------------


def test_rr_sets_split_anywhere_and_merged_in_any_order_equal_one_call(backend):
    model = im.ic_model(random_graph(1), p=0.1)
    whole = im.rr_sets(model, seed=7, start=0, stop=30000, backend=backend)
    cuts = [0, 1, 8192, 8193, 20000, 30000]
    parts = [im.rr_sets(model, seed=7, start=a, stop=b, backend=backend) for a, b in itertools.pairwise(cuts)]
    merged = im.merge_rr_sets(parts[::-1])
    assert np.array_equal(merged.indptr, whole.indptr) and np.array_equal(merged.nodes, whole.nodes)
    assert merged.edges_touched == whole.edges_touched
    back = im.RRSets.from_bytes(whole.to_bytes())
    assert np.array_equal(back.nodes, whole.nodes) and (back.seed, back.start) == (7, 0)
    with pytest.raises(ValueError, match="gap"):
        im.merge_rr_sets([parts[0], parts[2]])


def test_rr_sets_list_a_root_and_what_reaches_it_sorted():
    model = im.ic_model(random_graph(2), p=1.0)  # every edge live: a set is everything that reaches its root
    rr = im.rr_sets(model, seed=1, start=0, stop=50, backend="cpu")
    g = model.graph
    for j in range(rr.count):
        s = rr.nodes[rr.indptr[j] : rr.indptr[j + 1]]
        assert np.all(np.diff(s) > 0)
        # closed under "follows": whoever a member follows is in the set too
        for v in s:
            assert np.isin(g.indices[g.indptr[v] : g.indptr[v + 1]], s).all()


def test_the_rr_estimate_is_unbiased_against_the_exact_spread():
    rng = np.random.default_rng(3)
    g = tiny_graph(rng, 8, 14)
    probs = rng.uniform(0.1, 0.7, g.n_edges)
    weights = rng.integers(1, 5, g.n_nodes).astype(float)
    model = im.ic_model(g, p=probs, weights=weights)
    prob, reach = reach_worlds(g, probs)
    rr = im.rr_sets(model, seed=5, start=0, stop=200_000, backend="cpu")
    for seeds in ([0], [3, 5], [1, 2, 7]):
        exact = exact_spread(prob, reach, seeds, weights)
        hit = np.zeros(rr.count, bool)
        member = np.isin(rr.nodes, seeds)
        hit[np.repeat(np.arange(rr.count), np.diff(rr.indptr))[member]] = True
        est = model.total_weight * hit.mean()
        se = model.total_weight * np.sqrt(hit.mean() * (1 - hit.mean()) / rr.count)
        assert abs(est - exact) < 4 * se + 1e-9, (seeds, est, exact)


# --------------------------------------------------------------------------------------------------------------
# Evaluator
# --------------------------------------------------------------------------------------------------------------


def test_the_evaluator_interval_covers_the_exact_spread(backend):
    rng = np.random.default_rng(4)
    g = tiny_graph(rng, 9, 15)
    probs = rng.uniform(0.05, 0.6, g.n_edges)
    model = im.ic_model(g, p=probs)
    prob, reach = reach_worlds(g, probs)
    for seeds in ([0], [2, 4], [1, 6, 8]):
        ev = im.evaluate_spread(model, np.array(seeds), runs=20000, seed=9, backend=backend)
        exact = exact_spread(prob, reach, seeds, model.weights)
        half = (ev.ci_high - ev.ci_low) / 2
        assert abs(ev.mean - exact) < 2.1 * half + 1e-9, (seeds, ev, exact)  # 4 sigma
        assert ev.runs == 20000 and ev.ci_low <= ev.mean <= ev.ci_high


def test_the_evaluator_is_deterministic_for_a_seed_and_counts_seeds_once():
    model = im.ic_model(random_graph(5), p=0.05)
    a = im.evaluate_spread(model, np.array([3, 3, 9]), runs=500, seed=2, backend="cpu")
    b = im.evaluate_spread(model, np.array([9, 3]), runs=500, seed=2, backend="cpu")
    assert a.mean == b.mean and a.std == b.std
    assert a.mean >= 2


def test_paired_comparison_of_one_set_with_itself_is_exactly_zero(backend):
    model = im.ic_model(random_graph(7), p=0.1)
    cmp = im.compare_spreads(model, [np.array([5, 1, 9]), np.array([9, 5, 1, 1])], runs=3000, seed=3, backend=backend)
    assert cmp.difference(0, 1) == (0.0, 0.0, 0.0) and cmp.diff_std[0, 1] == 0.0
    assert cmp.estimates[0].mean == cmp.estimates[1].mean > 3
    assert cmp.estimates[0].ci_high > cmp.estimates[0].ci_low  # the unpaired interval is not zero


def test_a_dominated_seed_set_is_below_with_a_paired_interval_narrower_than_the_unpaired(backend):
    model = im.ic_model(random_graph(8), p=0.05)
    small, big = np.array([0, 1, 2]), np.array([0, 1, 2, 300])  # one lightly followed account more
    cmp = im.compare_spreads(model, [small, big], runs=4000, seed=5, backend=backend)
    mean, low, high = cmp.difference(0, 1)
    assert mean < 0 and high < 0  # a subset never reaches more in any world
    assert cmp.difference(1, 0) == pytest.approx((-mean, -high, -low))
    unpaired_half = (cmp.estimates[0].ci_high - cmp.estimates[0].ci_low) / 2
    assert (high - low) / 2 < unpaired_half / 2


def test_paired_differences_are_the_unpaired_evaluators_and_cover_the_exact_difference(backend):
    rng = np.random.default_rng(11)
    g = tiny_graph(rng, 9, 15)
    probs = rng.uniform(0.05, 0.6, g.n_edges)
    model = im.ic_model(g, p=probs)
    prob, reach = reach_worlds(g, probs)
    sets = [[0, 4], [2, 7], [1, 3, 5]]
    cmp = im.compare_spreads(model, [np.array(x) for x in sets], runs=20000, seed=4, backend=backend)
    for i, a in enumerate(sets):
        alone = im.evaluate_spread(model, np.array(a), runs=20000, seed=4, backend=backend)
        assert cmp.estimates[i].mean == alone.mean and cmp.estimates[i].ci_low == alone.ci_low
        for j, b in enumerate(sets):
            if i == j:
                continue
            mean, low, high = cmp.difference(i, j)
            assert mean == pytest.approx(cmp.estimates[i].mean - cmp.estimates[j].mean, abs=1e-9)
            exact = exact_spread(prob, reach, a, model.weights) - exact_spread(prob, reach, b, model.weights)
            assert abs(mean - exact) < 2.1 * (high - low) / 2 + 1e-9, (a, b, mean, exact)  # 4 sigma
    # independent worlds (another seed) agree with the paired difference in expectation
    other = [
        im.evaluate_spread(model, np.array(x), runs=20000, seed=s, backend=backend) for x, s in zip(sets, (7, 8, 9))
    ]
    for i, j in ((0, 1), (1, 2), (0, 2)):
        half = 1.96 * np.hypot(other[i].std, other[j].std) / np.sqrt(20000)
        assert abs((other[i].mean - other[j].mean) - cmp.diff[i, j]) < 2.1 * half + 2.1 * (
            cmp.diff_high[i, j] - cmp.diff[i, j]
        )


def test_compare_spreads_refuses_no_seed_sets_and_bad_nodes():
    model = im.ic_model(random_graph(9, n=50, m=200), p=0.1)
    with pytest.raises(ValueError, match="at least one"):
        im.compare_spreads(model, [], backend="cpu")
    with pytest.raises(ValueError, match="node indices"):
        im.compare_spreads(model, [np.array([0]), np.array([999])], backend="cpu")


# --------------------------------------------------------------------------------------------------------------
# Greedy, IMM
# --------------------------------------------------------------------------------------------------------------


def naive_greedy(rr: im.RRSets, n: int, k: int) -> list[int]:
    sets = [set(rr.nodes[rr.indptr[j] : rr.indptr[j + 1]].tolist()) for j in range(rr.count)]
    covered: set[int] = set()
    out = []
    for _ in range(min(k, n)):
        gain = [-1 if v in out else sum(1 for j, s in enumerate(sets) if j not in covered and v in s) for v in range(n)]
        best = int(np.argmax(gain))
        out.append(best)
        covered |= {j for j, s in enumerate(sets) if best in s}
    return out


def test_greedy_coverage_matches_a_naive_greedy(backend):
    model = im.ic_model(random_graph(6, n=60, m=300), p=0.2)
    rr = im.rr_sets(model, seed=1, start=0, stop=3000, backend="cpu")
    sel = im.select_seeds(model, rr, k=8, backend=backend)
    assert sel.nodes.tolist() == naive_greedy(rr, model.n_nodes, 8)
    assert sel.curve[-1] == pytest.approx(model.total_weight * sel.covered[-1] / rr.count)
    assert np.all(np.diff(sel.gains) <= 1e-12)  # submodular: gains never grow


@pytest.mark.parametrize("case", range(6))
def test_imm_meets_its_guarantee_against_exhaustive_search(case):
    rng = np.random.default_rng(100 + case)
    g = tiny_graph(rng, 9, 14)
    probs = rng.uniform(0.05, 0.5, g.n_edges)
    weights = np.ones(g.n_nodes) if case % 2 else rng.integers(1, 6, g.n_nodes).astype(float)
    model = im.ic_model(g, p=probs, weights=weights)
    prob, reach = reach_worlds(g, probs)
    eps = 0.1
    for k in (1, 2, 3):
        opt, _ = best_seed_set(prob, reach, k, weights)
        res = im.influence_max(model, k=k, eps=eps, seed=case, backend="cpu")
        got = exact_spread(prob, reach, res.nodes, weights)
        assert got >= (1 - 1 / np.e - eps) * opt
        assert got >= 0.9 * opt  # in practice far above the worst case
        assert res.rr_sets > 0 and res.lower_bound <= opt + 1e-9


def test_the_split_protocol_gives_influence_maxs_seeds():
    model = im.ic_model(random_graph(7), p=0.05)
    size = im.imm_sample_size(model, k=10, eps=0.3, seed=4, backend="cpu")
    parts = [im.rr_sets(model, seed=4, start=a, stop=b, backend="cpu") for a, b in im.split_range(size.theta, 5)]
    sel = im.select_seeds(model, im.merge_rr_sets(parts[::-1]), k=10, backend="cpu")
    res = im.influence_max(model, k=10, eps=0.3, seed=4, backend="cpu")
    assert sel.nodes.tolist() == res.nodes.tolist()
    assert np.allclose(sel.gains, res.gains)
    assert res.rr_sets == size.theta and res.sampling_rr_sets == size.sampling_rr_sets


def test_imm_beats_the_baselines_on_a_skewed_graph():
    model = im.ic_model(random_graph(8, n=800, m=6000), p=0.05)
    spreads = {}
    for method in ("imm", "degree", "random"):
        res = im.influence_max(model, k=10, method=method, eps=0.2, seed=1, backend="cpu")
        spreads[method] = im.evaluate_spread(model, res.nodes, runs=4000, seed=3, backend="cpu").mean
    assert spreads["imm"] >= spreads["degree"] * 0.99 and spreads["imm"] > spreads["random"]


# --------------------------------------------------------------------------------------------------------------
# IMGPU and baselines
# --------------------------------------------------------------------------------------------------------------


def test_the_bottom_up_reach_equals_a_search_from_every_component_and_the_sketch_is_close():
    rng = np.random.default_rng(9)
    nc = 300
    a = rng.integers(0, nc, 1500)
    b = rng.integers(0, nc, 1500)
    lo, hi = np.minimum(a, b), np.maximum(a, b)  # edges go up: a DAG
    keep = lo != hi
    keys = np.unique(lo[keep] * nc + hi[keep])
    dag_ptr = np.zeros(nc + 1, np.int64)
    np.cumsum(np.bincount(keys // nc, minlength=nc), out=dag_ptr[1:])
    dag_idx = keys % nc
    cw = rng.integers(1, 4, nc).astype(float)
    order, level = kern.bottom_up_order(dag_ptr, dag_idx, nc)
    covered = np.zeros(nc, bool)
    kern.cover_from(dag_ptr, dag_idx, covered, 200)
    reach, ok = kern.reach_exact(dag_ptr, dag_idx, order, cw, covered, 1 << 20)
    assert ok
    for c in range(nc):
        if covered[c]:
            continue
        seen, stack = {c}, [c]
        while stack:
            x = stack.pop()
            for y in dag_idx[dag_ptr[x] : dag_ptr[x + 1]]:
                if y not in seen and not covered[y]:
                    seen.add(int(y))
                    stack.append(int(y))
        assert reach[c] == pytest.approx(cw[list(seen)].sum())
        for y in dag_idx[dag_ptr[c] : dag_ptr[c + 1]]:
            assert level[c] > level[y]
    ranks = rng.exponential(size=nc) / cw
    sk = kern.reach_sketch(dag_ptr, dag_idx, order, cw, covered, ranks, 64)
    big = reach > 200  # sketches of 64 entries: about 13 % relative error each
    assert big.any() and np.median(np.abs(sk[big] / reach[big] - 1)) < 0.2
    assert np.allclose(sk[~covered & (reach < 30)], reach[~covered & (reach < 30)])  # small reaches: exact
    _, ok = kern.reach_exact(dag_ptr, dag_idx, order, cw, np.zeros(nc, bool), 10)
    assert not ok


@pytest.mark.parametrize("case", range(3))
def test_imgpu_is_close_to_the_optimum_on_tiny_graphs(case):
    rng = np.random.default_rng(200 + case)
    g = tiny_graph(rng, 9, 14)
    probs = rng.uniform(0.1, 0.6, g.n_edges)
    model = im.ic_model(g, p=probs)
    prob, reach = reach_worlds(g, probs)
    opt, _ = best_seed_set(prob, reach, 2, model.weights)
    res = im.influence_max(model, k=2, method="imgpu", snapshots=400, seed=case, backend="cpu")
    assert exact_spread(prob, reach, res.nodes, model.weights) >= 0.9 * opt
    assert res.snapshots == 400 and "exact in 400" in res.notes[0]


def test_imgpu_falls_back_to_sketches_when_the_reach_lists_do_not_fit(monkeypatch):
    model = im.ic_model(random_graph(10, n=300, m=3000), p=0.5)
    exact = im.influence_max(model, k=3, method="imgpu", snapshots=20, backend="cpu")
    monkeypatch.setattr(im, "EXACT_ENTRIES", 50)
    sketched = im.influence_max(model, k=3, method="imgpu", snapshots=20, backend="cpu")
    assert "sketches in 20" in sketched.notes[0]
    assert sketched.gains[0] == pytest.approx(exact.gains[0], rel=0.25)


def test_the_baselines_pick_by_degree_score_or_at_random(backend):
    model = im.ic_model(random_graph(11), p=0.02)
    deg = im.influence_max(model, k=5, method="degree", backend=backend)
    followers = model.graph.in_degree
    assert followers[deg.nodes].tolist() == sorted(followers, reverse=True)[:5]
    scores = np.arange(model.n_nodes, dtype=float)[::-1].copy()
    inf = im.influence_max(model, k=3, method="influence", scores=scores, backend=backend)
    assert inf.nodes.tolist() == [0, 1, 2]
    r1 = im.influence_max(model, k=7, method="random", seed=3, backend=backend)
    r2 = im.influence_max(model, k=7, method="random", seed=3, backend=backend)
    assert r1.nodes.tolist() == r2.nodes.tolist() and len(set(r1.nodes.tolist())) == 7
    assert np.all(deg.gains >= 0) and deg.rr_sets == im.BASELINE_RR_SETS
    with pytest.raises(ValueError, match="scores"):
        im.influence_max(model, k=3, method="influence", backend=backend)


def test_it_refuses_bad_arguments():
    model = im.ic_model(random_graph(12), p=0.02)
    for kwargs in ({"k": 0}, {"method": "celf"}, {"eps": 1.5}, {"seed": -1}, {"snapshots": 0}):
        with pytest.raises(ValueError):
            im.influence_max(model, backend="cpu", **kwargs)
    with pytest.raises(ValueError):
        im.rr_sets(model, start=5, stop=2, backend="cpu")
    with pytest.raises(ValueError):
        im.evaluate_spread(model, np.array([10**6]), backend="cpu")


def test_k_above_n_takes_every_node():
    g = graph_from_edges([1, 2], [2, 3])
    res = im.influence_max(im.ic_model(g, p=0.5), k=10, eps=0.3, backend="cpu")
    assert sorted(res.nodes.tolist()) == [0, 1, 2] and res.curve[-1] == pytest.approx(3.0)


# --------------------------------------------------------------------------------------------------------------
# Bounds: IMM's RR sets in chunks, a cap on their count, a stop between chunks
# --------------------------------------------------------------------------------------------------------------


def test_a_cap_on_rr_sets_refuses_an_astronomical_eps_naming_k_and_eps_before_sampling():
    from compute.influence_model import imm_sampling

    model = im.ic_model(random_graph(5), p=0.05)
    generated = []
    with pytest.raises(im.RRSetLimitExceeded, match=r"IMM with k=500 and eps=1e-09 needs .* RR sets in round 1"):
        imm_sampling(model, 500, 1e-9, 1.0, lambda a, b: generated.append((a, b)), lambda k: 0, max_sets=1_000_000)
    assert generated == []  # refused before any set was generated
    with pytest.raises(MemoryError, match="max_sets"):  # a MemoryError: the runner tells it by that
        im.imm_sample_size(model, k=500, eps=1e-9, seed=1, max_sets=1_000_000, backend="cpu")


def test_a_cap_below_node_selection_s_theta_refuses_it_after_sampling():
    model = im.ic_model(random_graph(5), p=0.05)
    size = im.imm_sample_size(model, k=10, eps=0.3, seed=4, backend="cpu")
    assert size.sampling_rr_sets < size.theta
    with pytest.raises(im.RRSetLimitExceeded, match=r"k=10 and eps=0.3 needs .* RR sets for node selection") as err:
        im.imm_sample_size(model, k=10, eps=0.3, seed=4, backend="cpu", max_sets=size.theta - 1)
    assert err.value.needed == size.theta
    assert im.imm_sample_size(model, k=10, eps=0.3, seed=4, backend="cpu", max_sets=size.theta).theta == size.theta
    with pytest.raises(ValueError, match="max_sets must be an integer >= 1"):
        im.imm_sample_size(model, k=10, eps=0.3, seed=4, backend="cpu", max_sets=0)


def test_sampling_in_chunks_gives_the_same_size_and_asks_stop_between_chunks():
    from compute.influence_model import imm_sampling

    model = im.ic_model(random_graph(6), p=0.05)
    whole = im.imm_sample_size(model, k=5, eps=0.3, seed=2, backend="cpu")
    assert whole.sampling_entries >= whole.sampling_rr_sets and whole.mean_set_size >= 1.0
    pool, calls, stops = [], [], []

    def generate(a, b):
        calls.append((a, b))
        pool.append(im.rr_sets(model, seed=2, start=a, stop=b, stream=1, backend="cpu"))
        return len(pool[-1].nodes)

    def covered(k):
        rr = im.merge_rr_sets(pool)
        return int(kern.greedy_cover(rr.indptr, rr.nodes, model.n_nodes, k)[1].sum())

    chunked = imm_sampling(model, 5, 0.3, 1.0, generate, covered, chunk=997, stop=lambda: stops.append(1))
    assert (chunked.theta, chunked.lower_bound, chunked.sampling_rr_sets, chunked.sampling_entries) == (
        whole.theta, whole.lower_bound, whole.sampling_rr_sets, whole.sampling_entries,
    )  # fmt: skip
    assert max(b - a for a, b in calls) <= 997 and len(stops) == len(calls) - 1


def test_a_stop_that_raises_ends_the_sampling_and_the_selection_of_a_one_call_imm(monkeypatch):
    import compute.influence_model as shared

    monkeypatch.setattr(shared, "SAMPLING_CHUNK", 500)
    monkeypatch.setattr(im, "SAMPLING_CHUNK", 500)
    model = im.ic_model(random_graph(7), p=0.05)
    seen = []

    class Enough(Exception):
        pass

    def stop():
        seen.append(1)
        if len(seen) >= 3:
            raise Enough()

    with pytest.raises(Enough):
        im.influence_max(model, k=5, eps=0.3, seed=1, backend="cpu", stop=stop)
    # the same seeds as without the chunks and the stop
    monkeypatch.setattr(shared, "SAMPLING_CHUNK", 1 << 20)
    monkeypatch.setattr(im, "SAMPLING_CHUNK", 1 << 20)
    want = im.influence_max(model, k=5, eps=0.3, seed=1, backend="cpu")
    monkeypatch.setattr(im, "SAMPLING_CHUNK", 500)
    got = im.influence_max(model, k=5, eps=0.3, seed=1, backend="cpu", stop=lambda: None)
    assert got.nodes.tolist() == want.nodes.tolist() and got.rr_sets == want.rr_sets


def test_imgpu_asks_stop_between_snapshots_and_rounds():
    model = im.ic_model(random_graph(8, n=120, m=600), p=0.1)
    calls = []
    res = im.influence_max(model, k=3, method="imgpu", snapshots=5, seed=2, backend="cpu", stop=lambda: calls.append(1))
    assert len(calls) == 4 + 3  # between the 5 snapshots, before each of the 3 rounds
    assert (
        res.nodes.tolist()
        == im.influence_max(model, k=3, method="imgpu", snapshots=5, seed=2, backend="cpu").nodes.tolist()
    )
