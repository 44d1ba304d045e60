"""Choosing the CPU library of the network analytics by measurement (issue 14): SciPy's csgraph, igraph,
networkit and our numba kernels (networkx as the slow reference, on the smaller graph only), per analysis, on
the follower graph of a generated ``twitter`` collection. Results and the choice: benchmarks/network_cpu.md.

    python -m compute generate twitter --scale 0.1 --out /tmp/tw.npz
    python benchmarks/network_cpu_bench.py /tmp/tw.npz --name tw0.1 --out benchmarks/results/network_cpu_tw0.1.json

Every (analysis, library) runs in a fresh child process: it loads the graph, builds the library's structure
(``prepare``, timed apart: the undirected view where the analysis is defined on it), resets the kernel's
high-water mark of resident memory, then runs the analysis ``--repeat`` times; it reports the best time and
the peak resident memory above what the process held before the runs. A checksum of each result lets the table
say whether the libraries agree. Threads: networkit uses OpenMP on every core, ours one thread per core for
betweenness; SciPy and igraph run on one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (analysis, library) pairs in table order; networkx only where --networkx is given
CASES = {
    "components": ["ours", "scipy", "igraph", "networkit", "networkx"],
    "scc": ["scipy", "igraph", "networkit", "networkx"],
    "kcore": ["ours", "igraph", "networkit", "networkx"],
    "clustering": ["ours", "igraph", "networkit", "networkx"],
    "betweenness": ["ours", "ours-1thread", "igraph", "networkit-own-sources", "networkx"],
    "betweenness-exact": ["ours", "igraph", "networkit"],
    "undirected-view": ["ours"],
    "conversations": ["ours"],
    "neighbourhood": ["ours"],
}


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def _load(path: str):
    from compute.graphs import Graph

    with np.load(path) as z:
        return Graph(z["ids"], z["indptr"], z["indices"])


def _pairs(u):
    """Each undirected edge once (u < v), as the libraries' constructors take them."""
    src, dst = u.edges()
    keep = src < dst
    return src[keep].astype(np.int64), dst[keep].astype(np.int64)


