"""Validation on a Dask cluster: the pieces and partials of one machine, run by Dask's workers.

The driver plans every piece (file, row group, global first row) from the footers before any task
runs, so every batch boundary is known up front. Consecutive pieces are grouped into tasks; a task
reads only the columns its pieces need and returns one :class:`~labelgate.scan.partial.Partial` (a few
KB: counts, sparse per-batch counts, first examples; never rows). A batch that straddles two tasks
is the shared edge entry of their sparse batch tables. The driver folds the partials in row order
with the same merge as on one machine, which checks that each starts where the previous one ended:
the order in which Dask returns them does not matter.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from labelgate.errors import UsageError
from labelgate.scan.kernel import scan_piece
from labelgate.scan.partial import Partial, merge
from labelgate.scan.plan import Piece, Spec

__all__ = ["cluster_map", "connect", "parse_address", "run_on_dask", "scan_group"]

T = TypeVar("T")
R = TypeVar("R")

_LOCAL = re.compile(r"local\[(\d+)\]")
TASKS_PER_WORKER = 4


def parse_address(text: str) -> tuple[str, int | str]:
    """``local[N]`` -> ("local", N); anything else is a scheduler address.

    Raises:
        UsageError: ``local[0]`` or an empty address.
    """
    m = _LOCAL.fullmatch(text.strip())
    if m:
        n = int(m.group(1))
        if n < 1:
            raise UsageError(f"--dask local[N] needs N >= 1, got {text!r}")
        return "local", n
    if not text.strip():
        raise UsageError("--dask needs local[N] or a scheduler address such as tcp://host:8786")
    return "address", text.strip()


def scan_group(pieces: list[Piece], spec: Spec) -> Partial:
    """One task: its consecutive pieces scanned and merged (runs on a worker)."""
    return merge(scan_piece(p, spec) for p in pieces)


def _groups(pieces: list[Piece], tasks: int) -> list[list[Piece]]:
    """Consecutive pieces in about ``tasks`` groups of similar row counts."""
    total = sum(p.rows for p in pieces) or 1
    target = max(1, total // max(tasks, 1))
    groups: list[list[Piece]] = [[]]
    rows = 0
    for p in pieces:
        if groups[-1] and rows + p.rows > target:
            groups.append([])
            rows = 0
        groups[-1].append(p)
        rows += p.rows
    return groups


@contextmanager
def connect(address: str) -> Iterator[Any]:
    """A Dask client: on a local cluster of N worker processes (``local[N]``, closed afterwards)
    or on a running scheduler (``tcp://10.0.0.5:8786``).

    Raises:
        UsageError: dask.distributed is not installed, or the scheduler cannot be reached.
    """
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("--dask needs dask.distributed: pip install 'labelgate[dask]'") from None
    kind, value = parse_address(address)
    cluster: Any = None
    try:
        if kind == "local":
            cluster = LocalCluster(
                n_workers=int(value),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",  # a local cluster listens on loopback only
                dashboard_address=":0",  # a free port: None still takes 8787
                silence_logs=logging.ERROR,
            )
            client = Client(cluster)
        else:
            client = Client(str(value), timeout="20s")
    except (OSError, TimeoutError) as exc:
        if cluster is not None:
            cluster.close()
        raise UsageError(f"cannot reach the Dask scheduler {address!r} ({exc})") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def cluster_map(client: Any, fn: Callable[[T], R], items: list[T]) -> list[R]:
    """``[fn(x) for x in items]`` on the cluster, in order (footers of many shards)."""
    futures = client.map(fn, items, pure=False, retries=2)
    try:
        out: list[R] = client.gather(futures)
    finally:
        for f in futures:
            f.release()
    return out


def run_on_dask(
    client: Any,
    pieces: list[Piece],
    spec: Spec,
    *,
    progress: Callable[[int], None] | None = None,
) -> Partial:
    """Scan every piece on the cluster and merge the partials in row order.

    Args:
        client: from :func:`connect`.
        pieces: every piece, in row order.
        spec: what each task needs.
        progress: called with the rows of the tasks finished so far.

    Raises:
        InputError: a shard cannot be read (raised by its task after Dask's retries).
    """
    from dask.distributed import as_completed

    if not pieces:
        return Partial(0, limit=spec.limit)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    groups = _groups(pieces, TASKS_PER_WORKER * workers)
    run = uuid.uuid4().hex[:12]
    keys = [f"labelgate-{run}-{i}" for i in range(len(groups))]
    futures = [
        client.submit(scan_group, g, spec, key=k, retries=2, pure=False)
        for g, k in zip(groups, keys, strict=True)
    ]
    where = {k: i for i, k in enumerate(keys)}
    parts: list[Partial | None] = [None] * len(groups)
    done_rows = 0
    try:
        for future in as_completed(futures):
            i = where[future.key]
            parts[i] = future.result()
            done_rows += sum(p.rows for p in groups[i])
            if progress is not None:
                progress(done_rows)
    finally:
        for f in futures:
            f.release()
    return merge(p for p in parts if p is not None)
