"""Running the pieces on threads, merging in row order, and turning the merge into a scan result."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from labelgate.core.batchplan import BatchPlan
from labelgate.core.classcounts import ClassCounts, add_grouped, source_counts
from labelgate.core.rules import Status, judge
from labelgate.scan.idkeys import IdKeys
from labelgate.scan.kernel import scan_piece
from labelgate.scan.partial import Compact, Partial, merge
from labelgate.scan.plan import Piece, Spec
from labelgate.scan.result import (
    MAX_OTHER_VALUES,
    MAX_PAIRS,
    NO_SOURCE,
    CodeTally,
    ScanResult,
    SparseBatches,
    frozen,
    without_unkept,
)

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from labelgate.scan.predslices import PieceWitness

__all__ = ["result_of", "run_by_file", "run_pieces", "threads_default"]


def threads_default() -> int:
    """Worker threads: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_pieces(
    pieces: list[Piece],
    spec: Spec,
    metadata: list[pq.FileMetaData],
    *,
    threads: int,
    progress: Callable[[int], None] | None = None,
    keys: IdKeys | None = None,
    compact: Compact | None = None,
    witness: PieceWitness | None = None,
) -> Partial:
    """Scan every piece on ``threads`` threads, merging partials in row order as they finish
    (``compact``: see ``labelgate.scan.partial.merge``); ids that do not strictly increase
    go to ``keys`` as they are decoded; the rows are counted against their predictions in
    ``witness``.

    At most two pieces per thread are in flight, so memory stays flat whatever the row count.
    """
    if not pieces:
        return Partial(0, limit=spec.limit)

    def reported() -> Iterator[Partial]:
        rows = 0
        for part in _ordered(pieces, spec, metadata, threads, keys, witness):
            yield part
            rows += part.rows
            if progress is not None:
                progress(rows)

    return merge(reported(), compact)


def run_by_file(
    pieces: list[Piece], spec: Spec, metadata: list[pq.FileMetaData], *, threads: int
) -> Iterator[tuple[int, Partial]]:
    """Scan ``pieces`` (whole files, in row order, not necessarily adjacent files) on
    ``threads`` threads, yielding each file's index and the merged partial of its pieces."""
    group: list[Partial] = []
    current = -1
    for piece, part in zip(pieces, _ordered(pieces, spec, metadata, threads, None), strict=True):
        if group and piece.file_index != current:
            yield current, merge(group)
            group = []
        current = piece.file_index
        group.append(part)
    if group:
        yield current, merge(group)


def _ordered(
    pieces: list[Piece],
    spec: Spec,
    metadata: list[pq.FileMetaData],
    threads: int,
    keys: IdKeys | None,
    witness: PieceWitness | None = None,
) -> Iterator[Partial]:
    if threads <= 1 or len(pieces) == 1:
        for p in pieces:
            yield scan_piece(p, spec, metadata[p.file_index], keys, witness)
        return
    window = 2 * threads
    with ThreadPoolExecutor(threads, thread_name_prefix="labelgate") as pool:
        pending: list[Future[Partial]] = []
        nxt = 0
        while nxt < len(pieces) or pending:
            while nxt < len(pieces) and len(pending) < window:
                p = pieces[nxt]
                meta = metadata[p.file_index]
                pending.append(pool.submit(scan_piece, p, spec, meta, keys, witness))
                nxt += 1
            try:
                yield pending.pop(0).result()
            except BaseException:
                for f in pending:
                    f.cancel()
                raise


