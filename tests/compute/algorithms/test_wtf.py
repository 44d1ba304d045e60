"""WTF (issue 15): PPR against networkx, Money against a direct transcription of the corrected Algorithm 2 of
"WTF, GPU!", the circle and the two lists against their definitions, and a batch against one seed at a time.

Tests that take ``backend`` run on the CPU reference and, where a GPU is, on the twin."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from compute.algorithms import wtf as wtf_module
from compute.algorithms.wtf import BATCH, CPU_BLOCK, money, personalized_pagerank, wtf
from compute.graphs import graph_from_edges, undirected
from compute.results import rank_key

# test extras, skipped where only the engine's dependencies are installed (the GPU machine: make test-gpu)
pytest.importorskip("networkx")
pytest.importorskip("hypothesis")
import networkx as nx
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

RELAXED = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_graph(seed: int, n: int | None = None, m: int | None = None):
    """A random directed graph with self loops, dangling accounts and isolated ones, ids spaced apart so that
    an index mistaken for an id shows."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40)) if n is None else n
    m = int(rng.integers(0, 4 * n)) if m is None else m
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    ids = np.arange(n) * 7 + 1000
    return graph_from_edges(ids[src], ids[dst], ids=ids), rng


def nx_graph(g, direction: str) -> nx.DiGraph:
    G = nx.DiGraph()
    G.add_nodes_from(range(g.n_nodes))
    src, dst = g.edges()
    pairs = zip(src.tolist(), dst.tolist()) if direction == "follows" else zip(dst.tolist(), src.tolist())
    G.add_edges_from(pairs)
    return G


def out_rows(g, direction: str) -> dict[int, list[int]]:
    """Each account's walk targets in ``direction``, from the edge list (not from the engine's CSR)."""
    rows: dict[int, list[int]] = defaultdict(list)
    src, dst = g.edges()
    for a, b in zip(src.tolist(), dst.tolist()):
        if direction == "follows":
            rows[a].append(b)
        else:
            rows[b].append(a)
    return rows


def money_transcription(rows, circle, seed, alpha, tol, max_iter):
    """Algorithm 2 of the paper edge by edge, with line 13 corrected: the value computed for edge (s, d) is added
    to the SOURCE's similarity (sim_next[s_id]); the paper adds it to the destination's. The seed's alpha term is
    alpha / d_out(seed) per edge (it adds up to alpha); a seed with no edge gets the equation's alpha directly."""
    E = [(x, y) for x in circle for y in rows[x]]
    d_out = {x: len(rows[x]) for x in circle}
    d_in = Counter(y for _, y in E)
    sim = {x: 0.0 for x in circle}
    sim[seed] = 1.0
    rel: dict[int, float] = {}
    iterations, converged = 0, False
    while iterations < max_iter and not converged:
        rel_next: dict[int, float] = defaultdict(float)
        for x, y in E:  # DistributeRelevance (line 9)
            rel_next[y] += sim[x] / d_out[x]
        rel = dict(rel_next)
        sim_next = {x: 0.0 for x in circle}
        for x, y in E:  # DistributeSim (lines 12-13, corrected)
            sim_next[x] += (1 - alpha) * rel[y] / d_in[y] + (alpha / d_out[x] if x == seed else 0.0)
        if d_out[seed] == 0:
            sim_next[seed] += alpha
        change = sum(abs(sim_next[x] - sim[x]) for x in circle)
        sim = sim_next
        iterations += 1
        converged = change < tol
    return sim, rel, iterations, converged


# --------------------------------------------------------------------------------------------------------------
# PPR
# --------------------------------------------------------------------------------------------------------------


@RELAXED
@given(st.integers(0, 2**32 - 1), st.sampled_from(["follows", "followers"]))
def test_it_computes_networkx_pagerank_with_the_seed_as_personalization_and_dangling_vector(seed, direction):
    g, rng = random_graph(seed)
    seeds = rng.integers(0, g.n_nodes, 3)
    pr = personalized_pagerank(g, seeds, direction=direction, tol=1e-13, max_iter=5000, backend="cpu")
    G = nx_graph(g, direction)
    for j, s in enumerate(seeds.tolist()):
        ref = nx.pagerank(G, alpha=0.85, personalization={s: 1}, dangling={s: 1}, tol=1e-14, max_iter=100_000)
        expected = np.array([ref[i] for i in range(g.n_nodes)])
        np.testing.assert_allclose(pr.values[j], expected, rtol=0, atol=1e-11)
        assert pr.converged[j] and pr.delta[j] < 1e-13
        assert abs(pr.values[j].sum() - 1) < 1e-12


