"""Seeded synthetic datasets: the thesis' RSG and Seibert-like spreading graphs, and a CRGP-sized Twitter.

* ``rsg``: the thesis' Algorithm 10 random DAGs, batches calibrated to Table 7.1 (15,435 graphs, 2.9M nodes,
  ~450M edges at scale 1);
* ``seibert``: small real-looking spreading DAGs like the thesis' Seibert set (3,140 graphs, ~48K nodes);
* ``twitter``: a follower graph plus retweet cascades spread over it, sized like CRGP's ``bigger4`` (3.18M
  users, 341.7M follows, 99,561 cascades, 3.68M retweets).

Same ``seed`` and ``scale`` give byte-identical arrays on any machine (NumPy ``PCG64`` streams named by what
they generate; see ``_common.stream``), with or without numba. ``scale`` multiplies the number of cascades
(and, for ``twitter``, users, follow edges and retweets):

* ``rsg``/``seibert``: each size class keeps ``round(count * scale)`` graphs, spread over the class's
  batches by largest remainder, so the n and m distributions *within* a class are unchanged and a scale-0.1
  RSG still has 17 Large graphs. The extreme tail shrinks with the scale, though: RSG's single ~29.5K-node,
  ~40M-edge graph is its own batch and only appears at scale >= 0.5, so max n / max m / M per graph drop at
  small scales (scale 0.1: max n ~10K, M ~ 33M instead of 45M). Graph ``j`` of batch ``b`` is the same
  graph at every scale that includes it.
* ``twitter``: users and follows scale together (mean degree ~107.5 stays), the degree distributions keep
  their shape (the most-followed account has ~5% of all users as followers), cascades keep a mean of ~37
  retweets but their cap is ``min(60000, U / 50)``, so small scales have no giant cascade.

See ``docs/generators.md`` for the models, the calibration and measured statistics.
"""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

from ..collection import save_collection
from ..structures import FollowerGraph, SpreadingGraphs, save_archive
from ..tables import TweetTable
from ._common import ProgressFn, make_progress
from .rsg import RSG_BATCHES, generate_n_dags, rsg
from .seibert import SEIBERT_BATCHES, seibert
from .stats import BIGGER4_TARGETS, RSG_TARGETS, SEIBERT_TARGETS, collection_stats, graph_stats
from .twitter import follower_graph, twitter_collection

__all__ = [
    "PRESETS",
    "random_spreading_graphs",
    "twitter_collection",
    "generate",
    "graph_stats",
    "collection_stats",
    "generate_n_dags",
    "follower_graph",
    "write_collection_csv",
    "RSG_BATCHES",
    "SEIBERT_BATCHES",
    "RSG_TARGETS",
    "SEIBERT_TARGETS",
    "BIGGER4_TARGETS",
]

PRESETS = ("rsg", "seibert", "twitter")


def random_spreading_graphs(
    preset: str = "rsg", *, scale: float = 1.0, seed: int = 0, progress: ProgressFn | bool | None = None
) -> SpreadingGraphs:
    """Spreading graphs of the ``rsg`` or ``seibert`` preset.

    ``progress``: ``None`` (silent), ``True`` (tqdm bars) or a callable ``progress(stage, fraction)``.
    The full ``rsg`` preset (450M edges) takes ~25 s and ~4.6 GB at its peak.
    """
    if preset == "rsg":
        return rsg(scale=scale, seed=seed, progress=progress)
    if preset == "seibert":
        return seibert(scale=scale, seed=seed, progress=progress)
    if preset == "twitter":
        raise ValueError("preset 'twitter' is a tweet collection, not spreading graphs: use twitter_collection()")
    raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")


