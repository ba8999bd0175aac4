"""Validation in pieces: each Parquet row group scanned on its own, partial results merged in order.

A piece is one row group with its global row offset, known from the footers before any row is
read, so every batch boundary is known too (across file edges as well). A worker reads only the
columns a piece needs, turns its labels into a :class:`Partial` (counts by (source, name, value),
the rows that are not usable, the first examples) and never keeps rows. Partials merge with an
associative, order-checked :func:`merge`; the merged partial fills a :class:`~labelgate.scan.Scan`
that the checks read exactly as they read a sequential scan.

The hot loop is numpy over whole row groups: one ``bincount`` of a (source, name, label) key,
one comparison for the rows that are not usable, and work proportional to those rows only.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.arrow import bool_mask, numbers
from labelgate.errors import InputError, one_line
from labelgate.io.sources import filesystem, is_uri, shown
from labelgate.labels import Status
from labelgate.report import Example

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from labelgate.dataset import Dataset
    from labelgate.scan import Scan

__all__ = ["Partial", "Piece", "Spec", "merge", "plan_pieces", "scan_piece", "supported"]

I64 = npt.NDArray[np.int64]
SLICE_ROWS = 1 << 18  # rows decoded at once per worker: bounds memory whatever the row group size
_INTEGER = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")
Key = tuple[str | None, str | None, int | None]  # (source, name, label value); None: null


@dataclass(frozen=True, slots=True)
class Piece:
    """One row group and where its rows sit in the logical dataset.

    Attributes:
        file_index: the file's position in reading order.
        path: the file (a local path, or a URI with its query string: see ``shown``).
        row_group: the row group within the file.
        first_row: global position of its first row.
        rows: its row count (from the footer).
        file_row: position of its first row within its file.
    """

    file_index: int
    path: str
    row_group: int
    first_row: int
    rows: int
    file_row: int


@dataclass(frozen=True, slots=True)
class Spec:
    """What a worker needs to scan a piece (small and picklable).

    Attributes:
        num_classes, ignore_index: the label rules.
        batch_size: rows per batch (file order).
        label, id, source, name: column names (``None`` where absent).
        max_examples: examples kept per check (0: all).
        read_ids: whether to read every id (duplicate-id check); otherwise ids are fetched
            afterwards, for the example rows only.
    """

    num_classes: int
    ignore_index: int
    batch_size: int
    label: str
    id: str | None = None
    source: str | None = None
    name: str | None = None
    max_examples: int = 20
    read_ids: bool = True

    @property
    def limit(self) -> int | None:
        """Examples kept per check, ``None`` for all."""
        return None if self.max_examples == 0 else self.max_examples


@dataclass(slots=True)
class Hits:
    """Rows failing one check within a partial."""

    count: int = 0
    by_source: Counter[str | None] = field(default_factory=Counter)
    by_file: Counter[int] = field(default_factory=Counter)
    batches: I64 = field(default_factory=lambda: np.zeros(0, np.int64))
    examples: list[Example] = field(default_factory=list)


@dataclass(slots=True)
class Ids:
    """What a partial knows of its ids: first, last, and whether they strictly increase."""

    first: int | None = None
    last: int | None = None
    increasing: bool = True


@dataclass(slots=True)
class Partial:
    """The result of scanning consecutive rows: a few KB, never the rows.

    Attributes:
        first_row, rows: the global rows covered (contiguous).
        file_rows: rows per file index.
        joint: (source, name, label value) -> [count, first global row].
        hits: check code -> the failing rows' counts and first examples.
        batch: sparse per-batch counts for batches holding a row that is not usable:
            global batch index, rows not usable, rows rejected (sorted by batch).
        firsts: source -> its first rows with a name and a label (evidence for LG011).
        ids: id order, where ids were read.
        limit: examples kept per check (``None``: all).
    """

    first_row: int
    rows: int = 0
    file_rows: Counter[int] = field(default_factory=Counter)
    joint: dict[Key, list[int]] = field(default_factory=dict)
    hits: dict[str, Hits] = field(default_factory=dict)
    batch: tuple[I64, I64, I64] = field(
        default_factory=lambda: (
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
        )
    )
    firsts: dict[str | None, list[Example]] = field(default_factory=dict)
    ids: Ids | None = None
    limit: int | None = 20


def supported(data: Dataset) -> str | None:
    """Why the dataset cannot be validated in pieces, or ``None`` when it can.

    Pieces cover Parquet inputs with integer class indices in file order and no class weights;
    other inputs take the sequential scan (same checks, same report).
    """
    if any(f.kind != "parquet" for f in data.files):
        return "text inputs are read sequentially"
    if data.task != "multiclass":
        return f"the {data.task} task is read sequentially"
    if str(data.label_type) not in _INTEGER:
        return f"{data.label_type} labels are read sequentially"
    if data.plan.shuffled:
        return "shuffled batches are read sequentially"
    if data.contract.class_weights is not None:
        return "class weights are read sequentially"
    for s in data.schemas:
        if s.row_groups is None:
            return "a file states no row groups"
        label = s.schema.field(data.columns.label).type
        if str(label) not in _INTEGER:
            return f"{label} labels are read sequentially"
    return None


def plan_pieces(data: Dataset, metadata: list[pq.FileMetaData]) -> list[Piece]:
    """Every row group of every file, with its global first row: all from the footers."""
    pieces: list[Piece] = []
    row = 0
    for index, (f, meta) in enumerate(zip(data.files, metadata, strict=True)):
        in_file = 0
        for g in range(meta.num_row_groups):
            n = meta.row_group(g).num_rows
            pieces.append(Piece(index, f.location or f.path, g, row, n, in_file))
            row += n
            in_file += n
    return pieces


# -- scanning one piece ------------------------------------------------------------------------


def _open(path: str, spec: Spec, metadata: pq.FileMetaData | None) -> pq.ParquetFile:
    """Open a file for one piece; the footer, when given, is not read again."""
    import pyarrow.parquet as pq

    text = [c for c in (spec.source, spec.name) if c]
    if is_uri(path):
        fs, inner = filesystem(path)
        return pq.ParquetFile(
            fs.open_input_file(inner), read_dictionary=text or None, metadata=metadata
        )
    return pq.ParquetFile(path, read_dictionary=text or None, metadata=metadata)


def scan_piece(piece: Piece, spec: Spec, metadata: pq.FileMetaData | None = None) -> Partial:
    """Scan one row group into a partial, reading at most SLICE_ROWS rows at a time.

    Raises:
        InputError: the row group cannot be read, or holds another row count than its footer says.
    """
    import pyarrow as pa

    try:
        return _scan_piece(piece, spec, metadata)
    except InputError:
        raise
    except (pa.ArrowException, OSError) as exc:
        raise _unreadable(piece, exc) from None


def _unreadable(piece: Piece, exc: BaseException) -> InputError:
    return InputError(
        f"cannot read parquet row group {piece.row_group} ({one_line(exc)})",
        path=shown(piece.path),
    )


def _scan_piece(piece: Piece, spec: Spec, metadata: pq.FileMetaData | None) -> Partial:
    pf = _open(piece.path, spec, metadata)
    columns = [spec.label] + [c for c in (spec.source, spec.name) if c]
    if spec.id and spec.read_ids:
        columns.append(spec.id)
    out: Partial | None = None
    row = piece.first_row
    for batch in pf.iter_batches(
        batch_size=SLICE_ROWS, row_groups=[piece.row_group], columns=columns, use_threads=False
    ):
        part = _scan_slice(batch, row, piece.file_index, spec, out)
        if out is None:
            out = part
        else:
            _fold(out, part)  # ``out`` is this function's own: no copy needed
        row += batch.num_rows
    if out is None:
        out = Partial(piece.first_row, limit=spec.limit)
    if out.rows != piece.rows:
        raise InputError(
            f"row group {piece.row_group} held {out.rows} rows, its footer says {piece.rows}",
            path=shown(piece.path),
        )
    return out


@dataclass(slots=True)
class _Buffers:
    key: I64
    base: npt.NDArray[np.int32]
    tmp: npt.NDArray[np.int32]
    flag: npt.NDArray[np.bool_]


_local = threading.local()


def _scratch(n: int) -> _Buffers:
    """This thread's work arrays, at least ``n`` long."""
    found: _Buffers | None = getattr(_local, "buffers", None)
    if found is None or len(found.key) < n:
        found = _Buffers(
            np.empty(n, np.int64), np.empty(n, np.int32), np.empty(n, np.int32), np.empty(n, bool)
        )
        _local.buffers = found
    return found