def _prepare(analysis: str, lib: str, g, samples: int):
    """(callable running the analysis, checksum of its result as a function of the return value)."""
    from compute.algorithms import _network_kernels as kernels
    from compute.algorithms import network as net
    from compute.graphs import betweenness_sources, clustering_from_triangles, ordered_components, undirected

    directed = analysis in ("components", "scc", "conversations", "undirected-view", "neighbourhood")
    u = None if directed else undirected(g)
    if analysis in ("betweenness", "betweenness-exact"):
        if analysis == "betweenness":
            src, sc = betweenness_sources(u, samples, 0)
        else:
            src, sc = np.arange(u.n_nodes), np.ones(u.n_nodes)

    def sizes(labels):
        return ordered_components(np.asarray(labels)).sizes

    def comp_sum(r):
        s = sizes(r)
        return [len(s), int(s[0]) if len(s) else 0]

    if lib == "scipy" and analysis == "components":
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import connected_components

        a = csr_array((np.ones(g.n_edges, np.int8), g.indices, g.indptr), shape=(g.n_nodes, g.n_nodes))
        return (lambda: connected_components(a, directed=True, connection="weak")[1]), comp_sum
    if lib in ("ours", "scipy", "ours-1thread"):
        if analysis == "components":
            return (lambda: net.components_cpu(g).labels), comp_sum
        if analysis == "scc":
            return (lambda: net.strong_components_cpu(g).labels), comp_sum
        if analysis == "kcore":
            return (lambda: kernels.core_numbers(u.indptr, u.indices)), lambda r: [int(r.sum()), int(r.max())]
        if analysis == "clustering":
            return (lambda: clustering_from_triangles(u, kernels.triangles(u.indptr, u.indices))), lambda r: [
                round(float(r.local.sum()), 6),
                round(r.transitivity, 12),
            ]
        if analysis.startswith("betweenness"):
            threads = 1 if lib == "ours-1thread" else None
            return (lambda: net.betweenness_partial_cpu(u, src, sc, threads=threads)), _bc_sum
        if analysis == "undirected-view":
            return (lambda: undirected(g)), lambda r: [int(r.n_edges)]
        if analysis == "conversations":
            return (lambda: net.conversations_cpu(g)), lambda r: [r.nodes_after, r.edges_after]
        if analysis == "neighbourhood":
            hub = int(np.argmax(g.in_degree))
            return (lambda: net.neighbourhood_cpu(g, hub, depth=2)), lambda r: [r.graph.n_nodes]
    if lib == "igraph":
        import igraph as ig

        if directed:
            s, d = g.edges()
            G = ig.Graph(n=g.n_nodes, edges=np.column_stack([s, d]).astype(np.int64), directed=True)
        else:
            G = ig.Graph(n=u.n_nodes, edges=np.column_stack(_pairs(u)), directed=False)
        if analysis in ("components", "scc"):
            mode = "weak" if analysis == "components" else "strong"
            return (lambda: G.connected_components(mode=mode).membership), comp_sum
        if analysis == "kcore":
            return (lambda: np.array(G.coreness())), lambda r: [int(r.sum()), int(r.max())]
        if analysis == "clustering":

            def run():
                return np.array(G.transitivity_local_undirected(mode="zero")), G.transitivity_undirected()

            return run, lambda r: [round(float(r[0].sum()), 6), round(r[1], 12)]
        if analysis == "betweenness-exact":
            return (lambda: np.array(G.betweenness(directed=False))), _bc_sum

        def sampled():
            # igraph takes sources but no per-source factor: one call per block and scale
            total = np.zeros(u.n_nodes)
            for b in range(0, len(src), 64):
                for f in np.unique(sc[b : b + 64]):
                    grp = src[b : b + 64][sc[b : b + 64] == f]
                    total += f * np.array(G.betweenness(directed=False, sources=grp.tolist()))
            return total

        return sampled, _bc_sum
    if lib.startswith("networkit"):
        import networkit as nk

        if directed:
            G = nk.Graph(g.n_nodes, directed=True)
            G.addEdges(tuple(a.astype(np.uint64) for a in g.edges()))
        else:
            G = nk.Graph(u.n_nodes, directed=False)
            G.addEdges(tuple(a.astype(np.uint64) for a in _pairs(u)))
        if analysis in ("components", "scc"):
            cls = nk.components.WeaklyConnectedComponents
            if analysis == "scc":
                cls = nk.components.StronglyConnectedComponents

            def run():
                c = cls(G)
                c.run()
                return c.getPartition().getVector()

            return run, comp_sum
        if analysis == "kcore":

            def run():
                c = nk.centrality.CoreDecomposition(G)
                c.run()
                return np.array(c.scores(), dtype=np.int64)

            return run, lambda r: [int(r.sum()), int(r.max())]
        if analysis == "clustering":

            def run():
                c = nk.centrality.LocalClusteringCoefficient(G, turbo=True)
                c.run()
                return np.array(c.scores()), nk.globals.ClusteringCoefficient.exactGlobal(G)

            return run, lambda r: [round(float(r[0].sum()), 6), round(r[1], 12)]
        if analysis == "betweenness-exact":

            def run():
                c = nk.centrality.Betweenness(G, normalized=False)
                c.run()
                return np.array(c.scores()) / 2  # networkit counts each unordered pair from both ends

            return run, _bc_sum

        def sampled():
            c = nk.centrality.EstimateBetweenness(G, samples, normalized=False, parallel=True)
            c.run()
            return np.array(c.scores())

        return sampled, _bc_sum
    if lib == "networkx":
        import networkx as nx

        if directed:
            G = nx.DiGraph()
            G.add_nodes_from(range(g.n_nodes))
            G.add_edges_from(zip(*(a.tolist() for a in g.edges())))
        else:
            G = nx.Graph()
            G.add_nodes_from(range(u.n_nodes))
            G.add_edges_from(zip(*(a.tolist() for a in _pairs(u))))
        if analysis == "components":
            return (lambda: _nx_labels(nx.weakly_connected_components(G), g.n_nodes)), comp_sum
        if analysis == "scc":
            return (lambda: _nx_labels(nx.strongly_connected_components(G), g.n_nodes)), comp_sum
        if analysis == "kcore":
            return (lambda: np.array([c for _, c in sorted(nx.core_number(G).items())])), lambda r: [
                int(r.sum()),
                int(r.max()),
            ]
        if analysis == "clustering":

            def run():
                c = nx.clustering(G)
                return np.array([c[i] for i in range(u.n_nodes)]), nx.transitivity(G)

            return run, lambda r: [round(float(r[0].sum()), 6), round(r[1], 12)]
        k = int(os.environ.get("NX_SOURCES", "8"))
        return (lambda: nx.betweenness_centrality(G, k=k, normalized=False, seed=0)), lambda r: [f"k={k}"]
    raise SystemExit(f"no case {analysis}/{lib}")


def _bc_sum(r) -> list:
    r = np.asarray(r)
    return [float(f"{r.sum():.9g}"), int(np.argmax(r))]


