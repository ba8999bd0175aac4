"""The sequential producer: one streaming pass over the label columns, in bounded memory.

It takes every input and task; Parquet multiclass inputs in file order take the pieces instead
(``labelgate.scan.runner``), which give the same ``labelgate.scan.result.ScanResult``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.core.arrow import bool_mask, from_numpy, numbers
from labelgate.core.batchplan import BatchPlan
from labelgate.core.classcounts import ClassCounts, add_grouped, source_counts
from labelgate.core.labels import (
    Classified,
    classify,
    classify_indices,
    classify_multilabel,
    classify_soft,
)
from labelgate.core.report import Example
from labelgate.core.rules import Status, failing_codes
from labelgate.scan.chunks import Chunk, Tally, counted, frozen_tallies, pixel_counts
from labelgate.scan.keys import triples
from labelgate.scan.result import (
    MAX_OTHER_VALUES,
    MAX_PAIRS,
    NO_SOURCE,
    DenseBatches,
    ScanResult,
    frozen,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Chunk", "Scan"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


class Scan:
    """Accumulates, chunk by chunk, the counts and examples the checks are computed from.

    Memory is bounded by the classes present (by K up to ``DENSE_LIMIT`` classes), the number of
    sources, batches (8 bytes each) and distinct (source, label, name) triples, never by the rows
    themselves.
    """

    def __init__(
        self,
        *,
        num_classes: int,
        ignore_index: int,
        plan: BatchPlan,
        weights: tuple[float, ...] | None = None,
        max_examples: int = 20,
        files: int = 1,
        soft_tolerance: float | None = None,
        dense: bool = True,
        multilabel: bool = False,
        indices: bool = False,
    ) -> None:
        self.k = num_classes
        self.soft_tolerance = soft_tolerance  # None unless the task is soft
        self.multilabel = multilabel  # multi-hot rows, judged as a whole (LG034, LG035)
        self.indices = indices  # multi-label rows written as the positive classes' indices
        self.soft_reasons: Counter[str] = Counter()
        self.ignore_index = ignore_index
        # status -> the check code its targets fail; LG034 is the row rule of multi-hot targets
        self.failing = {
            status: "LG034" if multilabel and code == "LG015" else code
            for status, code in failing_codes(num_classes, ignore_index).items()
        }
        self.plan = plan
        self.weights: F64 | None = None if weights is None else np.asarray(weights, np.float64)
        self.max_examples = max_examples
        self.rows = 0
        self.tokens = 0
        self.row_status = np.zeros(Status.COUNT, np.int64)
        self.value_status = np.zeros(Status.COUNT, np.int64)
        self.class_counts = ClassCounts(num_classes)
        self.class_rows = ClassCounts(num_classes)  # rows holding each class (masks)
        self.pixels = False  # whether counts are of pixels (segmentation masks)
        self.ignore_hits = 0
        self.other_values: Counter[int] = Counter()
        self.other_values_overflow = 0
        self.tallies: dict[str, Tally] = defaultdict(Tally)
        self.file_rows = [0] * files
        cap = 1024 if plan.rows is None else plan.kept_batches(plan.rows) + 1
        cap = cap if dense else 0
        self.batch_usable = np.zeros(cap, np.int64)
        self.batch_rejected = np.zeros(cap, np.int64)
        self.batch_weight = np.zeros(cap, np.float64)
        self.source_names: list[str] = []
        self._source_index: dict[str | None, int] = {}
        self.source_rows = np.zeros(0, np.int64)
        self.source_status = np.zeros((0, Status.COUNT), np.int64)
        self.source_hist: list[ClassCounts] = []  # over K + 1 classes: the last one is K
        self.source_first: list[int] = []  # first row of each source, for a stable order
        self.source_firsts: dict[int, list[Example]] = defaultdict(list)
        self.pairs: dict[tuple[int, int, str], list[int]] = {}
        self.pairs_overflow = False
        self.ids_seen = False
        self.ids_increasing = True
        self._last_id: Any = None

    # -- feeding -----------------------------------------------------------------------------

    def feed(self, chunk: Chunk) -> None:
        """Add one chunk's rows (chunks must come in reading order)."""
        n = len(chunk.labels)
        if n == 0:
            return
        positives = None
        if self.multilabel:
            judge = classify_indices if self.indices else classify_multilabel
            c, reasons, positives = judge(chunk.labels, num_classes=self.k)
            self.soft_reasons.update(reasons)
        elif self.soft_tolerance is None:
            c = classify(chunk.labels, num_classes=self.k, ignore_index=self.ignore_index)
        else:
            c, reasons = classify_soft(
                chunk.labels, num_classes=self.k, tolerance=self.soft_tolerance
            )
            self.soft_reasons.update(reasons)
        src = self._sources(chunk.sources, n)
        batch = self.plan.batch_of(chunk.first_row, n)
        w = None if chunk.pixels is None else pixel_counts(chunk.pixels, c)
        self.pixels |= w is not None
        self.rows += n
        self.file_rows[chunk.file_index] += n
        self.row_status += np.bincount(c.row_status, minlength=Status.COUNT)[: Status.COUNT]
        self.value_status += counted(c.status, w, Status.COUNT)
        if c.row_of is not None:
            self.tokens += len(c.values) if w is None else int(w.sum())

        usable = c.status == Status.USABLE
        soft = self.soft_tolerance is not None or self.multilabel
        if positives is not None:  # a multi-hot row counts once for each class it holds
            self.class_counts.merge(positives)
        elif not soft:  # a soft row is a distribution, not one class
            held = c.values[usable]
            self.class_counts.add(held, None if w is None else w[usable])
            if w is not None:  # a mask's values are distinct: one per mask holding the class
                self.class_rows.add(held)
        ignored = c.status == Status.IGNORED
        self.ignore_hits += int(ignored.sum() if w is None else w[ignored].sum())
        out = (c.status == Status.HIGH) | (c.status == Status.NEGATIVE)
        if out.any():
            uniq, inverse = np.unique(c.values[out], return_inverse=True)
            counts = counted(inverse, None if w is None else w[out], len(uniq))
            for v, cnt in zip(uniq.tolist(), counts.tolist(), strict=True):
                self.add_other(v, cnt)

        self._batches(c, batch, usable, w)
        self._per_source(c, src, usable, chunk.first_row, w)
        for status, code in self.failing.items():
            self._tally(code, c.status == status, c, chunk, src, batch, w)
        if chunk.names is not None and c.row_of is None and not soft:
            self._pairs(c, chunk, src)
        if chunk.ids is not None:
            self._ids(chunk.ids)

    def add_other(self, value: int, count: int) -> None:
        """Count an out-of-range value (at most MAX_OTHER_VALUES distinct ones are named)."""
        if value in self.other_values or len(self.other_values) < MAX_OTHER_VALUES:
            self.other_values[value] += count
        else:
            self.other_values_overflow += count

    def _grow(self, top: int) -> None:
        if top < len(self.batch_usable):
            return
        size = max(top + 1, 2 * len(self.batch_usable))
        for name in ("batch_usable", "batch_rejected", "batch_weight"):
            old = getattr(self, name)
            new = np.zeros(size, old.dtype)
            new[: len(old)] = old
            setattr(self, name, new)

    def _batches(
        self, c: Classified, batch: I64, usable: npt.NDArray[np.bool_], w: I64 | None
    ) -> None:
        n = len(batch)
        if c.row_of is None:
            per_row_usable = usable.astype(np.int64)
            per_row_weight = (
                np.where(usable, self.weights[np.where(usable, c.values, 0)], 0.0)
                if self.weights is not None and self.soft_tolerance is None
                else None
            )
        else:
            rows_of_usable = c.row_of[usable]
            pixels = None if w is None else w[usable].astype(np.float64)
            per_row_usable = np.bincount(rows_of_usable, weights=pixels, minlength=n).astype(
                np.int64
            )
            per_row_weight = None
            if self.weights is not None:
                weight = self.weights[c.values[usable]]
                per_row_weight = np.bincount(
                    rows_of_usable,
                    weights=weight if pixels is None else weight * pixels,
                    minlength=n,
                )
        rejected = (c.row_status >= Status.HIGH).astype(np.int64)
        top = int(batch.max())
        self._grow(top)
        # counts summed by bincount over the batches met (exact); weights, out of order, summed
        # in row order by add.at
        lo, hi = int(batch.min()), top + 1
        rel = batch - lo
        self.batch_usable[lo:hi] += np.bincount(
            rel, weights=per_row_usable, minlength=hi - lo
        ).astype(np.int64)
        self.batch_rejected[lo:hi] += np.bincount(rel, weights=rejected, minlength=hi - lo).astype(
            np.int64
        )
        if per_row_weight is None:
            return
        if self.plan.in_order:
            self.batch_weight[lo:hi] += np.bincount(rel, weights=per_row_weight, minlength=hi - lo)
        else:
            np.add.at(self.batch_weight, batch, per_row_weight)

    def _sources(self, column: pa.Array | None, n: int) -> I64:
        import pyarrow as pa
        import pyarrow.compute as pc

        if column is None:
            return np.full(n, self.source_id(None), np.int64)
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(
                column.cast(pa.string()) if not pa.types.is_string(column.type) else column
            )
        local = numbers(column.indices, -1).astype(np.int64)
        mapping = np.array(
            [self.source_id(None if v is None else str(v)) for v in column.dictionary.to_pylist()]
            + [self.source_id(None)],
            dtype=np.int64,
        )
        return mapping[local]  # -1 (null) picks the last entry: "(none)"

    def source_id(self, name: str | None) -> int:
        """The index of a source (``None``: rows with no source), registering it when new."""
        found = self._source_index.get(name)
        if found is not None:
            return found
        new = len(self.source_names)
        self._source_index[name] = new
        self.source_names.append(NO_SOURCE if name is None else name)
        self.source_first.append(-1)
        self.source_rows = np.append(self.source_rows, 0)
        self.source_status = np.vstack([self.source_status, np.zeros((1, Status.COUNT), np.int64)])
        self.source_hist.append(source_counts(self.k + 1, len(self.source_hist)))
        return new

    def _per_source(
        self, c: Classified, src: I64, usable: npt.NDArray[np.bool_], first: int, w: I64 | None
    ) -> None:
        s = len(self.source_names)
        here = np.bincount(src, minlength=s)
        for new in np.flatnonzero((here > 0) & (self.source_rows == 0)).tolist():
            self.source_first[new] = first + int(np.argmax(src == new))
        self.source_rows += here
        statuses = self.source_status.shape[1]
        self.source_status += np.bincount(
            src * statuses + c.row_status.astype(np.int64), minlength=s * statuses
        ).reshape(s, statuses)
        in_hist = usable | ((c.status == Status.HIGH) & (c.values == self.k))
        elem_src = (src if c.row_of is None else src[c.row_of])[in_hist]
        add_grouped(
            self.source_hist, elem_src, c.values[in_hist], None if w is None else w[in_hist]
        )

    def _example(
        self, c: Classified, chunk: Chunk, src: I64, batch: I64, elem: int, w: I64 | None = None
    ) -> Example:
        row = elem if c.row_of is None else int(c.row_of[elem])
        return Example(
            row=chunk.first_row + row,
            id=None if chunk.ids is None else chunk.ids[row].as_py(),
            batch=int(batch[row]),
            source=None if chunk.sources is None else self.source_names[int(src[row])],
            value=c.raw[elem].as_py(),
            position=None if c.position is None or w is not None else int(c.position[elem]),
            pixels=None if w is None else int(w[elem]),
        )

    def _tally(
        self,
        code: str,
        mask: npt.NDArray[np.bool_],
        c: Classified,
        chunk: Chunk,
        src: I64,
        batch: I64,
        w: I64 | None = None,
    ) -> None:
        """Count the values failing ``code`` (the pixels, for masks), where they are, and the
        first ones."""
        elems = np.flatnonzero(mask)
        if not len(elems):
            return
        weight = np.ones(len(elems), np.int64) if w is None else w[elems]
        hits = int(weight.sum())
        t = self.tallies[code]
        t.count += hits
        rows = elems if c.row_of is None else c.row_of[elems]
        t.rows += len(elems) if c.row_of is None else len(np.unique(rows))  # elems: ascending
        per_source = counted(src[rows], weight, len(self.source_names))
        t.by_source.update({s: int(v) for s, v in enumerate(per_source.tolist()) if v})
        t.by_file[chunk.file_index] += hits
        t.batches.update(np.unique(batch[rows]).tolist())
        room = len(elems) if self.max_examples == 0 else self.max_examples - len(t.examples)
        for e in elems[: max(room, 0)]:
            t.examples.append(self._example(c, chunk, src, batch, int(e), w))

    def _pairs(self, c: Classified, chunk: Chunk, src: I64) -> None:
        """Count (source, label, name) triples, keeping each triple's first row."""
        import pyarrow as pa
        import pyarrow.compute as pc

        names = chunk.names
        assert names is not None
        if isinstance(names, pa.ChunkedArray):
            names = names.combine_chunks()
        valid = (c.row_status <= Status.NEGATIVE) & ~bool_mask(names.is_null())
        if not valid.any() or self.pairs_overflow:
            return
        idx = np.flatnonzero(valid)
        picked = names.take(from_numpy(idx))
        if not pa.types.is_dictionary(picked.type):
            picked = pc.dictionary_encode(picked.cast(pa.string()))
        encoded = picked
        dictionary = ["" if v is None else str(v) for v in encoded.dictionary.to_pylist()]
        codes = numbers(encoded.indices).astype(np.int64)
        for s, v, n, first_pos, count in triples(src[idx], c.values[idx], codes, len(dictionary)):
            key = (s, v, dictionary[n])
            entry = self.pairs.get(key)
            if entry is None:
                if len(self.pairs) >= MAX_PAIRS:
                    self.pairs_overflow = True
                    return
                self.pairs[key] = [count, int(idx[first_pos]) + chunk.first_row]
            else:
                entry[0] += count
        for s in np.flatnonzero(np.bincount(src[idx])).tolist():
            firsts = self.source_firsts[s]
            if len(firsts) >= max(self.max_examples, 1):
                continue
            rows = idx[src[idx] == s][: max(self.max_examples, 1) - len(firsts)]
            firsts.extend(
                Example(
                    row=chunk.first_row + int(r),
                    id=None if chunk.ids is None else chunk.ids[int(r)].as_py(),
                    batch=int(self.plan.batch_of(chunk.first_row + int(r), 1)[0]),
                    source=self.source_names[s],
                    value=int(c.values[r]),
                )
                for r in rows
            )

    def _ids(self, ids: pa.Array) -> None:
        import pyarrow as pa

        self.ids_seen = True
        if not self.ids_increasing:
            return
        if not pa.types.is_integer(ids.type) or ids.null_count:
            self.ids_increasing = False
            return
        a = numbers(ids).astype(np.int64)
        if len(a) == 0:
            return
        if (self._last_id is not None and a[0] <= self._last_id) or (np.diff(a) <= 0).any():
            self.ids_increasing = False
            return
        self._last_id = int(a[-1])

    def result(self) -> ScanResult:
        """The frozen result: sources numbered by their first row, examples in a batch that
        drop_last drops naming no batch."""
        self._finish()
        kept = self.plan.kept_batches(self.rows)
        self._grow(kept)  # batches of images without a box hold no row, yet are batches
        return ScanResult(
            k=self.k,
            ignore_index=self.ignore_index,
            plan=self.plan,
            max_examples=self.max_examples,
            rows=self.rows,
            tokens=self.tokens,
            file_rows=tuple(self.file_rows),
            row_status=frozen(self.row_status),
            value_status=frozen(self.value_status),
            class_counts=self.class_counts.freeze(),
            class_rows=self.class_rows.freeze() if self.pixels else None,
            ignore_hits=self.ignore_hits,
            other_values=dict(self.other_values),
            other_values_overflow=self.other_values_overflow,
            tallies=frozen_tallies(self.tallies, kept),
            source_names=tuple(self.source_names),
            source_rows=frozen(self.source_rows),
            source_status=frozen(self.source_status),
            source_hist=tuple(h.freeze() for h in self.source_hist),
            source_first=tuple(self.source_first),
            source_firsts={s: tuple(ex) for s, ex in self.source_firsts.items() if ex},
            pairs={key: (c, first) for key, (c, first) in self.pairs.items()},
            pairs_overflow=self.pairs_overflow,
            ids_seen=self.ids_seen,
            ids_increasing=self.ids_increasing,
            soft_reasons=dict(self.soft_reasons),
            dense=DenseBatches(
                frozen(self.batch_usable), frozen(self.batch_rejected), frozen(self.batch_weight)
            ),
        )

    def _finish(self) -> None:
        """Number the sources in the order their first row appears (then those with no rows),
        so that the order does not depend on how the rows were split."""
        n = len(self.source_names)
        live = [i for i in range(n) if self.source_rows[i] > 0]
        order = sorted(live, key=lambda i: self.source_first[i])
        order += [i for i in range(n) if self.source_rows[i] == 0]
        if order == list(range(n)):
            return
        new = {old: i for i, old in enumerate(order)}
        self.source_names = [self.source_names[i] for i in order]
        self.source_first = [self.source_first[i] for i in order]
        self._source_index = {k: new[v] for k, v in self._source_index.items()}
        self.source_rows = self.source_rows[order]
        self.source_status = self.source_status[order]
        self.source_hist = [self.source_hist[i] for i in order]
        self.source_firsts = defaultdict(list, {new[s]: ex for s, ex in self.source_firsts.items()})
        self.pairs = {(new[s], v, m): e for (s, v, m), e in self.pairs.items()}
        for t in self.tallies.values():
            t.by_source = Counter({new[s]: c for s, c in t.by_source.items()})
