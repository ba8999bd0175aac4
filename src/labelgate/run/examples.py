"""The findings' examples completed after the checks: each named row's id, source and label value
read once (the pieces keep rows only), and the file and row within it where the input has
several files."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from labelgate.core.report import Example, Finding
from labelgate.inputs.dataset import Dataset
from labelgate.io import InputFile

__all__ = ["completed_examples", "named_files"]


def completed_examples(findings: list[Finding], data: Dataset) -> list[Finding]:
    """Examples named by row alone get their row's id and source (the pieces read ids only for
    LG014; LG007 and LG010 name rows), and LG007's and LG014's their label value: one read, of
    those rows' row groups only for Parquet."""
    cols = data.columns
    valued = ("LG007", "LG014")

    def needs(f: Finding, e: Example) -> tuple[bool, bool, bool]:
        """Whether the example lacks its id, its source, its value."""
        if e.row < 0:
            return False, False, False
        return (
            cols.id is not None and e.id is None,
            cols.source is not None and e.source is None,
            f.code in valued and e.value is None and data.task == "multiclass",
        )

    def lacking(f: Finding, e: Example) -> bool:
        return any(needs(f, e))

    rows = [e.row for f in findings for e in f.examples if lacking(f, e)]
    if not rows:
        return findings
    wanted = [
        any(n) for n in zip(*(needs(f, e) for f in findings for e in f.examples), strict=True)
    ]
    columns = [
        c for c, w in zip((cols.id, cols.source, cols.label), wanted, strict=True) if c and w
    ]
    from labelgate.scan.ids import values_at

    at = values_at(rows, data, columns)

    def completed(f: Finding, e: Example) -> Example:
        if not lacking(f, e) or e.row not in at:
            return e
        values = dict(zip(columns, at[e.row], strict=True))
        source = values.get(cols.source or "")
        return replace(
            e,
            id=values.get(cols.id or "", e.id) if e.id is None else e.id,
            source=e.source if e.source is not None or source is None else str(source),
            value=values[cols.label] if needs(f, e)[2] else e.value,
        )

    return [replace(f, examples=tuple(completed(f, e) for e in f.examples)) for f in findings]


def named_files(
    findings: list[Finding], files: list[InputFile], rows: tuple[int, ...]
) -> list[Finding]:
    """Name each example's file and row within it, where the input has several files."""
    if len(files) < 2:
        return findings
    starts = np.cumsum([0, *rows])

    def named(e: Example) -> Example:
        if e.row < 0:  # a record that is no row (a reader's): in no file of the rows
            return e
        i = int(np.searchsorted(starts, e.row, side="right")) - 1
        return replace(e, file=files[i].path, file_row=e.row - int(starts[i]))

    return [replace(f, examples=tuple(named(e) for e in f.examples)) for f in findings]