def _codes(column: pa.Array | None) -> tuple[npt.NDArray[Any] | None, list[str | None]]:
    """Dictionary codes of a text column (nulls get the code after the last value); ``None``
    codes where there is no column (every row in one group)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column is None:
        return None, [None]
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type):
        text = column if pa.types.is_string(column.type) else column.cast(pa.string())
        column = pc.dictionary_encode(text)
    values: list[str | None] = [
        None if v is None else str(v) for v in column.dictionary.to_pylist()
    ]
    codes = numbers(column.indices)
    if column.null_count:
        codes = np.where(bool_mask(column.is_valid()), codes, len(values))
    values.append(None)
    return codes, values


def _scan_slice(
    batch: pa.RecordBatch,
    first_row: int,
    file_index: int,
    spec: Spec,
    before: Partial | None = None,
) -> Partial:
    """Scan decoded rows; ``before`` is what the earlier slices of the same piece found (first
    rows already known there are not searched for again).

    The labels' bounds are computed, not taken from footer statistics: a key built on a wrong
    bound would count a row under another (source, name, value)."""
    n = batch.num_rows
    out = Partial(first_row, rows=n, limit=spec.limit)
    out.file_rows[file_index] = n
    if n == 0:
        return out
    names = batch.schema.names
    labels = batch.column(names.index(spec.label))
    null = bool_mask(labels.is_null()) if labels.null_count else None
    values = numbers(labels).astype(np.int64, copy=False)
    src, src_names = _codes(batch.column(names.index(spec.source)) if spec.source else None)
    nam, nam_names = _codes(batch.column(names.index(spec.name)) if spec.name else None)

    # One integer key per row for (source, name, value), counted with one bincount; a null
    # label takes the value one past the top. Work arrays are reused: fresh ones would cost a
    # page fault per 4 KB on every slice.
    buf = _scratch(n)
    lo, hi = _bounds(labels, null is not None)
    span = hi - lo + 2
    decode: I64 | None = None
    if span > 4 * n + 1024:  # scattered values: factorise first
        decode, v = np.unique(values, return_inverse=True)
        span, lo, values_in_key = len(decode) + 1, 0, v.astype(np.int64, copy=False)
    else:
        values_in_key = values
    width = len(nam_names) * span
    space = len(src_names) * width
    key = buf.key[:n]
    if space < 2**31 and (src is not None or nam is not None):
        base = buf.base[:n]
        if src is not None:
            np.multiply(src, width, out=base, casting="unsafe")
        else:
            base.fill(0)
        if nam is not None:
            tmp = buf.tmp[:n]
            np.multiply(nam, span, out=tmp, casting="unsafe")
            base += tmp
        base -= lo
        np.add(values_in_key, base, out=key)
    else:
        np.subtract(values_in_key, lo, out=key)
        if src is not None:
            key += src.astype(np.int64) * width
        if nam is not None:
            key += nam.astype(np.int64) * span
    if null is not None:
        key[null] += span - 1 - values_in_key[null] + lo
    if space <= 4 * n + (1 << 16):
        counts = np.bincount(key, minlength=space)
        present = np.flatnonzero(counts)
        present_counts = counts[present]
    else:
        present, present_counts = np.unique(key, return_counts=True)

    bad = _not_usable(values, null, spec, buf.flag[:n])
    pos = np.flatnonzero(bad) if bad is not None else None
    keys: list[Key] = []
    for k in present.tolist():
        s, rest = divmod(k, width)
        m, x = divmod(rest, span)
        if x == span - 1:
            value: int | None = None
        else:
            value = int(decode[x]) if decode is not None else x + lo
        keys.append((src_names[s], nam_names[m], value))
    known = before.joint if before is not None else {}
    new = np.array([t not in known for t in keys], dtype=bool)
    firsts = np.full(len(keys), -1, np.int64)  # -1: the first row is in ``before``
    if new.any():
        firsts[new] = _first_positions(key, present[new], pos)
    for t, c, at in zip(keys, present_counts.tolist(), firsts.tolist(), strict=True):
        out.joint[t] = [c, first_row + at if at >= 0 else -1]

    if pos is not None:
        _rows_not_usable(out, pos, values, null, src, src_names, first_row, file_index, spec)
    if spec.name:
        _source_firsts(out, values, null, src, src_names, nam, len(nam_names) - 1, spec, before)
    if spec.id and spec.read_ids:
        out.ids = _id_order(batch.column(names.index(spec.id)), buf.flag)
    return out


def _bounds(labels: pa.Array, has_null: bool) -> tuple[int, int]:
    """The labels' min and max in one pass (nulls are read as 0 in the key)."""
    import pyarrow.compute as pc

    mm = pc.min_max(labels)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if lo is None or hi is None:  # every label null
        return 0, 0
    return (min(lo, 0), max(hi, 0)) if has_null else (int(lo), int(hi))


