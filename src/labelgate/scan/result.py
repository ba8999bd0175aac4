"""The scan result: what one pass over the labels found, frozen, and the only thing checks read.

Every producer returns one: the sequential scan (text inputs, tokens, soft labels, shuffling,
class weights), the pieces (Parquet row groups on threads) and Dask (the same pieces on a cluster).
Its arrays are read-only; a producer never writes into another's result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.core.batchplan import BatchPlan
from labelgate.core.classcounts import ClassCounts
from labelgate.core.report import Example

__all__ = [
    "ID_MEMORY",
    "MAX_OTHER_VALUES",
    "MAX_PAIRS",
    "NO_SOURCE",
    "PER_BATCH_MAX",
    "CodeTally",
    "DenseBatches",
    "DuplicateIds",
    "ScanResult",
    "SparseBatches",
    "frozen",
    "without_unkept",
]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
NO_SOURCE = "(none)"
MAX_OTHER_VALUES = 1_000  # distinct out-of-range values named; the rest are counted
MAX_PAIRS = 100_000  # distinct (source, value, name) triples kept for the name checks
PER_BATCH_MAX = 10_000  # kept batches up to which the report lists each batch's usable rows
ID_MEMORY = 128 << 20  # bytes the duplicate-id pass may hold by default


def frozen(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``a``, made read-only (a copy where it is a view of something still written)."""
    out = a if a.base is None else a.copy()
    out.flags.writeable = False
    return out


@dataclass(frozen=True, slots=True)
class CodeTally:
    """Where the values failing one check were met.

    Attributes:
        count: values (rows, or tokens) failing it.
        examples: the first ones, in row order.
        by_source: source index -> count.
        by_file: file index -> count.
        batches: the batches holding one.
        rows: rows holding one (masks, where ``count`` is of pixels); ``None`` where the
            producer does not count them.
    """

    count: int
    examples: tuple[Example, ...]
    by_source: Mapping[int, int]
    by_file: Mapping[int, int]
    batches: frozenset[int]
    rows: int | None = None

    def top_source(self) -> tuple[int, int]:
        """The source holding most failing values, and how many (first such source on a tie)."""
        return max(self.by_source.items(), key=lambda kv: (kv[1], -kv[0]))


def without_unkept(tallies: Mapping[str, CodeTally], kept: int) -> dict[str, CodeTally]:
    """The tallies with every example in a batch that drop_last drops naming no batch."""

    def named(e: Example) -> Example:
        return e if e.batch is None or e.batch < kept else replace(e, batch=None)

    return {
        code: replace(t, examples=tuple(named(e) for e in t.examples))
        for code, t in tallies.items()
    }


@dataclass(frozen=True, slots=True)
class DuplicateIds:
    """Ids met more than once: how many rows repeat an earlier id, and the first such rows;
    ``per_file``: ids compared within each file only (an input whose ids are per file)."""

    rows: int
    distinct: int
    examples: tuple[Example, ...]
    per_file: bool = False


@dataclass(frozen=True, slots=True)
class SparseBatches:
    """Per-batch counts kept only for batches holding a row that is not usable (file order).

    A batch absent from the table is full of usable rows, unless the table is not ``complete``:
    past PER_BATCH_MAX kept batches (where no per-batch list is reported) the merge keeps only
    the batches that fail, all rows unusable or a row rejected, so that memory does not grow with
    the rows.

    Attributes:
        index: batch indices, increasing.
        bad: rows in that batch that are not usable.
        rejected: rows in that batch whose target makes the loss raise.
        complete: whether every batch holding a row that is not usable is listed.
    """

    index: I64
    bad: I64
    rejected: I64
    complete: bool = True


