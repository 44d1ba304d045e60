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

:func:`generate` writes a preset to disk; ``twitter`` also as ``fmt="v1"``, the folder an analyst would upload
(v1.1 JSONL plus the follows among co-participants, :mod:`.export`), and sized by ``retweets=N``
(:func:`scale_for_retweets`).

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
from .export import coparticipant_edges, write_v1_folder
from .rsg import RSG_BATCHES, generate_n_dags, rsg
from .seibert import SEIBERT_BATCHES, seibert
from .stats import BIGGER4_TARGETS, RSG_TARGETS, SEIBERT_TARGETS, collection_stats, graph_stats
from .twitter import _SIZE_CAP, follower_graph, twitter_collection

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
    "write_v1_folder",
    "coparticipant_edges",
    "scale_for_retweets",
    "FORMATS",
    "RSG_BATCHES",
    "SEIBERT_BATCHES",
    "RSG_TARGETS",
    "SEIBERT_TARGETS",
    "BIGGER4_TARGETS",
]

PRESETS = ("rsg", "seibert", "twitter")
#: what :func:`generate` can write: ``npz`` (every preset), ``csv`` and ``v1`` (``twitter`` only)
FORMATS = ("npz", "csv", "v1")


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
    """Write ``tweets.csv`` and ``follows.csv`` (the headers of docs/formats.md) into ``folder``.

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


def scale_for_retweets(retweets: int) -> float:
    """The smallest ``twitter`` scale whose collection is planned to have ``retweets`` retweets (or just more).

    The generator plans ``min(round(3,683,332 * scale), cascades * cap)`` retweets with ``cap = max(20, U / 50)``
    per cascade: linear in the scale from ~5,000 retweets up, but below that the cap binds (``scale =
    N / 3,683,332`` gives 1,836 retweets for 2,000 and 540 for 1,000), so the plan is inverted by bisection.
    Measured at seeds 0-2: 100 to 100,000 (and 1,000,000 at seed 0) come out exact except where the cap steps
    over the target (2,000 gives 2,016); below ~50 the one-cascade minimum gives ~15. A cascade that runs out
    of draws can end smaller than planned (seen only at those tiny scales), so the count is approximate.
    """
    if not retweets >= 1:
        raise ValueError(f"retweets must be a positive number, not {retweets}")
    s = retweets / BIGGER4_TARGETS["retweets"]
    if _planned_retweets(s) >= retweets:
        return s
    lo, hi = s, 2 * s
    while _planned_retweets(hi) < retweets:
        lo, hi = hi, 2 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _planned_retweets(mid) < retweets else (lo, mid)
    return hi


def _planned_retweets(scale: float) -> int:
    """Retweets :func:`twitter_collection` plans at ``scale`` (mirrors its sizing; the tests check the two
    agree)."""
    n = max(round(BIGGER4_TARGETS["users"] * scale), 2)
    n_casc = round(BIGGER4_TARGETS["cascades"] * scale)
    if n_casc < 1:
        return 0
    cap = int(min(_SIZE_CAP, max(20, n // 50)))
    total = min(max(round(BIGGER4_TARGETS["retweets"] * scale), n_casc), n_casc * cap)
    return int(min(total, n_casc * (n - 1)))


def generate(
    preset: str,
    out_path: str | os.PathLike,
    *,
    scale: float = 1.0,
    seed: int = 0,
    fmt: str = "npz",
    retweets: int | None = None,
    progress: ProgressFn | bool | None = None,
) -> dict:
    """Generate a preset and write it; return its statistics plus ``preset``, ``scale``, ``seed``, ``format``,
    ``path``, ``generate_seconds`` and ``write_seconds``.

    ``rsg``/``seibert`` write the spreading-graph archive (``fmt="npz"`` only). ``twitter`` writes the collection
    archive (``fmt="npz"``) or, with ``fmt="csv"``, a folder with ``tweets.csv`` and ``follows.csv`` (small
    scales only, see :func:`write_collection_csv`), or with ``fmt="v1"`` a folder with ``tweets.jsonl`` (API
    v1.1 statuses) and ``follows.csv`` holding only the follows among co-participants (see
    :func:`write_v1_folder`; its counts, bytes and seconds join the statistics). ``retweets`` (``twitter``
    only) replaces ``scale`` by :func:`scale_for_retweets`. The npz is written to ``<path>.tmp`` and renamed,
    so a crash never leaves a truncated archive under the real name.
    """
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, not {fmt!r}")
    if fmt != "npz" and preset != "twitter":
        raise ValueError(f"preset {preset!r} writes spreading graphs, which only have the npz format")
    if retweets is not None:
        if preset != "twitter":
            raise ValueError(f"retweets= is for preset 'twitter', not {preset!r}")
        scale = scale_for_retweets(retweets)
    report = make_progress(progress)
    out_path = Path(out_path)
    t = time.perf_counter()
    if preset == "twitter":
        tweets, graph = twitter_collection(scale=scale, seed=seed, progress=report)
        gen_s = time.perf_counter() - t
        report("write", 0.0)
        extra: dict = {}
        if fmt == "csv":
            write_collection_csv(out_path, tweets, graph)
        elif fmt == "v1":
            extra = write_v1_folder(out_path, tweets, graph, progress=report)
        else:
            _atomic(out_path, lambda p: save_collection(p, tweets, graph))
        stats = {**collection_stats(tweets, graph), **extra}
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
        **({"retweets_target": retweets} if retweets is not None else {}),
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
