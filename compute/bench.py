"""Benchmarks of the forward and backward phases (``python -m compute bench ...``).

Method (the device's METHOD.md, applied to the CPU too): load or generate the data first (not timed), run
the phase once to warm up (numba compiles on first call; CuPy compiles its kernels), then time ``repeat``
runs and report the median. Peak memory is the process's high-water mark (VmHWM) measured from a reset just
before the warm-up, so it counts the loaded arrays plus whatever the phase allocates — not the generator's
temporaries.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._jit import njit
from .backends import resolve_backend

__all__ = ["BenchResult", "bench", "THESIS_RSG"]

#: The thesis' backward-phase figures on its RSG set (Table 7.4 and §7), for the table printed beside ours.
THESIS_RSG = {
    "sequential C, i5-6600K (Table 7.4 sum)": 0.93353,
    "best GPU per size class, RTX 2070 Super (Table 7.4)": 0.14647,
}


@dataclass
class BenchResult:
    phase: str
    backend: str
    dataset: str
    n_cascades: int
    n_nodes: int
    n_edges: int
    n_retweets: int
    times_s: list[float]
    peak_rss_bytes: int
    data_bytes: int
    threads: int | None = None
    extra: dict = field(default_factory=dict)

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)

    def to_dict(self) -> dict:
        m = self.median_s
        d = {
            "phase": self.phase,
            "backend": self.backend,
            "dataset": self.dataset,
            "threads": self.threads,
            "n_cascades": self.n_cascades,
            "n_nodes": self.n_nodes,
            "n_edges": self.n_edges,
            "n_retweets": self.n_retweets,
            "repeat": len(self.times_s),
            "median_s": m,
            "min_s": min(self.times_s),
            "max_s": max(self.times_s),
            "edges_per_s": self.n_edges / m if m > 0 else None,
            "nodes_edges_per_s": (self.n_nodes + self.n_edges) / m if m > 0 else None,
            "retweets_per_s": self.n_retweets / m if m > 0 and self.n_retweets else None,
            "peak_rss_bytes": self.peak_rss_bytes,
            "data_bytes": self.data_bytes,
            "peak_over_data": self.peak_rss_bytes / self.data_bytes if self.data_bytes else None,
        }
        d.update(self.extra)
        return d


def _reset_peak_rss() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:  # not Linux, or not allowed: the peak then covers the whole process
        pass


def _peak_rss() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@njit
def _count_tests(node_offsets, node_user, times, publisher, indptr):
    """GALE's membership tests: per retweeter, the shorter of its friend list and the cascade's strictly
    earlier participants (the forward phase's floor is this count times one random lookup)."""
    friend_side = 0
    participant_side = 0
    for t in range(len(node_offsets) - 1):
        lo = node_offsets[t]
        hi = node_offsets[t + 1]
        order = np.argsort(times[lo:hi], kind="mergesort") + lo
        first_of_tie = 0
        for k in range(hi - lo):
            v = order[k]
            if k > 0 and times[order[k - 1]] < times[v]:
                first_of_tie = k
            if v == publisher[t]:
                continue
            u = node_user[v]
            d = indptr[u + 1] - indptr[u] if u >= 0 else 0
            if d <= first_of_tie:
                friend_side += d
            else:
                participant_side += first_of_tie
    return friend_side, participant_side


def membership_tests(cascades, graph) -> dict:
    fs, ps = _count_tests(
        cascades.node_offsets,
        graph.index_of(cascades.user_ids),
        cascades.times,
        cascades.publisher,
        graph.friends_indptr,
    )
    return {"membership_tests": int(fs + ps), "friend_side_tests": int(fs), "participant_side_tests": int(ps)}


def _is_preset(dataset: str) -> bool:
    from .generators import PRESETS

    return dataset in PRESETS and not Path(dataset).exists()


def load_dataset(dataset: str, *, scale: float, seed: int):
    """``(kind, payload, info)``: kind ``"graphs"`` with SpreadingGraphs or ``"collection"`` with
    ``(TweetTable, FollowerGraph)``. ``info`` holds load/generation timings."""
    info: dict = {}
    t0 = time.perf_counter()
    if _is_preset(dataset):
        from . import generators

        if dataset == "twitter":
            payload = generators.twitter_collection(scale=scale, seed=seed)
            kind = "collection"
        else:
            payload = generators.random_spreading_graphs(dataset, scale=scale, seed=seed)
            kind = "graphs"
        info["generate_s"] = time.perf_counter() - t0
        return kind, payload, info
    path = Path(dataset)
    if not path.exists():
        raise FileNotFoundError(f"{dataset}: neither a preset (rsg, seibert, twitter) nor an existing file")
    with np.load(path, allow_pickle=False) as z:
        keys = set(z.files)
    from .collection import is_collection_archive, load_collection
    from .structures import is_spreading_archive, load_archive

    if is_collection_archive(keys):
        tweets, graph, _ = load_collection(path)
        kind, payload = "collection", (tweets, graph)
    elif is_spreading_archive(keys):
        kind, payload = "graphs", load_archive(path)
    else:
        raise ValueError(f"{path}: neither a spreading-graph nor a collection archive")
    info["load_s"] = time.perf_counter() - t0
    return kind, payload, info


def bench(
    phase: str,
    dataset: str = "rsg",
    *,
    scale: float = 1.0,
    seed: int = 0,
    backend: str = "cpu",
    repeat: int = 5,
    threads: int | None = None,
    orphans: str = "strict",
) -> BenchResult:
    if phase not in ("forward", "backward"):
        raise ValueError(f"phase must be forward or backward, not {phase!r}")
    used = resolve_backend(backend)
    kind, payload, info = load_dataset(dataset, scale=scale, seed=seed)
    name = dataset if _is_preset(dataset) else Path(dataset).name
    if _is_preset(dataset) and scale != 1.0:
        name = f"{dataset}@{scale:g}"
    from .algorithms.backward import backward
    from .algorithms.forward import forward
    from .build import build_cascades

    n_retweets = 0
    if kind == "collection":
        tweets, graph = payload
        t0 = time.perf_counter()
        cascades, _ = build_cascades(tweets)
        info["build_s"] = time.perf_counter() - t0
        n_retweets = int(cascades.n_nodes - cascades.n_cascades)
        info["graph_users"] = graph.n_users
        info["graph_edges"] = graph.n_edges
        info["graph_bytes"] = graph.nbytes
        if phase == "backward":
            graphs = forward(cascades, graph, orphans=orphans, backend=used)
            del graph, tweets
    else:
        graphs = payload
        if phase == "forward":
            raise ValueError(f"{name}: the forward phase needs tweets and a follower graph (a collection)")

    if phase == "forward":
        fn = lambda: forward(cascades, graph, orphans=orphans, backend=used, threads=threads)  # noqa: E731
        data_bytes = graph.nbytes + sum(
            a.nbytes for a in (cascades.node_offsets, cascades.user_ids, cascades.times, cascades.followers)
        )
    else:
        fn = lambda: backward(graphs, backend=used, threads=threads)  # noqa: E731
        data_bytes = graphs.nbytes

    _reset_peak_rss()
    if used == "gpu":
        # kernel time with device events (>= 20 repeats after a warm-up); copies and set-up reported beside it
        from .gpu import bench as gpu_bench

        if phase == "forward":
            times, extra = gpu_bench.bench_forward(cascades, graph, orphans, repeat)
        else:
            times, extra = gpu_bench.bench_backward(graphs, repeat)
        info.update(extra)
        out = fn()
    else:
        out = fn()  # warm-up: JIT compilation
        times = []
        for _ in range(max(1, repeat)):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
    peak = _peak_rss()
    sizes = out if phase == "forward" else graphs  # the forward phase's output carries the same counts
    res = BenchResult(phase, used, name, sizes.n_cascades, sizes.n_nodes, sizes.n_edges, n_retweets, times, peak,
                      data_bytes, threads, info)  # fmt: skip
    if phase == "forward":
        res.extra["spreading_edges"] = out.n_edges
        res.extra.update(membership_tests(cascades, graph))
    else:
        res.extra["checksum_publishers"] = float(np.nansum(out.influence[graphs.cascades.publisher]))
    res.extra["cpu_count"] = os.cpu_count()
    return res


def format_table(res: BenchResult) -> str:
    d = res.to_dict()
    rows = [
        ("phase", d["phase"]),
        ("backend", d["backend"] + (f" ({d['threads']} thread(s))" if d["threads"] else "")),
        ("dataset", d["dataset"]),
        ("cascades", f"{d['n_cascades']:,}"),
        ("nodes", f"{d['n_nodes']:,}"),
        ("edges", f"{d['n_edges']:,}"),
    ]
    if d["n_retweets"]:
        rows.append(("retweets", f"{d['n_retweets']:,}"))
    for k in ("generate_s", "load_s", "build_s"):
        if k in d:
            rows.append((k.replace("_s", " (s, not timed)"), f"{d[k]:.3f}"))
    gpu_rows = [
        ("device", "device", "{}"),
        ("kernel median (s)", "kernel_median_s", "{:.5f}  (device events; no host<->device copies)"),
        ("graph upload (s)", "graph_upload_s", "{:.4f}  (once per follower graph; kept on the device)"),
        ("upload (s)", "upload_s", "{:.4f}"),
        ("prepare (s)", "prepare_s", "{:.4f}  (in-edge lists: one radix sort)"),
        ("download (s)", "download_s", "{:.4f}"),
        ("end to end (s)", "end_to_end_median_s", "{:.4f}  (the public call: copies, preparation, checks)"),
        ("device memory (MiB)", "device_pool_bytes", None),
    ]
    for label, key, fmt in gpu_rows:
        if key in d:
            rows.append((label, f"{d[key] / 2**20:,.0f}" if fmt is None else fmt.format(d[key])))
    rows += [
        ("median (s)", f"{d['median_s']:.4f}  [min {d['min_s']:.4f}, max {d['max_s']:.4f}, n={d['repeat']}]"),
        ("edges/s", f"{d['edges_per_s']:.3e}" if d["edges_per_s"] else "-"),
        ("nodes+edges/s", f"{d['nodes_edges_per_s']:.3e}" if d["nodes_edges_per_s"] else "-"),
    ]
    if d["retweets_per_s"]:
        rows.append(("retweets/s", f"{d['retweets_per_s']:,.0f}"))
    if "membership_tests" in d:
        rows.append(("membership tests (floor)", f"{d['membership_tests']:,} (GALE's rule; not timed)"))
    rows.append(("peak RSS", f"{d['peak_rss_bytes'] / 2**20:,.0f} MiB ({d['peak_over_data']:.2f}x the data arrays)"))
    w = max(len(k) for k, _ in rows)
    lines = [f"{k:<{w}}  {v}" for k, v in rows]
    if res.phase == "backward" and "rsg" in res.dataset.lower():
        lines.append("")
        if res.n_cascades != 15_435:  # the thesis' figures are for its full RSG set (Table 7.1)
            lines.append(
                "(the thesis' RSG figures are for the full set of 15,435 graphs; run the full preset to compare)"
            )
        else:
            lines.append("backward phase on the full RSG set, beside the thesis (its hardware, not ours):")
            for label, s in THESIS_RSG.items():
                lines.append(f"  {label:<55} {s * 1e3:9.2f} ms")
            lines.append(f"  {'ours (' + res.dataset + ', ' + res.backend + ')':<55} {res.median_s * 1e3:9.2f} ms")
    return "\n".join(lines)
