"""The sizes of a detection input's boxes per class, counted as the rows are written: width,
height and aspect (width / height) in fixed log-spaced bins, so that memory stays bounded
whatever the input's size, and the counts of two shares of a file (the parallel COCO read's
workers) add up to the counts of the whole, exactly as one sequential read counts them.

The bins are ``PER_DECADE`` to a decade from ``LOW`` (one bin below, one above); the least and
the largest value of each class are kept exactly, and so are all its values while it has at most
``EXACT`` sized boxes. A quantile is the value at rank ``floor(q * (n - 1))`` of the sorted
values (numpy's ``method="lower"``): exact for a class with its values kept, else read from the
bins, the geometric middle of the bin holding that rank (clipped to the exact least and
largest), within one bin's width (10 ** (1 / 32): 7.5%) of the exact value."""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["BINS", "LOW", "MEASURED", "PER_DECADE", "QUANTILES", "BoxSizes", "summary"]

PER_DECADE = 32
LOW = 1e-4  # the first bin's lower edge: a normalised box of 1e-4 of its image is below a pixel
DECADES = 10  # up to 1e6: pixels of the largest images, aspects of lines
BINS = PER_DECADE * DECADES + 2  # and one bin below LOW, one at or above the last edge
EXACT = 512  # sized boxes of a class whose values are kept (quantiles exact)
MEASURED = 1024  # classes measured: the smallest ids (any share of a file keeps the same ones)
QUANTILES: tuple[tuple[str, float], ...] = (("min", 0.0), ("p5", 0.05), ("p25", 0.25))
QUANTILES += (("median", 0.5), ("p75", 0.75), ("p95", 0.95), ("max", 1.0))
_PENDING = 65_536  # boxes held before they are counted into the bins

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


def bin_of(values: F64) -> I64:
    """Each positive value's bin: 0 below ``LOW``, ``BINS - 1`` at or past the last edge."""
    with np.errstate(divide="ignore"):
        scaled = np.floor((np.log10(values) - np.log10(LOW)) * PER_DECADE)
    bins: I64 = np.clip(scaled, -1, BINS - 2).astype(np.int64) + 1
    return bins


def edges(k: int) -> tuple[float, float]:
    """The lower and upper edge of bin ``k`` (the outer bins end at 0 and infinity)."""
    lo = 0.0 if k == 0 else LOW * 10 ** ((k - 1) / PER_DECADE)
    hi = float("inf") if k == BINS - 1 else LOW * 10 ** (k / PER_DECADE)
    return lo, hi