def _nx_labels(comps, n: int) -> np.ndarray:
    out = np.empty(n, np.int64)
    for i, c in enumerate(comps):
        out[list(c)] = i
    return out


def child(args) -> None:
    g = _load(args.graph)
    t0 = time.perf_counter()
    run, check = _prepare(args.analysis, args.lib, g, args.samples)
    prepare_s = time.perf_counter() - t0
    if args.lib.startswith("ours"):  # numba compiles (or loads its cache) on the first call: not timed
        from compute.graphs import graph_from_edges

        tiny = graph_from_edges([1, 2, 3, 3], [2, 3, 1, 4])
        _prepare(args.analysis, args.lib, tiny, 2)[0]()
    base = _rss_kb("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:  # reset VmHWM: the peak of the runs alone
        fh.write("5")
    times = []
    result = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    peak = _rss_kb("VmHWM")
    out = {
        "analysis": args.analysis,
        "lib": args.lib,
        "best_s": min(times),
        "times": times,
        "prepare_s": prepare_s,
        "peak_extra_mb": max(0, peak - base) / 1024,
        "base_mb": base / 1024,
        "check": check(result),
    }
    print(json.dumps(out))


def driver(args) -> None:
    from compute.bench import load_dataset
    from compute.graphs import follower_graph

    kind, payload, _ = load_dataset(args.collection, scale=1.0, seed=0)
    if kind != "collection":
        raise SystemExit(f"{args.collection}: not a collection archive")
    g = follower_graph(payload[1])
    cache = Path(f"/tmp/network_bench_{args.name}.npz")
    np.savez(cache, ids=g.ids, indptr=g.indptr, indices=g.indices)
    rows = []
    print(f"# {args.name}: {g.n_nodes:,} nodes, {g.n_edges:,} directed edges; {os.cpu_count()} cores", flush=True)
    print("| analysis | library | best s | first s | prepare s | peak MB | checksum |", flush=True)
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |", flush=True)
    only = set(args.only.split(",")) if args.only else None
    for analysis, libs in CASES.items():
        if only and analysis not in only:
            continue
        if analysis == "betweenness-exact" and not args.exact:
            continue
        for lib in libs:
            if lib == "networkx" and not args.networkx:
                continue
            repeat = args.repeat
            if lib == "networkx" or analysis == "betweenness-exact" or (analysis == "betweenness" and args.big):
                repeat = 1  # minutes per run: one is enough to rank them
            cmd = [sys.executable, __file__, "--one", analysis, lib, "--graph", str(cache)]
            cmd += ["--repeat", str(repeat), "--samples", str(args.samples)]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=os.environ)
            except subprocess.TimeoutExpired:
                row = {"analysis": analysis, "lib": lib, "error": f"over {args.timeout} s"}
            else:
                if p.returncode:
                    last = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
                    row = {"analysis": analysis, "lib": lib, "error": last[:200]}
                else:
                    row = json.loads(p.stdout.strip().splitlines()[-1])
            row["repeat"] = repeat
            rows.append(row)
            print(_row(row), flush=True)
    info = {"name": args.name, "nodes": g.n_nodes, "edges": g.n_edges, "samples": args.samples, "rows": rows}
    if args.out:
        Path(args.out).write_text(json.dumps(info, indent=1) + "\n")


def _row(r: dict) -> str:
    if "error" in r:
        return f"| {r['analysis']} | {r['lib']} | — | — | — | — | {r['error']} |"
    return (
        f"| {r['analysis']} | {r['lib']} | {r['best_s']:.3f} (of {r['repeat']}) | {r['times'][0]:.3f} | "
        f"{r['prepare_s']:.2f} | {r['peak_extra_mb']:.0f} | {r['check']} |"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("collection", nargs="?", help="a collection .npz (python -m compute generate twitter ...)")
    p.add_argument("--name", default="graph")
    p.add_argument("--out", help="write the rows as JSON here")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--samples", type=int, default=256, help="betweenness sources (default 256)")
    p.add_argument("--networkx", action="store_true", help="also time networkx (smaller graphs only)")
    p.add_argument("--exact", action="store_true", help="also exact betweenness (smaller graphs only)")
    p.add_argument("--only", help="comma-separated analyses")
    p.add_argument("--big", action="store_true", help="time sampled betweenness once, not --repeat times")
    p.add_argument("--timeout", type=int, default=900)
    p.add_argument("--one", nargs=2, metavar=("ANALYSIS", "LIB"), help=argparse.SUPPRESS)
    p.add_argument("--graph", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        args.analysis, args.lib = args.one
        child(args)
    else:
        driver(args)


if __name__ == "__main__":
    main()