@dataclass(frozen=True, slots=True)
class DenseBatches:
    """Per-batch counts for every batch (the sequential scan's form).

    Attributes:
        usable: usable targets per batch.
        rejected: targets that make the loss raise, per batch.
        weight: the usable targets' total class weight per batch (class weights only).
    """

    usable: I64
    rejected: I64
    weight: F64


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What a scan found: counts, tallies per check, per-source tables, batches, ids.

    Attributes:
        k, ignore_index, plan, max_examples: the rules, batch plan and examples kept per check
            (0: all) it was scanned under.
        rows, tokens: rows read; tokens (or, for masks, pixels) read (token and segmentation
            tasks, else 0).
        file_rows: rows per input file.
        row_status, value_status: rows (values) per ``labelgate.core.rules.Status``.
        class_counts: usable targets per class (sparse above ``DENSE_LIMIT`` classes).
        ignore_hits: targets equal to ignore_index.
        other_values, other_values_overflow: out-of-range values with their counts (at most
            1,000 distinct), and the count of values past that.
        tallies: check code -> where its failing values were met.
        source_names, source_rows, source_status, source_hist, source_first: per source (in the
            order of their first row): name, rows, rows per status, usable values per class plus
            the count of values equal to K (counts over K + 1 classes, the last one K), and
            first row.
        source_firsts: source -> its first rows with a name and a label (evidence for LG011).
        pairs, pairs_overflow: (source, value, name) -> (count, first row), for the name checks.
        ids_seen, ids_increasing: whether an id column was read, and whether its ids strictly
            increase (then no id repeats, and no second pass is needed).
        soft_reasons: for the soft task, how many rows broke each rule.
        dense, sparse: the per-batch counts, in one of their two forms.
        class_rows: for segmentation masks (where every count is of pixels), the masks holding
            each class; ``None`` otherwise.
    """

    k: int
    ignore_index: int
    plan: BatchPlan
    max_examples: int
    rows: int
    tokens: int
    file_rows: tuple[int, ...]
    row_status: I64
    value_status: I64
    class_counts: ClassCounts
    ignore_hits: int
    other_values: Mapping[int, int]
    other_values_overflow: int
    tallies: Mapping[str, CodeTally]
    source_names: tuple[str, ...]
    source_rows: I64
    source_status: I64
    source_hist: tuple[ClassCounts, ...]
    source_first: tuple[int, ...]
    source_firsts: Mapping[int, tuple[Example, ...]]
    pairs: Mapping[tuple[int, int, str], tuple[int, int]]
    pairs_overflow: bool
    ids_seen: bool
    ids_increasing: bool
    soft_reasons: Mapping[str, int]
    dense: DenseBatches | None = None
    sparse: SparseBatches | None = None
    class_rows: ClassCounts | None = None

    def kept(self) -> int:
        """Batches a DataLoader yields."""
        return self.plan.kept_batches(self.rows)

    def nan_batches(self, *, weighted: bool) -> list[int]:
        """Kept batches with no usable target (or, ``weighted``, usable targets of weight 0) and
        no target that makes the loss raise."""
        kept = self.kept()
        if self.sparse is not None:
            sp = self.sparse
            sel = sp.index < kept
            idx = sp.index[sel]
            full = np.minimum(self.plan.size, self.rows - idx * self.plan.size)
            empty = (sp.bad[sel] == full) & (sp.rejected[sel] == 0)
            return [int(b) for b in idx[empty]]
        assert self.dense is not None
        d = self.dense
        none = d.usable[:kept] == 0
        if weighted:
            none |= d.weight[:kept] == 0.0
        none &= d.rejected[:kept] == 0
        return [int(b) for b in np.flatnonzero(none)]

    def rejected_batches(self) -> list[int]:
        """Kept batches holding a target that makes the loss raise."""
        kept = self.kept()
        if self.sparse is not None:
            sp = self.sparse
            return [int(b) for b in sp.index[(sp.index < kept) & (sp.rejected > 0)]]
        assert self.dense is not None
        return [int(b) for b in np.flatnonzero(self.dense.rejected[:kept] > 0)]

    def usable_per_batch(self) -> I64:
        """Usable targets in each kept batch (one entry per batch: use for small datasets)."""
        kept = self.kept()
        if self.sparse is None:
            assert self.dense is not None
            return self.dense.usable[:kept]
        if not self.sparse.complete:
            raise ValueError("per-batch counts were kept for failing batches only")
        size = self.plan.size
        out = np.minimum(size, self.rows - np.arange(kept, dtype=np.int64) * size)
        sel = self.sparse.index < kept
        out[self.sparse.index[sel]] -= self.sparse.bad[sel]
        return out
