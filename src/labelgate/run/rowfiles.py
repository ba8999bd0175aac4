"""The run's own rows files (Parquet written by a reader's sink): read whole without the dataset
layer (``pyarrow.parquet.read_table`` opens a file through ``pyarrow.dataset``, whose import
brings pandas, about 0.5 s a run, for files that are one file each), or rewritten a row group at
a time, so that a rewrite after the read holds one group of rows, not the file."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

__all__ = ["read_rows", "rewrite_labelled", "rewrite_rows", "with_label"]


def read_rows(path: str, columns: Sequence[str] | None = None) -> Any:
    """The table of one rows file (``columns`` of it, or every column), read in full and the
    file closed (the caller may write over it)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as f:
        return f.read(columns=None if columns is None else list(columns))


def with_label(table: Any, label: Any) -> Any:
    """``table`` with ``label`` in place of its label column, the column's field kept."""
    index = table.column_names.index("label")
    return table.set_column(index, table.schema.field(index), label)


def rewrite_rows(path: str, change: Callable[[Any, int], Any]) -> None:
    """Rewrite one rows file a row group at a time: ``change(group, first)`` gives the table to
    write for each group (``first``: the position of its first row in the file), its row groups
    kept. The new file is written beside the old one and replaces it once complete."""
    import pyarrow.parquet as pq

    from labelgate.readers.common.sink import rows_writer

    temp = Path(f"{path}.rewrite")
    writer = None
    try:
        with pq.ParquetFile(path) as f:
            first = 0
            for i in range(f.num_row_groups):
                group = f.read_row_group(i)
                table = change(group, first)
                first += group.num_rows
                if writer is None:
                    writer = rows_writer(temp, table.schema)
                writer.write_table(table)
        if writer is not None:
            writer.close()
            writer = None
            temp.replace(path)
    except BaseException:
        if writer is not None:
            writer.close()
        temp.unlink(missing_ok=True)
        raise


def rewrite_labelled(paths: Sequence[str], change: Callable[[Any, int], Any]) -> None:
    """Each rows file of ``paths`` that has a label column rewritten a row group at a time
    through ``change(group, first)``, ``first`` the position of the group's first row in reading
    order (a file without a label column is left, and its rows not counted)."""
    import pyarrow.parquet as pq

    row = 0
    for path in paths:
        with pq.ParquetFile(path) as f:
            if "label" not in f.schema_arrow.names:
                continue
            rows = f.metadata.num_rows
        rewrite_rows(path, partial(_shifted, change, row))
        row += rows


def _shifted(change: Callable[[Any, int], Any], base: int, group: Any, first: int) -> Any:
    return change(group, base + first)
