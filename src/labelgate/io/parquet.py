"""A Parquet file opened with ``pyarrow._parquet``'s reader, without ``pyarrow.parquet``.

``pyarrow.parquet`` imports ``pyarrow.fs`` and with it ``ssl`` (about 17 ms on every start, a
twentieth of a cold run) to resolve a path that is already local. The reader it wraps,
``pyarrow._parquet.ParquetReader``, opens a local path or a file object by itself; this module
gives the part of ``pq.ParquetFile`` labelgate reads with (the footer, the Arrow schema, batches
of named columns), with ``pq.ParquetFile``'s defaults (pre-buffering on, and Parquet logical
types as Arrow extension types from pyarrow 21 on, where ``pq.ParquetFile`` turned them on:
apache/arrow#46772). Writing, remote files and whole-table reads still use ``pyarrow.parquet``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

__all__ = ["ParquetFile", "read_metadata"]


def _defaults() -> dict[str, Any]:
    import pyarrow as pa

    major = int(pa.__version__.split(".")[0])
    return {"arrow_extensions_enabled": True} if major >= 21 else {}


class ParquetFile:
    """One Parquet file open for reading (a path or a file object; a file object stays the
    caller's to close)."""

    def __init__(
        self,
        source: Any,
        *,
        metadata: pq.FileMetaData | None = None,
        read_dictionary: list[str] | None = None,
        pre_buffer: bool = True,
    ) -> None:
        from pyarrow._parquet import ParquetReader

        self.reader = ParquetReader()
        self.reader.open(
            source,
            read_dictionary=read_dictionary,
            metadata=metadata,
            pre_buffer=pre_buffer,
            **_defaults(),
        )

    @property
    def metadata(self) -> pq.FileMetaData:
        return self.reader.metadata

    @property
    def schema_arrow(self) -> pa.Schema:
        return self.reader.schema_arrow

    def iter_batches(
        self,
        *,
        batch_size: int,
        row_groups: Iterable[int] | None = None,
        columns: list[str] | None = None,
        use_threads: bool = True,
    ) -> Iterator[pa.RecordBatch]:
        """``columns`` (a nested column by its name: all its leaves, as ``pq.ParquetFile``
        selects them; None: all) of ``row_groups`` (None: all), ``batch_size`` rows at a time."""
        groups = range(self.metadata.num_row_groups) if row_groups is None else row_groups
        if columns is None:
            return self.reader.iter_batches(  # type: ignore[no-any-return]
                batch_size, row_groups=list(groups), use_threads=use_threads
            )
        leaves: dict[str, list[int]] = {}  # each column and nested prefix: its leaf columns
        for i, path in enumerate(self.reader.column_paths):
            for n in range(1, len(path) + 1):
                leaves.setdefault(".".join(path[:n]), []).append(i)
        indices = [i for name in columns for i in leaves.get(name, ())]
        return self.reader.iter_batches(  # type: ignore[no-any-return]
            batch_size, row_groups=list(groups), column_indices=indices, use_threads=use_threads
        )


def read_metadata(source: Any) -> pq.FileMetaData:
    """The footer of a Parquet file (a path or a file object), as ``pq.read_metadata``."""
    return ParquetFile(source).metadata
