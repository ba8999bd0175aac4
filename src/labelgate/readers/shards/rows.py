"""The rows a shard reader writes: one per sample (or per box), id ``shard:key`` or
``shard:index``, the shard as its source, the label under the column the user named.

A sample whose label cannot be read (missing, not an integer) is a row all the same, its label
null and counted rejected (``labelgate.core.annotations.REJECTED``), named by LG031.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from labelgate.core.annotations import REJECTED, AnnotationFacts, Hits
from labelgate.core.codes import Code
from labelgate.core.report import Example
from labelgate.readers.common.arrowcols import table
from labelgate.readers.common.replay import replay
from labelgate.readers.common.sink import RowSink

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["LabelRows", "Part"]

_BATCH = 65_536


@dataclass(slots=True)
class Part:
    """One shard's rows (``LabelRows``' schema) and findings, rows counted from 0.

    Attributes:
        table: the rows.
        rejected: row -> the code of the finding that rejected it.
        hits: code -> the records failing it (their examples' rows within the shard).
        seen: code -> the records it counted (id, source), so that none is counted twice.
        counts: what was read (``LabelRows.counts``).
    """

    table: pa.Table
    rejected: dict[int, str] = field(default_factory=dict)
    hits: dict[Code, Hits] = field(default_factory=dict)
    seen: dict[Code, list[tuple[Any, Any]]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


class LabelRows:
    """Rows of (id, label, source) and, where ``names`` names a column, the class text (under
    that name), the label column named ``label`` (or as the user named it), written to the sink
    in Arrow batches."""

    def __init__(
        self, sink: RowSink, facts: AnnotationFacts, label: str | None, *, names: str | None = None
    ) -> None:
        import pyarrow as pa

        self.facts = facts
        self.counts: Counter[str] = Counter()
        self.column = label or "label"
        fields = [("id", pa.string()), (self.column, pa.int64()), ("source", pa.string())]
        if names is not None:  # the class text each row carries, under a name the scan detects
            fields.append((names, pa.string()))
        self.schema = pa.schema(fields)
        self._sink = sink
        self._writer = sink.batches(self.schema)
        self._cols: tuple[list[Any], ...] = tuple([] for _ in fields)
        self._held: list[pa.Table] = []  # parts' rows, written in batches of _BATCH
        self._held_rows = 0
        self.rows = 0

    def add(self, ident: str, label: int | None, source: str, name: str | None = None) -> None:
        cols = self._cols
        cols[0].append(ident)
        cols[1].append(label)
        cols[2].append(source)
        if len(cols) > 3:
            cols[3].append(name)
        self.rows += 1
        if len(cols[0]) >= _BATCH:
            self._flush()

    def reject(self, ident: str, source: str, value: Any, message: str, fix: str) -> None:
        """A row with a null label, counted rejected and named by LG031 with ``message``."""
        self.rejected(self.rows, ident, source, value, message, fix)
        self.add(ident, None, source)

    def rejected(
        self, row: int, ident: str, source: str, value: Any, message: str, fix: str
    ) -> None:
        """Row ``row`` (written with a null label, or about to be) counted rejected and named
        by LG031 with ``message``."""
        self.facts.hit(
            "LG031",
            Example(row=row, id=ident, source=source, value=value),
            message=message,
            fix=fix,
        )
        self._sink.batch_rejected[row] = "LG031"
        self.counts[REJECTED] += 1

    def add_table(self, table: pa.Table) -> None:
        """Rows appended as an Arrow table of this schema (a shard's labels gathered at once),
        written in the same batches as one ``add`` at a time would write."""
        if self._cols[0]:
            self._flush()
        self._held.append(table)
        self._held_rows += table.num_rows
        self.rows += table.num_rows
        if self._held_rows >= _BATCH:
            self._write_held(whole=False)

    def extend(self, part: Part) -> None:
        """A shard's rows read on their own (``parts``), added as if read here: after the rows
        before, its findings' rows moved by as many."""
        base = self.rows
        self.add_table(part.table)
        self._sink.batch_rejected.update((base + r, c) for r, c in part.rejected.items())
        for code, hits in part.hits.items():
            replay(self.facts, code, hits, base, set(part.seen.get(code, ())))
        self.counts.update(part.counts)

    def _write_held(self, *, whole: bool) -> None:
        import pyarrow as pa

        held = pa.concat_tables(self._held)
        start = 0
        while held.num_rows - start >= _BATCH or (whole and start < held.num_rows):
            for batch in held.slice(start, _BATCH).combine_chunks().to_batches(_BATCH):
                self._writer.write_batch(batch)
            start += _BATCH
        self._held = [held.slice(start)] if start < held.num_rows else []
        self._held_rows = held.num_rows - min(start, held.num_rows)

    def _flush(self) -> None:
        if self._held:
            self._write_held(whole=True)
        columns = dict(zip(self.schema.names, self._cols, strict=True))
        for batch in table(columns, self.schema).to_batches():  # from buffers: no pandas
            self._writer.write_batch(batch)
        self._cols = tuple([] for _ in self._cols)

    def close(self) -> None:
        """Write what is left (an empty file with the schema when no row came) and count."""
        if self._held:
            self._write_held(whole=True)
        if self._cols[0] or not self.rows:
            self._flush()
        self.facts.counts.update(self.counts)
