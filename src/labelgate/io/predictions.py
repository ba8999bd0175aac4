"""A model's predictions on the rows of a label file, read as one predicted class per row.

A predictions file is Parquet, CSV, JSONL or ``.npy``, in one of three layouts: K probability or
logit columns, one list column of K values per row, or one predicted-class column; beside them,
optionally, an id column to join on. Only the id column and the prediction columns are read, in
record batches; what is kept is the predicted class of each row (int32) and the ids; the K
values only when asked (the per-example step), within ``PROBABILITY_LIMIT``. A row whose K values
are non-negative and sum to 1 is a probability row; any other row is read as logits: their
softmax's argmax, which is the logits' own. ``open_predictions`` reads the layout alone, and
``classes_of`` one batch's classes, for a reader that takes the rows a slice at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.errors import InputError, UsageError
from labelgate.io.sources import InputFile, resolve_inputs
from labelgate.io.stream import FileSchema, read_schema, stream_columns

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "NAMED",
    "Predictions",
    "PredictionsFile",
    "classes_of",
    "open_predictions",
    "read_predictions",
]

I32 = npt.NDArray[np.int32]
# column names read as the prediction itself, where the file has other columns too
NAMED = (
    "prediction",
    "predictions",
    "pred",
    "predicted",
    "predicted_class",
    "pred_class",
    "probs",
    "probabilities",
    "logits",
    "scores",
)
CHUNK = 65_536
SUM_TOLERANCE = 1e-3
PROBABILITY_LIMIT = 1 << 25  # values kept for the per-example step at the most (128 MB)


@dataclass(frozen=True, slots=True)
class Predictions:
    """What a predictions file holds, read.

    Attributes:
        path: the file.
        layout: ``"K columns"``, ``"list column"``, ``"class column"``, or for ``.npy``
            ``"array"`` (N x K) or ``"class array"`` (N).
        columns: the columns read as the prediction (none for ``.npy``).
        id_column: the id column joined on, or ``None`` (joined by position).
        ids: the ids, one per prediction (an Arrow array), or ``None``.
        predicted: each row's predicted class; -1 where the row has none (null, NaN); empty
            where the classes were read a slice at a time beside the data's rows.
        rows: how many predictions the file holds.
        logits: rows read as logits (softmax applied): they were not non-negative summing to 1.
        probabilities: rows read as probabilities.
        probs: with ``keep_probabilities``, every row's K probabilities (softmax of a logit
            row; NaN for a row with no prediction), else ``None``.
    """

    path: str
    layout: str
    columns: tuple[str, ...]
    id_column: str | None
    ids: Any
    predicted: I32
    rows: int
    logits: int
    probabilities: int
    probs: npt.NDArray[np.float32] | None = None

    @property
    def unusable(self) -> int:
        """Predictions with no class (null or not finite)."""
        return int(np.count_nonzero(self.predicted < 0))

    def described(self) -> str:
        """``probabilities in 5 columns (p0..p4)``: how the file was read, in words."""
        classes = self.layout in ("class column", "class array")
        what = "predicted classes" if classes else _values(self)
        where = f" ({', '.join(self.columns[:3])}{'...' if len(self.columns) > 3 else ''})"
        return f"{what}, {self.layout}{where if self.columns else ''}"


def _values(p: Predictions) -> str:
    if p.logits and p.probabilities:
        return (
            f"probabilities ({p.probabilities} rows) and logits ({p.logits} rows, through softmax)"
        )
    return "logits (read through softmax: the same argmax)" if p.logits else "probabilities"


@dataclass(frozen=True, slots=True)
class PredictionsFile:
    """A predictions file (not ``.npy``) before its rows are read: how it holds them.

    Attributes:
        path: the file as named.
        file: the file resolved.
        schema: its schema (and, for Parquet, its footer).
        layout: ``"K columns"``, ``"list column"`` or ``"class column"``.
        columns: the columns read as the prediction.
        id_column: the id column joined on, or ``None`` (joined by position).
    """

    path: str
    file: InputFile
    schema: FileSchema
    layout: str
    columns: tuple[str, ...]
    id_column: str | None


def open_predictions(path: str, *, k: int, id_column: str | None) -> PredictionsFile:
    """A predictions file's layout, read from its schema alone (see ``read_predictions``).

    Raises:
        UsageError: the layout cannot be told, or says another K than the contract's.
        InputError: the file cannot be read.
    """
    (file,) = resolve_inputs([path])
    schema = read_schema(file)
    names = schema.schema.names
    ids = next((c for c in (id_column, "id") if c is not None and c in names), None)
    columns = _prediction_columns(schema.schema, ids, k, path)
    layout = (
        "K columns"
        if len(columns) > 1
        else "list column"
        if _is_list(schema.schema.field(columns[0]).type)
        else "class column"
    )
    return PredictionsFile(path, file, schema, layout, tuple(columns), ids)


def classes_of(
    batch: Any,
    source: PredictionsFile,
    k: int,
    counts: list[int],
    kept: list[npt.NDArray[np.float32]] | None = None,
) -> I32:
    """One batch's predicted classes (-1: none); ``counts`` gains [probability rows, logit
    rows], and ``kept``, where given, the batch's probabilities.

    Raises:
        UsageError: a class or a row says another K than the contract's.
        InputError: a value is no number, or no class.
    """
    if source.layout == "class column":
        return _classes(batch.column(source.columns[0]), k, source.path)
    values = _matrix(batch, list(source.columns), source.layout, k, source.path)
    if kept is not None:
        kept.append(softmax_rows(values))
    return _argmax(values, counts)


def read_predictions(
    path: str, *, k: int, id_column: str | None, keep_probabilities: bool = False
) -> Predictions:
    """Read a predictions file's predicted class per row (and its ids).

    Args:
        path: a Parquet, CSV, JSONL or ``.npy`` file.
        k: the number of classes the contract says.
        id_column: the data's id column: the predictions' id column of the same name (else one
            named ``id``) is joined on.
        keep_probabilities: keep every row's K probabilities too (for the per-example step);
            a predicted-class layout has none to keep.

    Raises:
        UsageError: the layout cannot be told, or says another K than the contract's.
        InputError: the file cannot be read.
    """
    if Path(path).suffix.lower() == ".npy":
        return _read_npy(path, k, keep_probabilities)
    source = open_predictions(path, k=k, id_column=id_column)
    schema, ids = source.schema, source.id_column
    wanted = [*source.columns, *([ids] if ids else [])]
    # rows x K within the limit: the footer's count, else the file's size (a value is a byte or more)
    known = schema.rows if schema.rows is not None else source.file.size
    keep = keep_probabilities and known * k <= PROBABILITY_LIMIT
    parts: list[I32] = []
    id_parts: list[Any] = []
    counts = [0, 0]
    kept: list[npt.NDArray[np.float32]] = []
    for batch in stream_columns(source.file, wanted, headerless=schema.headerless):
        parts.append(classes_of(batch, source, k, counts, kept if keep else None))
        if ids:
            id_parts.append(batch.column(ids))
    import pyarrow as pa

    predicted = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    joined = None
    if ids:
        joined = pa.chunked_array(id_parts).combine_chunks() if id_parts else pa.array([])
    probs = np.concatenate(kept) if kept else None
    return Predictions(
        path,
        source.layout,
        source.columns,
        ids,
        joined,
        predicted,
        len(predicted),
        counts[1],
        counts[0],
        probs,
    )


def _read_npy(path: str, k: int, keep: bool) -> Predictions:
    """A ``.npy`` array: (N, K) probabilities or logits, or (N,) predicted classes; memory-mapped
    and read in blocks, no pickles."""
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read .npy ({' '.join(str(exc).split())})", path=path) from None
    counts = [0, 0]
    if array.ndim == 1 and np.issubdtype(array.dtype, np.integer):
        blocks = [
            _checked_classes(np.asarray(array[i : i + CHUNK]), k, path)
            for i in range(0, len(array), CHUNK)
        ]
    elif array.ndim == 2 and np.issubdtype(array.dtype, np.floating):
        if array.shape[1] != k:
            raise UsageError(_k_differs(path, array.shape[1], k, "values per row"))
        blocks = [
            _argmax(np.asarray(array[i : i + CHUNK], np.float64), counts)
            for i in range(0, len(array), CHUNK)
        ]
    else:
        raise UsageError(
            f"--predictions {path}: a .npy of shape {array.shape} and dtype {array.dtype}; "
            "expected (N, K) floats (probabilities or logits) or (N,) integer classes"
        )
    predicted = np.concatenate(blocks) if blocks else np.zeros(0, np.int32)
    layout = "class array" if array.ndim == 1 else "array"
    probs = None
    if keep and array.ndim == 2 and array.size <= PROBABILITY_LIMIT:
        probs = (
            np.concatenate(
                [
                    softmax_rows(np.asarray(array[i : i + CHUNK], np.float64))
                    for i in range(0, len(array), CHUNK)
                ]
            )
            if len(array)
            else np.zeros((0, k), np.float32)
        )
    return Predictions(
        path, layout, (), None, None, predicted, len(predicted), counts[1], counts[0], probs
    )


def _is_list(t: pa.DataType) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))


def _prediction_columns(schema: pa.Schema, ids: str | None, k: int, path: str) -> list[str]:
    """The column(s) holding the prediction: a named one, else the float columns (K of them), else
    the one column left."""
    import pyarrow as pa

    rest = [f for f in schema if f.name != ids]
    named = [f for f in rest if f.name.lower() in NAMED]
    if len(named) == 1:
        return [named[0].name]
    floats = [f.name for f in rest if pa.types.is_floating(f.type)]
    if len(floats) > 1:
        if len(floats) != k:
            raise UsageError(_k_differs(path, len(floats), k, "probability or logit columns"))
        return floats
    texts = [f.name for f in rest if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    if len(rest) > 1 and len(texts) == len(rest):  # CSV: every column is read as text
        if len(rest) != k:
            raise UsageError(_k_differs(path, len(rest), k, "columns"))
        return texts
    if len(rest) == 1:
        return [rest[0].name]
    shown = ", ".join(f.name for f in rest) or "none"
    raise UsageError(
        f"--predictions {path}: cannot tell the prediction from the columns ({shown}); give K "
        f"probability or logit columns, one list column, or one column named {NAMED[0]!r}"
        + (f" beside the id column {ids!r}" if ids else "")
    )


def _k_differs(path: str, found: int, k: int, what: str) -> str:
    return (
        f"--predictions {path} has {found} {what}, the contract K={k}: the model predicts another "
        "set of classes than the data's (give the model's K, or its predictions on these classes)"
    )


def _number_column(column: Any, path: str, kind: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    try:
        return pc.cast(column, kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise InputError(f"prediction values are not numbers ({exc})", path=path) from None


def _classes(column: Any, k: int, path: str) -> I32:
    """A predicted-class column: integers in [0, K); null is no prediction (-1)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from labelgate.core.arrow import numbers

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_signed_integer(column.type):  # the usual case: read as stored, no cast
        return _checked_classes(numbers(column, -1), k, path)
    if pa.types.is_integer(column.type):
        return _checked_classes(numbers(pc.cast(column, pa.int64()), -1), k, path)
    values = _number_column(column, path, pa.float64())
    raw = numbers(values, np.nan)
    whole = np.isfinite(raw)
    if np.any(raw[whole] != np.round(raw[whole])):
        raise InputError("a predicted class is not a whole number", path=path)
    out = np.where(whole, raw, -1).astype(np.int64)
    return _checked_classes(out, k, path)


