"""The rows a shard reader writes: one per sample (or per box), id ``shard:key`` or
``shard:index``, the shard as its source, the label under the column the user named.

A sample whose label cannot be read (missing, not an integer) is a row all the same, its label
null and counted rejected (``labelgate.core.annotations.REJECTED``), named by LG031.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from labelgate.core.annotations import REJECTED, AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.common.sink import RowSink

__all__ = ["LabelRows"]

_BATCH = 65_536


class LabelRows:
    """Rows of (id, label, source) and, with ``names``, the class text (``label_name``), the
    label column named ``label`` (or as the user named it), written to the sink in Arrow
    batches."""

    def __init__(
        self, sink: RowSink, facts: AnnotationFacts, label: str | None, *, names: bool = False
    ) -> None:
        import pyarrow as pa

        self.facts = facts
        self.counts: Counter[str] = Counter()
        self.column = label or "label"
        fields = [("id", pa.string()), (self.column, pa.int64()), ("source", pa.string())]
        if names:  # the class text each row carries, under a name the scan detects
            fields.append(("label_name", pa.string()))
        self.schema = pa.schema(fields)
        self._sink = sink
        self._writer = sink.batches(self.schema)
        self._cols: tuple[list[Any], ...] = tuple([] for _ in fields)
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
        self.facts.hit(
            "LG031",
            Example(row=self.rows, id=ident, source=source, value=value),
            message=message,
            fix=fix,
        )
        self._sink.batch_rejected[self.rows] = "LG031"
        self.add(ident, None, source)
        self.counts[REJECTED] += 1

    def _flush(self) -> None:
        import pyarrow as pa

        arrays = [pa.array(c, f.type) for c, f in zip(self._cols, self.schema, strict=True)]
        self._writer.write_batch(pa.record_batch(arrays, schema=self.schema))
        self._cols = tuple([] for _ in self._cols)

    def close(self) -> None:
        """Write what is left (an empty file with the schema when no row came) and count."""
        self._flush()
        self.facts.counts.update(self.counts)
