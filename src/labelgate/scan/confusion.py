"""Each source's confusion matrix (given x predicted), counted from the rows the model disagrees
with.

Most rows agree with a model worth judging by, and every agreeing row lies on a diagonal, so only
the others are counted one by one: a row whose given class differs from its predicted one goes
into its K x K cell, a usable row without a prediction into its given class's count of rows
lost. The diagonal follows at the end from each source's usable rows per class (the scan's
``source_hist``, or counted here where the scan's is not at hand): usable rows, less those off
the diagonal, less those without a prediction. The scan's workers add slices at once, so adding
holds a lock.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.core.classcounts import ClassCounts
from labelgate.scan.result import NO_SOURCE

__all__ = ["Confusion"]

I64 = npt.NDArray[np.int64]


class Confusion:
    """The counts of the data's labels against the predictions, added a slice at a time.

    Args:
        k: the number of classes.
        named: rows without a prediction whose row number is kept (the first ones).
        usable: count each source's usable rows per class here (where no scan result gives
            them).
    """

    def __init__(self, k: int, *, named: int, usable: bool = False) -> None:
        self.k = k
        self.named = named
        self.names: dict[str, int] = {}
        self.off = np.zeros(0, np.int64)  # source x given x predicted, given != predicted
        self.lost = np.zeros(0, np.int64)  # source x given: usable rows without a prediction
        self.usable = np.zeros(0, np.int64) if usable else None  # source x given
        self.sources = 0  # sources the arrays hold room for
        self.judged = self.missing = self.not_judged = 0
        self.missing_rows: list[int] = []  # the first rows without a prediction, in row order
        self._lock = threading.Lock()

    def add(
        self,
        values: I64,
        predicted: npt.NDArray[Any],
        bad: npt.NDArray[np.bool_] | None,
        sources: npt.NDArray[Any] | None,
        names: Sequence[str | None],
        first_row: int,
    ) -> npt.NDArray[np.int32]:
        """Count one slice of rows.

        Args:
            values: the rows' labels (any value where ``bad``).
            predicted: each row's predicted class, -1 where it has none.
            bad: the rows whose label is no usable class, or ``None`` where every one is.
            sources: each row's index into ``names``, or ``None`` (every row ``names[0]``).
            names: the slice's source names (``None``: rows without a source).
            first_row: the slice's first global row.

        Returns:
            each of ``names``' index among the sources counted so far.
        """
        k = self.k
        ne = np.flatnonzero(values != predicted)  # off the diagonal, or without a prediction
        if bad is not None:
            ne = ne[~bad[ne]]
        to = predicted[ne]
        # rows without a prediction: a minimum first (most slices have none), cheaper than a mask
        none = np.flatnonzero(predicted < 0) if predicted.min(initial=0) < 0 else ne[:0]
        bad_rows = 0 if bad is None else int(np.count_nonzero(bad))
        not_judged = bad_rows - (0 if bad is None else int(np.count_nonzero(bad[none])))
        with self._lock:
            index = self._indices(names)
        if sources is None:
            row_class = values[ne] + index[0] * k
        elif (index == np.arange(len(index))).all():  # the slice's codes are the indices
            row_class = sources[ne].astype(np.int64) * k + values[ne]
        else:
            row_class = index[sources[ne]] * k + values[ne]
        lost = to < 0 if len(none) else None  # usable rows without a prediction
        cells = row_class * k + to if lost is None else row_class[~lost] * k + to[~lost]
        every = None
        if self.usable is not None:
            held = slice(None) if bad is None else ~bad
            every = (index[sources[held]] if sources is not None else index[0]) * k + values[held]
        with self._lock:
            np.add.at(self.off, cells, 1)
            if lost is not None:
                np.add.at(self.lost, row_class[lost], 1)
            if self.usable is not None and every is not None:
                self.usable += np.bincount(every, minlength=len(self.usable))
            self.missing += len(none)
            self.not_judged += not_judged
            self.judged += len(values) - len(none) - not_judged
            for r in none[: self.named].tolist():
                bisect.insort(self.missing_rows, first_row + r)
            del self.missing_rows[self.named :]
        return index.astype(np.int32)

    def _indices(self, names: Sequence[str | None]) -> I64:
        """The sources' indices, room made in the arrays for those that are new (at once, and
        doubling: a run's sources may be many)."""
        index = []
        for name in names:
            shown = NO_SOURCE if name is None else name
            index.append(self.names.setdefault(shown, len(self.names)))
        if len(self.names) > self.sources:
            self.sources = max(len(self.names), 2 * self.sources)
            self.off = _grown(self.off, self.sources * self.k * self.k)
            self.lost = _grown(self.lost, self.sources * self.k)
            if self.usable is not None:
                self.usable = _grown(self.usable, self.sources * self.k)
        return np.array(index, np.int64)

    def matrices(
        self, order: Sequence[str], usable: Sequence[ClassCounts] | None = None
    ) -> dict[str, I64]:
        """Source name -> K x K counts, in ``order``, those with a row judged: the counts' own
        arrays, their diagonals filled in (so called once, when every row is counted).

        Args:
            order: the source names, in the order they first appear in the rows.
            usable: each of ``order``'s usable rows per class (the scan's per-source counts,
                over K or more classes), where not counted here.
        """
        k, kk = self.k, self.k * self.k
        out: dict[str, I64] = {}
        for i, name in enumerate(order):
            at = self.names.get(name)
            if at is None:  # no slice held the source (none of its rows judged)
                continue
            conf = self.off[at * kk : (at + 1) * kk].reshape(k, k)
            lost = self.lost[at * k : (at + 1) * k]
            if self.usable is not None:
                held = self.usable[at * k : (at + 1) * k]
            else:
                assert usable is not None
                held = usable[i].counts_of(np.arange(k, dtype=np.int64))
            np.fill_diagonal(conf, held - conf.sum(axis=1) - lost)
            if conf.any():
                out[name] = conf
        return out


def _grown(a: I64, size: int) -> I64:
    out = np.zeros(size, np.int64)
    out[: len(a)] = a
    return out
