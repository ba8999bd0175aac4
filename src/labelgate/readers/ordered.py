"""One function over many items on worker processes or a Dask cluster, its results in the items'
order with a bounded number in flight: how the COCO blocks and the image probes are spread."""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

__all__ = ["in_order"]

T = TypeVar("T")
R = TypeVar("R")


def in_order(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int,
    *,
    cluster: Callable[..., Any] | None = None,
    window: int = 64,
    ahead: int | None = None,
) -> Iterator[R]:
    """``fn`` of each item, in order: through ``cluster`` (a Dask map, ``window`` items at a
    time), inline when ``workers`` is below 2, else on ``workers`` processes (fork on Linux, as
    the mask decoders: no importable ``__main__`` needed; spawn elsewhere) with at most ``ahead``
    items (default ``workers + 1``) submitted and not yet taken."""
    if cluster is not None:
        for i in range(0, len(items), window):
            yield from cluster(fn, list(items[i : i + window]))
        return
    if workers < 2:
        for item in items:
            yield fn(item)
        return
    import multiprocessing
    from concurrent.futures import Future, ProcessPoolExecutor

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    limit = workers + 1 if ahead is None else ahead
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
        pending: deque[Future[R]] = deque()
        todo = iter(items)
        for item in todo:
            pending.append(pool.submit(fn, item))
            if len(pending) >= limit:
                break
        while pending:
            done = pending.popleft().result()
            nxt = next(todo, None)
            if nxt is not None:
                pending.append(pool.submit(fn, nxt))
            yield done
