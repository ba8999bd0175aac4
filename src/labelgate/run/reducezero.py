"""mmseg's ``reduce_zero_label`` applied to masks read as rows (their distinct values and pixel
counts): ``mmseg/datasets/transforms/loading.py:112-116`` (mmsegmentation 1.2.2) sets 0 to 255,
subtracts 1 from every label and sets the 254 that 255 became back to 255. The checks then judge
the labels the loss receives, with 255 as the ignore index (mmseg's decode heads' default):
a label past K after the transform is the device-side assert of mmsegmentation#1180."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from labelgate.run.rowfiles import read_rows

if TYPE_CHECKING:
    from labelgate.core.annotations import AnnotationFacts

__all__ = ["IGNORE", "reduce_zero_label", "reduced"]

IGNORE = 255


def reduced(value: int) -> int:
    """One mask value as ``reduce_zero_label`` leaves it (uint8 arithmetic: 0 - 1 wraps to 255,
    which the transform sets first; 255 - 1 = 254 is set back to 255)."""
    if value == 0 or value == IGNORE:
        return IGNORE
    return value - 1


def reduce_zero_label(paths: Sequence[str], facts: AnnotationFacts) -> None:
    """Rewrite each mask row's values (and merge the pixel counts of values that meet at 255)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in paths:
        table = read_rows(path)
        if "pixels" not in table.column_names:
            continue
        labels: list[list[int] | None] = []
        pixels: list[list[int] | None] = []
        for values, counts in zip(
            table.column("label").to_pylist(), table.column("pixels").to_pylist(), strict=True
        ):
            if values is None:
                labels.append(None)
                pixels.append(counts)
                continue
            merged: Counter[int] = Counter()
            for v, n in zip(values, counts or [0] * len(values), strict=True):
                merged[reduced(v)] += n
            labels.append(sorted(merged))
            pixels.append([merged[v] for v in sorted(merged)])
        for name, column in (("label", labels), ("pixels", pixels)):
            index = table.column_names.index(name)
            field = table.schema.field(index)
            table = table.set_column(index, field, pa.array(column, field.type))
        pq.write_table(table, Path(path), compression="zstd")
    facts.notes.append(
        "masks' labels as mmseg's reduce_zero_label makes them before the loss: 0 -> 255 "
        "(ignored), every other label minus 1 (mmseg/datasets/transforms/loading.py:112-116"
        "@mmsegmentation 1.2.2)"
    )
