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
    graph = _follower_graph(res, follow_res, notes)
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


def read_collection(
    paths: Sequence[str | Path], *, format: str = "auto", follows: str | Path | None = None, mode: str = "strict"
) -> tuple[object, FollowerGraph, list[str]]:
    """The tweet rows and the follower graph of the inputs (a collection's graph and every follows table,
    merged), without building cascades: what a replay as a stream needs."""
    from .formats import read_many

    notes: list[str] = []
    res = read_many([Path(p) for p in paths], format=format, mode=mode)
    if res.graphs is not None or res.tweets is None or not len(res.tweets):
        raise ValueError("a stream replays tweet rows: the input holds none (spreading graphs have no retweet rows)")
    extra = read_many([Path(follows)], format="auto", mode=mode) if follows is not None else None
    return res.tweets, _follower_graph(res, extra, notes), notes


def _follower_graph(res, follow_res, notes: list[str]) -> FollowerGraph:
    """The follower graph of an input and its ``--follows`` file: the follows file's graph (else the input's),
    with every follows table of both merged in; an empty graph, with a note, when there is none."""
    graph = res.follower_graph
    if follow_res is not None and follow_res.follower_graph is not None:
        graph = follow_res.follower_graph
    tables = [r.follows for r in (res, follow_res) if r is not None and r.follows is not None and len(r.follows)]
    if tables:
        fr = np.concatenate([t.follower_id for t in tables])
        fe = np.concatenate([t.followee_id for t in tables])
        if graph is not None:
            gf, ge = graph.to_edges()
            fr, fe = np.concatenate([fr, gf]), np.concatenate([fe, ge])
        graph = FollowerGraph.from_edges(fr, fe)
    if graph is None:
        graph = FollowerGraph.from_edges([], [])
        notes.append("no follower graph in the input: every retweeter is an orphan (use --follows FILE)")
    return graph


def stream_replay(
    paths: Sequence[str | Path],
    *,
    format: str = "auto",
    follows: str | Path | None = None,
    batch: int = 10_000,
    lateness: float = 0.0,
    seed: int = 0,
    hold_seconds: float = 3600.0,
    orphans: str = "strict",
    backend: str = "auto",
    top: int = 10,
    check: bool = True,
) -> dict:
    """Replay the inputs as a stream (``python -m compute stream``): rows delayed by up to ``lateness`` seconds,
    cut into micro-batches of ``batch`` rows, pushed through :func:`compute.algorithms.stream.stream`. Returns
    ``{"batches": [...], "summary": {...}, "check": {...} or None, "ranking": [...], "notes": [...]}``; the
    check compares the final edges (as sets per cascade) and influence with the batch forward and backward
    phases on the same rows."""
    from .algorithms.stream import stream
    from .backends import resolve_backend
    from .streaming import StreamBatch, cut, replay_order

    if lateness < 0:
        raise ValueError(f"lateness must be >= 0 seconds, not {lateness}")
    used = resolve_backend(backend)
    tweets, graph, notes = read_collection(paths, format=format, follows=follows)
    engine = stream(graph, orphans=orphans, hold_seconds=hold_seconds, backend=used)
    order = replay_order(tweets.created_at, lateness, seed)
    bounds = cut(len(order), batch)
    rows = []
    for i in range(len(bounds) - 1):
        up = engine.push(StreamBatch.from_tweets(tweets, order[bounds[i] : bounds[i + 1]]))
        rows.append({"batch": i + 1, **up.summary(), "retweets_per_s": up.n_retweets / max(up.seconds, 1e-12)})
    end = engine.flush()
    if len(end.expired_tweet):
        rows.append({"batch": "end", **end.summary(), "retweets_per_s": 0.0})
    graphs = engine.graphs()
    bw = backward(graphs, backend=used)
    totals = engine.totals
    push_s = sum(r["seconds"] for r in rows)
    n_rt = sum(r["retweets"] for r in rows)
    summary = {
        "batch": batch, "lateness_s": lateness, "seed": seed, "backend": used, "micro_batches": len(bounds) - 1,
        "retweets": n_rt, "push_seconds": push_s, "retweets_per_s": n_rt / max(push_s, 1e-12),
        "cascades": graphs.n_cascades, "participants": graphs.n_nodes, "edges": graphs.n_edges,
        "recomputed": int(totals.get("recomputed", 0)), "duplicates": int(totals.get("duplicates", 0)),
        "self_retweets": int(totals.get("self_retweets", 0)), "expired": int(totals.get("expired", 0)),
        "held_at_end": engine.n_held,
        # the first micro-batch also compiles the kernels (numba / NVRTC, cached on disk afterwards)
        "retweets_per_s_after_first": sum(r["retweets"] for r in rows[1:]) / max(sum(r["seconds"] for r in rows[1:]),
                                                                                  1e-12),
    }  # fmt: skip
    result_check = None
    if check:
        cascades, _ = build_cascades(tweets)
        ref = forward(cascades, graph, orphans=orphans, backend=used)
        same = (
            np.array_equal(ref.cascades.tweet_ids, graphs.cascades.tweet_ids)
            and np.array_equal(ref.cascades.user_ids, graphs.cascades.user_ids)
            and np.array_equal(ref.edge_offsets, graphs.edge_offsets)
        )
        if same:
            ka = np.sort(ref.edge_src.astype(np.int64) << 32 | ref.edge_dst.astype(np.int64))
            kb = np.sort(graphs.edge_src.astype(np.int64) << 32 | graphs.edge_dst.astype(np.int64))
            same = bool(np.array_equal(ka, kb))
        diff = float("inf")
        if len(ref.cascades.user_ids) == len(graphs.cascades.user_ids):
            want = backward(ref, backend=used).influence
            scale = np.maximum(np.abs(want), 1e-300)
            diff = float(np.max(np.abs(bw.influence - want) / scale)) if len(want) else 0.0
        result_check = {"edges_equal": same, "stream_edges": graphs.n_edges, "batch_edges": ref.n_edges,
                        "influence_max_rel_diff": diff, "influence_equal": diff <= 1e-9}  # fmt: skip
    ranking = combine(graphs.cascades, bw.influence).top(top).rows() if top > 0 else []
    return {"batches": rows, "summary": summary, "check": result_check, "ranking": ranking, "notes": notes}
