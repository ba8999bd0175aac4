"""``diff``'s rows by id: each revision's label per id, and the ids added, removed and relabelled.

An id's label is its last row's; ids are listed in the order of their first row. Where every id
and label of both revisions is an integer (stored so, an integral float, or integer text such as
a CSV's ``"17"``), the comparison runs on arrays; anything else (other text, lists, null ids)
goes through ``comparable`` value by value, with the same result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.commands.diffvalues import comparable
from labelgate.core.arrow import numbers, valid

__all__ = ["RowChanges", "row_changes"]

I64 = npt.NDArray[np.int64]
_SPACES = " \t\n\r\x0b\x0c"  # the ASCII whitespace str.strip removes
_ASCII_INTEGER = f"^[{_SPACES}]*[+-]?[0-9]{{1,18}}[{_SPACES}]*$"


@dataclass(frozen=True, slots=True)
class RowChanges:
    """Ids added (in HEAD, not BASE), removed, and changed (both, another label), in the
    order of their first row; ``base`` and ``head`` give each changed id's label (``None`` for a
    null), for the first ``shown`` changed ids."""

    added: list[Any]
    removed: list[Any]
    changed: list[Any]
    base: dict[Any, Any]
    head: dict[Any, Any]


def row_changes(
    base: Iterable[tuple[Any, Any]], head: Iterable[tuple[Any, Any]], shown: int
) -> RowChanges:
    """Compare the (ids, labels) column pairs of each revision's batches."""
    b, h = list(base), list(head)
    fast_b, fast_h = _integers(b), _integers(h)
    if fast_b is not None and fast_h is not None:
        return _by_arrays(fast_b, fast_h, shown)
    return _by_values(_values(b), _values(h), shown)


def _values(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for ids, labels in pairs:
        out.update(
            zip(map(comparable, ids.to_pylist()), map(comparable, labels.to_pylist()), strict=True)
        )
    return out


def _by_values(b: dict[Any, Any], h: dict[Any, Any], shown: int) -> RowChanges:
    changed = [k for k in h if k in b and b[k] != h[k]]
    return RowChanges(
        added=[k for k in h if k not in b],
        removed=[k for k in b if k not in h],
        changed=changed,
        base={k: b[k] for k in changed[:shown]},
        head={k: h[k] for k in changed[:shown]},
    )


@dataclass(frozen=True, slots=True)
class _Column:
    ids: I64
    labels: I64
    null: npt.NDArray[np.bool_]


def _integers(pairs: list[tuple[Any, Any]]) -> _Column | None:
    """Every id and label as an int64 (labels may be null), or ``None`` where one is not an
    integer as ``comparable`` reads it."""
    ids, labels, nulls = [], [], []
    for id_column, label_column in pairs:
        got_ids = _as_int64(id_column)
        got_labels = _as_int64(label_column, nulls_allowed=True)
        if got_ids is None or got_labels is None:
            return None
        ids.append(got_ids[0])
        labels.append(got_labels[0])
        nulls.append(got_labels[1])
    if not ids:
        return _Column(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool))
    return _Column(np.concatenate(ids), np.concatenate(labels), np.concatenate(nulls))


def _as_int64(
    column: Any, *, nulls_allowed: bool = False
) -> tuple[I64, npt.NDArray[np.bool_]] | None:
    """The column as int64 and its nulls (0 in their place), read from the Arrow buffers
    (``labelgate.core.arrow``: ``to_numpy`` and a Python fill value would import pandas)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if column.null_count and not nulls_allowed:
        return None
    kind = column.type
    if pa.types.is_integer(kind):
        if pa.types.is_uint64(kind) and len(column) and pc.max(column).as_py() >= 1 << 63:
            return None
        values = column.cast(pa.int64())
    elif pa.types.is_floating(kind):
        raw = numbers(column).astype(np.float64, copy=False)
        if not bool((np.isfinite(raw) & (np.floor(raw) == raw) & (np.abs(raw) < 2.0**62)).all()):
            return None
        return raw.astype(np.int64), ~valid(column)
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        fits = pc.match_substring_regex(column, _ASCII_INTEGER)
        if pc.all(fits).as_py() is False:  # nulls skipped (all null: None)
            return None  # other text, or whitespace str.strip and Arrow may trim apart
        text = pc.replace_substring_regex(pc.utf8_trim(column, _SPACES), r"^\+", "")
        values = pc.cast(text, pa.int64())
    else:
        return None
    return numbers(values).astype(np.int64, copy=False), ~valid(values)


@dataclass(frozen=True, slots=True)
class _Unique:
    ids: I64  # sorted
    first: I64  # each id's first row
    label: I64  # its last row's label
    null: npt.NDArray[np.bool_]


def _unique(col: _Column) -> _Unique:
    if len(col.ids) < 2 or bool((col.ids[1:] > col.ids[:-1]).all()):
        # increasing ids (the usual layout): each is its own first and last row, no sort
        return _Unique(col.ids, np.arange(len(col.ids)), col.labels, col.null)
    order = np.argsort(col.ids, kind="stable")
    ids = col.ids[order]
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1]))) if len(ids) else ids
    ends = np.concatenate((starts[1:], [len(ids)])) - 1 if len(ids) else ids
    last = order[ends]
    return _Unique(ids[starts], order[starts], col.labels[last], col.null[last])


def _by_arrays(b_col: _Column, h_col: _Column, shown: int) -> RowChanges:
    b, h = _unique(b_col), _unique(h_col)
    if len(b.ids):
        at = np.minimum(np.searchsorted(b.ids, h.ids), len(b.ids) - 1)
        found = b.ids[at] == h.ids
        b_null, b_label = b.null[at], b.label[at]
    else:
        at = np.zeros(len(h.ids), np.int64)
        found = np.zeros(len(h.ids), dtype=bool)
        b_null, b_label = found.copy(), at.copy()
    in_head = np.zeros(len(b.ids), dtype=bool)
    in_head[at[found]] = True
    differs = found & ((b_null != h.null) | (~h.null & (b_label != h.label)))

    def listed(mask: npt.NDArray[np.bool_], u: _Unique) -> list[int]:
        picked = np.flatnonzero(mask)
        return [int(v) for v in u.ids[picked[np.argsort(u.first[picked], kind="stable")]]]

    changed_at = np.flatnonzero(differs)
    changed_at = changed_at[np.argsort(h.first[changed_at], kind="stable")]
    changed = [int(v) for v in h.ids[changed_at]]

    def value(null: bool, label: int) -> int | None:
        return None if null else int(label)

    head_of = {int(h.ids[i]): value(bool(h.null[i]), int(h.label[i])) for i in changed_at[:shown]}
    base_of = {int(h.ids[i]): value(bool(b_null[i]), int(b_label[i])) for i in changed_at[:shown]}
    return RowChanges(
        added=listed(~found, h),
        removed=listed(~in_head, b),
        changed=changed,
        base=base_of,
        head=head_of,
    )
