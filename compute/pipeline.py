"""One call from input files to a ranking: read → build cascades → forward → backward → combine.

The CLI's ``rank`` is a thin shell over :func:`rank`; the web application calls the same steps one by one
so it can store the intermediate results.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .algorithms.backward import BackwardResult, backward
from .algorithms.combine import Ranking, combine
from .algorithms.forward import forward
from .build import BuildReport, build_cascades
from .structures import FollowerGraph, SpreadingGraphs

__all__ = ["RankResult", "rank", "graphs_from_inputs"]


@dataclass(eq=False)
class RankResult:
    ranking: Ranking
    graphs: SpreadingGraphs
    backward: BackwardResult
    backend: str
    build: BuildReport | None = None
    read_report: object | None = None
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def graphs_from_inputs(
    paths: Sequence[str | Path],
    *,
    format: str = "auto",
    follows: str | Path | None = None,
    orphans: str = "strict",
    backend: str = "auto",
    mode: str = "strict",
    max_shown: int = 20,
    publisher: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    timings: dict[str, float] | None = None,
) -> tuple[SpreadingGraphs, BuildReport | None, object, list[str]]:
    """Read the inputs and produce spreading graphs (running the forward phase when they are not given)."""
    from .formats import read_many

    timings = {} if timings is None else timings
    notes: list[str] = []
    t0 = time.perf_counter()
    inputs = [Path(p) for p in paths]
    res = read_many(inputs, format=format, mode=mode, max_shown=max_shown, progress=progress)
    follow_res = None
    if follows is not None:
        follow_res = read_many([Path(follows)], format="auto", mode=mode, max_shown=max_shown)
    timings["read_s"] = time.perf_counter() - t0

    if res.graphs is not None:
        if res.tweets is not None and len(res.tweets):
            raise ValueError("mixing given spreading graphs (tudataset/npz) with tweet files is not supported")
        graphs = res.graphs
        if publisher is not None:
            graphs = graphs.subset(graphs.cascades.user_ids[graphs.cascades.publisher] == publisher)
        return graphs, None, res.report, notes

    if res.tweets is None or not len(res.tweets):
        raise ValueError("the input holds no tweets")
    t0 = time.perf_counter()
    cascades, build = build_cascades(res.tweets, labels=res.labels)
    if publisher is not None:
        cascades = cascades.subset(cascades.user_ids[cascades.publisher] == publisher)
        if cascades.n_cascades == 0:
            raise ValueError(f"no tweet by publisher {publisher} in the input")
    timings["build_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    graph = res.follower_graph
    edge_tables = [r.follows for r in (res, follow_res) if r is not None and r.follows is not None and len(r.follows)]
    if follow_res is not None and follow_res.follower_graph is not None:
        graph = follow_res.follower_graph
    if edge_tables:
        fr = np.concatenate([t.follower_id for t in edge_tables])
        fe = np.concatenate([t.followee_id for t in edge_tables])
        if graph is not None:
            gf, ge = graph.to_edges()
            fr, fe = np.concatenate([fr, gf]), np.concatenate([fe, ge])
        graph = FollowerGraph.from_edges(fr, fe)
    if graph is None:
        graph = FollowerGraph.from_edges([], [])
        notes.append("no follower graph in the input: every retweeter is an orphan (use --follows FILE)")
    timings["graph_s"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    graphs = forward(cascades, graph, orphans=orphans, backend=backend)
    timings["forward_s"] = time.perf_counter() - t0
    return graphs, build, res.report, notes


def rank(
    paths: Sequence[str | Path],
    *,
    format: str = "auto",
    follows: str | Path | None = None,
    aggregate: str = "total",
    publisher: int | None = None,
    bucket: str | None = None,
    by_publisher: bool = False,
    orphans: str = "strict",
    backend: str = "auto",
    mode: str = "strict",
    max_shown: int = 20,
    progress: Callable[[int, int], None] | None = None,
) -> RankResult:
    """Rank the users of the cascades in ``paths`` by combined influence."""
    from .backends import resolve_backend

    used = resolve_backend(backend)
    timings: dict[str, float] = {}
    graphs, build, report, notes = graphs_from_inputs(
        paths,
        format=format,
        follows=follows,
        orphans=orphans,
        backend=used,
        mode=mode,
        max_shown=max_shown,
        publisher=publisher,
        progress=progress,
        timings=timings,
    )
    t0 = time.perf_counter()
    bw = backward(graphs, backend=used)
    timings["backward_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ranking = combine(graphs.cascades, bw.influence, aggregate=aggregate, by_publisher=by_publisher, bucket=bucket)
    timings["combine_s"] = time.perf_counter() - t0
    if build is not None:
        notes.extend(build.lines())
    notes.extend(bw.lines())
    return RankResult(ranking, graphs, bw, used, build, report, notes, timings)