def _first_positions(key: I64, present: I64, bad: I64 | None) -> I64:
    """The first position of each present key.

    A key holds its label value, so keys of values that are not usable occur only at the ``bad``
    positions (usually few); the others are nearly always met in a short prefix.
    """
    where = {k: i for i, k in enumerate(present.tolist())}
    first = np.full(len(present), -1, np.int64)
    if bad is not None and len(bad):
        uniq, idx = np.unique(key[bad], return_index=True)
        for k, i in zip(uniq.tolist(), idx.tolist(), strict=True):
            j = where.get(k)  # keys outside ``present`` are not asked for
            if j is not None:
                first[j] = bad[i]
    start, width = 0, 4096
    while start < len(key) and start < 65_536 and (first < 0).sum() > 4:
        uniq, idx = np.unique(key[start : start + width], return_index=True)
        for k, i in zip(uniq.tolist(), idx.tolist(), strict=True):
            j = where.get(k)
            if j is not None and first[j] < 0:
                first[j] = start + i
        start += width
        width *= 4
    missing = np.flatnonzero(first < 0)
    if len(missing) > 16:  # many rare keys: one pass settles them all
        rows = np.flatnonzero(np.isin(key, present[missing]))
        uniq, idx = np.unique(key[rows], return_index=True)
        first[[where[k] for k in uniq.tolist()]] = rows[idx]
        return first
    for j in missing.tolist():
        first[j] = int(np.argmax(key == present[j]))
    return first


