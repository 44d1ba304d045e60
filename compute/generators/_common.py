"""Helpers shared by the generators: seeded streams, scaled batch counts, id pools, progress reporting.

Reproducibility rule: every random number comes from ``numpy.random.Generator(PCG64(SeedSequence(...)))`` with
an entropy tuple that names *what* is being generated (preset, batch, graph index, chunk index, ...), never from
a stream shared across unrelated work. So the same seed and scale give byte-identical arrays whatever the thread
scheduling, and graph ``j`` of batch ``b`` is the same graph at every scale that contains it.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence

import numpy as np

__all__ = [
    "TWITTER_EPOCH_MS",
    "ProgressFn",
    "make_progress",
    "stream",
    "scaled_counts",
    "next_prime",
    "snowflake_ids",
    "random_user_ids",
]

#: Twitter's snowflake epoch (ms since the Unix epoch): ``(id >> 22) + TWITTER_EPOCH_MS`` is the creation time.
TWITTER_EPOCH_MS = 1288834974657

#: ``progress(stage, fraction)``; ``fraction`` runs from 0.0 to 1.0 within a stage.
ProgressFn = Callable[[str, float], None]

# Each preset gets its own entropy word so rsg and seibert with the same seed share no stream.
_PRESET_WORD = {"rsg": 1, "seibert": 2, "twitter": 3, "dags": 4}


def stream(seed: int, preset: str, *words: int) -> np.random.Generator:
    """A generator determined by ``(seed, preset, *words)`` alone."""
    if seed < 0:
        raise ValueError(f"seed must be a non-negative integer, not {seed}")
    entropy = [int(seed), _PRESET_WORD[preset], *(int(w) for w in words)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


def make_progress(progress: ProgressFn | bool | None) -> ProgressFn:
    """Normalise the ``progress`` argument of the public functions.

    ``None``/``False``: silent. ``True``: one tqdm bar per stage on stderr (plain lines without tqdm). A callable
    is called as ``progress(stage, fraction)``.
    """
    if progress is None or progress is False:
        return lambda stage, fraction: None
    if callable(progress):
        return progress
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional: fall back to a line per stage
        last: list[str] = []

        def plain(stage: str, fraction: float) -> None:
            if not last or last[-1] != stage:
                last.append(stage)
                print(f"[generate] {stage}", file=sys.stderr, flush=True)

        return plain

    bars: dict[str, object] = {}

    def bar(stage: str, fraction: float) -> None:
        b = bars.get(stage)
        if b is None:
            for other in bars.values():
                other.close()  # type: ignore[attr-defined]
            bars.clear()
            b = bars[stage] = tqdm(total=100, desc=stage, leave=True, unit="%")
        n = round(100 * min(max(fraction, 0.0), 1.0))
        b.update(n - b.n)  # type: ignore[attr-defined]
        if n >= 100:
            b.close()  # type: ignore[attr-defined]

    return bar


def scaled_counts(counts: Sequence[int], classes: Sequence[str], scale: float) -> list[int]:
    """Scale per-batch counts, rounding per *class* so each class keeps its share at every scale.

    A class's total becomes ``round(total * scale)``; it is split over the class's batches by largest
    remainder (ties to the earlier batch). At scale 1 the counts come back unchanged. This keeps e.g. 17 of
    RSG's 170 Large graphs at scale 0.1 even though no single Large batch would round to a useful count.
    """
    if not scale > 0 or not math.isfinite(scale):
        raise ValueError(f"scale must be a positive finite number, not {scale}")
    out = [0] * len(counts)
    for cls in dict.fromkeys(classes):
        idx = [i for i, c in enumerate(classes) if c == cls]
        exact = [counts[i] * scale for i in idx]
        total = round(sum(counts[i] for i in idx) * scale)
        base = [math.floor(x) for x in exact]
        left = total - sum(base)
        order = sorted(range(len(idx)), key=lambda k: (-(exact[k] - base[k]), k))
        for k in order[: max(left, 0)]:
            base[k] += 1
        for k, i in enumerate(idx):
            out[i] = base[k]
    return out


def next_prime(x: int) -> int:
    """Smallest prime >= x (trial division; only used for pools of tens of thousands)."""
    n = max(int(x), 2)
    while True:
        if n < 4 or (n % 2 and all(n % d for d in range(3, math.isqrt(n) + 1, 2))):
            return n
        n += 1


def snowflake_ids(ms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Distinct Twitter-style ids for creation times ``ms`` (int64 epoch milliseconds).

    The id's top bits decode to ``ms`` exactly; the low 22 bits hold a per-millisecond sequence number from a
    random start, so equal milliseconds still get distinct ids. ids increase with ``ms``.
    """
    ms = np.asarray(ms, dtype=np.int64)
    order = np.argsort(ms, kind="stable")
    sm = ms[order]
    n = len(sm)
    # rank of each row within its run of equal milliseconds
    starts = np.ones(n, dtype=bool)
    starts[1:] = sm[1:] != sm[:-1]
    run_start = np.maximum.accumulate(np.where(starts, np.arange(n), 0)) if n else np.zeros(0, np.int64)
    seq = np.arange(n, dtype=np.int64) - run_start
    # a random low start per row looks like Twitter's worker/sequence bits; 2**21 leaves room for long runs
    low = rng.integers(0, 1 << 21, n, dtype=np.int64)[run_start]
    ids_sorted = ((sm - TWITTER_EPOCH_MS) << 22) + low + seq
    if n and np.any(seq >= (1 << 21)):
        raise ValueError("more than 2**21 tweets in one millisecond: snowflake ids would collide")
    out = np.empty(n, dtype=np.int64)
    out[order] = ids_sorted
    return out


def random_user_ids(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` distinct, strictly increasing Twitter-like user ids.

    The first 70% look like pre-2016 sequential ids (below 2**32), the rest like snowflake-era ids (~10**18).
    """
    n_old = round(0.7 * n)
    n_new = n - n_old
    old = 12 + np.cumsum(rng.integers(1, max(2, 2 * (4_200_000_000 // max(n_old, 1))), n_old, dtype=np.int64))
    new = 700_000_000_000_000_000 + np.cumsum(
        rng.integers(1, max(2, 2 * (600_000_000_000_000_000 // max(n_new, 1))), n_new, dtype=np.int64)
    )
    return np.concatenate([old, new])
