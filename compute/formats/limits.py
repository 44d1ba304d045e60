"""The bounds every reader applies to what it accepts, in one place (the reader docs and the upload page quote them).

* :data:`MAX_RECORD_BYTES`: the longest record (a line; one CSV field) a reader keeps in memory. A longer one is a
  bad record (``file:line: record longer than N bytes``) found without reading it whole: the reader stops
  collecting at the limit and skips to the next newline. Callers pass ``max_record_bytes=`` to change it (the web
  upload: setting ``SPREADWATCH_MAX_RECORD_BYTES``). 16 MiB is several times the largest real record we know of
  (a twarc2 page of 500 tweets with its ``includes`` is 1-3 MB).
* :data:`MAX_RECORD_LINES`: the most lines one CSV row may span (quoted fields may hold newlines; a tweet of 280
  characters holds at most 280). A row past it is taken for an unclosed quote.
* Times: from :data:`TIME_MIN` (2006-03-21, the day Twitter started) up to now plus :data:`FUTURE_SKEW_S` (one
  day, for clocks that are off and naive local times read as UTC). Anything outside is a bad ``created_at``.
* Follower counts: up to :data:`FOLLOWERS_MAX` (10**9: Twitter never had that many accounts in all). Negative,
  infinite and NaN counts were already refused.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = [
    "MAX_RECORD_BYTES",
    "MAX_RECORD_LINES",
    "TIME_MIN",
    "FUTURE_SKEW_S",
    "FOLLOWERS_MAX",
    "time_max",
    "time_problems",
    "fmt_time",
]

MAX_RECORD_BYTES = 16 << 20
MAX_RECORD_LINES = 1000
#: 2006-03-21T00:00:00Z: Twitter's first tweet was sent that day.
TIME_MIN = 1142899200.0
FUTURE_SKEW_S = 86400.0
FOLLOWERS_MAX = 1e9


def time_max() -> float:
    """The latest time accepted now (epoch seconds)."""
    return time.time() + FUTURE_SKEW_S


def fmt_time(t: float) -> str:
    """Epoch seconds as ``YYYY-MM-DDTHH:MM:SSZ`` (any year NumPy can show)."""
    try:
        return str(np.datetime64(int(np.floor(t)), "s")) + "Z"
    except (OverflowError, ValueError):
        return repr(t)


def time_problems(times: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Indices of the times outside the accepted range (NaN is not checked: it means unknown) and a reason for
    each, e.g. ``"time out of range: 1990-01-01T00:00:02Z is before Twitter existed (2006-03-21)"``."""
    hi = time_max()
    bad = np.flatnonzero((times < TIME_MIN) | (times > hi))
    reasons = []
    for t in times[bad].tolist():
        why = "is before Twitter existed (2006-03-21)" if t < TIME_MIN else "is in the future"
        reasons.append(f"time out of range: {fmt_time(t)} {why}")
    return bad, reasons
