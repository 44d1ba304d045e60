"""The progress line of ``python -m compute``'s analyses (:class:`Progress`), on stderr."""

from __future__ import annotations

import sys
import threading

__all__ = ["COMPUTING_INFLUENCE", "PROGRESS_AFTER_S", "Progress"]

#: an analysis shows its progress on stderr once it has run this long (seconds): shorter runs print nothing extra
PROGRESS_AFTER_S = 1.0

COMPUTING_INFLUENCE = "rebuilding the cascades and computing influence"


class Progress:
    """An analysis' progress on stderr: one tqdm line naming the stage that runs, with the units done where the
    stage counts them (betweenness: its sources) and the time elapsed. It appears only once the command has run
    PROGRESS_AFTER_S seconds, only on a terminal (tqdm's ``disable=None``) and never with ``--quiet``; a ticker
    thread redraws it twice a second, so the elapsed time moves while a single long kernel runs (a run that
    printed nothing for two minutes looked hung)."""

    def __init__(self, command: str, *, quiet: bool) -> None:
        self.command = command
        self._stage, self._done, self._total, self._unit = "reading the input", 0, 0, ""
        self._bar = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if quiet:
            return
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm is a dependency; a broken install loses the progress line, not the result
            return
        self._bar = tqdm(
            desc=self._text(),
            bar_format="{desc} [{elapsed}]",
            file=sys.stderr,
            disable=None,
            delay=PROGRESS_AFTER_S,
            miniters=0,  # every update(0) redraws once the delay has passed: a stage change, an advance (at
            mininterval=0,  # most ~100 of them) or the ticker's, so no stage goes unnamed
            leave=True,
        )

    def __enter__(self) -> Progress:
        if self._bar is not None and not self._bar.disable:
            self._ticker = threading.Thread(target=self._tick, name="cli-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._bar is not None:
            if exc_type is None:
                self.stage("done")
            self._bar.close()

    def stage(self, name: str, *, total: int = 0, unit: str = "") -> None:
        """The stage now running; ``total`` units of it (shown as done / total) when it counts them."""
        self._stage, self._done, self._total, self._unit = name, 0, total, unit
        self._draw()

    def advance(self, n: int) -> None:
        self._done += n
        self._draw()

    def bytes_read(self, done: int, total: int) -> None:
        """The readers' progress callback (bytes of the inputs read); once all is read, the cascades are rebuilt
        and computed (``rank``: the forward and backward phases, which report nothing finer)."""
        if done >= total:
            if self._stage != COMPUTING_INFLUENCE:
                self.stage(COMPUTING_INFLUENCE)
            return
        if self._unit != "MiB":
            self.stage("reading the input", total=total, unit="MiB")
        self._done = done
        self._draw()

    def _text(self) -> str:
        text = f"{self.command}: {self._stage}"
        if self._total:
            done, total = (
                (self._done / 2**20, self._total / 2**20) if self._unit == "MiB" else (self._done, self._total)
            )
            text += f" {done:,.0f}/{total:,.0f} {self._unit} ({100 * self._done / self._total:.0f}%)"
        return text

    def _draw(self) -> None:
        if self._bar is None:
            return
        with self._lock:
            self._bar.set_description_str(self._text(), refresh=False)
            self._bar.update(0)  # draws only once PROGRESS_AFTER_S has passed (tqdm's delay)

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            with self._lock:
                self._bar.update(0)