def _not_usable(
    values: I64, null: npt.NDArray[np.bool_] | None, spec: Spec, out: npt.NDArray[np.bool_]
) -> npt.NDArray[np.bool_] | None:
    """Rows whose target is not usable, or ``None`` when every row is usable."""
    k, ignore = spec.num_classes, spec.ignore_index
    bad = np.greater_equal(values.view(np.uint64), np.uint64(k), out=out)  # negatives wrap
    if 0 <= ignore < k:
        bad |= values == ignore
    if null is not None:
        bad |= null
    return bad if bad.any() else None


def _status(values: I64, null: npt.NDArray[np.bool_] | None, spec: Spec) -> npt.NDArray[np.uint8]:
    status = np.zeros(len(values), np.uint8)
    status[values < 0] = Status.NEGATIVE
    status[values >= spec.num_classes] = Status.HIGH
    status[values == spec.ignore_index] = Status.IGNORED
    if null is not None:
        status[null] = Status.NULL
    return status


def _rows_not_usable(
    out: Partial,
    pos: I64,
    values: I64,
    null: npt.NDArray[np.bool_] | None,
    src: npt.NDArray[Any] | None,
    src_names: list[str | None],
    first_row: int,
    file_index: int,
    spec: Spec,
) -> None:
    """Per-batch counts and per-check hits, from the rows that are not usable (usually few)."""
    src_at = np.zeros(len(pos), np.int64) if src is None else src[pos]
    st = _status(values[pos], None if null is None else null[pos], spec)
    rows = first_row + pos
    batch = rows // spec.batch_size
    rejected = st >= Status.HIGH
    uniq, start = np.unique(batch, return_index=True)
    bad_n = np.diff(np.append(start, len(batch)))
    rej_n = np.add.reduceat(rejected.astype(np.int64), start) if len(start) else bad_n
    out.batch = (uniq.astype(np.int64), bad_n.astype(np.int64), rej_n.astype(np.int64))
    codes = dict(Status.CODES)
    if 0 <= spec.ignore_index < spec.num_classes:
        codes[Status.IGNORED] = "LG006"
    for status, code in codes.items():
        sel = np.flatnonzero(st == status)
        if not len(sel):
            continue
        h = out.hits.setdefault(code, Hits())
        h.count = len(sel)
        h.by_source = Counter(
            {src_names[s]: c for s, c in enumerate(np.bincount(src_at[sel]).tolist()) if c}
        )
        h.by_file[file_index] = len(sel)
        h.batches = np.unique(batch[sel])
        take = sel if spec.limit is None else sel[: spec.limit]
        h.examples = [
            Example(
                row=int(rows[i]),
                batch=int(batch[i]),
                source=_shown(src_names[int(src_at[i])], spec),
                value=None if status == Status.NULL else int(values[pos[i]]),
            )
            for i in take.tolist()
        ]


