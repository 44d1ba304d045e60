"""Issue 43, communities: which library finds modularity communities of the undirected follower graph fastest
here, and how good are they. Candidates: igraph's Leiden, leidenalg (the Leiden authors' package, on igraph) and
networkit's PLM (parallel Louvain with refinement; ``networkit-1``: on one thread, the only way its result
repeats for a seed), on the ``twitter`` preset's follower graph.

    python benchmarks/communities_bench.py --scale 0.1 --libraries igraph,leidenalg,networkit --out X.json

Each library gets the same undirected simple graph (``compute.graphs.undirected``: an edge wherever one account
follows the other, reciprocal follows once); the time is the library's own graph build plus its run, wall clock;
the modularity of every result is computed by one function (``compute.algorithms.communities.modularity``) at
resolution 1. ``--dispatcher`` also times the product's ``communities(g)`` whole (the undirected view, the
library, the numbering and the modularity). Prints JSON lines.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


#: Leiden passes of the igraph and leidenalg runs (their default)
LEIDEN_PASSES = 2


def _pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The edges as igraph takes them: an (m, 2) int32 array."""
    return np.c_[a, b].astype(np.int32)


def run_igraph(n, a, b, seed: int, resolution: float) -> np.ndarray:
    import random

    import igraph as ig

    ig.set_random_number_generator(random.Random(seed))
    g = ig.Graph(n=n, edges=_pairs(a, b), directed=False)
    found = g.community_leiden(objective_function="modularity", resolution=resolution, n_iterations=LEIDEN_PASSES)
    return np.asarray(found.membership)


def run_leidenalg(n, a, b, seed: int, resolution: float) -> np.ndarray:
    import igraph as ig
    import leidenalg as la

    g = ig.Graph(n=n, edges=_pairs(a, b), directed=False)
    p = la.find_partition(
        g, la.RBConfigurationVertexPartition, resolution_parameter=resolution, seed=seed, n_iterations=LEIDEN_PASSES
    )
    return np.asarray(p.membership)


#: the seconds of networkit's own graph build and of its PLM run, of the last ``run_networkit`` call
STEPS: dict[str, float] = {}


def run_networkit(n, a, b, seed: int, resolution: float, threads: int = 0, csr=None) -> np.ndarray:
    """PLM with refinement; networkit's graph built from the edge list (``GraphFromCoo``, as before), or from
    ``csr``, the upper triangle as a SciPy CSR (``GraphFromCsr``, what the product does)."""
    import networkit as nk

    nk.setNumberOfThreads(threads or (os.cpu_count() or 1))
    nk.setSeed(seed, False)
    t = time.perf_counter()
    if csr is None:
        g = nk.GraphFromCoo((np.ones(len(a), dtype=np.float64), (a, b)), n=n)
    else:
        g = nk.GraphFromCsr(csr, directed=False)
    STEPS["build_s"] = time.perf_counter() - t
    t = time.perf_counter()
    plm = nk.community.PLM(g, refine=True, gamma=resolution)
    plm.run()
    STEPS["plm_s"] = time.perf_counter() - t
    return np.asarray(plm.getPartition().getVector())


def _upper(u):
    from compute.algorithms.communities import upper_csr

    return upper_csr(u)


RUNNERS = {
    "igraph": lambda n, a, b, seed, resolution, u: run_igraph(n, a, b, seed, resolution),
    "leidenalg": lambda n, a, b, seed, resolution, u: run_leidenalg(n, a, b, seed, resolution),
    # all cores: not deterministic (the threads race)
    "networkit": lambda n, a, b, seed, resolution, u: run_networkit(n, a, b, seed, resolution),
    # one thread, the graph from the upper CSR (the product's call, its CSR built inside the timing)
    "networkit-1": lambda n, a, b, seed, resolution, u: run_networkit(
        n, a, b, seed, resolution, threads=1, csr=_upper(u)
    ),
    # one thread, the graph from the edge list (the product's call before 2026-11-29, later)
    "networkit-1-coo": lambda n, a, b, seed, resolution, u: run_networkit(n, a, b, seed, resolution, threads=1),
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resolution", type=float, default=1.0)
    p.add_argument("--libraries", default=",".join(RUNNERS))
    p.add_argument("--dispatcher", action="store_true", help="also time compute's communities() end to end")
    p.add_argument("--out", metavar="JSON")
    args = p.parse_args(argv)

    from _setup import json_lines, twitter_graph

    from compute.algorithms.communities import edges_once, modularity
    from compute.graphs import undirected

    rows, emit = json_lines()

    g = twitter_graph(args.scale, args.seed, emit)
    t = time.perf_counter()
    u = undirected(g)
    a, b = edges_once(u)
    emit({"case": "undirected", "edges": len(a), "s": time.perf_counter() - t})
    for name in filter(None, args.libraries.split(",")):
        t = time.perf_counter()
        STEPS.clear()
        labels = RUNNERS[name](g.n_nodes, a, b, args.seed, args.resolution, u)
        s = time.perf_counter() - t
        sizes = np.sort(np.bincount(np.unique(labels, return_inverse=True)[1].ravel()))[::-1]
        emit({"case": name, "s": s, **STEPS, "modularity": modularity(u, labels), "communities": len(sizes),
              "largest": sizes[:5].tolist()})  # fmt: skip
    if args.dispatcher:
        from compute.algorithms.communities import communities

        t = time.perf_counter()
        c = communities(g, seed=args.seed, resolution=args.resolution)
        emit({"case": "communities()", "s": time.perf_counter() - t, "modularity": c.modularity,
              "communities": len(c.sizes), "largest": c.sizes[:5].tolist()})  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
