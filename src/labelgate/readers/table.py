"""Label tables: Parquet, CSV, TSV and JSONL files, folders and globs of them, URIs, data in memory.

The scan reads them as they are: the reader writes no rows, it keeps the user's files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from labelgate.readers.base import Claim, Read, Reader, ReadOptions
from labelgate.readers.common.layout import any_file

if TYPE_CHECKING:
    from labelgate.core.annotations import AnnotationFacts
    from labelgate.readers.common.sink import RowSink

__all__ = ["TableReader", "holds_tables"]


def holds_tables(folder: Path) -> bool:
    """Whether a label table (Parquet, CSV, JSONL) lies anywhere under ``folder``."""
    from labelgate.io.sources import KINDS

    return any_file(folder, "*", lambda f: f.suffix.lower() in KINDS and f.name[0] != ".")


class TableReader(Reader):
    """Parquet, CSV, TSV and JSONL label tables, read by the scan as they are."""

    name = "table"
    title = "label tables (Parquet, CSV, TSV, JSONL)"
    suffixes = (".parquet", ".pq", ".csv", ".tsv", ".jsonl", ".ndjson")
    capabilities = frozenset({"many", "table", "dask"})

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        if path.is_dir():
            if holds_tables(path):
                return Claim(0.6, "a folder holding label tables (Parquet, CSV or JSONL)")
            return None
        if path.suffix.lower() in self.suffixes:
            return Claim(0.8, f"a {path.suffix.lower()} file")
        if path.exists() and not path.is_file():  # a device or FIFO: the table reader says so
            return Claim(0.05, "not a regular file")
        return None

    def read(
        self, paths: list[Path], sink: RowSink, facts: AnnotationFacts, options: ReadOptions
    ) -> Read:
        sink.keep([str(p) for p in paths])
        return Read()