def test_it_agrees_with_networkx_on_both_backends(backend):
    g, _ = random_graph(11, n=300, m=2400)
    seeds = np.array([0, 5, 299])
    for direction in ("follows", "followers"):
        pr = personalized_pagerank(g, seeds, direction=direction, tol=1e-13, max_iter=1000, backend=backend)
        G = nx_graph(g, direction)
        for j, s in enumerate(seeds.tolist()):
            ref = nx.pagerank(G, personalization={s: 1}, dangling={s: 1}, tol=1e-16, max_iter=100_000)
            expected = np.array([ref[i] for i in range(g.n_nodes)])
            np.testing.assert_allclose(pr.values[j], expected, rtol=0, atol=1e-11)


def test_it_stops_at_max_iter_and_records_that_it_did_not_converge():
    # a 2-cycle: the change shrinks by 0.85 per step and needs ~140 steps to fall below 1e-10
    g = graph_from_edges([1, 2], [2, 1])
    pr = personalized_pagerank(g, [0], backend="cpu")
    assert pr.iterations.tolist() == [100] and pr.converged.tolist() == [False]
    assert 1e-10 < pr.delta[0] < 1e-6
    pr = personalized_pagerank(g, [0], max_iter=1000, backend="cpu")
    assert pr.converged.tolist() == [True] and 100 < pr.iterations[0] < 200 and pr.delta[0] < 1e-10
    np.testing.assert_allclose(pr.values[0], [1 / 1.85, 0.85 / 1.85], atol=1e-10)


def test_a_dangling_seed_keeps_all_its_mass():
    g = graph_from_edges([1, 2], [3, 3])  # 1 -> 3 and 2 -> 3; 3 follows nobody
    pr = personalized_pagerank(g, [2], backend="cpu")
    assert pr.values[0].tolist() == [0.0, 0.0, 1.0] and pr.iterations[0] == 1 and pr.converged[0]
    pr = personalized_pagerank(g, [2], direction="followers", backend="cpu")  # 3's followers: 1 and 2
    assert pr.values[0][0] == pytest.approx(pr.values[0][1]) and pr.values[0][0] > 0


# --------------------------------------------------------------------------------------------------------------
# Money
# --------------------------------------------------------------------------------------------------------------


@RELAXED
@given(st.integers(0, 2**32 - 1), st.sampled_from(["follows", "followers"]))
@example(3629763, "follows")  # the engine stops one iteration after the transcription (114 against 113)
def test_money_is_the_corrected_algorithm_2(seed, direction):
    g, rng = random_graph(seed)
    s = int(rng.integers(0, g.n_nodes))
    others = rng.choice(g.n_nodes, size=int(rng.integers(0, g.n_nodes)), replace=False)
    circle = sorted(set(others.tolist()) | {s})
    res = money(g, s, circle, direction=direction, tol=1e-12, max_iter=200)
    sim, rel, iterations, converged = money_transcription(out_rows(g, direction), circle, s, 0.15, 1e-12, 200)
    assert res.hubs.tolist() == circle
    assert res.authorities.tolist() == sorted(rel)
    assert res.converged == converged
    # the two sum in different orders, so a change that lands within rounding of the tolerance can stop one of
    # them an iteration later; one iteration past it moves the scores by about the tolerance, no more
    assert abs(res.iterations - iterations) <= 1
    close = {"rtol": 1e-12, "atol": 1e-15} if res.iterations == iterations else {"rtol": 1e-10, "atol": 1e-12}
    np.testing.assert_allclose(res.similarity, [sim[x] for x in circle], **close)
    np.testing.assert_allclose(res.relevance, [rel[y] for y in sorted(rel)], **close)


