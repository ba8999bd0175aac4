"""The labels against a model's predictions: one confusion matrix (given x predicted) per source.

The predictions (``labelgate.io.predictions``) are joined to the rows by id where the predictions
file has an id column, else by position. A Parquet file joined by position is read beside the
scan's pieces, a slice of predictions per slice of rows, and counted there
(``witness_in_pieces``, ``labelgate.scan.predslices``). Otherwise the data is read once more, its
label, id and source columns only; what is held is the predicted class of each prediction, its id,
and a K x K count per source (and, for the per-example step, each judged row's position, source,
class and prediction). Every row without a prediction, and every prediction without a row, is
counted and the first of them named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.core.arrow import numbers
from labelgate.core.labels import Status, classify
from labelgate.errors import UsageError
from labelgate.io.predictions import Predictions, open_predictions, read_predictions
from labelgate.scan.confusion import Confusion
from labelgate.scan.kernel import SLICE_ROWS, text_codes
from labelgate.scan.predslices import PieceWitness

if TYPE_CHECKING:
    from labelgate.inputs.dataset import Dataset
    from labelgate.scan.result import ScanResult

__all__ = ["WitnessCounts", "count_witness", "witness_in_pieces"]

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


def witness_in_pieces(data: Dataset, path: str, *, limit: int = 20) -> PieceWitness | None:
    """What the scan's pieces count the predictions at ``path`` into, where they can: a Parquet
    file joined by position, whose rows are classes or whose values need not be kept for the
    per-example step; else ``None`` (``count_witness`` reads them after the scan).

    Raises:
        UsageError: the predictions' layout cannot be told, or says another K.
        InputError: the predictions cannot be read.
    """
    if data.task != "multiclass" or path.lower().endswith(".npy"):
        return None
    source = open_predictions(path, k=data.k, id_column=data.columns.id)
    if source.file.kind != "parquet" or source.id_column is not None:
        return None
    if source.layout != "class column" and _per_example():
        return None
    return PieceWitness(source, data.k, Confusion(data.k, named=limit or 20))


def _per_example() -> bool:
    """Whether the per-example step runs (``labelgate[cleanlab]``: rows named by id)."""
    from importlib.util import find_spec

    return find_spec("cleanlab") is not None


def count_witness(
    data: Dataset,
    path: str,
    scan: ScanResult,
    *,
    limit: int = 20,
    counted: PieceWitness | None = None,
) -> WitnessCounts:
    """Join the predictions at ``path`` to the rows of ``data`` and count each source's confusion
    matrix; where the scan's pieces ``counted`` them, read the predictions past the last row and
    say what they counted.

    With the per-example step (cleanlab installed), every judged row is kept (its position,
    source, class and prediction) with the predictions' probabilities.

    Raises:
        UsageError: the task has no single class per row, the predictions say another K, their
            ids repeat, or cannot be joined.
        InputError: the predictions cannot be read.
    """
    if data.task != "multiclass":
        raise UsageError(
            f"--predictions judges one class per row; this input's task is {data.task}"
        )
    named_at_most = limit or 20  # the unmatched named in the note
    if counted is not None:
        counted.read_rest(scan.rows, SLICE_ROWS)
        source, done = counted.source, counted.confusion
        logits, probabilities = counted.counts[1], counted.counts[0]
        rows = counted.rows
        pred = Predictions(
            path, source.layout, source.columns, None, None, np.zeros(0, np.int32), rows,
            logits, probabilities,
        )  # fmt: skip
        past = np.arange(scan.rows, max(rows, scan.rows), dtype=np.int64)
        confusion = done.matrices(scan.source_names, scan.source_hist)
        return _counts(data, pred, done, confusion, past, named_at_most, None, limit)
    return _count_after(data, path, scan, limit, named_at_most)


def _count_after(
    data: Dataset, path: str, scan: ScanResult, limit: int, named_at_most: int
) -> WitnessCounts:
    """The predictions read whole and joined to a second read of the data's rows."""
    k, cols = data.k, data.columns
    pred = read_predictions(path, k=k, id_column=cols.id, keep_probabilities=_per_example())
    kept: list[I64] | None = [] if pred.probs is not None else None
    if pred.id_column is not None and cols.id is None:
        raise UsageError(
            f"--predictions {path} has an id column ({pred.id_column!r}) and the data none: "
            "name the data's id column (--id-column) to join on it"
        )
    join = _IdJoin(pred, path) if pred.id_column is not None else None
    matched = np.zeros(pred.rows, dtype=bool)
    counts = Confusion(k, named=named_at_most, usable=True)
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
        c = classify(batch.column(cols.label), num_classes=k, ignore_index=ignore)
        usable = c.status == Status.USABLE
        codes, names = text_codes(batch.column(cols.source) if cols.source else None)
        index = counts.add(
            c.values, predicted, None if usable.all() else ~usable, codes, names, first
        )
        if kept is not None:
            where = np.flatnonzero(usable & has & (predicted >= 0))
            source = index[codes[where]] if codes is not None else np.zeros(len(where), np.int32)
            kept.append(np.stack([where + first, source, c.values[where], at[where]], 1))
    confusion = counts.matrices(scan.source_names)
    rows = None
    if kept is not None:
        rows = np.concatenate(kept) if kept else np.zeros((0, 4), np.int64)
        order = {counts.names[name]: n for n, name in enumerate(confusion)}
        if len(rows):
            lookup = np.array([order.get(i, -1) for i in range(len(counts.names))], np.int64)
            rows[:, 1] = lookup[rows[:, 1]]
    return _counts(
        data, pred, counts, confusion, np.flatnonzero(~matched), named_at_most, rows, limit
    )


def _counts(
    data: Dataset,
    pred: Predictions,
    counts: Confusion,
    confusion: dict[str, I64],
    unmatched: I64,
    named_at_most: int,
    rows: I64 | None,
    limit: int,
) -> WitnessCounts:
    """The counts, the rows without a prediction named by id (or row number) and the
    predictions without a row by id (or position)."""
    missing_named: list[Any] = list(counts.missing_rows)
    id_column = data.columns.id
    if missing_named and id_column is not None:
        from labelgate.scan.ids import values_at

        at = values_at(missing_named, data, [id_column])
        missing_named = [at[r][0] for r in missing_named]
    named: tuple[Any, ...] = tuple(
        pred.ids[int(i)].as_py() if pred.ids is not None else int(i)
        for i in unmatched[:named_at_most]
    )
    joined_by = "position" if pred.id_column is None else f"id {pred.id_column!r}"
    return WitnessCounts(
        pred,
        joined_by,
        confusion,
        counts.judged,
        counts.missing,
        tuple(missing_named),
        len(unmatched),
        named,
        counts.not_judged,
        rows,
        limit,
    )


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
