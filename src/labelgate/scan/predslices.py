"""A Parquet predictions file joined by position, read beside the scan's pieces: each piece's
rows take their predictions a slice at a time, and each slice is counted where the scan already
holds its labels, sources and unusable rows (``labelgate.scan.confusion``).

No prediction is read twice and none is held past its slice: a piece reads the predictions' row
groups that overlap its rows, from its first row to its last; the predictions past the data's
last row are read once at the end (their classes checked and counted as predictions without a
row).
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from itertools import accumulate
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from labelgate.errors import InputError, one_line
from labelgate.io.predictions import PredictionsFile, classes_of
from labelgate.scan.confusion import Confusion

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["PieceWitness", "Slices"]

I32 = npt.NDArray[np.int32]


class PieceWitness:
    """What the scan's workers count the predictions into, and read them from.

    Args:
        source: a Parquet predictions file with no id column.
        k: the number of classes.
        confusion: the counts.
    """

    def __init__(self, source: PredictionsFile, k: int, confusion: Confusion) -> None:
        meta = source.schema.metadata
        self.source, self.k, self.confusion = source, k, confusion
        sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
        self.starts = [0, *accumulate(sizes)]
        self.rows = self.starts[-1]
        self.counts = [0, 0]  # [probability rows, logit rows] read
        self._lock = threading.Lock()

    def slices(self, first: int, rows: int, batch_rows: int) -> Slices:
        """The predictions of rows ``[first, first + rows)``, read ``batch_rows`` at a time
        (-1 past the predictions' last row)."""
        return Slices(self, first, rows, batch_rows)

    def read_rest(self, first: int, batch_rows: int) -> None:
        """Read the predictions from ``first`` (the data's row count) to the end: no row is
        counted with them, but their classes are checked and their layout counted."""
        with self.slices(first, max(0, self.rows - first), batch_rows) as rest:
            while rest.take(batch_rows, pad=False) is not None:
                pass

    def _counted(self, counts: list[int]) -> None:
        with self._lock:
            self.counts[0] += counts[0]
            self.counts[1] += counts[1]


class Slices:
    """One piece's predictions, taken in order a slice at a time; a context manager (it holds
    the file open)."""

    def __init__(self, owner: PieceWitness, first: int, rows: int, batch_rows: int) -> None:
        self.owner, self.first = owner, first
        self.end = min(first + rows, owner.rows)  # the predictions' rows read
        self.batch_rows = batch_rows
        self.pending: I32 = np.zeros(0, np.int32)
        self.counts = [0, 0]
        self.batches: Iterator[Any] | None = None
        self.handle: Any = None

    def __enter__(self) -> Slices:
        return self

    def __exit__(self, *exc: object) -> None:
        self.owner._counted(self.counts)
        if self.handle is not None and hasattr(self.handle, "close"):
            self.handle.close()

    def count(
        self,
        values: npt.NDArray[np.int64],
        bad: npt.NDArray[np.bool_] | None,
        sources: npt.NDArray[Any] | None,
        names: Sequence[str | None],
        first_row: int,
    ) -> None:
        """Count the next ``len(values)`` rows against their predictions (see
        ``labelgate.scan.confusion.Confusion.add``)."""
        predicted = self.take(len(values))
        assert predicted is not None
        self.owner.confusion.add(values, predicted, bad, sources, names, first_row)

    def take(self, n: int, *, pad: bool = True) -> I32 | None:
        """The next ``n`` predicted classes (-1 past the predictions' end where ``pad``; else
        ``None`` once none is left)."""
        parts: list[I32] = []
        left = n
        while left > 0:
            if not len(self.pending):
                got = self._next()
                if got is None:
                    if pad:
                        parts.append(np.full(left, -1, np.int32))
                    break
                self.pending = got
            part, self.pending = self.pending[:left], self.pending[left:]
            parts.append(part)
            left -= len(part)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _next(self) -> I32 | None:
        """The next batch's classes, within ``[first, end)``; ``None`` past it."""
        import pyarrow as pa

        owner = self.owner
        source = owner.source
        if self.first >= self.end:
            return None
        try:
            if self.batches is None:
                self.batches = self._open()
            batch = next(self.batches, None)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"cannot read parquet ({one_line(exc)})", path=source.path) from None
        if batch is None:
            raise InputError(
                f"the predictions end before row {self.first}, its footer says {owner.rows}",
                path=source.path,
            )
        batch = batch.slice(0, self.end - self.first)
        self.first += batch.num_rows
        return classes_of(batch, source, owner.k, self.counts)

    def _open(self) -> Iterator[Any]:
        """The batches of the row groups holding ``[first, end)``, the first from ``first``."""
        from labelgate.io.parquet import ParquetFile

        owner = self.owner
        starts = owner.starts
        g0 = bisect_right(starts, self.first) - 1
        g1 = bisect_right(starts, self.end - 1)
        self.handle = owner.source.file.open()
        pf = ParquetFile(self.handle, metadata=owner.source.schema.metadata, pre_buffer=False)
        skip = self.first - starts[g0]
        batches = pf.iter_batches(
            batch_size=self.batch_rows,
            row_groups=list(range(g0, g1)),
            columns=list(owner.source.columns),
            use_threads=False,
        )
        for batch in batches:
            if skip >= batch.num_rows:
                skip -= batch.num_rows
                continue
            yield batch.slice(skip) if skip else batch
            skip = 0
