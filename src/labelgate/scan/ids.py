"""The duplicate-id pass (LG014): a second read of the id column alone, when ids do not strictly
increase (while they do, the scan itself proves them distinct), exact and in bounded memory."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelgate.arrow import bool_mask, numbers
from labelgate.io.sources import typed
from labelgate.report import Example
from labelgate.scan.kernel import unreadable
from labelgate.scan.result import ID_MEMORY, DuplicateIds, ScanResult

if TYPE_CHECKING:
    from labelgate.dataset import Dataset

__all__ = ["ID_MEMORY", "duplicate_ids", "values_at"]

_PAIR = np.dtype([("key", "<i8"), ("row", "<i8")])
_FLUSH = 1 << 20  # pairs held before they are written out, partition by partition
_NULL = np.int64(-0x5A5A5A5A5A5A5A5B)  # the key of a null text id (nulls repeat each other)

Array = np.ndarray[Any, Any]


def duplicate_ids(
    data: Dataset, column: str, scan: ScanResult, max_examples: int, *, memory: int = ID_MEMORY
) -> DuplicateIds:
    """Ids met more than once, exactly, in memory bounded by ``memory`` whatever the row count.

    One pass over the id column gives every row a 64-bit key (an integer id is its own key; a text,
    binary or other id is hashed) and writes (key, row) pairs radix-partitioned by a mix of the key,
    into as many temporary files as the budget needs; each partition is then sorted on its own.
    Equal integer keys are equal ids; rows with equal hashes are confirmed against their real ids,
    so a collision never reports a false duplicate. Null ids count as one value.
    """
    import pyarrow as pa

    # Integer ids are their own keys where every file stores them as integers; CSV holds text,
    # so there (and in a mix) every id is hashed by its text, alike across files.
    integer = typed(data.files) and all(
        pa.types.is_integer(s.schema.field(column).type) for s in data.schemas
    )
    limit = None if max_examples == 0 else max_examples
    count, distinct, first = 0, 0, np.zeros(0, np.int64)  # first: the earliest repeats, kept

    def keep(found: Array) -> None:
        nonlocal count, first
        count += len(found)
        first = np.sort(np.concatenate([first, found]))[:limit]

    with _Spill(_partitions(scan.rows, memory)) as spill:
        null_rows = np.zeros(0, np.int64)  # integer ids: the first null rows, and how many
        nulls_seen = 0
        for _, start, batch in data.chunks([column]):
            col = batch.column(0)
            keys, nulls = _integer_keys(col) if integer else (_hash_keys(col), None)
            rows = np.arange(start, start + len(keys), dtype=np.int64)
            if nulls is not None and nulls.any():  # apart: no integer id can stand for a null
                here = rows[nulls]
                nulls_seen += len(here)
                null_rows = np.concatenate([null_rows, here])
                null_rows = null_rows if limit is None else null_rows[: limit + 1]
                keys, rows = keys[~nulls], rows[~nulls]
            spill.add(keys, rows)
        for pairs in spill.partitions():
            found, groups = _repeats(pairs)
            if not integer and len(found):
                found, groups = _confirmed(pairs, data, column, memory)
            keep(found)
            distinct += groups
    if nulls_seen > 1:
        keep(null_rows[1:])
        count += nulls_seen - len(null_rows)  # the null repeats past those kept
        distinct += 1
    wanted = first.tolist()
    at = values_at(wanted, data, [column])
    kept = scan.plan.kept_batches(scan.rows)
    examples = []
    for row in wanted:
        batch = int(scan.plan.batch_of(row, 1)[0])
        examples.append(Example(row=row, id=at[row][0], batch=batch if batch < kept else None))
    return DuplicateIds(rows=count, distinct=distinct, examples=tuple(examples))


def _partitions(rows: int, memory: int) -> int:
    """Partitions (a power of two) such that one, with its sort's copies, fits ``memory``."""
    need = 4 * _PAIR.itemsize * max(rows, 1)  # the pairs, a sort order and two sorted columns
    parts = 1
    while need / parts > memory and parts < 4096:
        parts *= 2
    return parts


