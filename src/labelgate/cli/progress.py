"""A progress bar on stderr for the long reads (a scan, checkpoints)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["ProgressBar"]


class ProgressBar:
    """A rich progress bar on stderr, shown only once a read has taken more than half a second:
    of the rows scanned (called as a function) and, before them, of the bytes of a large input
    parsed (``reading``: a 100 MB COCO file spends most of its time there)."""

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, what: str = "scanning labels"
    ) -> None:
        self._clock = clock
        self._what = what
        self._start = clock()
        self._bar: object | None = None
        self._task: object | None = None
        self._update: Callable[..., None] | None = None

    def __call__(self, done: int, total: int | None) -> None:
        """The rows scanned so far, of ``total`` (``None``: not known)."""
        self._show(self._what, done, total)

    def reading(self, done: int, total: int | None) -> None:
        """The bytes of the input parsed so far, of ``total``."""
        self._show("reading the input (bytes)", done, total)

    def _show(self, what: str, done: int, total: int | None) -> None:
        if self._update is None:
            if self._clock() - self._start < 0.5:
                return
            from rich.console import Console
            from rich.progress import Progress

            bar = Progress(console=Console(stderr=True), transient=True)
            bar.start()
            task = bar.add_task(what, total=total)
            self._bar, self._task = bar, task
            self._update = lambda n, t, w: bar.update(task, completed=n, total=t, description=w)
        self._update(done, total, what)

    def close(self) -> None:
        if self._bar is not None:
            from rich.progress import Progress

            assert isinstance(self._bar, Progress)
            self._bar.stop()
