"""Partial results of consecutive rows, and their associative, order-checked merge."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from labelgate.core.report import Example

__all__ = ["Compact", "Hits", "Ids", "Key", "Partial", "distinct", "failing_only", "fold", "merge"]

I64 = npt.NDArray[np.int64]
Table = tuple[I64, I64, I64]
Compact = Callable[[Table], Table]
_JOIN_EVERY = 64  # partials whose batch tables are joined (and compacted) at once
Key = tuple[str | None, str | None, int | None]  # (source, name, label value); None: null


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


def merge(parts: Iterable[Partial], compact: Compact | None = None) -> Partial:
    """Fold partials of consecutive rows, in row order; associative. ``compact``, when given,
    drops the sparse batch entries no check needs (see ``failing_only``) as tables are joined,
    so that the merged table does not grow with the rows.

    Raises:
        ValueError: a partial does not start where the previous one ended.
    """
    it = iter(parts)
    try:
        first = next(it)
    except StopIteration:
        raise ValueError("nothing to merge") from None
    acc = _copy(first)
    tables = [first.batch]  # joined now and then: joining at every fold copies them again
    for p in it:
        fold(acc, p, join_batches=False)
        tables.append(p.batch)
        if compact is not None and len(tables) >= _JOIN_EVERY:
            tables = [compact(_join_sparse(tables))]
    acc.batch = _join_sparse(tables)
    return acc


def failing_only(batch_size: int, rows: int) -> Compact:
    """A ``compact`` for ``merge`` that keeps the batches that fail (every row unusable, or a
    row rejected) of a dataset of ``rows`` rows, and the last entry, which may continue in the
    next partial."""

    def compact(table: Table) -> Table:
        index, bad, rejected = table
        if not len(index):
            return table
        full = np.minimum(batch_size, rows - index * batch_size)
        keep = (bad >= full) | (rejected > 0)
        keep[-1] = True
        return index[keep], bad[keep], rejected[keep]

    return compact


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


def distinct(values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``np.unique(values)`` (``np.union1d`` of those concatenated) by a sort: numpy 2's hash path of ``np.unique`` imports ``numpy.ma``
    (8 ms, on every run that finds a bad row) only to ask whether the array is masked."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def fold(acc: Partial, p: Partial, *, join_batches: bool = True) -> None:
    """Add ``p``, the partial of the rows right after ``acc``'s, into ``acc`` (which it changes).

    Raises:
        ValueError: ``p`` does not start where ``acc`` ends.
    """
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
        mine.batches = distinct(np.concatenate((mine.batches, h.batches)))
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


def _join_sparse(tables: list[Table]) -> Table:
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