def test_the_correction_changes_the_scores():
    """The paper's line 13 (add to the destination's similarity) differs from the corrected version: on this
    graph the uncorrected update gives a hub the similarity its authorities' relevance should have sent back to
    their followers."""
    # seed 1 follows 2 and 3; 2 follows 3 and 4; 3 follows 4
    g = graph_from_edges([1, 1, 2, 2, 3], [2, 3, 3, 4, 4])
    res = money(g, 0, [0, 1, 2], tol=1e-14, max_iter=500)
    rows, circle = out_rows(g, "follows"), [0, 1, 2]
    E = [(x, y) for x in circle for y in rows[x]]
    d_out, d_in = {x: len(rows[x]) for x in circle}, Counter(y for _, y in E)
    sim = {x: float(x == 0) for x in circle}
    for _ in range(500):  # the paper as printed
        rel = defaultdict(float)
        for x, y in E:
            rel[y] += sim[x] / d_out[x]
        nxt = dict.fromkeys(circle, 0.0)
        for x, y in E:
            if y in nxt:
                nxt[y] += 0.85 * rel[y] / d_in[y] + (0.15 / d_out[x] if x == 0 else 0.0)
        sim = nxt
    assert not np.allclose(res.similarity, [sim[x] for x in circle], rtol=1e-3)


def test_money_checks_its_circle():
    g, _ = random_graph(3, n=10, m=30)
    with pytest.raises(ValueError, match="circle must contain the seed"):
        money(g, 0, [1, 2])
    with pytest.raises(ValueError, match="circle must be node indices"):
        money(g, 0, [0, 10])


# --------------------------------------------------------------------------------------------------------------
# The pipeline
# --------------------------------------------------------------------------------------------------------------


def _ranked(nodes, values):
    """By value descending then node index, values compared at the engines' 40 significant bits."""
    keys = rank_key(np.asarray(values, dtype=np.float64)).tolist() if len(values) else []
    return [(n, v) for n, v, _ in sorted(zip(nodes, values, keys), key=lambda t: (-t[2], t[0]))]


@RELAXED
@given(st.integers(0, 2**32 - 1), st.sampled_from(["follows", "followers"]), st.integers(1, 12), st.integers(0, 6))
def test_the_circle_and_both_lists_follow_their_definitions(seed, direction, circle, top):
    g, rng = random_graph(seed)
    s = int(rng.integers(0, g.n_nodes))
    rec = wtf(g, [s], direction=direction, circle=circle, top=top, backend="cpu")[0]
    x = personalized_pagerank(g, [s], direction=direction, backend="cpu").values[0]
    reached = [i for i in range(g.n_nodes) if i != s and x[i] > 0]
    members = [s, *[i for i, _ in _ranked(reached, [x[i] for i in reached])][: circle - 1]]
    assert sorted(rec.circle.tolist()) == sorted(members)
    assert rec.circle_ppr.tolist() == x[rec.circle].tolist()
    assert rec.circle.tolist() == [i for i, _ in _ranked(rec.circle.tolist(), x[rec.circle].tolist())]
    m = money(g, s, members, direction=direction)
    linked = set(out_rows(g, direction)[s]) | {s}
    for nodes, scores, ppr, pool, pool_scores in (
        (rec.relevance, rec.relevance_score, rec.relevance_ppr, m.authorities, m.relevance),
        (rec.similarity, rec.similarity_score, rec.similarity_ppr, m.hubs, m.similarity),
    ):
        want = _ranked(
            [int(a) for a, v in zip(pool, pool_scores) if v > 0 and a not in linked],
            [float(v) for a, v in zip(pool, pool_scores) if v > 0 and a not in linked],
        )[:top]
        assert nodes.tolist() == [a for a, _ in want]
        assert scores.tolist() == [v for _, v in want]
        assert ppr.tolist() == x[nodes].tolist()
    assert rec.account == g.ids[s] and rec.direction == direction


@pytest.mark.parametrize("width", [CPU_BLOCK, BATCH])
def test_a_batch_gives_the_bits_of_one_seed_at_a_time(width, monkeypatch):
    # the CPU's block of seeds is chosen by the graph's size (cpu_block): this small graph would get one seed a
    # block, so the blocks are forced to the widths the CPU and the GPU use on large graphs
    monkeypatch.setattr(wtf_module, "cpu_block", lambda walk: width)
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 400, 4000), rng.integers(0, 400, 4000)
    # beside the random part, which mixes fast: a 2-cycle (stops at max_iter) and a dangling account (1 step)
    g = graph_from_edges(np.r_[src, 400, 401, 402], np.r_[dst, 401, 400, 403])
    seeds = rng.integers(0, g.n_nodes, BATCH + 9)  # several blocks, with repeats across them
    seeds[BATCH + 3] = seeds[2]
    seeds[[5, BATCH + 1]] = [400, 403]
    for direction in ("follows", "followers"):
        batch = wtf(g, seeds, direction=direction, circle=30, top=10, backend="cpu")
        pr = personalized_pagerank(g, seeds, direction=direction, backend="cpu")
        assert len(set(pr.iterations.tolist())) > 1  # the columns stop at different iterations
        for j, s in enumerate(seeds.tolist()):
            one = wtf(g, [s], direction=direction, circle=30, top=10, backend="cpu")[0]
            for field in one.__dataclass_fields__:
                a, b = getattr(batch[j], field), getattr(one, field)
                assert np.array_equal(a, b), (j, field)
            alone = personalized_pagerank(g, [s], direction=direction, backend="cpu")
            assert np.array_equal(alone.values[0], pr.values[j]) and alone.iterations[0] == pr.iterations[j]


