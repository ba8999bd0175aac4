"""One function over many items on worker processes or a Dask cluster, its results in the items'
order with a bounded number in flight: how the COCO blocks and the image probes are spread."""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar

__all__ = ["Results", "in_order"]

T = TypeVar("T")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Results(Protocol[R_co]):
    """Results as they come, in order; ``close`` stops what is still running."""

    def __iter__(self) -> Iterator[R_co]: ...

    def __next__(self) -> R_co: ...

    def close(self) -> None: ...


def in_order(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    *,
    cluster: Callable[..., Any] | None = None,
    window: int = 64,
    ahead: int | None = None,
) -> Results[R]:
    """``fn`` of each item, in order: through ``cluster`` (a Dask map, ``window`` items at a
    time), inline when ``workers`` is below 2, else on ``workers`` processes (fork on Linux, as
    the mask decoders: no importable ``__main__`` needed; spawn elsewhere) with at most ``ahead``
    items (default ``workers + 1``) submitted and not yet taken.

    The processes start, and the first items are submitted, before this returns: the caller
    may do other work while they run (a forked process has the caller's memory as it is now).
    """
    if cluster is not None:
        return _clustered(fn, items, cluster, window)
    if workers < 2:
        return _inline(fn, items)
    return _Pooled(fn, items, workers, workers + 1 if ahead is None else ahead)


def _clustered(
    fn: Callable[[T], R], items: Sequence[T], cluster: Callable[..., Any], window: int
) -> Generator[R, None, None]:
    for i in range(0, len(items), window):
        yield from cluster(fn, list(items[i : i + window]))


def _inline(fn: Callable[[T], R], items: Sequence[T]) -> Generator[R, None, None]:
    for item in items:
        yield fn(item)


class _Pooled(Generic[T, R]):
    """``in_order`` on a process pool, started at once."""

    def __init__(self, fn: Callable[[T], R], items: Sequence[T], workers: int, limit: int):
        import multiprocessing
        from concurrent.futures import Future, ProcessPoolExecutor

        method = "fork" if sys.platform.startswith("linux") else "spawn"
        context = multiprocessing.get_context(method)
        self._fn = fn
        self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(workers, mp_context=context)
        self._pending: deque[Future[R]] = deque()
        self._todo = iter(items)
        try:
            for item in self._todo:
                self._pending.append(self._pool.submit(fn, item))
                if len(self._pending) >= limit:
                    break
        except BaseException:
            self.close()
            raise

    def __iter__(self) -> Iterator[R]:
        return self

    def __next__(self) -> R:
        if not self._pending or self._pool is None:
            self.close()
            raise StopIteration
        try:
            done = self._pending.popleft().result()
            nxt = next(self._todo, None)
            if nxt is not None:
                self._pending.append(self._pool.submit(self._fn, nxt))
        except BaseException:
            self.close()
            raise
        return done

    def close(self) -> None:
        """Cancel what has not started, wait for what has, and end the processes."""
        pool, self._pool = self._pool, None
        self._pending.clear()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def __del__(self) -> None:
        self.close()
