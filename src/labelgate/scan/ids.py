"""The duplicate-id check (LG014), exact and in bounded memory: the ids keyed by the scan's
workers (when they do not strictly increase; while they do, the scan itself proves them distinct),
and the rows they did not key, read here; then one partition of keys at a time."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from labelgate.core.report import Example
from labelgate.io.sources import typed
from labelgate.scan.idbitmap import IdBitmap
from labelgate.scan.idkeys import PAIR, RESOLVERS, IdKeys, integer_keys, repeated_pairs
from labelgate.scan.kernel import SLICE_ROWS, unreadable
from labelgate.scan.result import ID_MEMORY, DuplicateIds, ScanResult

if TYPE_CHECKING:
    import pyarrow as pa

    from labelgate.inputs.dataset import Dataset

__all__ = [
    "ID_MEMORY",
    "Tally",
    "confirmed",
    "duplicate_ids",
    "duplicate_ids_per_file",
    "integer_ids",
    "pick",
    "repeated_pairs",
    "repeats",
    "values_at",
]

Array = np.ndarray[Any, Any]
Lookup = Callable[[list[int]], dict[int, tuple[Any, ...]]]


def duplicate_ids(
    data: Dataset,
    column: str,
    scan: ScanResult,
    max_examples: int,
    *,
    memory: int = ID_MEMORY,
    keyed: IdKeys | None = None,
) -> DuplicateIds:
    """Ids met more than once, exactly, in memory bounded by ``memory`` whatever the row count.

    Every row gets a 64-bit key (an integer id is its own key; a text, binary or other id is
    hashed), radix-partitioned by ``labelgate.scan.idkeys.IdKeys``; each partition is then
    sorted on its own. ``keyed`` holds what the scan's workers keyed as they decoded the ids; only
    the rows they did not key are read here (all of them when ``keyed`` is ``None``). Equal integer
    keys are equal ids; rows with equal hashes are confirmed against their real ids, so a
    collision never reports a false duplicate. Null ids count as one value.
    """
    limit = None if max_examples == 0 else max_examples
    return _tally(data, column, scan.rows, limit, memory, keyed).result(data, column, scan)


def duplicate_ids_per_file(
    data: Dataset, column: str, scan: ScanResult, max_examples: int, *, memory: int = ID_MEMORY
) -> DuplicateIds:
    """Ids met more than once within one file, for inputs whose ids are unique per file (COCO's
    annotation ids): each file checked as ``duplicate_ids`` checks an input, the rows named in
    reading order across the files."""
    limit = None if max_examples == 0 else max_examples
    count = distinct = start = 0
    examples: list[Example] = []
    for index, rows in enumerate(scan.file_rows):
        if rows:
            one = replace(
                data, files=[data.files[index]], schemas=[data.schemas[index]], known_rows=rows
            )
            tally = _tally(one, column, rows, limit, memory, None)
            found = tally.result(one, column, scan, start)
            count, distinct = count + found.rows, distinct + found.distinct
            examples.extend(found.examples[: None if limit is None else limit - len(examples)])
        start += rows
    return DuplicateIds(count, distinct, tuple(examples), per_file=True)


def _tally(
    data: Dataset, column: str, rows: int, limit: int | None, memory: int, keyed: IdKeys | None
) -> Tally:
    """The repeats among the ``rows`` rows of ``data``, keyed (where ``keyed`` lacks them) and
    resolved."""
    with ExitStack() as stack:
        if keyed is None:
            keyed = stack.enter_context(
                IdKeys(rows, memory, integer=integer_ids(data, column), limit=limit)
            )
        _key_missing(keyed, data, column, rows)
        if keyed.dense is not None:
            return _resolve_dense(keyed.dense, keyed.dense_nulls, data, column, limit)
        return _resolve(keyed, data, column, limit, memory)


def integer_ids(data: Dataset, column: str) -> bool:
    """Whether ids are keyed as integers: where every file stores them as integers. CSV holds
    text, so there (and in a mix) every id is hashed by its text, alike across files."""
    import pyarrow as pa

    return typed(data.files) and all(
        pa.types.is_integer(s.schema.field(column).type) for s in data.schemas
    )


def _key_missing(keyed: IdKeys, data: Dataset, column: str, rows: int) -> None:
    """Feed ``keyed`` the rows it lacks: for Parquet, from the row groups holding them alone.
    Where its bitmap is given up meanwhile, the rows the bitmap held are missing again: fed in
    a second round, as pairs."""
    missing = keyed.missing(rows)
    while missing:
        _feed(keyed, data, column, missing)
        missing = keyed.missing(rows)


def _feed(keyed: IdKeys, data: Dataset, column: str, missing: list[tuple[int, int]]) -> None:

    def overlaps(first: int, end: int) -> bool:
        return any(lo < end and first < hi for lo, hi in missing)

    for start, batch in _batches(data, [column], overlaps):
        end = start + batch.num_rows
        for lo, hi in missing:
            a, b = max(lo, start), min(hi, end)
            if a < b:
                keyed.add(batch.column(0).slice(a - start, b - a), a)


class Tally:
    """Repeats gathered partition by partition: rows repeating an earlier id, ids that repeat,
    and the earliest such rows (at most ``limit``)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.count = 0
        self.distinct = 0
        self.first = np.zeros(0, np.int64)

    def add(self, found: Array, groups: int) -> None:
        self.count += len(found)
        self.distinct += groups
        self.first = np.sort(np.concatenate([self.first, found]))[: self.limit]

    def add_nulls(self, seen: int, first_rows: Array) -> None:
        """Null integer ids, which count as one value: ``seen`` of them, the first few rows."""
        if seen > 1:
            self.add(first_rows[1:], 1)
            self.count += seen - len(first_rows)  # the null repeats past those kept

    def result(self, data: Dataset, column: str, scan: ScanResult, offset: int = 0) -> DuplicateIds:
        """The repeats as examples: rows of ``data`` (whose first row is row ``offset`` of the
        input ``scan`` read), with their ids and batches."""
        wanted = self.first.tolist()
        at = values_at(wanted, data, [column])
        kept = scan.plan.kept_batches(scan.rows)
        examples = []
        for row in wanted:
            batch = int(scan.plan.batch_of(row + offset, 1)[0])
            ident = at[row][0]
            examples.append(
                Example(row=row + offset, id=ident, batch=batch if batch < kept else None)
            )
        return DuplicateIds(rows=self.count, distinct=self.distinct, examples=tuple(examples))


