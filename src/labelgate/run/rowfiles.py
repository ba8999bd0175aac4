"""The run's own rows files (Parquet written by a reader's sink) read whole, without the dataset
layer: ``pyarrow.parquet.read_table`` opens a file through ``pyarrow.dataset``, whose import
brings pandas (about 0.5 s a run, for files that are one file each)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["read_rows"]


def read_rows(path: str, columns: Sequence[str] | None = None) -> Any:
    """The table of one rows file (``columns`` of it, or every column), read in full and the
    file closed (the caller may write over it)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as f:
        return f.read(columns=None if columns is None else list(columns))
