"""The one row sink every reader writes into: rows appended one by one (annotation formats), Arrow
batches (masks, Hugging Face Arrow streams), or the user's own files read as they are (tables)."""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labelgate.core.annotations import REJECTED, AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.common.boxsizes import BoxSizes
from labelgate.readers.common.imageindex import GroupCodes, ImageIndex, ImageRows

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

__all__ = ["RowSink", "RowWriter", "in_int64", "reject", "reject_unplaced", "rows_writer"]

_BATCH = 65_536


def in_int64(value: int) -> bool:
    """Whether an integer read from an annotation fits the int64 columns rows are written in
    (YOLO and COCO give Python integers of any size; 2**63 is no class id a loader can hold)."""
    return -(2**63) <= value < 2**63


def reject(
    writer: RowWriter,
    counts: MutableMapping[str, int],
    ident: Any,
    source: str | None,
    group: Any,
    code: str,
) -> int:
    """Write the row of an annotation read that cannot be trained on (no class index stands for
    its label: undeclared, empty, not an integer): its label null, counted in ``counts`` under
    ``REJECTED``, so that the scan counts it rejected in its source and batch and the reader's
    own finding ``code`` (not LG003) names it, in the report and in fix's quarantine. Returns
    the row's position."""
    writer.add(ident, None, source, None, group)
    counts[REJECTED] = counts.get(REJECTED, 0) + 1
    writer.rejected[writer.rows - 1] = code
    return writer.rows - 1


def reject_unplaced(
    writer: RowWriter,
    facts: AnnotationFacts,
    counts: MutableMapping[str, int],
    example: Example,
    group: Any,
    *,
    message: str,
    fix: str,
) -> None:
    """Write the row of an annotation of a known class whose box or points are missing or not
    numbers as a rejected row: no loader trains on it (each reads its coordinates as numbers and
    raises, docs/formats.md). LG031 names it by ``example`` (id, source and its class index as
    ``value``, the row about to be written), and it is counted rejected in that class."""
    facts.hit("LG031", example, message=message, fix=fix)
    reject(writer, counts, example.id, example.source, group, "LG031")
    facts.rejected_classes[example.value] = facts.rejected_classes.get(example.value, 0) + 1