class BoxSizes:
    """Per class: the boxes measured, those without a size (zero, negative or not finite
    width or height), and for the others the bins of width, height and aspect with their exact
    least and largest values.

    Attributes:
        boxes: class -> boxes measured (those without a size included).
        unsized: class -> boxes whose width or height is not a positive finite number.
        counts: class -> (3, ``BINS``) counts of width, height, aspect.
        least: class -> the least width, height, aspect.
        most: class -> the largest width, height, aspect.
        unmeasured: boxes of classes past the ``MEASURED`` smallest ids.
    """

    def __init__(self) -> None:
        self.boxes: dict[int, int] = {}
        self.unsized: dict[int, int] = {}
        self.counts: dict[int, I64] = {}
        self.least: dict[int, F64] = {}
        self.most: dict[int, F64] = {}
        self.exact: dict[int, F64] = {}  # class -> its (3, n) values, while n <= EXACT
        self.unmeasured = 0
        self.unit = "pixels"  # the coordinates' frame, as the reader says ("normalised"...)
        self.above: int | None = None  # the least id dropped: it and larger ones not measured
        self._labels = array("q")
        self._widths = array("d")
        self._heights = array("d")

    def add(self, label: int, width: float, height: float) -> None:
        """Measure one box of class ``label``."""
        self._labels.append(label)
        self._widths.append(width)
        self._heights.append(height)
        if len(self._labels) >= _PENDING:
            self.fold()

    def extend(self, labels: I64, widths: F64, heights: F64) -> None:
        """Measure many boxes at once (a block's boxes read as columns)."""
        self.fold()
        self._count(labels, widths, heights)

    def fold(self) -> None:
        """Count the boxes held into the bins."""
        if not self._labels:
            return
        labels = np.frombuffer(self._labels, dtype=np.int64).copy()
        widths = np.frombuffer(self._widths, dtype=np.float64).copy()
        heights = np.frombuffer(self._heights, dtype=np.float64).copy()
        self._labels, self._widths, self._heights = array("q"), array("d"), array("d")
        self._count(labels, widths, heights)

    def merge(self, other: BoxSizes) -> None:
        """Add the counts of ``other`` (another share of the input) to these."""
        other.fold()
        self.fold()
        if other.boxes and self.boxes and other.unit != self.unit:
            self.unit = "mixed"
        elif other.boxes:
            self.unit = other.unit
        self.unmeasured += other.unmeasured
        if other.above is not None:  # its counts of larger ids are partial: dropped here too
            self._drop(other.above)
        for label, n in other.boxes.items():
            if self.above is not None and label >= self.above:
                self.unmeasured += n
                continue
            self.boxes[label] = self.boxes.get(label, 0) + n
            self.unsized[label] = self.unsized.get(label, 0) + other.unsized[label]
            self._keep(label, other.exact.get(label))
            if label in self.counts:
                self.counts[label] += other.counts[label]
                np.minimum(self.least[label], other.least[label], out=self.least[label])
                np.maximum(self.most[label], other.most[label], out=self.most[label])
            else:
                self.counts[label] = other.counts[label].copy()
                self.least[label] = other.least[label].copy()
                self.most[label] = other.most[label].copy()
        self._trim()

    def _count(self, labels: I64, widths: F64, heights: F64) -> None:
        """Count boxes into their classes: the bins, least and largest values of every class in
        a few passes over all the boxes (one ``bincount``, one ``reduceat`` each), then each
        class's totals added to its own."""
        if not labels.size:
            return
        with np.errstate(divide="ignore", invalid="ignore"):
            sized = np.isfinite(widths) & np.isfinite(heights) & (widths > 0) & (heights > 0)
            aspects = widths / heights
        sized &= np.isfinite(aspects) & (aspects > 0)  # a tiny width over a huge height
        order = np.argsort(labels, kind="stable")
        labels, sized = labels[order], sized[order]
        values = np.stack([widths[order], heights[order], aspects[order]])
        starts = np.flatnonzero(np.concatenate(([True], labels[1:] != labels[:-1])))
        ends = np.append(starts[1:], labels.size)
        classes = len(starts)
        of_class = np.repeat(np.arange(classes), ends - starts)[sized]  # each sized box's class
        kept = values[:, sized]
        cells = (of_class * 3 + np.arange(3)[:, None]) * BINS + bin_of(kept)
        counts = np.bincount(cells.ravel(), minlength=classes * 3 * BINS)
        counts = counts.reshape(classes, 3, BINS)
        with_size = np.add.reduceat(sized, starts).tolist()
        least = np.minimum.reduceat(np.where(sized, values, np.inf), starts, axis=1)
        most = np.maximum.reduceat(np.where(sized, values, -np.inf), starts, axis=1)
        for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
            label, n = int(labels[a]), b - a
            if self.above is not None and label >= self.above:
                self.unmeasured += n
                continue
            self.boxes[label] = self.boxes.get(label, 0) + n
            self.unsized[label] = self.unsized.get(label, 0) + n - with_size[i]
            if label not in self.counts:
                self._keep(label, values[:, a:b][:, sized[a:b]])
                self.counts[label] = counts[i].copy()
                self.least[label] = least[:, i].copy()
                self.most[label] = most[:, i].copy()
                continue
            self._keep(label, values[:, a:b][:, sized[a:b]] if label in self.exact else None)
            self.counts[label] += counts[i]
            np.minimum(self.least[label], least[:, i], out=self.least[label])
            np.maximum(self.most[label], most[:, i], out=self.most[label])
        self._trim()

    def _keep(self, label: int, values: F64 | None) -> None:
        """Add ``values`` to the class's kept values, or let them all go (``values`` None: the
        values added were let go already; or more than ``EXACT``)."""
        held = self.exact.get(label) if label in self.counts else np.empty((3, 0))
        if held is None or values is None:
            self.exact.pop(label, None)
            return
        if held.shape[1] + values.shape[1] > EXACT:
            self.exact.pop(label, None)
        else:
            self.exact[label] = np.concatenate([held, values], axis=1)

    def _trim(self) -> None:
        """Keep the ``MEASURED`` smallest class ids (the rest counted as ``unmeasured``)."""
        if len(self.boxes) > MEASURED:
            self._drop(sorted(self.boxes)[MEASURED])

    def _drop(self, above: int) -> None:
        """No class from id ``above`` on measured, now or later (a class dropped once would
        otherwise come back with part of its boxes)."""
        self.above = above if self.above is None else min(self.above, above)
        for label in [k for k in self.boxes if k >= self.above]:
            self.unmeasured += self.boxes.pop(label)
            del self.unsized[label], self.counts[label], self.least[label], self.most[label]
            self.exact.pop(label, None)

    def __getstate__(self) -> dict[str, Any]:
        self.fold()  # sent to the parent as counts, the arrays of pending boxes empty
        names = (
            "boxes",
            "unsized",
            "counts",
            "least",
            "most",
            "exact",
            "unmeasured",
            "above",
            "unit",
        )
        return {k: getattr(self, k) for k in names}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]
        for k, v in state.items():
            setattr(self, k, v)

    def quantiles(self, label: int, d: int) -> dict[str, float] | None:
        """The quantiles (``QUANTILES``) of dimension ``d`` (0 width, 1 height, 2 aspect) of a
        class, read from its bins; ``None`` where it has no sized box."""
        counts = self.counts[label][d]
        total = int(counts.sum())
        if not total:
            return None
        lo, hi = float(self.least[label][d]), float(self.most[label][d])
        if label in self.exact:
            ranked = np.sort(self.exact[label][d])
            return {name: float(ranked[int(np.floor(q * (total - 1)))]) for name, q in QUANTILES}
        cumulative = np.cumsum(counts)
        out: dict[str, float] = {}
        for name, q in QUANTILES:
            if q in (0.0, 1.0):
                out[name] = lo if q == 0.0 else hi
                continue
            rank = int(np.floor(q * (total - 1)))  # numpy's "lower" quantile
            k = int(np.searchsorted(cumulative, rank, side="right"))
            a, b = edges(k)
            middle = (a * b) ** 0.5 if a > 0 and b < float("inf") else (a if a else b)
            out[name] = float(min(max(middle, lo), hi))
        return out


