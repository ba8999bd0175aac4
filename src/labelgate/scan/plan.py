"""Planning the pieces: every Parquet row group, with its global first row, from the footers alone.

A piece is one row group with its global row offset, known before any row is read, so every batch
boundary is known too (across file edges as well). ``Spec`` is what a worker needs to scan one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from labelgate.inputs.dataset import Dataset

__all__ = ["Piece", "Spec", "plan_pieces", "supported"]

_INTEGER = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")


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
    if not data.plan.in_order:
        return "shuffled batches and batches of images are read sequentially"
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
