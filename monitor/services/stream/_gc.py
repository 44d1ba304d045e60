"""Python's cyclic garbage collector paused for one unit of stream work: a consumer's micro-batch, an intake's
request body.

Such a unit makes some 10^4-10^5 container objects (decoded records, rows, per-event tuples) that live until it
ends and are then freed by reference counting. With the collector on, its young-generation passes during the
unit scan them, promote them to the old generation, and every few units those promotions set off a full
collection of the process's whole heap: one took 0.16 s of a 1.5 s micro-batch in the consumer, and 0.14 s of the
0.43 s the intake's check of 10,000 statuses took in a Django process (0.23-0.28 s with the collector paused;
``benchmarks/stream_web.md``). Garbage that only the collector can free (reference cycles) made during the unit
waits for its next pass after it."""

from __future__ import annotations

import contextlib
import gc

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused():
    """The collector off inside the block (left as it is if already off: the blocks nest)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
