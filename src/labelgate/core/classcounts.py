"""Counts per class in memory bounded by the classes present, whatever K says.

K is input (a flag, a contract): ``--classes 2147483647`` must not allocate 2**31 counters. Up
to ``DENSE_LIMIT`` classes the counts are one numpy array of K (the fastest to add to); above,
they are the present classes' ids, sorted, and their counts, so a three-row file at K = 10**7
holds three counters. Both forms answer the same questions through one interface.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from labelgate.core.classrange import absent_of

__all__ = ["DENSE_LIMIT", "SOURCES_DENSE", "ClassCounts", "add_grouped", "source_counts"]

I64 = npt.NDArray[np.int64]
DENSE_LIMIT = 65_536  # classes up to which the counts are one array of K
# Counters held as arrays of K by the sources' histograms together (64 MB): 2,000 sources at
# K = 65,535 would otherwise hold 1 GB, most of it zeros.
SOURCES_DENSE = 1 << 23


def _summed(ids: I64, counts: I64) -> tuple[I64, I64]:
    """The distinct ids of ``ids`` (sorted) and the sum of ``counts`` for each, in integers (a
    float sum loses counts past 2**53)."""
    if not len(ids):
        return ids.astype(np.int64), counts.astype(np.int64)
    order = np.argsort(ids, kind="stable")
    ids, counts = ids[order], counts[order]
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    return ids[starts], np.add.reduceat(counts, starts).astype(np.int64)


class ClassCounts:
    """How many targets each of the classes ``0..k-1`` holds.

    Dense (one int64 per class) up to ``dense_limit`` classes (default ``DENSE_LIMIT``), sparse
    above: sorted ids and
    their counts, with the batches added since the last read kept aside and summed into them
    once they outweigh them (so adding n batches costs n log n, not n times the classes seen).
    ``freeze`` ends the adding: a scan result's counts are read-only.
    """

    __slots__ = ("_counts", "_dense", "_frozen", "_ids", "_pending", "_pending_size", "k")

    def __init__(self, k: int, *, dense_limit: int | None = None) -> None:
        if k < 0:
            raise ValueError(f"the number of classes must be 0 or more, not {k!r}")
        limit = DENSE_LIMIT if dense_limit is None else dense_limit  # read now: tests lower it
        self.k = k
        self._dense: I64 | None = np.zeros(k, np.int64) if k <= limit else None
        self._ids = np.zeros(0, np.int64)
        self._counts = np.zeros(0, np.int64)
        self._pending: list[tuple[I64, I64]] = []
        self._pending_size = 0
        self._frozen = False

    @property
    def dense(self) -> bool:
        """Whether the counts are one array of K."""
        return self._dense is not None

    # -- adding ------------------------------------------------------------------------------

    def add(self, labels: npt.NDArray[np.integer], weights: I64 | None = None) -> None:
        """Count each label once (or ``weights``' value, aligned with ``labels``: pixels).

        Args:
            labels: class indices, each in ``0..k-1``.
            weights: what each label counts for; ``None``: 1.
        """
        self._writable()
        if not len(labels):
            return
        if self._dense is not None:
            w = None if weights is None else weights.astype(np.float64)
            self._dense += np.bincount(labels, weights=w, minlength=self.k)[: self.k].astype(
                np.int64
            )
            return
        ids = np.asarray(labels, np.int64)
        ones = np.ones(len(ids), np.int64)
        self._push(*_summed(ids, ones if weights is None else weights.astype(np.int64)))

    def add_counts(self, classes: npt.NDArray[np.integer], counts: npt.NDArray[np.integer]) -> None:
        """Add ``counts[i]`` to class ``classes[i]`` (a class may appear more than once)."""
        self._writable()
        if not len(classes):
            return
        ids, n = np.asarray(classes, np.int64), np.asarray(counts, np.int64)
        if self._dense is not None:
            np.add.at(self._dense, ids, n)
        else:
            self._push(*_summed(ids, n))

    def merge(self, other: ClassCounts) -> None:
        """Add every count of ``other`` (counts over the same K) to these."""
        if other.k != self.k:
            raise ValueError(f"cannot add counts over {other.k} classes to counts over {self.k}")
        self.add_counts(*other.arrays())

    def freeze(self) -> ClassCounts:
        """These counts, read-only from now on (returned for chaining)."""
        self._compact()
        self._frozen = True
        if self._dense is not None:
            self._dense.flags.writeable = False
        return self

    def _writable(self) -> None:
        if self._frozen:
            raise ValueError("these class counts are frozen: a scan result is read-only")

    def _push(self, ids: I64, counts: I64) -> None:
        self._pending.append((ids, counts))
        self._pending_size += len(ids)
        if self._pending_size > max(len(self._ids), 1 << 16):
            self._compact()

    def _compact(self) -> None:
        if not self._pending:
            return
        ids = np.concatenate([self._ids, *(i for i, _ in self._pending)])
        counts = np.concatenate([self._counts, *(c for _, c in self._pending)])
        self._ids, self._counts = _summed(ids, counts)
        self._pending, self._pending_size = [], 0

    # -- reading -----------------------------------------------------------------------------

    def arrays(self) -> tuple[I64, I64]:
        """The classes holding a count other than 0, increasing, and their counts."""
        if self._dense is not None:
            held = np.flatnonzero(self._dense).astype(np.int64)
            return held, self._dense[held]
        self._compact()
        held = self._counts != 0
        return self._ids[held], self._counts[held]

    def items(self) -> Iterator[tuple[int, int]]:
        """``(class, count)`` for every class holding a count, by increasing class."""
        classes, counts = self.arrays()
        return zip(classes.tolist(), counts.tolist(), strict=True)

    def count(self, index: int) -> int:
        """The count of one class (0 for a class outside ``0..k-1``)."""
        if not 0 <= index < self.k:
            return 0
        if self._dense is not None:
            return int(self._dense[index])
        self._compact()
        at = int(np.searchsorted(self._ids, index))
        return int(self._counts[at]) if at < len(self._ids) and self._ids[at] == index else 0

    def counts_of(self, indices: I64) -> I64:
        """The count of each class of ``indices`` (each in ``0..k-1``), in one vectorised look-up."""
        if self._dense is not None:
            return self._dense[indices]
        classes, counts = self.arrays()
        if not len(classes):
            return np.zeros(len(indices), np.int64)
        at = np.minimum(np.searchsorted(classes, indices), len(classes) - 1)
        return np.where(classes[at] == indices, counts[at], 0)

    def total(self) -> int:
        """The sum of every count."""
        if self._dense is not None:
            return int(self._dense.sum())
        self._compact()
        return int(self._counts.sum())

    def present(self) -> int:
        """How many classes hold a count other than 0."""
        return len(self.arrays()[0])

    def absent(self, skip: frozenset[int] = frozenset(), first: int = 10) -> tuple[int, list[int]]:
        """The classes of ``0..k-1`` with no count, ``skip`` left out: how many, and the first
        ``first`` of them, found without building K of anything.

        Args:
            skip: classes not to count (a background, a class map's placeholders, rows listed).
            first: how many of the absent classes to name.
        """
        return absent_of(self.k, set(self.arrays()[0].tolist()) | skip, first)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassCounts):
            return NotImplemented
        (a, x), (b, y) = self.arrays(), other.arrays()
        return self.k == other.k and np.array_equal(a, b) and np.array_equal(x, y)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = dict(list(self.items())[:5])
        more = ", ..." if self.present() > 5 else ""
        form = "dense" if self.dense else "sparse"
        return f"ClassCounts(k={self.k}, {form}, {str(shown)[1:-1]}{more})"


def source_counts(k: int, held: int) -> ClassCounts:
    """The histogram of one more source over ``k`` classes, ``held`` sources' histograms made
    before it: an array of K while the sources' arrays stay within ``SOURCES_DENSE`` counters,
    the classes present past it (the same answers either way)."""
    dense = (held + 1) * k <= SOURCES_DENSE
    return ClassCounts(k, dense_limit=None if dense else 0)


def add_grouped(
    into: Sequence[ClassCounts],
    groups: npt.NDArray[np.integer],
    labels: npt.NDArray[np.integer],
    weights: I64 | None = None,
) -> None:
    """Count each label in the counts of its group (a source): ``into[groups[i]]`` gets
    ``labels[i]``, counting ``weights[i]`` where given; one ``add`` per group met.
    """
    if not len(groups):
        return
    order = np.argsort(groups, kind="stable")  # each group's labels, one slice each
    met, starts = np.unique(np.asarray(groups)[order], return_index=True)
    ends = [*starts[1:].tolist(), len(order)]
    for group, lo, hi in zip(met.tolist(), starts.tolist(), ends, strict=True):
        at = order[lo:hi]
        into[group].add(labels[at], None if weights is None else weights[at])
