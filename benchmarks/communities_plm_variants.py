"""Issue 43, communities: what PLM's settings cost in time and modularity, on the ``twitter`` preset at scale 0.1
(the goal's graph, which has no community structure) and on two generated graphs with planted communities (a
stochastic block model: each account in one of K blocks; an edge's second end is drawn from its first end's
block with probability 1 - mix, from all accounts otherwise).

    python benchmarks/communities_plm_variants.py --out benchmarks/results/communities_plm_variants_<date>.json

Each variant runs networkit's PLM on one thread, seed 0, on the undirected simple view's upper CSR (what the
product hands it, ``compute.algorithms.communities.upper_csr``); the time is PLM's run alone, the modularity is
``compute.algorithms.communities.modularity`` at resolution 1. Prints JSON lines.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (name, PLM keyword arguments); the second is the product's call (compute.algorithms.communities.MOVE_ITERATIONS)
VARIANTS = (
    ("refine (networkit's default, the product before 2026-12-02)", {"refine": True}),
    ("refine, maxIter 16 (the product)", {"refine": True, "maxIter": 16}),
    ("refine, maxIter 8", {"refine": True, "maxIter": 8}),
    ("no refinement", {"refine": False}),
)


def planted(n: int, blocks: int, degree: int, mix: float, seed: int):
    """A directed graph of ``n`` accounts and ``n * degree / 2`` edges drawn as the module says."""
    from scipy.sparse import coo_matrix

    from compute.graphs import Graph

    rng = np.random.default_rng(seed)
    block = rng.integers(0, blocks, n)
    m = n * degree // 2
    a = rng.integers(0, n, m)
    order = np.argsort(block, kind="stable")
    start = np.searchsorted(block[order], np.arange(blocks))
    size = np.bincount(block, minlength=blocks)
    same = order[start[block[a]] + (rng.random(m) * size[block[a]]).astype(np.int64)]
    b = np.where(rng.random(m) >= mix, same, rng.integers(0, n, m))
    mat = coo_matrix((np.ones(m), (a, b)), shape=(n, n)).tocsr()
    mat.sum_duplicates()
    mat.sort_indices()
    return Graph(np.arange(n, dtype=np.int64), mat.indptr.astype(np.int64), mat.indices.astype(np.int32), None)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=0.1)
    p.add_argument("--out", metavar="JSON")
    args = p.parse_args(argv)

    import networkit as nk
    from _setup import json_lines, twitter_graph

    from compute.algorithms.communities import modularity, upper_csr
    from compute.graphs import undirected

    rows, emit = json_lines()
    cases = (
        (f"twitter {args.scale}", lambda: twitter_graph(args.scale, 0, emit)),
        ("planted: 200K accounts, 200 blocks, mix 0.6", lambda: planted(200_000, 200, 40, 0.6, 1)),
        ("planted: 200K accounts, 50 blocks, mix 0.8", lambda: planted(200_000, 50, 40, 0.8, 2)),
    )
    nk.setNumberOfThreads(1)
    for name, make in cases:
        u = undirected(make())
        csr = upper_csr(u)
        for variant, kwargs in VARIANTS:
            nk.setSeed(0, False)
            graph = nk.GraphFromCsr(csr, directed=False)
            t = time.perf_counter()
            plm = nk.community.PLM(graph, gamma=1.0, **kwargs)
            plm.run()
            s = time.perf_counter() - t
            labels = np.asarray(plm.getPartition().getVector())
            emit({"graph": name, "edges": len(csr.indices), "variant": variant, "plm_s": round(s, 2),
                  "modularity": round(modularity(u, labels), 5), "communities": len(np.unique(labels))})  # fmt: skip
    if args.out:
        Path(args.out).write_text(json.dumps(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
