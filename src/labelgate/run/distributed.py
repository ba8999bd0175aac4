"""Validation on a Dask cluster: the pieces and partials of one machine, run by Dask's workers.

The driver plans every piece (file, row group, global first row) from the footers before any task
runs, so every batch boundary is known up front. Consecutive pieces are grouped into tasks; a task
reads only the columns its pieces need and returns one ``labelgate.scan.partial.Partial`` (a few
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

import numpy as np
import numpy.typing as npt

from labelgate.errors import UsageError
from labelgate.scan.idkeys import PAIR, keyed_pairs, partitions, split_pairs
from labelgate.scan.ids import Tally, confirmed, pick, repeats
from labelgate.scan.kernel import piece_batches, scan_piece
from labelgate.scan.partial import Compact, Partial, merge
from labelgate.scan.plan import Piece, Spec

__all__ = [
    "cluster_map",
    "connect",
    "duplicate_ids_on_dask",
    "parse_address",
    "run_on_dask",
    "scan_group",
]

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
    compact: Compact | None = None,
) -> Partial:
    """Scan every piece on the cluster and merge the partials in row order (``compact``: see
    ``labelgate.scan.partial.merge``).

    Args:
        client: from ``connect``.
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
    return merge((p for p in parts if p is not None), compact)


def key_group(
    pieces: list[Piece], spec: Spec, parts: int, integer: bool
) -> tuple[list[npt.NDArray[Any]], int, npt.NDArray[np.int64]]:
    """One map task of the duplicate-id check (runs on a worker): the ids of consecutive pieces
    as (key, row) pairs, split into ``parts`` partitions by key; and its null integer ids (how
    many, the first rows)."""
    assert spec.id is not None
    chunks: list[npt.NDArray[Any]] = []
    nulls: list[npt.NDArray[np.int64]] = []
    for p in pieces:
        for row, batch in piece_batches(p, spec, [spec.id]):
            pairs, null_rows = keyed_pairs(batch.column(0), row, integer=integer)
            chunks.append(pairs)
            nulls.append(null_rows)
    pairs, bounds = split_pairs(
        np.concatenate(chunks) if chunks else np.empty(0, PAIR), parts, hashed=not integer
    )
    null_rows = np.concatenate(nulls) if nulls else np.zeros(0, np.int64)
    limit = spec.limit
    kept = null_rows if limit is None else null_rows[: limit + 1]
    return [pairs[bounds[i] : bounds[i + 1]].copy() for i in range(parts)], len(null_rows), kept


def repeat_partition(
    pieces: list[Piece], spec: Spec, integer: bool, memory: int, *chunks: npt.NDArray[Any]
) -> tuple[npt.NDArray[np.int64], int]:
    """One reduce task (runs on a worker): one partition's pairs from every map task, sorted;
    the rows repeating an earlier id, and how many ids repeat. Equal hashes are confirmed
    against the ids, read by this worker from the row groups holding them."""
    pairs = np.concatenate(chunks) if chunks else np.empty(0, PAIR)
    if integer:
        return repeats(pairs)
    return confirmed(pairs, lambda rows: ids_at(rows, pieces, spec), memory)


def ids_at(rows: list[int], pieces: list[Piece], spec: Spec) -> dict[int, tuple[Any, ...]]:
    """The id at each of ``rows``, read from the row groups holding them (a slice at a time)."""
    assert spec.id is not None
    column = spec.id
    wanted = np.array(sorted(set(rows)), np.int64)
    firsts = np.array([p.first_row for p in pieces], np.int64)
    holding = np.unique(np.searchsorted(firsts, wanted, side="right") - 1).tolist()
    batches = (b for i in holding for b in piece_batches(pieces[i], spec, [column]))
    return pick(wanted, batches)


def duplicate_ids_on_dask(
    client: Any, pieces: list[Piece], spec: Spec, *, integer: bool, memory: int, tally: Tally
) -> None:
    """The duplicate-id check across the cluster, into ``tally``: map tasks key the ids of
    consecutive pieces and split them by key into partitions sized for ``memory``; one reduce
    task per partition gathers that partition from every map task and finds its repeats. The
    driver holds only the counts and the first rows, never the ids."""
    rows = sum(p.rows for p in pieces)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    parts = max(partitions(rows, memory), 1 << max(0, (2 * workers - 1).bit_length()))
    groups = _groups(pieces, TASKS_PER_WORKER * workers)
    run = uuid.uuid4().hex[:12]
    mapped = [
        client.submit(
            key_group, g, spec, parts, integer, key=f"labelgate-ids-{run}-{i}", pure=False
        )
        for i, g in enumerate(groups)
    ]
    # One small task per (map task, partition) picks that partition out where it was made, so
    # a reduce task fetches its own partition from each map task, not every map task's output.
    picked = [
        [
            client.submit(_partition_of, m, p, key=f"labelgate-part-{run}-{i}-{p}", pure=False)
            for p in range(parts)
        ]
        for i, m in enumerate(mapped)
    ]
    reduced = [
        client.submit(
            repeat_partition,
            pieces,
            spec,
            integer,
            memory,
            *[row[p] for row in picked],
            key=f"labelgate-dups-{run}-{p}",
            pure=False,
        )
        for p in range(parts)
    ]
    try:
        for found, repeated in client.gather(reduced):
            tally.add(found, repeated)
        nulls = client.gather([client.submit(_nulls_of, m, pure=False) for m in mapped])
        seen = sum(n for n, _ in nulls)
        first = np.sort(np.concatenate([r for _, r in nulls] or [np.zeros(0, np.int64)]))
        tally.add_nulls(seen, first if spec.limit is None else first[: spec.limit + 1])
    finally:
        for f in reduced + [f for row in picked for f in row] + mapped:
            f.release()


def _partition_of(
    keyed: tuple[list[npt.NDArray[Any]], int, npt.NDArray[np.int64]], part: int
) -> npt.NDArray[Any]:
    return keyed[0][part]


def _nulls_of(
    keyed: tuple[list[npt.NDArray[Any]], int, npt.NDArray[np.int64]],
) -> tuple[int, npt.NDArray[np.int64]]:
    return keyed[1], keyed[2]