LISTED = 200  # classes whose quantiles the report lists (the smallest ids)
DRAWN = 12  # classes whose histograms it draws (those with the most boxes)
COARSE = 4  # bins drawn as one: eight to a decade


def summary(sizes: BoxSizes) -> dict[str, Any] | None:
    """The report's ``box_sizes``: per class (the first ``LISTED``) its boxes and the
    quantiles of width, height and aspect, and for the ``DRAWN`` classes with the most boxes
    their histograms, eight bins to a decade (``from``: the first bin's lower edge);
    ``None`` where no box was measured."""
    sizes.fold()
    if not sizes.boxes and not sizes.unmeasured:
        return None
    names = ("width", "height", "aspect")
    classes = []
    for label in sorted(sizes.boxes)[:LISTED]:
        entry: dict[str, Any] = {
            "label": label,
            "boxes": sizes.boxes[label],
            "unsized": sizes.unsized[label],
        }
        entry |= {name: _rounded(sizes.quantiles(label, d)) for d, name in enumerate(names)}
        classes.append(entry)
    most = sorted(sizes.boxes, key=lambda k: (-sizes.boxes[k], k))[:DRAWN]
    drawn = []
    for label in most:
        if sizes.boxes[label] == sizes.unsized[label]:
            continue
        entry = {"label": label}
        entry |= {name: _histogram(sizes.counts[label][d]) for d, name in enumerate(names)}
        drawn.append(entry)
    return {
        "unit": sizes.unit,
        "boxes": sum(sizes.boxes.values()) + sizes.unmeasured,
        "unsized": sum(sizes.unsized.values()),
        "unmeasured": sizes.unmeasured,
        "classes_measured": len(sizes.boxes),
        "bins_per_decade": PER_DECADE,
        "classes": classes,
        "histograms": drawn,
    }


def _rounded(q: dict[str, float] | None) -> dict[str, float] | None:
    return None if q is None else {k: float(f"{v:.4g}") for k, v in q.items()}


def _histogram(counts: I64) -> dict[str, Any]:
    """A dimension's bins, ``COARSE`` to a bar, from the first bar holding a box to the last."""
    bars = np.add.reduceat(counts[1:-1], np.arange(0, BINS - 2, COARSE))
    bars[0] += counts[0]  # below LOW: drawn in the first bar, past the last edge in the last
    bars[-1] += counts[-1]
    held = np.flatnonzero(bars)
    a, b = int(held[0]), int(held[-1]) + 1
    return {
        "from": float(f"{LOW * 10 ** (a * COARSE / PER_DECADE):.4g}"),
        "counts": bars[a:b].tolist(),
    }