def _shown(source: str | None, spec: Spec) -> str | None:
    from labelgate.scan import NO_SOURCE

    if spec.source is None:
        return None
    return NO_SOURCE if source is None else source


def _source_firsts(
    out: Partial,
    values: I64,
    null: npt.NDArray[np.bool_] | None,
    src: npt.NDArray[Any] | None,
    src_names: list[str | None],
    nam: npt.NDArray[Any] | None,
    null_name: int,
    spec: Spec,
    before: Partial | None = None,
) -> None:
    """Each source's first rows with a name and a label, looking at a growing prefix (sources
    that earlier slices of the piece gave enough rows are skipped)."""
    want = max(spec.max_examples, 1)
    todo = {s for (s, name, value) in out.joint if name is not None and value is not None}
    if before is not None:
        todo = {s for s in todo if len(before.firsts.get(s, ())) < want}
    start, width = 0, 4096
    n = len(values)
    while todo and start < n:
        end = min(n, start + width)
        assert nam is not None
        ok = nam[start:end] != null_name
        if null is not None:
            ok &= ~null[start:end]
        seg = np.zeros(end - start, np.int64) if src is None else src[start:end]
        for s in list(todo):
            code = src_names.index(s)
            got = out.firsts.setdefault(s, [])
            rows = np.flatnonzero(ok & (seg == code))[: want - len(got)]
            got.extend(
                Example(
                    row=out.first_row + start + int(r),
                    batch=(out.first_row + start + int(r)) // spec.batch_size,
                    source=_shown(s, spec),
                    value=int(values[start + int(r)]),
                )
                for r in rows.tolist()
            )
            if len(got) >= want:
                todo.discard(s)
        start = end
        width *= 4


def _id_order(column: pa.Array, flag: npt.NDArray[np.bool_]) -> Ids:
    import pyarrow as pa

    if not pa.types.is_integer(column.type) or column.null_count:
        return Ids(increasing=False)
    a = numbers(column).astype(np.int64, copy=False)
    if len(a) == 0:
        return Ids()
    step = np.greater(a[1:], a[:-1], out=flag[: len(a) - 1])
    return Ids(int(a[0]), int(a[-1]), bool(step.all()))


# -- merging -----------------------------------------------------------------------------------


def merge(parts: Iterable[Partial]) -> Partial:
    """Fold partials of consecutive rows, in row order; associative.

    Raises:
        ValueError: a partial does not start where the previous one ended.
    """
    it = iter(parts)
    try:
        first = next(it)
    except StopIteration:
        raise ValueError("nothing to merge") from None
    acc = _copy(first)
    tables = [first.batch]  # joined once at the end: joining at every fold copies them again
    for p in it:
        _fold(acc, p, join_batches=False)
        tables.append(p.batch)
    acc.batch = _join_sparse(tables)
    return acc


def _copy(p: Partial) -> Partial:
    return replace(
        p,
        file_rows=Counter(p.file_rows),
        joint={k: list(v) for k, v in p.joint.items()},
        hits={
            c: Hits(h.count, Counter(h.by_source), Counter(h.by_file), h.batches, list(h.examples))
            for c, h in p.hits.items()
        },
        firsts={s: list(e) for s, e in p.firsts.items()},
        ids=None if p.ids is None else replace(p.ids),
    )


