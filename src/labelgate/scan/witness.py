"""The labels against a model's predictions: one confusion matrix (given x predicted) per source.

The predictions (``labelgate.io.predictions``) are joined to the rows by id where the predictions
file has an id column, else by position. The data is read once more, its label, id and source
columns only; what is held is the predicted class of each prediction, its id, and a K x K count
per source (and, for the per-example step, each judged row's position, source, class and
prediction). Every row without a prediction, and every prediction without a row, is counted and the
first of them named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.core.arrow import numbers
from labelgate.core.labels import Status, classify
from labelgate.errors import UsageError
from labelgate.io.predictions import Predictions, read_predictions
from labelgate.scan.result import NO_SOURCE

if TYPE_CHECKING:
    from labelgate.inputs.dataset import Dataset

__all__ = ["WitnessCounts", "count_witness"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class WitnessCounts:
    """The data's labels against the predictions, counted.

    Attributes:
        predictions: the predictions file as read.
        joined_by: ``id 'col'`` or ``position``.
        confusion: source name -> K x K counts, given class (row) x predicted class (column), in
            the order the sources first appear.
        judged: rows counted in a confusion matrix (a usable label and a predicted class).
        without_prediction: rows that have no prediction (or one with no class).
        without_prediction_named: the first of them, by id (or row number).
        without_row: predictions that match no row.
        without_row_named: the first of them, by id (or position).
        not_judged: rows with a prediction whose label is no class (ignored, null, out of range:
            the other checks' findings).
        rows: with ``per_example``, each judged row's position, its source's index (into
            ``confusion``'s order), its given class and its prediction's index (an N x 4 array);
            else ``None``.
        limit: the rows a finding names at the most (0: all).
    """

    predictions: Predictions
    joined_by: str
    confusion: dict[str, I64]
    judged: int
    without_prediction: int
    without_prediction_named: tuple[Any, ...] = ()
    without_row: int = 0
    without_row_named: tuple[Any, ...] = ()
    not_judged: int = 0
    rows: I64 | None = None
    limit: int = 20

    def note(self) -> str:
        """What was joined, in one line for the report's notes."""
        p = self.predictions
        text = (
            f"predictions {p.path}: {p.rows} rows of {p.described()}, joined by {self.joined_by}; "
            f"{self.judged} rows judged against them"
        )
        if self.joined_by == "position":
            text += " (the predictions have no id column: row i is prediction i)"
        if self.without_prediction:
            text += (
                f"; {self.without_prediction} rows without a prediction "
                f"({_listed(self.without_prediction_named, self.without_prediction)})"
            )
        if self.without_row:
            text += (
                f"; {self.without_row} predictions without a row "
                f"({_listed(self.without_row_named, self.without_row)})"
            )
        if self.not_judged:
            text += f"; {self.not_judged} rows whose label is no class not judged"
        return text


def _listed(named: tuple[Any, ...], count: int) -> str:
    shown = ", ".join(str(v) for v in named)
    return shown + (f" and {count - len(named)} more" if count > len(named) else "")


def count_witness(
    data: Dataset, path: str, *, limit: int = 20, per_example: bool = False
) -> WitnessCounts:
    """Join the predictions at ``path`` to the rows of ``data`` and count each source's confusion
    matrix.

    With ``per_example``, every judged row is kept (its position, source, class and prediction)
    with the predictions' probabilities, for the per-example step (cleanlab).

    Raises:
        UsageError: the task has no single class per row, the predictions say another K, their
            ids repeat, or cannot be joined.
        InputError: the predictions cannot be read.
    """
    if data.task != "multiclass":
        raise UsageError(
            f"--predictions judges one class per row; this input's task is {data.task}"
        )
    k, cols = data.k, data.columns
    pred = read_predictions(path, k=k, id_column=cols.id, keep_probabilities=per_example)
    named_at_most = limit or 20  # the unmatched named in the note
    kept: list[I64] | None = [] if pred.probs is not None else None
    if pred.id_column is not None and cols.id is None:
        raise UsageError(
            f"--predictions {path} has an id column ({pred.id_column!r}) and the data none: "
            "name the data's id column (--id-column) to join on it"
        )
    join = _IdJoin(pred, path) if pred.id_column is not None else None
    matched = np.zeros(pred.rows, dtype=bool)
    tally = _Tally(k)
    judged = not_judged = missing = 0
    missing_named: list[Any] = []
    wanted = [c for c in (cols.label, cols.id, cols.source) if c is not None]
    ignore = data.contract.ignore_index
    for _, first, batch in data.chunks(list(dict.fromkeys(wanted)), encoded=True):
        n = batch.num_rows
        if join is None:
            at = np.arange(first, first + n, dtype=np.int64)
            at[at >= pred.rows] = -1
        else:
            at = join.find(batch.column(cols.id))
        has = at >= 0
        matched[at[has]] = True
        predicted = np.full(n, -1, np.int64)
        predicted[has] = pred.predicted[at[has]]
        lost = predicted < 0
        if lost.any():
            missing += int(lost.sum())
            if len(missing_named) < named_at_most:
                room = named_at_most - len(missing_named)
                missing_named += _named(batch, cols.id, first, lost, room)
        c = classify(batch.column(cols.label), num_classes=k, ignore_index=ignore)
        usable = c.status == Status.USABLE
        not_judged += int(np.count_nonzero(~usable & ~lost))
        live = usable & ~lost
        judged += int(live.sum())
        sources = tally.sources(batch, cols.source)
        tally.add(sources[live], c.values[live] * k + predicted[live])
        if kept is not None:
            where = np.flatnonzero(live)
            kept.append(np.stack([where + first, sources[where], c.values[where], at[where]], 1))
    confusion = tally.done()
    rows = None
    if kept is not None:
        rows = np.concatenate(kept) if kept else np.zeros((0, 4), np.int64)
        order = {i: n for n, i in enumerate(tally.names[name] for name in confusion)}
        rows[:, 1] = (
            np.array([order.get(int(i), -1) for i in range(len(tally.names))])[rows[:, 1]]
            if len(rows)
            else rows[:, 1]
        )
    unmatched = np.flatnonzero(~matched)
    named: tuple[Any, ...] = tuple(
        pred.ids[int(i)].as_py() if pred.ids is not None else int(i)
        for i in unmatched[:named_at_most]
    )
    joined_by = "position" if pred.id_column is None else f"id {pred.id_column!r}"
    return WitnessCounts(
        pred,
        joined_by,
        confusion,
        judged,
        missing,
        tuple(missing_named),
        len(unmatched),
        named,
        not_judged,
        rows,
        limit,
    )


def _named(batch: Any, id_column: str | None, first: int, lost: Any, room: int) -> list[Any]:
    rows = np.flatnonzero(lost)[:room]
    if id_column is None:
        return [int(first + r) for r in rows]
    ids = batch.column(id_column)
    return [ids[int(r)].as_py() for r in rows]


class _Tally:
    """Each source's K x K counts, from (source, given * K + predicted) codes buffered and
    added in bulk into counts kept for the whole run: one flat array for every source while it
    stays within ``DENSE`` cells, one array per source past that. No K x K array is made per
    buffer: fresh memory costs more to touch than the counting itself."""

    # rows counted at once: a chunk's worth. Buffers of a million rows were 2.3x slower in all
    # (10M rows, K=1000): each flush's arrays were fresh memory, and touching it cost more than
    # the counting; arrays this size are reused by the allocator
    BUFFER = 1 << 16
    DENSE = 1 << 22  # sources x K x K cells kept in one flat array at the most

    def __init__(self, k: int) -> None:
        self.k = k
        self.names: dict[str, int] = {}
        self.flat: I64 | None = np.zeros(0, np.int64)
        self.counts: dict[int, I64] = {}
        self.seen: set[int] = set()
        self.parts: list[tuple[npt.NDArray[np.int32], I64]] = []
        self.buffered = 0

    def sources(self, batch: Any, column: str | None) -> npt.NDArray[np.int32]:
        """Each row's source as an index into the names seen (all rows in one source without a
        source column; a null source is ``NO_SOURCE``)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        n = batch.num_rows
        if column is None:
            return np.full(n, self._index(NO_SOURCE), np.int32)
        col = batch.column(column)
        if not pa.types.is_dictionary(col.type):
            if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
                col = pc.cast(col, pa.string())
            col = pc.dictionary_encode(col)
        codes = numbers(col.indices, -1).astype(np.int64)
        names = [NO_SOURCE if v is None else str(v) for v in col.dictionary.to_pylist()]
        null = self._index(NO_SOURCE) if (codes < 0).any() else -1
        lookup = np.array([*(self._index(v) for v in names), null], np.int32)
        return lookup[codes]  # code -1 (a null) picks the trailing NO_SOURCE

    def _index(self, name: str) -> int:
        return self.names.setdefault(name, len(self.names))

    def add(self, sources: npt.NDArray[np.int32], cells: I64) -> None:
        self.parts.append((sources, cells))
        self.buffered += len(cells)
        if self.buffered >= self.BUFFER:
            self._flush()

    def _flush(self) -> None:
        if not self.parts:
            return
        sources = np.concatenate([s for s, _ in self.parts])
        cells = np.concatenate([c for _, c in self.parts])
        self.parts, self.buffered = [], 0
        kk = self.k * self.k
        present = np.flatnonzero(np.bincount(sources, minlength=len(self.names)))
        self.seen.update(int(s) for s in present)
        cells_needed = len(self.names) * kk
        if self.flat is not None and cells_needed <= self.DENSE:
            if len(self.flat) < cells_needed:
                grown = np.zeros(cells_needed, np.int64)
                grown[: len(self.flat)] = self.flat
                self.flat = grown
            self._add_flat(sources.astype(np.int64), cells)
            return
        if self.flat is not None:  # past DENSE: each source's counts on their own from now
            self.counts = {s: self.flat[s * kk : (s + 1) * kk] for s in range(len(self.flat) // kk)}
            self.flat = None
        narrow = np.int16 if len(self.names) < 2**15 else np.int32  # a radix sort below 2**16
        order = np.argsort(sources.astype(narrow), kind="stable")
        bounds = np.searchsorted(sources[order], present, side="right")
        starts = np.concatenate(([0], bounds[:-1]))
        for s, a, b in zip(present, starts, bounds, strict=True):
            counted = self.counts.get(int(s))
            if counted is None:
                counted = self.counts[int(s)] = np.zeros(kk, np.int64)
            np.add.at(counted, cells[order[a:b]], 1)

    def _add_flat(self, sources: I64, cells: I64) -> None:
        """Count into the flat array: the rows the model agrees with (most rows) by one small
        bincount onto the diagonals, only the others one by one into the K x K cells (a random
        access each into megabytes)."""
        assert self.flat is not None
        k, kk = self.k, self.k * self.k
        on = cells % (k + 1) == 0  # given == predicted: cell g * (K + 1)
        agreed = np.bincount(sources[on] * k + cells[on] // (k + 1))
        hit = np.flatnonzero(agreed)
        self.flat[(hit // k) * kk + (hit % k) * (k + 1)] += agreed[hit]
        off = ~on
        np.add.at(self.flat, sources[off] * kk + cells[off], 1)

    def done(self) -> dict[str, I64]:
        """Source name -> K x K counts, in the order the sources first appear (those with rows
        judged)."""
        self._flush()
        k, kk = self.k, self.k * self.k
        flat = self.flat
        return {
            name: (flat[i * kk : (i + 1) * kk] if flat is not None else self.counts[i]).reshape(
                k, k
            )
            for name, i in self.names.items()
            if i in self.seen
        }


class _IdJoin:
    """The predictions' ids, sorted once, and each row's prediction found by binary search."""

    def __init__(self, pred: Predictions, path: str) -> None:
        self.text = not _integer(pred.ids.type)
        keys = self._keys(pred.ids)
        self.order = np.argsort(keys, kind="stable")
        self.sorted = keys[self.order]
        same = np.flatnonzero(self.sorted[1:] == self.sorted[:-1])
        if len(same):
            shown = ", ".join(str(self.sorted[i]) for i in same[:5])
            raise UsageError(
                f"--predictions {path}: {len(same)} ids repeat ({shown}): one prediction per row"
            )

    def _keys(self, ids: Any) -> npt.NDArray[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        if isinstance(ids, pa.ChunkedArray):
            ids = ids.combine_chunks()
        if pa.types.is_dictionary(ids.type):
            ids = ids.dictionary_decode()
        if not self.text and _integer(ids.type):
            return numbers(pc.cast(ids, pa.int64()), -(2**63)).astype(np.int64)
        text = pc.cast(ids, pa.string()).to_numpy(zero_copy_only=False)
        return np.array(["" if v is None else v for v in text], dtype=str)

    def find(self, ids: Any) -> I64:
        """Each row's prediction index, or -1."""
        import pyarrow as pa

        if not self.text and not _integer(ids.type):
            self.text = True  # the data's ids are text (a CSV): compare as text
            self.sorted = np.array([str(v) for v in self.sorted], dtype=str)
            order = np.argsort(self.sorted, kind="stable")
            self.sorted, self.order = self.sorted[order], self.order[order]
        keys = self._keys(ids)
        null = np.zeros(len(keys), dtype=bool)
        if isinstance(ids, (pa.Array, pa.ChunkedArray)) and ids.null_count:
            null = np.asarray(ids.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        if len(self.sorted) == 0:
            return np.full(len(keys), -1, np.int64)
        pos = np.searchsorted(self.sorted, keys)
        pos = np.minimum(pos, len(self.sorted) - 1)
        hit = (self.sorted[pos] == keys) & ~null
        return np.where(hit, self.order[pos], -1).astype(np.int64)


def _integer(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_integer(t))
