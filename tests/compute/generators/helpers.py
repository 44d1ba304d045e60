"""Checks shared by the generator tests."""

from __future__ import annotations

import numpy as np

from compute.structures import SpreadingGraphs


def assert_single_sink_dags(g: SpreadingGraphs) -> None:
    """Every graph is a DAG whose only sink is its publisher, and every node reaches the publisher.

    Proof by arrays: every edge goes strictly back in time (so there is no cycle and following out-edges
    always ends), every node but the publisher has an out-edge and the publisher has none (so the walk can
    only end at the publisher).
    """
    c = g.cascades
    assert c.times is not None
    node_casc = c.cascade_of_node()
    outdeg = np.zeros(g.n_nodes, dtype=np.int64)
    step = 1 << 24  # chunks keep the full 450M-edge preset checkable in a few GB
    for a in range(0, g.n_edges, step):
        b = min(a + step, g.n_edges)
        src, dst = g.edge_src[a:b].astype(np.int64), g.edge_dst[a:b].astype(np.int64)
        casc = np.searchsorted(g.edge_offsets, np.arange(a, b), side="right") - 1
        assert np.array_equal(node_casc[src], casc) and np.array_equal(node_casc[dst], casc)
        assert np.all(c.times[src] > c.times[dst]), "an edge goes forward in time"
        # edges are sorted by (src, dst) within a graph, so a duplicate would sit next to its twin
        key = src * g.n_nodes + dst
        assert np.all(np.diff(key)[np.diff(casc) == 0] > 0), "duplicate or unsorted edges"
        outdeg += np.bincount(src, minlength=g.n_nodes)
    is_pub = np.zeros(g.n_nodes, dtype=bool)
    is_pub[c.publisher] = True
    assert np.all(outdeg[is_pub] == 0), "a publisher has an out-edge"
    assert np.all(outdeg[~is_pub] > 0), "a non-publisher node is a sink"


def reaches_sink_by_search(g: SpreadingGraphs, t: int) -> bool:
    """Plain reverse search from the publisher of graph ``t`` (an independent check of the above)."""
    lo, hi = int(g.cascades.node_offsets[t]), int(g.cascades.node_offsets[t + 1])
    s, d = g.edges_of(t)
    preds: dict[int, list[int]] = {}
    for a, b in zip(s.tolist(), d.tolist()):
        preds.setdefault(b, []).append(a)
    seen = {int(g.cascades.publisher[t])}
    stack = list(seen)
    while stack:
        v = stack.pop()
        for u in preds.get(v, ()):
            if u not in seen:
                seen.add(u)
                stack.append(u)
    return len(seen) == hi - lo


def graph_arrays(g: SpreadingGraphs) -> dict[str, np.ndarray]:
    c = g.cascades
    return {
        "node_offsets": c.node_offsets,
        "user_ids": c.user_ids,
        "followers": c.followers,
        "times": c.times,
        "publisher": c.publisher,
        "tweet_ids": c.tweet_ids,
        "edge_offsets": g.edge_offsets,
        "edge_src": g.edge_src,
        "edge_dst": g.edge_dst,
    }


def assert_same_arrays(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype, k
        assert np.array_equal(a[k], b[k]), k