def _mix(x: Array) -> Array:
    """splitmix64's finaliser (as uint64): every input bit reaches every output bit."""
    z = x.view(np.uint64).copy()
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def _integer_keys(col: Any) -> tuple[Array, Array | None]:
    """An integer id is its own key (a uint64 by its bits), and which ids are null."""
    values = numbers(col, 0)
    keys = values.view(np.int64) if values.dtype == np.uint64 else values.astype(np.int64)
    nulls = bool_mask(col.is_null()) if col.null_count else None
    return np.ascontiguousarray(keys), nulls


def _hash_keys(col: Any) -> Array:
    """A 64-bit hash of each id's bytes (of its text, for a type that is neither text nor binary),
    computed length by length: the ids of one length are gathered into a matrix and folded one
    machine word at a time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    t = col.type
    raw = pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
    raw = raw or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)  # UUIDs
    if not raw:
        col = pc.cast(col, pa.string())  # decimals, dates, floats: by their text
    col = pc.cast(col, pa.large_binary())
    n = len(col)
    offsets = np.frombuffer(col.buffers()[1], np.int64)[col.offset : col.offset + n + 1]
    data = np.frombuffer(col.buffers()[2] or b"", np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    out = np.empty(n, np.uint64)
    for length in np.unique(lengths).tolist():
        idx = np.flatnonzero(lengths == length)
        acc = _mix(np.full(len(idx), length, np.int64))
        if length:
            words = (length + 7) // 8
            block = np.zeros((len(idx), words * 8), np.uint8)
            if len(idx) == n and offsets[-1] - offsets[0] == n * length:
                # One length for the whole chunk (paths, UUID text): the bytes are the matrix.
                block[:, :length] = data[offsets[0] : offsets[-1]].reshape(n, length)
            else:
                block[:, :length] = data[starts[idx, None] + np.arange(length)]
            matrix = block.view(np.uint64)
            for w in range(words):
                acc = _mix(acc ^ matrix[:, w])
        out[idx] = acc
    keys = out.view(np.int64)
    if col.null_count:
        keys[bool_mask(col.is_null())] = _NULL
    return keys


class _Spill:
    """(key, row) pairs radix-partitioned by the top bits of the mixed key: in memory when one
    partition fits, else in temporary files, removed on exit."""

    def __init__(self, parts: int) -> None:
        self.parts = parts
        self.bits = parts.bit_length() - 1
        self.memory: list[Array] = []  # pairs held: all of them, or those not yet written
        self.held = 0
        self.folder: tempfile.TemporaryDirectory[str] | None = None
        self.files: list[Any] = []

    def __enter__(self) -> _Spill:
        if self.parts > 1:
            self.folder = tempfile.TemporaryDirectory(prefix="labelgate-ids-")
            root = Path(self.folder.name)
            self.files = [(root / f"{p}.bin").open("wb") for p in range(self.parts)]
        return self

    def __exit__(self, *exc: object) -> None:
        for f in self.files:
            f.close()
        if self.folder is not None:
            self.folder.cleanup()

    def add(self, keys: Array, rows: Array) -> None:
        pairs = np.empty(len(keys), _PAIR)
        pairs["key"], pairs["row"] = keys, rows
        self.memory.append(pairs)
        self.held += len(pairs)
        if self.parts > 1 and self.held >= _FLUSH:
            self._flush()

    def _flush(self) -> None:
        """Write what is held, partition by partition (rows stay in order within each)."""
        if not self.memory:
            return
        pairs = np.concatenate(self.memory)
        self.memory, self.held = [], 0
        part = (_mix(pairs["key"]) >> np.uint64(64 - self.bits)).astype(np.uint16)
        order = np.argsort(part, kind="stable")  # a radix sort for 16-bit keys: linear
        pairs, part = pairs[order], part[order]
        bounds = np.searchsorted(part, np.arange(self.parts + 1))
        for p in np.flatnonzero(np.diff(bounds)).tolist():
            pairs[bounds[p] : bounds[p + 1]].tofile(self.files[p])

    def partitions(self) -> Iterator[Array]:
        if self.parts == 1:
            yield np.concatenate(self.memory) if self.memory else np.empty(0, _PAIR)
            return
        self._flush()
        for f in self.files:
            f.close()
        for f in self.files:
            yield np.fromfile(f.name, _PAIR)
            Path(f.name).unlink()


def _sorted(pairs: Array) -> tuple[Array, Array, Array]:
    """Keys and rows sorted by (key, row), and where a key equals the one before; only the pairs
    whose key repeats (found by one sort of the keys alone: usually none)."""
    keys = pairs["key"]
    ordered = np.sort(keys)
    repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    if len(repeated) < len(keys):
        pairs = pairs[np.isin(keys, repeated)]
    order = np.lexsort((pairs["row"], pairs["key"]))
    keys, rows = pairs["key"][order], pairs["row"][order]
    same = np.zeros(len(keys), bool)
    same[1:] = keys[1:] == keys[:-1]
    return keys, rows, same


def _repeats(pairs: Array) -> tuple[Array, int]:
    """Rows whose key an earlier row has, and how many keys repeat."""
    if len(pairs) < 2:
        return np.zeros(0, np.int64), 0
    _, rows, same = _sorted(pairs)
    first_repeats = same[1:] & ~same[:-1]
    return rows[same], int(np.count_nonzero(first_repeats))


def _confirmed(pairs: Array, data: Dataset, column: str, memory: int) -> tuple[Array, int]:
    """The repeats of one partition of hashed keys, confirmed against the real ids: within each
    group of equal hashes, the rows whose id an earlier row of the group has."""
    keys, rows, same = _sorted(pairs)
    member = same.copy()
    member[:-1] |= same[1:]  # every row of a group of equal hashes, its first row included
    rows, keys = rows[member], keys[member]
    out: list[int] = []
    groups = 0
    step = max(1, memory // 512)  # rows whose ids are held at once (as Python objects)
    start = 0
    while start < len(rows):
        end = min(len(rows), start + step)
        while end < len(rows) and keys[end] == keys[end - 1]:
            end += 1  # a group of equal hashes is confirmed whole
        ids = values_at(rows[start:end].tolist(), data, [column])
        seen: set[tuple[int, Any]] = set()
        counted: set[tuple[int, Any]] = set()
        for key, row in zip(keys[start:end].tolist(), rows[start:end].tolist(), strict=True):
            ident = (key, ids[row][0])
            if ident in seen:
                out.append(row)
                if ident not in counted:
                    counted.add(ident)
                    groups += 1
            else:
                seen.add(ident)
        start = end
    return np.array(out, np.int64), groups


def values_at(rows: list[int], data: Dataset, columns: list[str]) -> dict[int, tuple[Any, ...]]:
    """The values of ``columns`` at each of ``rows``: for Parquet, from the row groups holding
    them alone (the footers say where each row lies); else in one pass over those columns, which
    stops once every row is found."""
    wanted = np.array(sorted(set(rows)), dtype=np.int64)
    if not len(wanted):
        return {}
    if all(f.kind == "parquet" for f in data.files) and all(
        s.metadata is not None for s in data.schemas
    ):
        return _parquet_values_at(wanted, data, columns)
    found: dict[int, tuple[Any, ...]] = {}
    for _, start, batch in data.chunks(columns):
        lo, hi = np.searchsorted(wanted, [start, start + batch.num_rows])
        for r in wanted[lo:hi].tolist():
            found[r] = tuple(batch.column(i)[r - start].as_py() for i in range(len(columns)))
        if len(found) == len(wanted):
            break
    return found


def _parquet_values_at(
    wanted: Array, data: Dataset, columns: list[str]
) -> dict[int, tuple[Any, ...]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    groups: list[tuple[int, int, int, int]] = []  # (first row, rows, file, row group)
    start = 0
    for index, schema in enumerate(data.schemas):
        meta = schema.metadata
        for g in range(meta.num_row_groups):
            n = meta.row_group(g).num_rows
            groups.append((start, n, index, g))
            start += n
    firsts = np.array([g[0] for g in groups], dtype=np.int64)
    which = np.searchsorted(firsts, wanted, side="right") - 1
    found: dict[int, tuple[Any, ...]] = {}
    for g in np.unique(which).tolist():
        first, _, index, group = groups[g]
        f = data.files[index]
        try:
            pf = pq.ParquetFile(f.open(), metadata=data.schemas[index].metadata)
            table = pf.read_row_group(group, columns=columns, use_threads=False)
        except (pa.ArrowException, OSError) as exc:
            raise unreadable(f.location or f.path, group, exc) from None
        for r in wanted[which == g].tolist():
            found[r] = tuple(table.column(i)[r - first].as_py() for i in range(len(columns)))
    return found
