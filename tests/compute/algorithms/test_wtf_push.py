"""The local forward push for who amplifies whom (issue 44): its residual is the exact L1 distance to the power
iteration's converged PPR and it never overshoots; the distance shrinks with epsilon within the push bound; a
seed's result does not depend on the other seeds; tiny epsilon gives the exact method's circle and lists; bad
arguments are refused by name; plain walks (no push) land near the converged PPR, closer with more walks, and give
a seed the same estimate alone or in a batch; the walks draw the GPU twin's splitmix64 streams and give the same
bits on any number of threads and without numba."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from compute.algorithms.wtf import personalized_pagerank, wtf
from compute.graphs import graph_from_edges

pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..fora_bounds import residual_spent_bound
from .test_wtf import random_graph

RELAXED = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def exact(g, seeds, direction):
    return personalized_pagerank(g, seeds, direction=direction, tol=1e-14, max_iter=1000, backend="cpu")


@RELAXED
@given(st.integers(0, 10_000), st.sampled_from(["follows", "followers"]), st.sampled_from([1e-3, 1e-5, 1e-8]))
def test_the_residual_left_is_the_l1_distance_to_the_converged_ppr_and_the_estimate_never_overshoots(
    seed, direction, epsilon
):
    g, rng = random_graph(seed)
    seeds = rng.integers(0, g.n_nodes, 3)
    x = exact(g, seeds, direction).values
    pu = personalized_pagerank(g, seeds, direction=direction, method="push", epsilon=epsilon, backend="cpu")
    assert pu.converged.all()
    assert np.all(pu.values <= x + 1e-12)
    np.testing.assert_allclose(np.abs(x - pu.values).sum(axis=1), pu.delta, rtol=1e-6, atol=1e-12)
    # each push removes at least (1 - d) * epsilon of residual, and the residual starts at 1
    assert np.all(pu.iterations <= 1 / (0.15 * epsilon) + 1)


def test_a_smaller_epsilon_leaves_less_residual_and_pushes_more():
    g, _ = random_graph(7, n=400, m=4000)
    seeds = np.array([3, 11])
    runs = [
        personalized_pagerank(g, seeds, direction="follows", method="push", epsilon=e, backend="cpu")
        for e in (1e-3, 1e-5, 1e-7)
    ]
    for a, b in itertools.pairwise(runs):
        assert np.all(b.delta < a.delta) and np.all(b.iterations > a.iterations)
    assert np.all(runs[-1].delta < 1e-3)


def test_an_account_with_nowhere_to_go_keeps_all_its_mass():
    # 1 -> 2, and the seed 3 follows nobody: its walk always comes back to it
    g = graph_from_edges(np.array([1]), np.array([2]), ids=np.array([1, 2, 3]))
    pu = personalized_pagerank(g, np.array([2]), direction="follows", method="push", epsilon=1e-9, backend="cpu")
    assert pu.values[0, 2] == pytest.approx(1.0, abs=1e-8) and pu.values[0, :2].sum() == 0.0
    assert pu.delta[0] == pytest.approx(1.0 - pu.values[0, 2], abs=1e-15)


def test_a_seeds_estimate_is_the_same_alone_or_among_others():
    g, rng = random_graph(3, n=300, m=2000)
    seeds = rng.integers(0, g.n_nodes, 6)
    together = personalized_pagerank(g, seeds, direction="followers", method="push", epsilon=1e-6, backend="cpu")
    for j, s in enumerate(seeds.tolist()):
        alone = personalized_pagerank(g, [s], direction="followers", method="push", epsilon=1e-6, backend="cpu")
        assert np.array_equal(alone.values[0], together.values[j]) and alone.delta[0] == together.delta[j]


@pytest.mark.parametrize("direction", ["follows", "followers"])
def test_with_a_tiny_epsilon_it_gives_the_exact_methods_circle_and_lists(direction):
    g, rng = random_graph(11, n=500, m=6000)
    seeds = rng.integers(0, g.n_nodes, 4)
    a = wtf(g, seeds, direction=direction, circle=50, top=10, backend="cpu")
    b = wtf(g, seeds, direction=direction, circle=50, top=10, backend="cpu", method="push", epsilon=1e-12)
    for x, y in zip(a, b):
        ja, jb = x.to_json(g.ids), y.to_json(g.ids)
        assert {r["user_id"] for r in ja["circle"]} == {r["user_id"] for r in jb["circle"]}
        for key in ("relevance", "similarity"):
            assert [r["user_id"] for r in ja[key]] == [r["user_id"] for r in jb[key]]


def test_bad_methods_and_epsilons_are_refused_by_name():
    g, _ = random_graph(1, n=10, m=20)
    with pytest.raises(ValueError, match="method must be one of exact, push, fora, walks"):
        wtf(g, [0], method="monte-carlo")
    for bad in (0, 1, -1e-3, True, "1e-6"):
        with pytest.raises(ValueError, match="epsilon must be a number between 0 and 1"):
            personalized_pagerank(g, [0], method="push", epsilon=bad)


@pytest.mark.parametrize("direction", ["follows", "followers"])
def test_fora_spends_the_whole_residual_by_walks_and_lands_near_the_converged_ppr(direction):
    g, rng = random_graph(5, n=200, m=1500)
    seeds = rng.integers(0, g.n_nodes, 3)
    x = exact(g, seeds, direction).values
    push = personalized_pagerank(g, seeds, direction=direction, method="push", epsilon=1e-3, backend="cpu")
    fora = personalized_pagerank(g, seeds, direction=direction, method="fora", epsilon=1e-3, walks=2e5, backend="cpu")
    assert np.all(np.abs(fora.values.sum(axis=1) - 1.0) < residual_spent_bound(push.delta, 2e5))
    np.testing.assert_array_equal(fora.delta, push.delta)  # delta: what the push left for the walks
    assert np.all(np.abs(x - fora.values).sum(axis=1) < 0.25 * push.delta)


def test_fora_gives_the_same_estimate_alone_in_a_batch_and_run_after_run():
    g, rng = random_graph(9, n=150, m=900)
    seeds = rng.integers(0, g.n_nodes, 4)
    kw = {"direction": "follows", "method": "fora", "epsilon": 1e-3, "walks": 1e4, "backend": "cpu"}
    together = personalized_pagerank(g, seeds, **kw)
    assert np.array_equal(together.values, personalized_pagerank(g, seeds, **kw).values)
    for j, s in enumerate(seeds.tolist()):
        assert np.array_equal(personalized_pagerank(g, [s], **kw).values[0], together.values[j])


def test_bad_walks_are_refused_by_name():
    g, _ = random_graph(1, n=10, m=20)
    for bad in (0, 0.5, 2e9, True, "10"):
        with pytest.raises(ValueError, match="walks must be a number from 1 to 1e9"):
            wtf(g, [0], method="fora", walks=bad)


@pytest.mark.parametrize("direction", ["follows", "followers"])
def test_plain_walks_start_at_the_seed_and_land_nearer_the_converged_ppr_with_more_walks(direction):
    g, rng = random_graph(5, n=200, m=1500)
    seeds = rng.integers(0, g.n_nodes, 3)
    x = exact(g, seeds, direction).values
    kw = {"direction": direction, "method": "walks", "backend": "cpu"}
    few = personalized_pagerank(g, seeds, walks=2e3, **kw)
    many = personalized_pagerank(g, seeds, walks=2e5, **kw)
    assert np.all(many.iterations == 0) and np.all(many.delta == 1.0)  # no push: the whole unit was walked
    assert np.all(np.abs(many.values.sum(axis=1) - 1.0) < 0.02)
    # the seed's own entry is at least (1 - d): every walk starts there
    assert np.all(many.values[np.arange(3), seeds] >= 0.15)
    err_few, err_many = np.abs(x - few.values).sum(axis=1), np.abs(x - many.values).sum(axis=1)
    assert np.all(err_many < 0.1) and np.all(err_many < err_few)
    # epsilon is not read by the plain walks: any value (even an invalid one) gives the same estimate
    again = personalized_pagerank(g, seeds, walks=2e5, epsilon=7, **kw)
    assert np.array_equal(again.values, many.values)


def test_plain_walks_give_a_seed_the_same_estimate_alone_and_in_a_batch():
    g, rng = random_graph(9, n=150, m=900)
    seeds = rng.integers(0, g.n_nodes, 4)
    kw = {"direction": "followers", "method": "walks", "walks": 5e3, "backend": "cpu"}
    together = personalized_pagerank(g, seeds, **kw)
    for j, s in enumerate(seeds.tolist()):
        assert np.array_equal(personalized_pagerank(g, [s], **kw).values[0], together.values[j])
    lists = wtf(g, seeds[:1], **kw)[0]
    assert lists.seed == seeds[0] and len(lists.circle) > 0


def test_the_walks_draw_splitmix64_as_the_gpu_twin_does():
    from compute.algorithms import wtf_push

    # splitmix64's first output from state 0 (the state advanced by the golden gamma, then mixed)
    assert int(wtf_push._mix(wtf_push._GOLD)) == 0xE220A8397B1DCDAF
    # a walk's first state from (seed, start account, walk number), as the GPU's kernel forms it
    base = wtf_push._wrap_mul(np.uint64(12), wtf_push._GOLD)
    mask = (1 << 64) - 1

    def mix(z):
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    want = mix(((12 * 0x9E3779B97F4A7C15) & mask) ^ mix((5 + 0x632BE59BD9B4E019) & mask) ^ 3)
    assert int(wtf_push._walk_state(base, 5, 3)) == want


@pytest.mark.parametrize("method", ["fora", "walks"])
def test_the_walks_give_the_same_bits_on_any_number_of_threads(method, monkeypatch):
    from compute.algorithms import wtf_push

    g, rng = random_graph(11, n=300, m=3000)
    seeds = rng.integers(0, g.n_nodes, 3)
    kw = {"direction": "followers", "method": method, "walks": 3e4, "backend": "cpu"}
    if method == "fora":
        kw["epsilon"] = 1e-3
    runs = []
    for parts in (1, 2, 5):  # the walks split over that many parts, each with its own visit counts
        monkeypatch.setattr(wtf_push, "numba_threads", lambda parts=parts: parts)
        runs.append(personalized_pagerank(g, seeds, **kw).values)
        assert wtf_push.state(g, "followers")._parts()[0].shape[0] == parts
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])


def test_the_walks_without_numba_give_the_bits_of_the_compiled_walks():
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import numpy as np, hashlib\n"
        "from compute.algorithms.wtf import personalized_pagerank\n"
        "from tests.compute.algorithms.test_wtf import random_graph\n"
        "g, rng = random_graph(13, n=120, m=700)\n"
        "v = personalized_pagerank(g, [3, 40], direction='follows', method='fora', epsilon=1e-3, walks=2e3,"
        " backend='cpu').values\n"
        "print(hashlib.sha1(v.tobytes()).hexdigest())\n"
    )
    root = Path(__file__).resolve().parents[3]
    digests = []
    for flag in ("0", "1"):
        env = dict(os.environ, PYTHONPATH=str(root), SPREADWATCH_NO_NUMBA=flag)
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        digests.append(out.stdout.strip())
    assert digests[0] == digests[1]