def _resolve_dense(
    dense: IdBitmap,
    nulls: tuple[int, Array],
    data: Dataset,
    column: str,
    limit: int | None,
) -> Tally:
    """The repeats, from the ids the bitmap found repeated: their rows read again, from the
    slices whose id range holds one of them, then sorted as one partition."""
    tally = Tally(limit)
    values = dense.repeated()
    if len(values):
        ranges = dense.ranges_holding(values)

        def needed(first: int, end: int) -> bool:
            return any(lo < end and first < hi for lo, hi in ranges)

        def holding(start: int, batch: pa.RecordBatch) -> Array:
            keys, null = integer_keys(batch.column(0))
            hit = np.isin(keys, values)
            if null is not None:
                hit &= ~null
            pairs = np.empty(int(np.count_nonzero(hit)), PAIR)
            pairs["key"], pairs["row"] = keys[hit], start + np.flatnonzero(hit)
            return pairs

        found = _each_batch(data, [column], needed, holding)
        tally.add(*repeats(np.concatenate(found) if found else np.empty(0, PAIR)))
    tally.add_nulls(*nulls)
    return tally


def _resolve(keyed: IdKeys, data: Dataset, column: str, limit: int | None, memory: int) -> Tally:
    tally = Tally(limit)

    def of_partition(load: Callable[[], Array]) -> tuple[Array, int, Array | None]:
        """Integer keys: the repeats; hashed keys: the pairs of equal hashes, to confirm."""
        pairs = load()  # the pairs of keys that repeat within the partition
        if keyed.integer:
            return (*repeats(pairs), None)
        return np.zeros(0, np.int64), 0, pairs

    # Equal hashes of several partitions are confirmed together (a partition's keys are no
    # other's, so its groups stay whole), up to the rows whose ids ``confirmed`` holds at once:
    # each confirmation reads again the row groups holding its rows.
    held: list[Array] = []

    def confirm_held() -> None:
        if held:
            pairs = np.concatenate(held)
            held.clear()
            tally.add(*confirmed(pairs, lambda r: values_at(r, data, [column]), memory))

    def add(result: tuple[Array, int, Array | None]) -> None:
        found, groups, to_confirm = result
        tally.add(found, groups)
        if to_confirm is not None and len(to_confirm):
            held.append(to_confirm)
            if sum(len(h) for h in held) >= max(1, memory // 512):
                confirm_held()

    # Two partitions are sorted at once (numpy's sort runs without the GIL): IdKeys sizes them
    # so that two fit the budget. Equal hashes are confirmed on this thread: the ids it reads
    # are decoded into this thread's memory, not into one more thread's.
    with ThreadPoolExecutor(RESOLVERS, thread_name_prefix="labelgate-ids") as pool:
        pending: list[Future[tuple[Array, int, Array | None]]] = []
        for load in keyed.partitions():
            if len(pending) == RESOLVERS:
                add(pending.pop(0).result())
            pending.append(pool.submit(of_partition, load))
        for done in pending:
            add(done.result())
    confirm_held()
    tally.add_nulls(keyed.nulls_seen, keyed.null_rows)
    return tally


def _grouped(pairs: Array) -> tuple[Array, Array, Array]:
    """Keys and rows sorted by (key, row), and where a key equals the one before."""
    order = np.lexsort((pairs["row"], pairs["key"]))
    keys, rows = pairs["key"][order], pairs["row"][order]
    same = np.zeros(len(keys), bool)
    same[1:] = keys[1:] == keys[:-1]
    return keys, rows, same


def repeats(pairs: Array) -> tuple[Array, int]:
    """Rows whose key an earlier row has, and how many keys repeat."""
    _, rows, same = _grouped(repeated_pairs(pairs))
    first_repeats = same[1:] & ~same[:-1]
    return rows[same], int(np.count_nonzero(first_repeats))


def confirmed(pairs: Array, lookup: Lookup, memory: int) -> tuple[Array, int]:
    """The repeats of one partition of hashed keys, confirmed against the real ids: within each
    group of equal hashes, the rows whose id an earlier row of the group has. ``lookup`` gives the
    ids (as 1-tuples) of the rows asked for."""
    keys, rows, same = _grouped(repeated_pairs(pairs))
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
        ids = lookup(rows[start:end].tolist())
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

    def holds(first: int, end: int) -> bool:
        lo, hi = np.searchsorted(wanted, [first, end])
        return bool(lo < hi)

    return pick(wanted, _batches(data, columns, holds))


def pick(
    wanted: Array, batches: Iterable[tuple[int, pa.RecordBatch]]
) -> dict[int, tuple[Any, ...]]:
    """Each row of ``wanted`` (sorted) -> its values, from ``batches`` of consecutive rows (each
    with its first row), read until every row is found."""
    found: dict[int, tuple[Any, ...]] = {}
    for start, batch in batches:
        lo, hi = np.searchsorted(wanted, [start, start + batch.num_rows])
        for r in wanted[lo:hi].tolist():
            found[r] = tuple(column[r - start].as_py() for column in batch.columns)
        if len(found) == len(wanted):
            break
    return found


def _batches(
    data: Dataset, columns: list[str], needed: Callable[[int, int], bool]
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """``columns`` a slice at a time, each with its first row: for Parquet, of the row groups
    whose rows ``[first, end)`` are ``needed`` alone; else of every row."""
    if not _parquet_footers(data):
        for _, start, batch in data.chunks(columns):
            yield start, batch
        return
    for first, n, index, group in _row_groups(data):
        if needed(first, first + n):
            yield from _read_group(data, index, group, columns, first)


def _each_batch(
    data: Dataset,
    columns: list[str],
    needed: Callable[[int, int], bool],
    each: Callable[[int, pa.RecordBatch], Array],
) -> list[Array]:
    """``each`` of every slice that ``_batches`` gives, in row order; for Parquet, the row groups
    are read and ``each`` applied on ``RESOLVERS`` threads (decoding releases the GIL)."""
    if not _parquet_footers(data):
        return [each(start, batch) for start, batch in _batches(data, columns, needed)]
    groups = [g for g in _row_groups(data) if needed(g[0], g[0] + g[1])]

    def of_group(g: tuple[int, int, int, int]) -> list[Array]:
        first, _, index, group = g
        return [each(s, b) for s, b in _read_group(data, index, group, columns, first)]

    with ThreadPoolExecutor(RESOLVERS, thread_name_prefix="labelgate-ids") as pool:
        return [out for part in pool.map(of_group, groups) for out in part]


def _parquet_footers(data: Dataset) -> bool:
    """Whether every file is Parquet with its footer read (so any row's row group is known)."""
    return all(f.kind == "parquet" for f in data.files) and all(
        s.metadata is not None for s in data.schemas
    )


def _row_groups(data: Dataset) -> list[tuple[int, int, int, int]]:
    """Every row group as (first row, rows, file index, row group), from the footers."""
    groups: list[tuple[int, int, int, int]] = []
    start = 0
    for index, schema in enumerate(data.schemas):
        meta = schema.metadata
        for g in range(meta.num_row_groups):
            n = meta.row_group(g).num_rows
            groups.append((start, n, index, g))
            start += n
    return groups


def _read_group(
    data: Dataset, index: int, group: int, columns: list[str], first: int
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """``columns`` of one row group of one file whose first row is ``first``, a slice at a time
    (so the whole row group is never held), with each slice's first row.

    Raises:
        InputError: it cannot be read.
    """
    import pyarrow as pa

    from labelgate.io.parquet import ParquetFile

    f = data.files[index]
    try:
        text = [c for c in (data.columns.source, data.columns.name) if c and c in columns]
        pf = ParquetFile(  # text read as its dictionary: no string built per row
            f.open(),
            metadata=data.schemas[index].metadata,
            pre_buffer=False,
            read_dictionary=text or None,
        )
        for batch in pf.iter_batches(
            batch_size=SLICE_ROWS, row_groups=[group], columns=columns, use_threads=False
        ):
            yield first, batch
            first += batch.num_rows
    except (pa.ArrowException, OSError) as exc:
        raise unreadable(f.location or f.path, group, exc) from None
