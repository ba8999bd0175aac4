"""The kernel: one Parquet row group scanned into a ``labelgate.scan.partial.Partial``.

The hot loop is numpy over whole row groups: one ``bincount`` of a (source, name, label) key,
one comparison for the rows that are not usable (``labelgate.core.rules.not_usable``), and work
proportional to those rows only. A worker reads only the columns a piece needs, at most
SLICE_ROWS rows at a time, and never keeps rows.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.core.arrow import bool_mask, numbers
from labelgate.core.report import Example
from labelgate.core.rules import Status, failing_codes, judge, not_usable
from labelgate.errors import InputError, one_line
from labelgate.io.parquet import ParquetFile
from labelgate.io.sources import filesystem, is_uri, shown
from labelgate.scan.idkeys import IdKeys
from labelgate.scan.partial import Hits, Ids, Key, Partial, distinct, fold
from labelgate.scan.plan import Piece, Spec
from labelgate.scan.result import NO_SOURCE

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from labelgate.scan.predslices import PieceWitness, Slices

__all__ = [
    "SLICE_ROWS",
    "open_piece_file",
    "piece_batches",
    "scan_piece",
    "text_codes",
    "unreadable",
]

I64 = npt.NDArray[np.int64]
SLICE_ROWS = 1 << 18  # rows decoded at once per worker: bounds memory whatever the row group size


def open_piece_file(path: str, spec: Spec, metadata: pq.FileMetaData | None) -> ParquetFile:
    """Open a file for one piece; the footer, when given, is not read again."""
    text = [c for c in (spec.source, spec.name) if c]
    if is_uri(path):
        fs, inner = filesystem(path)
        return ParquetFile(
            fs.open_input_file(inner), read_dictionary=text or None, metadata=metadata
        )
    return ParquetFile(path, read_dictionary=text or None, metadata=metadata)


def scan_piece(
    piece: Piece,
    spec: Spec,
    metadata: pq.FileMetaData | None = None,
    keys: IdKeys | None = None,
    witness: PieceWitness | None = None,
) -> Partial:
    """Scan one row group into a partial, reading at most SLICE_ROWS rows at a time; ids that do
    not strictly increase are fed to ``keys`` (for the duplicate-id check) as they are decoded,
    and each slice's rows are counted against their predictions in ``witness``.

    Raises:
        InputError: the row group cannot be read, or holds another row count than its footer says.
    """
    import pyarrow as pa

    try:
        return _scan_piece(piece, spec, metadata, keys, witness)
    except InputError:
        raise
    except (pa.ArrowException, OSError) as exc:
        raise unreadable(piece.path, piece.row_group, exc) from None


def unreadable(path: str, row_group: int, exc: BaseException) -> InputError:
    """The error for a row group that cannot be read, naming the file without its query string."""
    return InputError(
        f"cannot read parquet row group {row_group} ({one_line(exc)})", path=shown(path)
    )


def piece_batches(
    piece: Piece, spec: Spec, columns: list[str], metadata: pq.FileMetaData | None = None
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """The piece's ``columns``, at most SLICE_ROWS rows at a time, each slice with its first
    global row.

    Raises:
        InputError: the row group cannot be read.
    """
    import pyarrow as pa

    row = piece.first_row
    try:
        pf = open_piece_file(piece.path, spec, metadata)
        for batch in pf.iter_batches(
            batch_size=SLICE_ROWS, row_groups=[piece.row_group], columns=columns, use_threads=False
        ):
            yield row, batch
            row += batch.num_rows
    except (pa.ArrowException, OSError) as exc:
        raise unreadable(piece.path, piece.row_group, exc) from None


def _scan_piece(
    piece: Piece,
    spec: Spec,
    metadata: pq.FileMetaData | None,
    keys: IdKeys | None,
    witness: PieceWitness | None,
) -> Partial:
    columns = [spec.label] + [c for c in (spec.source, spec.name) if c]
    if spec.id and spec.read_ids:
        columns.append(spec.id)
    out: Partial | None = None
    held = witness.slices(piece.first_row, piece.rows, SLICE_ROWS) if witness else nullcontext()
    with held as predicted:
        for row, batch in piece_batches(piece, spec, columns, metadata):
            part = _scan_slice(batch, row, piece.file_index, spec, out, keys, predicted)
            if out is None:
                out = part
            else:
                fold(out, part)  # ``out`` is this function's own: no copy needed
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


def text_codes(column: pa.Array | None) -> tuple[npt.NDArray[Any] | None, list[str | None]]:
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
    id_keys: IdKeys | None = None,
    predicted: Slices | None = None,
) -> Partial:
    """Scan decoded rows; ``before`` is what the earlier slices of the same piece found (first
    rows already known there are not searched for again); ``id_keys`` takes the ids once any
    worker has met ids that do not strictly increase; ``predicted`` counts the rows against
    their predictions.

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
    src, src_names = text_codes(batch.column(names.index(spec.source)) if spec.source else None)
    nam, nam_names = text_codes(batch.column(names.index(spec.name)) if spec.name else None)

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
    # int32 work arrays only while every key part (and the shift by lo) fits them: a label of
    # 2**31 in a YOLO file made "base -= lo" overflow.
    if space + abs(lo) < 2**31 and (src is not None or nam is not None):
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

    bad = not_usable(values, spec.num_classes, spec.ignore_index, buf.flag[:n], null=null)
    pos = np.flatnonzero(bad) if bad is not None else None
    if predicted is not None:
        predicted.count(values, bad, src, src_names, first_row)
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
        ids = batch.column(names.index(spec.id))
        keyed = id_keys is not None and id_keys.active
        out.ids = Ids(increasing=False) if keyed else _id_order(ids, buf.flag)
        if id_keys is not None and not out.ids.increasing:
            id_keys.active = True  # from now on every worker keys its ids as it decodes them
            id_keys.add(ids, first_row)
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
    st = judge(
        values[pos], spec.num_classes, spec.ignore_index, null=None if null is None else null[pos]
    )
    rows = first_row + pos
    batch = rows // spec.batch_size
    rejected = st >= Status.HIGH
    uniq, start = np.unique(batch, return_index=True)
    bad_n = np.diff(np.append(start, len(batch)))
    rej_n = np.add.reduceat(rejected.astype(np.int64), start) if len(start) else bad_n
    out.batch = (uniq.astype(np.int64), bad_n.astype(np.int64), rej_n.astype(np.int64))
    for status, code in failing_codes(spec.num_classes, spec.ignore_index).items():
        sel = np.flatnonzero(st == status)
        if not len(sel):
            continue
        h = out.hits.setdefault(code, Hits())
        h.count = len(sel)
        h.by_source = Counter(
            {src_names[s]: c for s, c in enumerate(np.bincount(src_at[sel]).tolist()) if c}
        )
        h.by_file[file_index] = len(sel)
        h.batches = distinct(batch[sel])
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