def rows_writer(path: str | Path, schema: pa.Schema) -> pq.ParquetWriter:
    """A writer of the run's own rows files: zstd, every column but ``id`` dictionary-coded (ids
    are mostly distinct: a dictionary of them costs three times the write, saves nothing), an
    integer ``id`` delta-coded (a file's ids mostly count up: its rows file written and read
    again in half the time, a tenth of the size)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    coded = [name for name in schema.names if name != "id"]
    ids = schema.field("id").type if "id" in schema.names else None
    delta = ids is not None and pa.types.is_integer(ids)
    return pq.ParquetWriter(
        path,
        schema,
        compression="zstd",
        use_dictionary=coded,
        column_encoding={"id": "DELTA_BINARY_PACKED"} if delta else None,
    )


class RowWriter:
    """Rows of (id, label, source, name) appended one by one, written in batches of 65,536."""

    def __init__(self, path: Path, *, id_type: str = "string", names: bool = False) -> None:
        import pyarrow as pa

        self.path = path
        self.id_type = "int" if id_type == "int" else "string"
        fields = [
            ("id", pa.int64() if id_type == "int" else pa.string()),
            ("label", pa.int64()),
            ("source", pa.string()),
        ]
        self.schema = pa.schema(fields + ([("name", pa.string())] if names else []))
        self._cols: dict[str, list[Any]] = {n: [] for n in self.schema.names}
        self._held: list[pa.Table] = []  # rows appended, not yet written
        self._held_rows = 0
        self._writer: Any = None
        self.rows = 0
        self.rejected: dict[int, str] = {}  # row -> the code of the finding that rejected it
        self._closed = False
        self.groups = GroupCodes()  # each row's image (detection readers), for batches of images
        self.images = ImageIndex()  # the images listed (the sink's own, for a sink's writers)
        self.sizes = BoxSizes()  # the boxes' sizes per class (detection readers measure them)

    def add(
        self,
        ident: Any,
        label: int | None,
        source: str | None,
        name: str | None,
        group: Any = None,
    ) -> None:
        self.groups.append(group)
        c = self._cols
        c["id"].append(ident)
        c["label"].append(label)
        c["source"].append(source)
        if "name" in c:
            c["name"].append(name)
        self.rows += 1
        if len(c["id"]) + self._held_rows >= _BATCH:
            self._flush()

    def extend_table(self, table: pa.Table) -> None:
        """Rows appended as an Arrow table of this writer's schema (another writer's, sent
        whole), written in the same 65,536-row batches as one ``add`` at a time would write."""
        self._hold(table)
        self.rows += table.num_rows
        if self._held_rows >= _BATCH:
            self._flush()

    def _hold(self, table: pa.Table | None = None) -> None:
        """The rows appended one by one so far (the lists emptied), then ``table``, held."""
        if self._cols["id"]:
            self._held.append(self._table(self._cols))
            self._held_rows += len(self._cols["id"])
            self._cols = {n: [] for n in self.schema.names}
        if table is not None:
            self._held.append(table)
            self._held_rows += table.num_rows

    def _table(self, columns: dict[str, list[Any]]) -> pa.Table:
        """Rows appended one by one, as a table."""
        import pyarrow as pa

        return pa.table(columns, schema=self.schema)

    def _flush(self, *, whole: bool = False) -> None:
        """Write the rows held in batches of 65,536 (``whole``: the rest too, if only the
        schema)."""
        import pyarrow as pa

        self._hold()
        if self._writer is None:
            self._writer = rows_writer(self.path, self.schema)
        held = (
            pa.concat_tables(self._held) if self._held else pa.Table.from_batches([], self.schema)
        )
        start = 0
        while held.num_rows - start >= _BATCH:
            self._writer.write_table(held.slice(start, _BATCH).combine_chunks())
            start += _BATCH
        if whole:
            self._writer.write_table(held.slice(start).combine_chunks())
            start = held.num_rows
        self._held = [held.slice(start)] if start < held.num_rows else []
        self._held_rows = held.num_rows - start

    def close(self) -> None:
        """Write what is left (an empty file with the schema when no row came); once."""
        if self._closed:
            return
        self._flush(whole=True)
        self._writer.close()
        self._closed = True


class RowSink:
    """Where a reader's rows go: a folder the run owns (and removes when done), and the list of
    files the scan then reads. A reader uses one of its three ways in.

    Attributes:
        folder: the run's scratch folder for this input.
        paths: what the scan reads, once the reader is done.
        origins: a file written -> the user's file its rows were read from, where the reader
            says (the report names that file, never the scratch one).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.paths: list[str] = []
        self.origins: dict[str, str] = {}
        self._writers: list[RowWriter] = []
        self._batch_writer: Any = None
        self._batch_path = ""
        # the batch stream's rejected rows (its own positions) -> the code naming each
        self.batch_rejected: dict[int, str] = {}
        self.images = ImageIndex()  # the images a detection reader records

    def rows(self, *, id_type: str = "string", names: bool = False) -> RowWriter:
        """A writer of (id, label, source, name) rows, appended one at a time."""
        writer = RowWriter(self._next(), id_type=id_type, names=names)
        writer.images = self.images
        self._writers.append(writer)
        return writer

    def batches(self, schema: pa.Schema) -> Any:
        """A Parquet writer of Arrow record batches of ``schema`` (``write_batch``); closed by
        ``close``."""

        if self._batch_writer is not None:
            raise RuntimeError("a sink takes one stream of batches")
        self._batch_path = str(self._next())
        self._batch_writer = rows_writer(self._batch_path, schema)
        return self._batch_writer

    def adopt(self, writer: RowWriter) -> None:
        """A writer made elsewhere (the parallel COCO read's, filled from its workers' rows): its
        rows read by the scan and its rows' images counted as the sink's."""
        writer.images = self.images
        self._writers.append(writer)
        self.paths.append(str(writer.path))

    def keep(self, paths: list[str]) -> None:
        """The user's own files, read by the scan as they are (no rows written)."""
        self.paths.extend(paths)

    def close(self) -> None:
        """Finish every writer (the reader may have closed its own already)."""
        for writer in self._writers:
            writer.close()
        if self._batch_writer is not None:
            self._batch_writer.close()
            self._batch_writer = None

    def rejected(self) -> dict[int, str]:
        """Each rejected row's position in what the scan reads (``paths`` in order) -> the code
        of the finding that rejected it."""
        owned = {str(w.path): w.rejected for w in self._writers}
        if self._batch_path:
            owned[self._batch_path] = self.batch_rejected
        if not any(owned.values()):
            return {}
        import pyarrow.parquet as pq

        rows = {str(w.path): w.rows for w in self._writers}
        out: dict[int, str] = {}
        base = 0
        for path in self.paths:
            out.update((base + row, code) for row, code in owned.get(path, {}).items())
            base += rows[path] if path in rows else pq.read_metadata(path).num_rows
        return out

    def image_rows(self) -> ImageRows | None:
        """The image of each row written (``None``: a row names no image, or none was listed)."""
        if len(self._writers) == 1:  # the usual case: its codes as they are, not a copy
            return self.images.rows_to_images(self._writers[0].groups)
        groups = GroupCodes()
        for writer in self._writers:
            groups.extend(writer.groups)
        return self.images.rows_to_images(groups)

    def box_sizes(self) -> BoxSizes:
        """The sizes of the boxes every writer measured, counted together."""
        sizes = BoxSizes()
        for writer in self._writers:
            sizes.merge(writer.sizes)
        return sizes

    @property
    def written(self) -> bool:
        """Whether the reader wrote rows (rather than keeping the user's files)."""
        return bool(self._writers) or any(p.startswith(str(self.folder)) for p in self.paths)

    def _next(self) -> Path:
        path = self.folder / f"rows-{len(self.paths)}.parquet"
        self.paths.append(str(path))
        return path