def test_both_backends_give_the_same_lists(backend):
    g, rng = random_graph(8, n=2000, m=30000)
    seeds = rng.integers(0, g.n_nodes, 5)
    ref = wtf(g, seeds, circle=100, top=15, backend="cpu")
    got = wtf(g, seeds, circle=100, top=15, backend=backend)
    for a, b in zip(ref, got):
        assert a.circle.tolist() == b.circle.tolist() and a.relevance.tolist() == b.relevance.tolist()
        assert a.similarity.tolist() == b.similarity.tolist()
        np.testing.assert_allclose(b.relevance_score, a.relevance_score, rtol=1e-9)
        np.testing.assert_allclose(b.similarity_score, a.similarity_score, rtol=1e-9)
        np.testing.assert_allclose(b.circle_ppr, a.circle_ppr, rtol=1e-9)


def test_it_keeps_the_seed_in_a_circle_it_would_not_make_by_ppr():
    # the seed 1 follows 2; 2 and 3 follow each other: most of the mass circles between 2 and 3
    g = graph_from_edges([1, 2, 3], [2, 3, 2])
    x = personalized_pagerank(g, [0], max_iter=1000, backend="cpu").values[0]
    assert x[0] < x[1] and x[0] < x[2]
    rec = wtf(g, [0], circle=2, backend="cpu")[0]
    assert sorted(rec.circle.tolist()) == [0, 1] and rec.circle[0] == 1


def test_the_json_object_has_string_ids_and_sorted_lists():
    g, _ = random_graph(21, n=200, m=2000)
    row = wtf(g, [3], circle=50, top=8, backend="cpu")[0].to_json(g.ids)
    assert row["account"] == str(g.ids[3])
    for key, value in (("circle", "ppr"), ("relevance", "score"), ("similarity", "score")):
        items = row[key]
        assert items and all(isinstance(r["user_id"], str) for r in items)
        assert items == sorted(items, key=lambda r: (-rank_key(r[value]), int(r["user_id"])))
    assert len(row["relevance"]) == 8


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"direction": "in"}, "direction must be one of follows, followers"),
        ({"circle": 0}, "circle must be an integer >= 1"),
        ({"top": -1}, "top must be an integer >= 0"),
        ({"damping": 1.0}, "damping must be a number strictly between 0 and 1"),
        ({"alpha": 0}, "alpha must be a number strictly between 0 and 1"),
        ({"tol": 0}, "tol must be a positive number"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1"),
        ({"backend": "tpu"}, "backend must be one of"),
    ],
)
def test_it_names_the_bad_parameter(kwargs, message):
    g, _ = random_graph(1, n=10, m=20)
    with pytest.raises(ValueError, match=message):
        wtf(g, [0], **kwargs)


def test_it_refuses_seeds_outside_the_graph_and_the_undirected_view():
    g, _ = random_graph(1, n=10, m=20)
    with pytest.raises(ValueError, match=r"seeds must be node indices 0\.\.9, not 10"):
        wtf(g, [0, 10])
    with pytest.raises(ValueError, match="seeds must be"):
        personalized_pagerank(g, [[0]])
    with pytest.raises(ValueError, match="must be directed"):
        wtf(undirected(g), [0])
    assert wtf(g, [], backend="cpu") == []


def test_the_kernel_adds_in_scipys_order():
    """The numba product and SciPy's (the fallback without numba) give the same bits: values spread over 16
    orders of magnitude make any other order of the additions show."""
    from scipy.sparse import csr_array

    from compute.algorithms.wtf import _Walk

    g, rng = random_graph(9, n=500, m=20000)
    walk = _Walk(g, "followers")
    y = rng.random((g.n_nodes, 3)) * 10.0 ** rng.integers(-8, 8, (g.n_nodes, 3))
    ref = csr_array((np.ones(len(walk.in_idx)), walk.in_idx, walk.in_ptr), shape=(g.n_nodes, g.n_nodes)) @ y
    assert np.array_equal(walk.pull(y), ref)
    assert np.array_equal(walk.pull(np.ascontiguousarray(y[:, :1])), ref[:, :1])