def _checked_classes(values: npt.NDArray[Any], k: int, path: str) -> I32:
    """``values`` as int32 classes (-1: none), refused past K or below -1: one min and one max,
    no copy of an int32 column."""
    if not len(values):
        return values.astype(np.int32)
    top, low = int(values.max()), int(values.min())
    if top >= k:
        raise UsageError(_k_differs(path, top + 1, k, f"classes at least (one predicts {top})"))
    if low < -1:
        raise InputError(f"a predicted class is negative ({low})", path=path)
    return values.astype(np.int32, copy=False)


def _matrix(
    batch: Any, columns: list[str], layout: str, k: int, path: str
) -> npt.NDArray[np.float64]:
    """The batch's K values per row as an (n, K) float64 array; NaN for a null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from labelgate.core.arrow import numbers

    if layout == "K columns":
        cols = [
            numbers(_number_column(batch.column(c), path, pa.float64()), np.nan) for c in columns
        ]
        return np.stack(cols, axis=1) if cols else np.zeros((0, k))
    column = batch.column(columns[0])
    if pa.types.is_fixed_size_list(column.type):
        column = column.cast(pa.list_(column.type.value_type))
    lengths = numbers(pc.list_value_length(column), 0).astype(np.int64)
    live = lengths > 0
    if np.any(live & (lengths != k)):
        found = int(lengths[live & (lengths != k)][0])
        raise UsageError(_k_differs(path, found, k, "values in a row"))
    flat = numbers(_number_column(pc.list_flatten(column), path, pa.float64()), np.nan)
    out = np.full((len(lengths), k), np.nan)
    out[live] = flat.reshape(-1, k)
    return out


def _argmax(values: npt.NDArray[np.float64], counts: list[int]) -> I32:
    """Each row's class: argmax of its probabilities, or of softmax(logits) (the same argmax);
    -1 for a row with a value that is not finite. ``counts`` gains [probability rows, logit rows]."""
    finite = np.isfinite(values).all(axis=1)
    probability = (
        finite & (values >= 0).all(axis=1) & (np.abs(values.sum(axis=1) - 1) <= SUM_TOLERANCE)
    )
    counts[0] += int(np.count_nonzero(probability))
    counts[1] += int(np.count_nonzero(finite & ~probability))
    if len(values) == 0:
        return np.zeros(0, np.int32)
    safe = np.where(np.isfinite(values), values, -np.inf)
    return np.where(finite, safe.argmax(axis=1), -1).astype(np.int32)


def softmax_rows(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    """Each row as probabilities: as it is where it is one (non-negative, summing to 1), else the
    softmax of its logits; NaN where a value is not finite."""
    finite = np.isfinite(values).all(axis=1, keepdims=True)
    safe = np.where(finite, values, 0.0)
    already = (safe >= 0).all(axis=1, keepdims=True) & (
        np.abs(safe.sum(axis=1, keepdims=True) - 1) <= SUM_TOLERANCE
    )
    shifted = np.exp(safe - safe.max(axis=1, keepdims=True)) if len(safe) else safe
    soft = shifted / shifted.sum(axis=1, keepdims=True) if len(safe) else safe
    out = np.where(already, safe, soft)
    return np.where(finite, out, np.nan).astype(np.float32)