def _cap(examples: list[Example], limit: int | None) -> list[Example]:
    return examples if limit is None else examples[:limit]


def _fold(acc: Partial, p: Partial, *, join_batches: bool = True) -> None:
    if p.first_row != acc.first_row + acc.rows:
        raise ValueError(
            f"partials are not contiguous: rows {acc.first_row}..{acc.first_row + acc.rows} "
            f"then {p.first_row}"
        )
    acc.rows += p.rows
    acc.file_rows.update(p.file_rows)
    for key, (count, first) in p.joint.items():
        entry = acc.joint.get(key)
        if entry is None:
            acc.joint[key] = [count, first]
        else:
            entry[0] += count
    for code, h in p.hits.items():
        mine = acc.hits.get(code)
        if mine is None:
            acc.hits[code] = Hits(
                h.count, Counter(h.by_source), Counter(h.by_file), h.batches, list(h.examples)
            )
            continue
        mine.count += h.count
        mine.by_source.update(h.by_source)
        mine.by_file.update(h.by_file)
        mine.batches = np.union1d(mine.batches, h.batches)
        mine.examples = _cap(mine.examples + h.examples, acc.limit)
    if join_batches:
        acc.batch = _join_sparse([acc.batch, p.batch])
    want = max(acc.limit or 0, 1)
    for s, ex in p.firsts.items():
        got = acc.firsts.setdefault(s, [])
        got.extend(ex[: max(want - len(got), 0)])
    if p.ids is not None:
        if acc.ids is None:
            acc.ids = replace(p.ids)
        elif p.ids.first is not None:
            a = acc.ids
            ordered = a.last is None or a.last < p.ids.first
            a.increasing = a.increasing and p.ids.increasing and ordered
            a.first = a.first if a.first is not None else p.ids.first
            a.last = p.ids.last
        else:
            acc.ids.increasing = acc.ids.increasing and p.ids.increasing


def _join_sparse(tables: list[tuple[I64, I64, I64]]) -> tuple[I64, I64, I64]:
    """Sum sparse batch tables of consecutive rows, in one pass: each is sorted and only the
    batch on a shared edge can be in two of them.

    Raises:
        ValueError: the tables overlap beyond an edge batch (partials out of order).
    """
    tables = [t for t in tables if len(t[0])]
    if len(tables) <= 1:
        return tables[0] if tables else (np.zeros(0, np.int64),) * 3
    index = np.concatenate([t[0] for t in tables])
    if (np.diff(index) < 0).any():
        raise ValueError("sparse batch tables overlap: partials out of order")
    uniq, start = np.unique(index, return_index=True)
    bad = np.add.reduceat(np.concatenate([t[1] for t in tables]), start)
    rejected = np.add.reduceat(np.concatenate([t[2] for t in tables]), start)
    return uniq, bad, rejected


# -- running all pieces ------------------------------------------------------------------------


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
) -> Partial:
    """Scan every piece on ``threads`` threads, merging partials in row order as they finish.

    At most two pieces per thread are in flight, so memory stays flat whatever the row count.
    """
    if not pieces:
        return Partial(0, limit=spec.limit)

    def reported() -> Iterator[Partial]:
        rows = 0
        for part in _ordered(pieces, spec, metadata, threads):
            yield part
            rows += part.rows
            if progress is not None:
                progress(rows)

    return merge(reported())


def _ordered(
    pieces: list[Piece], spec: Spec, metadata: list[pq.FileMetaData], threads: int
) -> Iterator[Partial]:
    if threads <= 1 or len(pieces) == 1:
        for p in pieces:
            yield scan_piece(p, spec, metadata[p.file_index])
        return
    window = 2 * threads
    with ThreadPoolExecutor(threads, thread_name_prefix="labelgate") as pool:
        pending: list[Future[Partial]] = []
        nxt = 0
        while nxt < len(pieces) or pending:
            while nxt < len(pieces) and len(pending) < window:
                p = pieces[nxt]
                pending.append(pool.submit(scan_piece, p, spec, metadata[p.file_index]))
                nxt += 1
            try:
                yield pending.pop(0).result()
            except BaseException:
                for f in pending:
                    f.cancel()
                raise


