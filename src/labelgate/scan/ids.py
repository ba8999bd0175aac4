"""The duplicate-id pass (LG014): a second read of the id column alone, when ids do not strictly
increase (while they do, the scan itself proves them distinct)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from labelgate.arrow import bool_mask, numbers
from labelgate.report import Example
from labelgate.scan.result import DuplicateIds, ScanResult

if TYPE_CHECKING:
    from labelgate.dataset import Dataset

__all__ = ["duplicate_ids", "values_at"]


def duplicate_ids(data: Dataset, column: str, scan: ScanResult, max_examples: int) -> DuplicateIds:
    """A second pass over the id column alone, taken only when ids are not strictly increasing.

    Holds one 8-byte key per row (the id, or its hash for text ids): the one part of a run whose
    memory grows with the rows.
    """
    import pyarrow as pa

    keys: list[np.ndarray[Any, Any]] = []
    for _, _, batch in data.chunks([column]):
        col = batch.column(0)
        if pa.types.is_integer(col.type) and not col.null_count:
            keys.append(numbers(col).astype(np.int64))
        else:
            keys.append(_hash_text(col).view(np.int64))
    allkeys = np.concatenate(keys) if keys else np.zeros(0, np.int64)
    order = np.argsort(allkeys, kind="stable")
    ordered = allkeys[order]
    repeat = np.zeros(len(ordered), dtype=bool)
    repeat[1:] = ordered[1:] == ordered[:-1]
    rows = np.sort(order[repeat])
    distinct = len(np.unique(ordered[repeat]))
    limit = len(rows) if max_examples == 0 else max_examples
    wanted = rows[:limit]
    at = values_at(wanted.tolist(), data, [column])
    ids = [at[r][0] for r in wanted.tolist()]
    kept = scan.plan.kept_batches(scan.rows)
    examples = []
    for row, id_ in zip(wanted.tolist(), ids, strict=True):
        batch = int(scan.plan.batch_of(row, 1)[0])
        examples.append(Example(row=row, id=id_, batch=batch if batch < kept else None))
    return DuplicateIds(rows=len(rows), distinct=distinct, examples=tuple(examples))


def _hash_text(column: Any) -> np.ndarray[Any, Any]:
    """FNV-1a (64-bit) of each value's text, vectorised over byte positions; null hashes to 0."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    text = (
        pc.cast(column, pa.large_string()) if not pa.types.is_large_string(column.type) else column
    )
    offsets = np.frombuffer(text.buffers()[1], np.int64)[text.offset : text.offset + len(text) + 1]
    data = np.frombuffer(text.buffers()[2] or b"", np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    h = np.full(len(text), 0xCBF29CE484222325, np.uint64)
    prime = np.uint64(0x100000001B3)
    for j in range(int(lengths.max()) if len(lengths) else 0):
        live = lengths > j
        h[live] = (h[live] ^ data[starts[live] + j].astype(np.uint64)) * prime
    nulls = bool_mask(text.is_null())
    h[nulls] = 0
    return h


def values_at(rows: list[int], data: Dataset, columns: list[str]) -> dict[int, tuple[Any, ...]]:
    """The values of ``columns`` at each of ``rows``, in one pass over those columns alone (it
    stops once every row is found)."""
    wanted = np.array(sorted(set(rows)), dtype=np.int64)
    found: dict[int, tuple[Any, ...]] = {}
    for _, start, batch in data.chunks(columns):
        lo, hi = np.searchsorted(wanted, [start, start + batch.num_rows])
        for r in wanted[lo:hi].tolist():
            found[r] = tuple(batch.column(i)[r - start].as_py() for i in range(len(columns)))
        if len(found) == len(wanted):
            break
    return found