def write_collection_csv(folder: str | os.PathLike, tweets: TweetTable, graph: FollowerGraph) -> None:
    """Write ``tweets.csv`` and ``follows.csv`` (DESIGN §2 headers) into ``folder``.

    Meant for small scales (up to ~0.01): text is ~20 bytes per follow edge and written from Python, so a
    full ``bigger4`` (341.7M follows) would be a ~7 GB file that takes many minutes; use the npz archive there.
    ``created_at`` is written as integer epoch seconds and originals leave ``retweeted_tweet_id`` empty.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    step = 1 << 16
    with open(folder / "tweets.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["tweet_id", "retweeted_tweet_id", "user_id", "created_at", "followers_count"])
        for a in range(0, len(tweets), step):
            rt = tweets.retweeted_tweet_id[a : a + step].tolist()
            w.writerows(
                zip(
                    tweets.tweet_id[a : a + step].tolist(),
                    ["" if r < 0 else r for r in rt],
                    tweets.user_id[a : a + step].tolist(),
                    [_int_or_float(x) for x in tweets.created_at[a : a + step].tolist()],
                    [_int_or_float(x) for x in tweets.followers_count[a : a + step].tolist()],
                )
            )
    follower_ids, followee_ids = graph.to_edges()
    with open(folder / "follows.csv", "w", newline="") as fh:
        fh.write("follower_id,followee_id\n")
        for a in range(0, len(follower_ids), step):
            fh.write(
                "".join(
                    f"{x},{y}\n"
                    for x, y in zip(follower_ids[a : a + step].tolist(), followee_ids[a : a + step].tolist())
                )
            )


def _int_or_float(x: float) -> int | float | str:
    if x != x:  # NaN: unknown
        return ""
    return int(x) if float(x).is_integer() else x


def generate(
    preset: str,
    out_path: str | os.PathLike,
    *,
    scale: float = 1.0,
    seed: int = 0,
    fmt: str = "npz",
    progress: ProgressFn | bool | None = None,
) -> dict:
    """Generate a preset and write it; return its statistics plus ``preset``, ``scale``, ``seed``, ``format``,
    ``path``, ``generate_seconds`` and ``write_seconds``.

    ``rsg``/``seibert`` write the spreading-graph archive (``fmt="npz"`` only). ``twitter`` writes the collection
    archive (``fmt="npz"``) or, with ``fmt="csv"``, a folder with ``tweets.csv`` and ``follows.csv`` (small
    scales only, see :func:`write_collection_csv`). The npz is written to ``<path>.tmp`` and renamed, so a
    crash never leaves a truncated archive under the real name.
    """
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    if fmt not in ("npz", "csv"):
        raise ValueError(f"fmt must be 'npz' or 'csv', not {fmt!r}")
    if fmt == "csv" and preset != "twitter":
        raise ValueError(f"preset {preset!r} writes spreading graphs, which only have the npz format")
    report = make_progress(progress)
    out_path = Path(out_path)
    t = time.perf_counter()
    if preset == "twitter":
        tweets, graph = twitter_collection(scale=scale, seed=seed, progress=report)
        gen_s = time.perf_counter() - t
        report("write", 0.0)
        if fmt == "csv":
            write_collection_csv(out_path, tweets, graph)
        else:
            _atomic(out_path, lambda p: save_collection(p, tweets, graph))
        stats = collection_stats(tweets, graph)
    else:
        graphs = random_spreading_graphs(preset, scale=scale, seed=seed, progress=report)
        gen_s = time.perf_counter() - t
        report("write", 0.0)
        _atomic(out_path, lambda p: save_archive(graphs, p))
        stats = graph_stats(graphs)
    report("write", 1.0)
    write_s = time.perf_counter() - t - gen_s
    meta = {
        "preset": preset,
        "scale": scale,
        "seed": seed,
        "format": fmt,
        "path": str(out_path),
        "generate_seconds": round(gen_s, 3),
        "write_seconds": round(write_s, 3),
    }
    return {**meta, **stats}


def _atomic(path: Path, write) -> None:
    tmp = path.with_name(path.name + ".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
