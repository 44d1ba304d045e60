"""Property tests: the fast kernels against the naive transliteration of the thesis' Algorithms 1 and 2."""

from __future__ import annotations

import numpy as np
import pytest

from compute.algorithms.backward import backward
from compute.algorithms.forward import forward
from compute.build import build_cascades
from compute.structures import FollowerGraph
from compute.tables import TweetTable

from .helpers import edge_sets, influence_by_tweet
from .oracle import compute_influence, compute_spread_graph

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

USERS = list(range(1, 10))


@st.composite
def collections(draw):
    """A follower graph over a few users and a few cascades with small integer times (ties are common)."""
    follow_pairs = draw(st.sets(st.tuples(st.sampled_from(USERS), st.sampled_from(USERS)), max_size=40))
    follow_pairs = {(a, b) for a, b in follow_pairs if a != b}
    counts = {u: draw(st.integers(0, 1000)) for u in USERS}
    cascades = []
    for tid in range(1, draw(st.integers(1, 4)) + 1):
        pub = draw(st.sampled_from(USERS))
        pt = draw(st.integers(0, 3))
        others = [u for u in USERS if u != pub]
        rts = draw(st.lists(st.sampled_from(others), unique=True, max_size=7))
        times = {u: draw(st.integers(0, 8)) for u in rts}
        cascades.append((tid * 10, pub, pt, times))
    return follow_pairs, counts, cascades


def _run_ours(follow_pairs, counts, cascades, orphans, backend="cpu"):
    rows = []
    for tid, pub, pt, times in cascades:
        rows.append((tid, None, pub, float(pt), float(counts[pub])))
        rows += [(0, tid, u, float(t), float(counts[u])) for u, t in times.items()]
    c, _ = build_cascades(TweetTable.from_rows(rows))
    a, b = zip(*follow_pairs) if follow_pairs else ((), ())
    g = FollowerGraph.from_edges(a, b, user_ids=USERS)
    sg = forward(c, g, orphans=orphans, backend=backend)
    res = backward(sg, backend=backend)
    return edge_sets(sg), influence_by_tweet(c, res.influence)


def _run_oracle(follow_pairs, counts, cascades, orphans):
    followers: dict = {}
    for a, b in follow_pairs:  # a follows b: a is in N^+(b)
        followers.setdefault(b, []).append(a)
    edges, infl = {}, {}
    for tid, pub, pt, times in cascades:
        time = dict(times)
        time[pub] = pt
        L = set(times)
        BE = compute_spread_graph(followers, L, pub, time, orphans)
        edges[tid] = BE
        C = [pub, *times]
        infl[tid] = {u: float(v) for u, v in compute_influence(C, BE, counts, L).items()}
    return edges, infl


# the ``backend`` fixture is the same for every example, so sharing it across examples is what we want
FIXTURE_OK = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@settings(max_examples=300, deadline=None, suppress_health_check=FIXTURE_OK)
@given(collections(), st.sampled_from(["strict", "attach"]))
def test_it_matches_the_thesis_algorithms_on_random_small_inputs(backend, data, orphans):
    ours_e, ours_i = _run_ours(*data, orphans, backend=backend)
    want_e, want_i = _run_oracle(*data, orphans)
    assert ours_e == want_e
    assert ours_i.keys() == want_i.keys()
    for tid in want_i:
        assert ours_i[tid].keys() == want_i[tid].keys()
        for u, v in want_i[tid].items():
            assert np.isclose(ours_i[tid][u], v, rtol=1e-12, atol=0), (tid, u, ours_i[tid][u], v)


@st.composite
def random_dags(draw):
    """Given spreading graphs in arbitrary edge order: a random DAG under a random node permutation."""
    n = draw(st.integers(1, 12))
    perm = draw(st.permutations(range(n)))
    edges = []
    for u in range(n - 1):
        targets = draw(st.sets(st.integers(u + 1, n - 1), min_size=1, max_size=3))
        edges += [(perm[u], perm[v]) for v in targets]
    edges = draw(st.permutations(edges))
    followers = draw(st.lists(st.integers(0, 100), min_size=n, max_size=n))
    return n, edges, followers, perm[n - 1]


@settings(max_examples=300, deadline=None, suppress_health_check=FIXTURE_OK)
@given(st.lists(random_dags(), min_size=1, max_size=4))
def test_it_matches_algorithm_2_and_keeps_its_invariants_on_random_dags(backend, dags):
    from .helpers import given_graphs

    sg = given_graphs([(f, e, p) for _, e, f, p in dags])
    res = backward(sg, backend=backend)
    base = 0
    for n, edges, followers, pub in dags:
        C = list(range(n))
        L = set(C) - {pub}
        want = compute_influence(C, set(edges), dict(enumerate(map(float, followers))), L)
        got = res.influence[base : base + n]
        np.testing.assert_allclose(got, [want[v] for v in C], rtol=1e-12)
        # invariants: every node keeps at least its own followers; the publisher collects everyone's
        # (every node reaches the sink in these DAGs)
        assert np.all(got >= np.array(followers) - 1e-9)
        assert np.isclose(got[pub], sum(followers), rtol=1e-12)
        base += n
