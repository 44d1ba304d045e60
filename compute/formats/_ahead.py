"""Parse a stream's next chunks in a thread while the caller works on the current one.

A follows file of hundreds of millions of lines is parsed a chunk at a time (:func:`compute.formats.iter_follows`),
and an import merges a part of them (several chunks) between two reads. Parsed in the caller's thread, the parse
and the merge take turns; the parse is numba code that releases the GIL (:func:`._io.parse_int_block`) and file
reads release it too, so a thread can parse the next part's chunks while the caller merges.

What the caller sees is what the plain iterator gives, in the same order: the same chunks, the same exception at
the same place (after the chunks read before the bad line), and progress reported from the caller's thread, never
the reader's (a progress callback may write to the caller's database connection). The thread holds at most
``ahead_rows`` rows that the caller has not taken yet (and the chunk it is making); when the caller stops early
(an exception in its work, or it closes the iterator), the thread stops at its next chunk and closes the stream,
which closes the file.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["read_ahead"]

_END = object()


def read_ahead(
    make: Callable[[Callable[[int, int], None] | None], Iterator[Any]],
    ahead_rows: int,
    progress: Callable[[int, int], None] | None = None,
    *,
    rows: Callable[[Any], int] = len,
) -> Iterator[Any]:
    """Iterate over ``make(report_progress)``'s items, made in a thread up to ``ahead_rows`` rows ahead of the
    caller (``rows(item)`` counts an item's). ``progress`` is called in the caller's thread with the reader's
    latest position as each item is handed over, and once more at the end."""
    cond = threading.Condition()
    items: deque = deque()  # (item, progress at the time it was made) | (_END, exception or None)
    state = {"held": 0, "stop": False, "at": None}

    def note(done: int, total: int) -> None:
        state["at"] = (done, total)  # the caller reports it with the next item

    def produce() -> None:
        it = None
        try:
            it = make(note if progress is not None else None)
            for item in it:
                n = rows(item)
                with cond:
                    # wait while the caller holds enough; an item alone larger than the bound still goes through
                    while state["held"] and state["held"] + n > ahead_rows and not state["stop"]:
                        cond.wait()
                    if state["stop"]:
                        return
                    items.append((item, state["at"]))
                    state["held"] += n
                    cond.notify_all()
            end: tuple = (_END, None)
        except BaseException as exc:  # handed to the caller, raised there in order
            end = (_END, exc)
        finally:
            if it is not None and hasattr(it, "close"):
                it.close()
        with cond:
            items.append(end)
            cond.notify_all()

    thread = threading.Thread(target=produce, name="read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            with cond:
                while not items:
                    cond.wait()
                item, at = items.popleft()
                if item is not _END:
                    state["held"] -= rows(item)
                    cond.notify_all()
            if item is _END:
                if at is not None:
                    raise at
                if progress is not None and state["at"] is not None:
                    progress(*state["at"])
                return
            if progress is not None and at is not None:
                progress(*at)
            yield item
    finally:
        with cond:
            state["stop"] = True
            cond.notify_all()
        thread.join()
