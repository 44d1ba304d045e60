"""One progress bar over every phase of a collection: reading the files, storing them, computing the cascades,
storing the results, refreshing the aggregates. Each phase has a share of the bar (``PHASES``); the import
reports its own 0–1 fraction (reading is its first ``READ_SHARE``, storing the rest) and a compute run reports
which phase its current batch is in; this module maps both onto one 0–100 %.

The shares are the mean of each phase's share of the seconds on ``make demo``'s two large samples (Twitter16,
347K retweets, and the generated collection, 100K retweets; SQLite, CPU, a 2-core machine), rounded; the
measurement is in docs/app.md ("Progress of an upload"). A bar is only a
guide: on another machine or data set the phases take other shares, but the bar still only moves forward and
names the phase it is in.

The bar never says 100 % while the collection is active: :data:`TOP_WHILE_ACTIVE` is the most it shows until the
collection's status (including its compute run) is done.
"""

from __future__ import annotations

__all__ = [
    "COMPUTE_PHASES",
    "IMPORT_PHASES",
    "PHASES",
    "PHASES_NAMES",
    "READ_SHARE",
    "TOP_WHILE_ACTIVE",
    "compute_percent",
    "import_percent",
    "phase_percent",
    "progress_key",
    "run_progress_key",
]


# the cache keys the progress is published under (by the import and the compute batches, monitor.services) and
# read from (monitor.selectors.collections): here, so that neither layer imports the other for them


def progress_key(collection_id: int) -> str:
    """The cache key of a collection's import progress."""
    from django.db import connection

    return f"spreadwatch:{connection.settings_dict['NAME']}:collection-progress:{collection_id}"


def run_progress_key(run_id: int) -> str:
    """The cache key of the phase a run's current batch is in (the collection page's bar reads it)."""
    from django.db import connection

    return f"spreadwatch:{connection.settings_dict['NAME']}:run-progress:{run_id}"


# share of the bar per phase, in order (they add up to 100)
PHASES: tuple[tuple[str, float], ...] = (
    ("reading", 18.0),
    ("storing", 35.0),
    ("computing", 22.0),
    ("storing results", 11.0),
    ("aggregates", 14.0),
)
IMPORT_PHASES = ("reading", "storing")
COMPUTE_PHASES = ("computing", "storing results", "aggregates")

# the import's own fraction: reading the files is its first 85 % (by bytes), the merge into the workspace the rest
READ_SHARE = 0.85

TOP_WHILE_ACTIVE = 99.0

_SHARE = dict(PHASES)
_NAMES = [name for name, _ in PHASES]
PHASES_NAMES: tuple[str, ...] = tuple(_NAMES)


def _clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return max(lo, min(hi, float(x)))


def phase_percent(phase: str, frac: float = 0.0, *, phases: tuple[str, ...] = tuple(_NAMES)) -> float:
    """Where ``frac`` (0–1) of the way through ``phase`` is on the bar made of ``phases`` (their shares scaled to
    100 %), capped at :data:`TOP_WHILE_ACTIVE`: only a collection that is done shows 100 %."""
    if phase not in phases:
        raise ValueError(f"unknown progress phase {phase!r}: one of {', '.join(phases)}")
    total = sum(_SHARE[p] for p in phases)
    before = sum(_SHARE[p] for p in phases[: phases.index(phase)])
    pct = 100.0 * (before + _SHARE[phase] * _clamp(frac)) / total
    return round(min(pct, TOP_WHILE_ACTIVE), 1)


def import_percent(ingest_frac: float, *, computes: bool = True) -> tuple[str, float]:
    """The phase and the bar's percent for the import's own fraction ``ingest_frac`` (0–1). ``computes``: whether
    a compute follows the import (when not, the import's two phases fill the bar)."""
    phases = tuple(_NAMES) if computes else IMPORT_PHASES
    f = _clamp(ingest_frac)
    if f < READ_SHARE:
        return "reading", phase_percent("reading", f / READ_SHARE, phases=phases)
    return "storing", phase_percent("storing", (f - READ_SHARE) / (1.0 - READ_SHARE), phases=phases)


def compute_percent(batches_done: int, n_batches: int, phase: str = "computing") -> tuple[str, float]:
    """The phase and the bar's percent of a compute run with ``batches_done`` of ``n_batches`` stored and its
    next batch in ``phase``. Each batch goes through the three compute phases in turn, so the compute's part of
    the bar is split into ``n_batches`` equal steps, each split by the phases' shares."""
    if phase not in COMPUTE_PHASES:
        raise ValueError(f"unknown compute phase {phase!r}: one of {', '.join(COMPUTE_PHASES)}")
    if n_batches <= 0:
        return "aggregates", phase_percent("aggregates", 1.0)
    done = min(max(batches_done, 0), n_batches)
    if done >= n_batches:
        return "aggregates", phase_percent("aggregates", 1.0)
    start = phase_percent("computing", 0.0)
    width = 100.0 - start
    region = sum(_SHARE[p] for p in COMPUTE_PHASES)
    within = sum(_SHARE[p] for p in COMPUTE_PHASES[: COMPUTE_PHASES.index(phase)]) / region
    pct = start + width * (done + within) / n_batches
    return phase, round(min(pct, TOP_WHILE_ACTIVE), 1)