def test_values_equal_but_for_their_last_bits_tie_and_go_by_user_id():
    """Engines add in different orders: values a few ulps apart rank as equal, so both engines list them alike."""
    from compute.results import circle_of_trust

    nodes = np.array([5, 9, 2, 7])
    ppr = np.array([0.25, 0.25 * (1 + 4e-16), 0.25 * (1 - 4e-16), 0.1])
    members, _ = circle_of_trust(nodes, ppr, seed=0, seed_ppr=0.5, circle=4)
    assert members.tolist() == [0, 2, 5, 9]
    assert rank_key(np.array([1.0 + 2**-45]))[0] == 1.0 and rank_key(np.array([1.0 + 2**-38]))[0] > 1.0


def test_the_serial_and_the_parallel_pull_kernels_agree_and_are_cached_under_two_names():
    """numba caches an entry by the function's name and signature, not its flags: the serial build has its own
    name, so a process loads it from disk instead of compiling it again (benchmarks/wtf_on_open.md)."""
    from compute._jit import HAVE_NUMBA
    from compute.algorithms import wtf as engine

    rng = np.random.default_rng(4)
    indptr = np.r_[0, np.cumsum(rng.integers(0, 6, 300))].astype(np.int64)
    indices = rng.integers(0, 300, int(indptr[-1])).astype(np.int32)
    y = rng.random((300, 3))
    serial, parallel = np.empty((300, 3)), np.empty((300, 3))
    engine._pull_serial(indptr, indices, y, serial)
    engine._pull_parallel(indptr, indices, y, parallel)
    assert serial.tobytes() == parallel.tobytes()
    if HAVE_NUMBA:
        names = {f._cache._cache_file._index_name for f in (engine._pull_serial, engine._pull_parallel)}
        assert len(names) == 2 and any("_pull_rows_serial" in n for n in names)


def test_the_one_column_pull_kernels_give_the_bits_of_the_block_kernel_and_scipy():
    """A single seed (the account page's panels) takes the one-column loop: the same terms in the same order as
    the block kernel and SciPy's product, so the same bits, serial or parallel, through ``_Walk.pull`` too."""
    from scipy.sparse import csr_array

    from compute._jit import HAVE_NUMBA
    from compute.algorithms import wtf as engine

    rng = np.random.default_rng(5)
    indptr = np.r_[0, np.cumsum(rng.integers(0, 9, 500))].astype(np.int64)
    indices = rng.integers(0, 500, int(indptr[-1])).astype(np.int32)
    y = rng.random((500, 1)) * 10.0 ** rng.integers(-12, 3, (500, 1))  # magnitudes apart: the order shows
    block = np.empty((500, 1))
    engine._pull_serial(indptr, indices, y, block)
    for kernel in (engine._pull_one_serial, engine._pull_one_parallel):
        one = np.empty(500)
        kernel(indptr, indices, y[:, 0], one)
        assert one.tobytes() == block[:, 0].tobytes()
    scipy = csr_array((np.ones(len(indices)), indices, indptr), shape=(500, 500)) @ y[:, 0]
    assert scipy.tobytes() == block[:, 0].tobytes()
    walk = engine._Walk.__new__(engine._Walk)
    walk.in_ptr, walk.in_idx, walk.n, walk._scipy = indptr, indices, 500, None
    assert walk.pull(y).tobytes() == block.tobytes()
    if HAVE_NUMBA:
        names = {f._cache._cache_file._index_name for f in (engine._pull_one_serial, engine._pull_one_parallel)}
        assert len(names) == 2 and any("_pull_one_serial" in n for n in names)


def test_the_cpu_takes_one_seed_a_block_where_the_follows_are_few_and_four_where_they_are_many():
    sparse = graph_from_edges(np.arange(0, 999), np.arange(1, 1000))  # a path: one follow an account
    rng = np.random.default_rng(2)
    dense = graph_from_edges(rng.integers(0, 100, 5000), rng.integers(0, 100, 5000))  # ~50 an account
    assert wtf_module.cpu_block(wtf_module._walk(sparse, "follows")) == 1
    assert wtf_module.cpu_block(wtf_module._walk(dense, "follows")) == CPU_BLOCK