# -- filling a scan ----------------------------------------------------------------------------


def fill_scan(scan: Scan, part: Partial, spec: Spec) -> None:
    """Give ``scan`` the merged partial's counts, in the shape the checks read."""
    from labelgate.scan import MAX_PAIRS, CodeTally, SparseBatches

    k, ignore = spec.num_classes, spec.ignore_index
    scan.rows = part.rows
    for i, n in part.file_rows.items():
        scan.file_rows[i] += n
    # Sources in the order they first appear in the rows.
    first_seen: dict[str | None, int] = {}
    for (s, _, _), (_, first) in part.joint.items():
        if s not in first_seen or first < first_seen[s]:
            first_seen[s] = first
    for s in sorted(first_seen, key=first_seen.__getitem__):
        scan.source_first[scan.source_id(s)] = first_seen[s]
    for (s, name, value), (count, first) in sorted(part.joint.items(), key=lambda kv: kv[1][1]):
        sid = scan.source_id(s)
        status = _status_of(value, k, ignore)
        scan.row_status[status] += count
        scan.value_status[status] += count
        scan.source_rows[sid] += count
        scan.source_status[sid, status] += count
        if value is None:
            continue
        if status == Status.USABLE:
            scan.class_counts[value] += count
            scan.source_hist[sid, value] += count
        elif status == Status.HIGH and value == k:
            scan.source_hist[sid, k] += count
        if status == Status.IGNORED:
            scan.ignore_hits += count
        if status in (Status.HIGH, Status.NEGATIVE):
            scan.add_other(value, count)
        if spec.name is not None and name is not None:
            pair = scan.pairs.get((sid, value, name))
            if pair is None:
                if len(scan.pairs) >= MAX_PAIRS:
                    scan.pairs_overflow = True
                else:
                    scan.pairs[(sid, value, name)] = [count, first]
            else:
                pair[0] += count
    for code, h in part.hits.items():
        scan.tallies[code] = CodeTally(
            count=h.count,
            examples=list(h.examples),
            by_source=Counter({scan.source_id(s): c for s, c in h.by_source.items()}),
            by_file=Counter(h.by_file),
            batches=set(h.batches.tolist()),
        )
    for s, ex in part.firsts.items():
        if ex:
            scan.source_firsts[scan.source_id(s)] = list(ex)
    scan.sparse = SparseBatches(*part.batch)
    scan.ids_seen = spec.id is not None
    scan.ids_increasing = part.ids.increasing if part.ids is not None else True


def _status_of(value: int | None, k: int, ignore: int) -> int:
    if value is None:
        return Status.NULL
    if value == ignore:
        return Status.IGNORED
    if value < 0:
        return Status.NEGATIVE
    if value >= k:
        return Status.HIGH
    return Status.USABLE


def fill_ids(scan: Scan, pieces: list[Piece], spec: Spec, metadata: list[Any]) -> None:
    """Give every example its id, reading the id column of the row groups holding examples only."""
    import pyarrow as pa

    if spec.id is None:
        return
    lists: list[list[Example]] = [t.examples for t in scan.tallies.values()]
    lists += list(scan.source_firsts.values())
    wanted = sorted({e.row for ex in lists for e in ex})
    if not wanted:
        return
    starts = [p.first_row for p in pieces]
    by_piece: dict[int, list[int]] = {}
    for row in wanted:
        by_piece.setdefault(bisect.bisect_right(starts, row) - 1, []).append(row)
    found: dict[int, Any] = {}
    for i, rows in by_piece.items():
        p = pieces[i]
        pf = _open(p.path, spec, metadata[p.file_index])
        try:
            col = pf.read_row_group(p.row_group, columns=[spec.id], use_threads=False).column(0)
        except (pa.ArrowException, OSError) as exc:
            raise _unreadable(p, exc) from None
        for row in rows:
            found[row] = col[row - p.first_row].as_py()
    for ex in lists:
        ex[:] = [replace(e, id=found[e.row]) for e in ex]