def result_of(
    part: Partial, spec: Spec, plan: BatchPlan, files: int, *, complete: bool = True
) -> ScanResult:
    """The scan result of the merged partial of every piece: the same as the sequential scan's
    (``complete``: whether the merge kept every batch holding a row that is not usable)."""
    k, ignore = spec.num_classes, spec.ignore_index
    # Sources in the order they first appear in the rows.
    first_seen: dict[str | None, int] = {}
    for (s, _, _), (_, first) in part.joint.items():
        if s not in first_seen or first < first_seen[s]:
            first_seen[s] = first
    order = sorted(first_seen, key=first_seen.__getitem__)
    sid = {s: i for i, s in enumerate(order)}
    n = len(order)
    row_status = np.zeros(Status.COUNT, np.int64)
    source_rows = np.zeros(n, np.int64)
    source_status = np.zeros((n, Status.COUNT), np.int64)
    held: tuple[list[int], list[int], list[int]] = ([], [], [])  # source, value 0..K, count
    others: Counter[int] = Counter()
    others_past = 0
    ignore_hits = 0
    pairs: dict[tuple[int, int, str], list[int]] = {}
    overflow = False
    joint = sorted(part.joint.items(), key=lambda kv: kv[1][1])
    values = np.array([0 if key[2] is None else key[2] for key, _ in joint], np.int64)
    nulls = np.array([key[2] is None for key, _ in joint], bool)
    statuses = judge(values, k, ignore, null=nulls).tolist()  # one call: K reaches 10**6 keys
    for ((s, name, value), (count, first)), status in zip(joint, statuses, strict=True):
        i = sid[s]
        row_status[status] += count
        source_rows[i] += count
        source_status[i, status] += count
        if value is None:
            continue
        if status == Status.USABLE or (status == Status.HIGH and value == k):
            held[0].append(i)
            held[1].append(value)
            held[2].append(count)
        if status == Status.IGNORED:
            ignore_hits += count
        if status in (Status.HIGH, Status.NEGATIVE):
            if value in others or len(others) < MAX_OTHER_VALUES:  # as the sequential scan
                others[value] += count
            else:
                others_past += count
        if spec.name is not None and name is not None:
            pair = pairs.get((i, value, name))
            if pair is None:
                if len(pairs) >= MAX_PAIRS:
                    overflow = True
                else:
                    pairs[(i, value, name)] = [count, first]
            else:
                pair[0] += count
    sources, labels, counts = (np.array(column, np.int64) for column in held)
    source_hist = [source_counts(k + 1, held) for held in range(n)]
    add_grouped(source_hist, sources, labels, counts)
    class_counts = ClassCounts(k)
    in_range = labels < k  # the K column counts values equal to K: no class
    class_counts.add(labels[in_range], counts[in_range])
    tallies = {
        code: CodeTally(
            h.count,
            tuple(h.examples),
            {sid[s]: c for s, c in h.by_source.items()},
            dict(h.by_file),
            frozenset(h.batches.tolist()),
        )
        for code, h in part.hits.items()
    }
    file_rows = [0] * files
    for f, rows in part.file_rows.items():
        file_rows[f] += rows
    return ScanResult(
        k=k,
        ignore_index=ignore,
        plan=plan,
        max_examples=spec.max_examples,
        rows=part.rows,
        tokens=0,
        file_rows=tuple(file_rows),
        row_status=frozen(row_status),
        value_status=frozen(row_status.copy()),
        class_counts=class_counts.freeze(),
        ignore_hits=ignore_hits,
        other_values=dict(others),
        other_values_overflow=others_past,
        tallies=without_unkept(tallies, plan.kept_batches(part.rows)),
        source_names=tuple(NO_SOURCE if s is None else s for s in order),
        source_rows=frozen(source_rows),
        source_status=frozen(source_status),
        source_hist=tuple(h.freeze() for h in source_hist),
        source_first=tuple(first_seen[s] for s in order),
        source_firsts={sid[s]: tuple(ex) for s, ex in part.firsts.items() if ex},
        pairs={key: (c, first) for key, (c, first) in pairs.items()},
        pairs_overflow=overflow,
        ids_seen=spec.id is not None,
        ids_increasing=part.ids.increasing if part.ids is not None else True,
        soft_reasons={},
        sparse=SparseBatches(*part.batch, complete=complete),
    )
