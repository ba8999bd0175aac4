"""What the sequential scan takes in and tallies: chunks of rows with the columns the checks
need, a check's failing values while they are counted, and the per-value pixel counts of masks."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from labelgate.core.arrow import numbers
from labelgate.core.labels import Classified
from labelgate.core.report import Example
from labelgate.scan.result import CodeTally, without_unkept

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Chunk", "Tally", "counted", "frozen_tallies", "pixel_counts"]

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive rows of one input file, with the columns the checks need.

    Attributes:
        first_row: position of the chunk's first row in reading order (all files).
        file_index: which input file the rows come from.
        labels, ids, sources, names: the columns (``None`` where the dataset has none).
        pixels: for segmentation masks, the pixel count of each value of ``labels`` (a list
            column of the same shape): every count is then of pixels, not of values.
    """

    first_row: int
    file_index: int
    labels: pa.Array
    ids: pa.Array | None = None
    sources: pa.Array | None = None
    names: pa.Array | None = None
    pixels: pa.Array | None = None


@dataclass(slots=True)
class Tally:
    """Where the values failing one check were met, while they are being counted."""

    count: int = 0
    examples: list[Example] = field(default_factory=list)
    by_source: Counter[int] = field(default_factory=Counter)
    by_file: Counter[int] = field(default_factory=Counter)
    batches: set[int] = field(default_factory=set)
    rows: int = 0


def counted(index: I64 | npt.NDArray[np.uint8], weight: I64 | None, size: int) -> I64:
    """How many times each of ``0..size-1`` occurs in ``index``, each occurrence counting
    ``weight`` (pixels) where given."""
    w = None if weight is None else weight.astype(np.float64)
    return np.bincount(index, weights=w, minlength=size)[:size].astype(np.int64)


def pixel_counts(column: pa.Array, c: Classified) -> I64:
    """The pixel count of each value of a mask histogram, aligned with the judged values.

    Raises:
        InputError: the counts are not one non-negative integer per value.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from labelgate.errors import InputError

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    flat = numbers(pc.list_flatten(column), -1).astype(np.int64)
    if len(flat) != len(c.values) or (flat < 0).any():
        raise InputError(
            "must hold one pixel count (0 or more) per value of the label column: "
            f"{len(flat)} counts for {len(c.values)} values",
            path="column 'pixels'",
        )
    return flat


def frozen_tallies(tallies: dict[str, Tally], kept: int) -> dict[str, CodeTally]:
    """The tallies as the frozen result holds them (examples in a batch drop_last drops name
    no batch)."""
    return without_unkept(
        {
            code: CodeTally(
                t.count,
                tuple(t.examples),
                dict(t.by_source),
                dict(t.by_file),
                frozenset(t.batches),
                rows=t.rows,
            )
            for code, t in tallies.items()
        },
        kept,
    )
