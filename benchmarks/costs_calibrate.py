"""Calibrating the cost models of ``compute/costs.py``: run each analysis's real CPU kernels on generated follower
graphs of a few sizes, measure seconds and peak resident memory, and print them beside what the models predict
with the constants in ``compute/costs.py``, plus the per-unit figure each run measured (from which the constants
were chosen). Results and the table: benchmarks/costs.md.

    python benchmarks/costs_calibrate.py [--only network,imm,imgpu,wtf] [--sizes 1.0,3.0]

Graphs: ``compute.generators.im_graphs.paper_graph("netphy", scale=s)`` (a directed Chung-Lu follower graph of
37,154 nodes and 180,826 edges at scale 1). Peak memory: the process's high-water mark of resident memory
(VmHWM), reset before each case (``/proc/self/clear_refs``), minus what it held before the case. Every case
runs once after a warm-up on the smallest graph (numba compiles there, not in the timings). Keep it short: the
machine is shared (the whole script takes about a minute).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compute import costs  # noqa: E402


def _kb(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def measure(fn):
    """(seconds, peak bytes above the resident memory before, result) of ``fn()``."""
    with contextlib.suppress(OSError):  # resets VmHWM (Linux); without it the peak is the process's so far
        Path("/proc/self/clear_refs").write_text("5")
    before = _kb("VmRSS:")
    t = time.perf_counter()
    out = fn()
    s = time.perf_counter() - t
    return s, max(0, _kb("VmHWM:") - before) * 1024, out


def row(case: str, size: str, measured_s: float, predicted_s: float, measured_b: int, predicted_b: int, unit: str):
    ratio = predicted_s / measured_s if measured_s else float("nan")
    print(
        f"| {case} | {size} | {measured_s:.3f} | {predicted_s:.3f} | {ratio:.2f} | {measured_b / 2**20:.1f} | "
        f"{predicted_b / 2**20:.1f} | {unit} |",
        flush=True,
    )


def network(sizes):
    from compute.algorithms import network as engine
    from compute.generators.im_graphs import paper_graph
    from compute.graphs import betweenness_sources, undirected

    for s in sizes:
        g = paper_graph("netphy", scale=s, seed=1)
        u = undirected(g)
        n, m, a = g.n_nodes, g.n_edges, u.n_edges
        sources, scale = betweenness_sources(u, 64, 0)

        def structure(g=g, u=u):
            engine.degrees(g, backend="cpu")
            engine.components(g, backend="cpu")
            engine.strong_components(g, backend="cpu")
            engine.core_numbers(u, backend="cpu")
            engine.clustering(u, backend="cpu")
            engine.conversations(g, backend="cpu")

        ts, bs, _ = measure(structure)
        tb, bb, _ = measure(lambda u=u, sources=sources, scale=scale: engine.betweenness_partial(
            u, sources, scale, backend="cpu"))  # fmt: skip
        est = costs.betweenness_cost(nodes=n, edges=m, arcs=a, samples=64)
        per_source = costs.BTW_SECONDS_PER_UNIT * (n + a)
        struct_pred = est.seconds - per_source * 64 * 3
        size = f"{n:,} nodes / {m:,} edges / {a:,} arcs"
        row("network: structure", size, ts, struct_pred, bs, est.peak_bytes, f"{ts / (a + m):.3g} s/arc")
        row(
            "network: betweenness, 64 sources", size, tb, per_source * 64, bb, est.peak_bytes,
            f"{tb / (64 * (n + a)):.3g} s/(source x (n + arcs))",
        )  # fmt: skip


def imm(sizes):
    from compute.algorithms import influence_max as engine
    from compute.generators.im_graphs import paper_graph
    from compute.influence_model import ic_model

    for s in sizes:
        g = paper_graph("netphy", scale=s, seed=1)
        for p, k, eps in ((0.01, 50, 0.3), ("wc", 50, 0.2)):
            model = ic_model(g, p=p)
            n, m = model.n_nodes, model.n_edges
            t_pilot, _, pilot = measure(lambda model=model, k=k: costs.imm_pilot(model, k=k, seed=0))
            top = float(np.sort(model.weights)[::-1][:k].sum())
            est = costs.influence_max_cost(
                nodes=n, edges=m, total_weight=model.total_weight, top_weights=top, k=k, eps=eps, method="imm",
                evaluate=500, batches=1, pilot=pilot,
            )  # fmt: skip
            count = 20_000
            t_rr, _, rr = measure(lambda model=model, count=count: engine.rr_sets(
                model, seed=0, start=0, stop=count, backend="cpu"))  # fmt: skip
            size = f"{n:,} nodes / {m:,} edges, p={p}"
            row(
                "imm: 20,000 RR sets", size, t_rr,
                count * (costs.RR_SECONDS_PER_SET + costs.RR_SECONDS_PER_EDGE * pilot.mean_edges), 0, 0,
                f"{t_rr / count:.3g} s/set, {rr.edges_touched / count:.1f} edges/set, "
                f"{len(rr.nodes) / count:.2f} members/set",
            )  # fmt: skip

            t_imm, b_all, r = measure(lambda model=model, k=k, eps=eps: engine.influence_max(
                model, k=k, method="imm", eps=eps, seed=0, backend="cpu"))  # fmt: skip
            t_eval, _, spread = measure(lambda model=model, r=r: engine.evaluate_spread(
                model, r.nodes, runs=1000, seed=0, backend="cpu"))  # fmt: skip
            t_all = t_imm + t_eval
            row(
                "imm: evaluation, 1,000 cascades", size, t_eval,
                1000 * costs.EVAL_SECONDS_PER_EDGE * pilot.cascade_edges, 0, 0,
                f"{t_eval / (1000 * pilot.cascade_edges):.3g} s per cascade edge ({pilot.cascade_edges:,.0f} a "
                f"cascade); spread {spread.mean:.1f}, pilot's {pilot.spread:.1f}",
            )  # fmt: skip
            row(
                f"imm: k={k} eps={eps} + 1,000 evaluations", size, t_all, est.seconds, b_all, est.peak_bytes,
                f"theta {r.rr_sets:,} (predicted {est.drivers['theta']:,}, bound {est.drivers['theta_bound']:,}); "
                f"sampling {r.sampling_rr_sets:,} (predicted {est.drivers['sampling_rr_sets']:,}); "
                f"pilot {t_pilot * 1000:.0f} ms",
            )  # fmt: skip


def imgpu(sizes):
    from compute.algorithms import influence_max as engine
    from compute.generators.im_graphs import paper_graph
    from compute.influence_model import ic_model

    for s in sizes:
        g = paper_graph("netphy", scale=s, seed=1)
        model = ic_model(g, p=0.01)
        n, m = model.n_nodes, model.n_edges
        size = f"{n:,} nodes / {m:,} edges, p=0.01"
        for k in (5, 50):
            t, b, _ = measure(lambda model=model, k=k: engine.influence_max(
                model, k=k, method="imgpu", seed=0, snapshots=200, backend="cpu"))  # fmt: skip
            pred = 200 * (n + m) * (costs.SNAPSHOT_SECONDS_PER_UNIT + costs.SNAPSHOT_SECONDS_PER_PICK * k)
            est = costs.influence_max_cost(
                nodes=n, edges=m, total_weight=model.total_weight, top_weights=float(k), k=k, eps=0.1,
                method="imgpu", evaluate=100, pilot=costs.imm_pilot(model, k=k, seed=0),
            )  # fmt: skip
            row(f"imgpu: k={k}, 200 snapshots (no evaluation)", size, t, pred, b, est.peak_bytes,
                f"{t / (200 * (n + m)):.3g} s per snapshot x (n + m)")  # fmt: skip
        rr = engine.rr_sets(model, seed=0, start=0, stop=400_000, backend="cpu")
        t, _, _ = measure(lambda model=model, rr=rr: engine.select_seeds(model, rr, k=50, backend="cpu"))
        row("imm: greedy selection, k=50, 400,000 RR sets", size, t,
            costs.SELECT_SECONDS_PER_MEMBER * len(rr.nodes), 0, 0, f"{t / len(rr.nodes):.3g} s per member")  # fmt: skip


def wtf(sizes):
    from compute.algorithms.wtf import _ppr_block, _walk
    from compute.algorithms.wtf import wtf as run_wtf
    from compute.generators.im_graphs import paper_graph

    for s in sizes:
        g = paper_graph("netphy", scale=s, seed=1)
        n, m = g.n_nodes, g.n_edges
        rng = np.random.default_rng(0)
        size = f"{n:,} nodes / {m:,} edges"
        walk = _walk(g, "follows")
        for cols in (1, 64):
            idx = np.sort(rng.choice(n, size=cols, replace=False)).astype(np.int64)
            t, b, out = measure(lambda idx=idx, walk=walk: _ppr_block(walk, idx, 0.85, 1e-10, 100))
            it = int(np.max(out[1]))
            est = costs.wtf_cost(nodes=n, edges=m, seeds=cols, directions=1, circle=1, max_iter=it)
            pred = it * m * (costs.PPR_SECONDS_PER_EDGE + costs.PPR_SECONDS_PER_EDGE_COLUMN * cols)
            row(
                f"wtf: PageRank only, {cols} columns ({it} iterations)", size, t, pred, b, est.peak_bytes,
                f"{t / (it * m):.3g} s per iteration-edge",
            )  # fmt: skip
        for seeds, circle in ((64, 1000),):
            idx = np.sort(rng.choice(n, size=seeds, replace=False)).astype(np.int64)
            t, b, recs = measure(lambda idx=idx, circle=circle, g=g: run_wtf(
                g, idx, direction="follows", circle=circle, top=20, max_iter=100, backend="cpu"))  # fmt: skip
            t_ppr, _, out = measure(lambda idx=idx, walk=walk: _ppr_block(walk, idx, 0.85, 1e-10, 100))
            it = int(np.max(out[1]))
            est = costs.wtf_cost(nodes=n, edges=m, seeds=seeds, directions=1, circle=circle, max_iter=it)
            members = min(circle, n) * max(m / n, 1.0)
            money_it = max(r.money_iterations for r in recs) if hasattr(recs[0], "money_iterations") else it
            row(
                f"wtf: {seeds} seeds, circle {circle} (PageRank {it} iterations)", size, t, est.seconds, b,
                est.peak_bytes,
                f"the rest (Money, circles, lists) {(t - t_ppr) / (seeds * money_it * members):.3g} s per seed x "
                f"iteration x circle x degree ({money_it} iterations)",
            )  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="network,imm,imgpu,wtf")
    ap.add_argument("--sizes", default="1.0,3.0", help="scales of the netphy preset")
    args = ap.parse_args()
    sizes = [float(x) for x in args.sizes.split(",")]
    only = set(args.only.split(","))
    print("| case | graph | measured s | predicted s | predicted / measured | measured peak MB | predicted peak MB "
          "| per unit |")  # fmt: skip
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    # warm-up: numba compiles on the smallest graph, outside the table
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        for name, fn in (("network", network), ("imm", imm), ("imgpu", imgpu), ("wtf", wtf)):
            if name in only:
                fn([0.3] if name == "wtf" else [0.02])
    for name, fn in (("network", network), ("imm", imm), ("imgpu", imgpu), ("wtf", wtf)):
        if name in only:
            fn(sizes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
