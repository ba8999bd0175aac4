"""The logical dataset: input files in reading order, their columns resolved, and the batch plan."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from labelgate.contract import BOX_TASKS, Contract
from labelgate.core.batchplan import BatchPlan
from labelgate.core.labels import is_list_type, is_soft_type
from labelgate.errors import InputError, UsageError
from labelgate.inputs.columns import Columns, detect_columns
from labelgate.inputs.namecolumn import find_name_column, first_rows, text_columns
from labelgate.inputs.resolved import LABEL_TYPE, Resolution, Resolved
from labelgate.io import InputFile, read_schema, resolve_inputs, stream_columns
from labelgate.io.stream import FileSchema

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Dataset", "open_dataset"]


@dataclass(frozen=True, slots=True)
class Dataset:
    """Input files read as one logical file, with what every command needs to know about them.

    Attributes:
        files: the input files, in reading order.
        schemas: each file's schema and stated row count.
        columns: the label, id, source and name columns, and how each was found.
        contract: the contract applied: the one asked for, with K, task and columns resolved.
        label_type: the label column's Arrow type.
        plan: the batch plan.
        known_rows: the total row count where the files state it (Parquet footers) or it was
            counted (needed to shuffle), else ``None``.
    """

    files: list[InputFile]
    schemas: list[FileSchema]
    columns: Columns
    contract: Contract
    label_type: pa.DataType
    plan: BatchPlan
    known_rows: int | None
    resolved: Resolved

    @property
    def k(self) -> int:
        """K, the number of classes."""
        assert self.contract.num_classes is not None
        return self.contract.num_classes

    @property
    def task(self) -> str:
        """``"multiclass"`` or ``"tokens"``."""
        assert self.contract.task is not None
        # Detection rows are boxes, one integer label each: judged in the multiclass shape (what
        # is particular to detection is read from the contract's task and the reader's facts).
        return "multiclass" if self.contract.task in BOX_TASKS else self.contract.task

    def chunks(
        self, columns: list[str] | None = None, *, every: bool = False, encoded: bool = False
    ) -> Iterator[tuple[int, int, pa.RecordBatch]]:
        """Yield ``(file index, first row, record batch)`` over every file, in reading order.

        Args:
            columns: the columns to read; default the label, id, source and name columns.
            every: read every column instead, with its stored (or inferred) type.
            encoded: read the source and name columns dictionary-encoded (Parquet).
        """
        wanted = None if every else columns or self.columns.needed()
        offset = 0
        for index, (f, s) in enumerate(zip(self.files, self.schemas, strict=True)):
            text = [c for c in (self.columns.source, self.columns.name) if c] if encoded else None
            for batch in stream_columns(f, wanted, headerless=s.headerless, dictionary=text):
                names = batch.schema.names
                members = self.columns.members
                if members and MEMBERS not in names and all(m in names for m in members):
                    batch = batch.append_column(MEMBERS, _stacked(batch, members))
                yield index, offset, batch
                offset += batch.num_rows


Mapper = Callable[[Callable[[InputFile], FileSchema], list[InputFile]], list[FileSchema]]


def read_schemas(files: list[InputFile], mapper: Mapper | None = None) -> list[FileSchema]:
    """Every file's schema and footer, in order: on threads (footers of object storage are
    network round trips), or through ``mapper`` (a cluster map for many shards)."""
    if mapper is not None:
        return mapper(read_schema, files)
    if len(files) == 1:
        return [read_schema(files[0])]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(16, len(files))) as pool:
        return list(pool.map(read_schema, files))


def open_dataset(
    paths: Sequence[str | InputFile],
    contract: Contract,
    mapper: Mapper | None = None,
    resolution: Resolution | None = None,
    *,
    images: tuple[Any, int] | None = None,
) -> Dataset:
    """Resolve inputs, columns, task and batch plan; read no rows (but for a shuffled text input,
    whose rows must be counted first). ``resolution`` carries what the run found before (a
    reader's class map); ``contract`` is what was asked. ``images``: the image of each row and
    how many images, for batches of images (detection).

    Raises:
        UsageError: no K, or a column or task that cannot be used (LG001 included).
        InputError: an input is missing, empty, corrupt, or lacks a column the first file has.
    """
    resolution = resolution or Resolution(contract)
    _per_column(contract, resolution)
    contract = resolution.applied()
    files = resolve_inputs(paths)  # first: an input that cannot be read is the first thing to say
    if contract.num_classes is None and contract.class_map is not None:  # K: its names
        given = contract.class_map
        resolution.found("num_classes", len(given.entries), f"the class map given ({given.origin})")
        contract = resolution.applied()
    if contract.num_classes is None:
        raise UsageError("--classes K is required (or num_classes in the contract)")
    schemas = read_schemas(files, mapper)
    first = schemas[0]
    members = contract.label_columns or ()
    missing = [m for m in members if m not in first.schema.names]
    if missing:
        raise UsageError(
            f"--label-columns {', '.join(missing)} not found in {files[0].path}; columns: "
            + ", ".join(first.schema.names)
        )
    columns = detect_columns(
        first.schema,
        label=members[0] if members else contract.label_column,
        id=contract.id_column,
        source=contract.source_column,
        name=contract.name_column,
        origin=files[0].path,
    )
    if (
        columns.name is None
        and not members
        and not is_list_type(first.schema.field(columns.label).type)
    ):
        columns = _with_name_by_content(columns, files[0], first)
    for f, s in zip(files[1:], schemas[1:], strict=True):
        missing = [c for c in columns.needed() if c not in s.schema.names]
        if missing:
            raise InputError(f"column(s) {', '.join(missing)} missing in this file", path=f.path)
    if members:  # one list column built from the K columns as the rows are read
        import pyarrow as pa

        columns = replace(
            columns, label=MEMBERS, members=members, how=columns.how | {"label": "given (columns)"}
        )
        label_type = pa.list_(pa.float64())
    else:
        label_type = first.schema.field(columns.label).type
    task = _task(contract.task, label_type, columns.label)
    if contract.label_encoding is not None and task != "multilabel":
        raise UsageError(  # taken without a word, it would change nothing
            f"--label-encoding applies to multi-label rows (--task multilabel), and this "
            f"input's task is {task}: drop --label-encoding"
        )
    if task == "segmentation":
        columns = _with_pixels(columns, first.schema, files[0].path)
    resolution.found("task", task, LABEL_TYPE)
    for field, value in (
        ("label_column", columns.label),
        ("id_column", columns.id),
        ("source_column", columns.source),
        ("name_column", columns.name),
    ):
        resolution.found(field, value, "the column names (detected)")
    contract = resolution.applied()
    batching = contract.batching
    known = _known_rows(files, schemas, columns, need=batching.shuffle_seed is not None)
    plan = BatchPlan.build(
        batching.size,
        drop_last=batching.drop_last,
        rows=known,
        seed=batching.shuffle_seed,
        images=images,
    )
    return Dataset(files, schemas, columns, contract, label_type, plan, known, resolution.freeze())


def _with_name_by_content(columns: Columns, file: InputFile, schema: FileSchema) -> Columns:
    """The name column found by its content (a text column that follows the label), read from
    the first rows of the first file; ``columns`` as they were where none qualifies."""
    candidates = text_columns(schema.schema, (columns.label, columns.id, columns.source))
    if not candidates:
        return columns
    batches = stream_columns(file, [columns.label, *candidates], headerless=schema.headerless)
    sample = first_rows(batches)
    found = None if sample is None else find_name_column(sample, columns.label, candidates)
    if found is None:
        return columns
    return replace(columns, name=found.column, how=columns.how | {"name": found.how()})


def _task(wanted: str | None, label_type: Any, column: str) -> str:
    if is_soft_type(label_type):
        found = "soft"
    elif is_list_type(label_type):
        found = "tokens"
    else:
        found = "multiclass"
    if wanted == "soft" and is_list_type(label_type):
        return "soft"  # integer lists read as probabilities (one-hot rows)
    if wanted == "multilabel" and is_list_type(label_type):
        return "multilabel"  # K multi-hot values per row, for BCEWithLogitsLoss
    if wanted in BOX_TASKS and found == "multiclass":
        return wanted  # one row per box, its class index
    if wanted == "segmentation" and found == "tokens":
        return "segmentation"  # a mask's distinct values per row, with their pixel counts
    if wanted is not None and wanted != found:
        shape = "a scalar" if wanted in ("multiclass", *BOX_TASKS) else "a list"
        raise UsageError(f"task {wanted!r} needs {shape} label column; {column!r} is {label_type}")
    return found


PIXELS = "pixels"
MEMBERS = "labels (columns)"  # the list column built from --label-columns


def _per_column(contract: Contract, resolution: Resolution) -> None:
    """A contract naming K label columns: the multilabel task, K their count, their names the
    class map where none is given.

    Raises:
        UsageError: K or the task given disagree with the columns.
    """
    members = contract.label_columns
    if not members:
        return
    if contract.task not in (None, "multilabel"):
        raise UsageError(f"--label-columns hold multi-label targets, not task {contract.task!r}")
    if contract.num_classes not in (None, len(members)):
        raise UsageError(
            f"--label-columns names {len(members)} columns for K={contract.num_classes} classes"
        )
    if contract.label_encoding == "indices":
        raise UsageError("--label-columns hold one value per class: the encoding is multi-hot")
    from labelgate.contract.classmap import ClassMap

    named = ClassMap.from_names(list(members), origin="--label-columns")
    resolution.found("task", "multilabel", "--label-columns")
    resolution.found("num_classes", len(members), "the --label-columns count")
    resolution.found("class_map", named, "the --label-columns names")


def _stacked(batch: pa.RecordBatch, members: tuple[str, ...]) -> pa.Array:
    """The K columns as one list column, row by row (a blank is NaN, as a blank element is)."""
    import numpy as np
    import pyarrow as pa

    from labelgate.core.arrow import numbers

    parts = []
    for name in members:
        column = batch.column(name)
        try:
            parts.append(numbers(column.cast(pa.float64()), np.nan).astype(np.float64))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise InputError(
                f"label column {name!r} holds {column.type} values that are not numbers",
                path=name,
            ) from None
    flat = np.column_stack(parts).ravel() if parts else np.zeros(0)
    return pa.FixedSizeListArray.from_arrays(pa.array(flat), len(members))


def _with_pixels(columns: Columns, schema: pa.Schema, origin: str) -> Columns:
    """The segmentation task's columns: each row is a mask's histogram, its distinct values in
    the label column and their pixel counts in the ``pixels`` list column."""
    if PIXELS not in schema.names or not is_list_type(schema.field(PIXELS).type):
        raise InputError(
            "the segmentation task reads a mask's histogram: distinct values in the label "
            "column and their pixel counts in a list column named 'pixels' (masks themselves "
            "are read with --input-format masks)",
            path=origin,
        )
    return replace(columns, pixels=PIXELS, how=columns.how | {"pixels": "detected"})


def _known_rows(
    files: list[InputFile], schemas: list[FileSchema], columns: Columns, *, need: bool
) -> int | None:
    if all(s.rows is not None for s in schemas):
        return sum(s.rows or 0 for s in schemas)
    if not need:
        return None
    total = 0  # text inputs state no row count: one counting pass over the label column
    for f, s in zip(files, schemas, strict=True):
        for batch in stream_columns(f, [columns.label], headerless=s.headerless):
            total += batch.num_rows
    return total
