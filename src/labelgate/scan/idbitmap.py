"""Integer ids checked against a bitmap of the ids met so far: one bit per id of their range.

Ids as datasets hold them (sorted, shuffled within each row group, or shuffled across the file)
fill a range not much wider than their count, so a bit per value of that range holds them all in
a few MB (100M ids: 12.5 MB), with no (key, row) pair kept, written out or sorted across the
file. Each slice of ids is sorted on its own (a slice's repeats sit side by side) and its bits
set a byte at a time, by one scatter; a bit already set is an id met in an earlier slice. What
the bitmap finds is the set of repeated values, exactly; their rows are then read again, from
the slices whose range holds one of them, added up to the last slice that found a repeat (see
``labelgate.scan.ids``). Ids whose range outgrows the budget, or
too many repeated values, give the bitmap up: the caller then keys every row as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["IdBitmap", "PackedIds", "SortedIds", "packed_ids", "sorted_ids"]

Array = np.ndarray[Any, Any]
_ONE = np.uint64(1)
_DENSE = 16  # a slice whose range is at most this many ids per row is packed, not sorted


@dataclass(frozen=True, slots=True)
class PackedIds:
    """A dense slice's ids as the bits they set, found distinct within the slice without a sort.

    Attributes:
        lo, hi: the lowest and highest id.
        word: the word (id // 64) of the first of ``words``.
        words: the bits of the ids, from id ``64 * word`` on.
    """

    lo: int
    hi: int
    word: int
    words: Array


def packed_ids(keys: Array) -> PackedIds | None:
    """A slice of ids spread over a range at most ``_DENSE`` times their count (ids shuffled
    within row groups, or sorted), marked a byte per id and packed into words; ``None`` where
    the range is wider, or a repeat within the slice asks for ``sorted_ids``."""
    n = len(keys)
    if not n:
        return None
    lo, hi = int(keys.min()), int(keys.max())
    base = lo - lo % 64
    if hi - base >= _DENSE * n + 4096:
        return None
    marks = np.zeros((hi - base) // 64 * 64 + 64, np.uint8)
    marks[keys - np.int64(base)] = 1
    if np.count_nonzero(marks) != n:
        return None
    return PackedIds(lo, hi, base // 64, np.packbits(marks, bitorder="little").view("<u8"))


@dataclass(frozen=True, slots=True)
class SortedIds:
    """One slice's distinct ids (sorted) and the ids it holds more than once (sorted, distinct).

    Attributes:
        rows: the ids the slice holds (its null ids left out).
        distinct: the slice's ids, sorted, each once.
        repeated: the ids met twice or more within the slice.
        at, masks: the byte of the bitmap each distinct id falls in (id // 8, a floor division)
            and its bit within that byte.
    """

    rows: int
    distinct: Array
    repeated: Array
    at: Array
    masks: Array

    @property
    def words(self) -> Array:
        """The 64-bit words the distinct ids fall in (id // 64), each once, in order."""
        return np.unique(self.distinct >> 6)

    @property
    def bits(self) -> Array:
        """The bits the distinct ids set in each of ``words``."""
        word = self.distinct >> 6
        starts = np.flatnonzero(np.append(True, word[1:] != word[:-1]))
        if not len(starts):
            return np.zeros(0, np.uint64)
        return np.bitwise_or.reduceat(_bit(self.distinct), starts).view(np.uint64)


def sorted_ids(keys: Array) -> SortedIds:
    """The slice's ids sorted, split into distinct ids and repeats, each id's byte and bit in
    the bitmap: all the work that needs no lock, run on the calling worker's thread."""
    ordered = np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if same.any():
        keep = np.ones(len(ordered), bool)
        keep[1:] = ~same
        distinct, repeated = ordered[keep], np.unique(ordered[1:][same])
    else:
        distinct, repeated = ordered, ordered[:0]
    masks = np.left_shift(np.uint8(1), (distinct & 7).astype(np.uint8))
    return SortedIds(len(ordered), distinct, repeated, distinct >> 3, masks)


def _bit(ids: Array) -> Array:
    """Each id's bit within its word."""
    return np.left_shift(_ONE, (ids & 63).view(np.uint64))


class IdBitmap:
    """The ids met so far as bits over their range, within ``memory`` bytes (not thread-safe:
    the caller holds a lock around ``add``).

    Attributes:
        repeats: rows whose id an other row holds too, beyond one row per such id (exact).
        spans: every slice added, as (first row, rows, lowest id, highest id).
    """

    def __init__(self, memory: int) -> None:
        self._max_words = max(1, memory // 8)
        self._max_repeats = max(1024, memory // 64)  # their rows are read again as pairs
        self._base = 0  # the id of bit 0 of word 0 (a multiple of 64)
        self._words = np.zeros(0, "<u8")
        self._bytes = self._words.view(np.uint8)
        self._repeated: list[Array] = []
        self.repeats = 0
        self.spans: list[tuple[int, int, int, int]] = []
        self._last_found = -1  # the index in ``spans`` of the last slice that found a repeat

    def add(self, ids: SortedIds, first_row: int, rows: int) -> bool:
        """Set the bits of one slice's ids (rows ``first_row`` to ``first_row + rows``, its null
        ids left out); False where its range or the repeats found so far pass the budget (the
        bitmap is then of no further use: the caller keys every row another way)."""
        distinct = ids.distinct
        if not len(distinct):
            self.spans.append((first_row, rows, 0, -1))
            return True
        lo, hi = int(distinct[0]), int(distinct[-1])
        if not self._cover(lo, hi):
            return False
        met = self._test_and_set(ids.at - np.int64(self._base // 8), ids.masks)
        found = bool(len(ids.repeated))
        if found:
            self._repeated.append(ids.repeated)
            self.repeats += ids.rows - len(distinct)
        if met.any():  # ids met in an earlier slice: those whose bit was already set
            self._repeated.append(distinct[met])
            self.repeats += int(np.count_nonzero(met))
            found = True
        if found:
            self._last_found = len(self.spans)
        self.spans.append((first_row, rows, lo, hi))
        return self.repeats <= self._max_repeats

    def add_packed(self, ids: PackedIds, first_row: int, rows: int) -> bool | None:
        """Set the bits of a dense slice (see ``add``); ``None``, with nothing set, where one of
        its ids was met before: the caller then adds the slice sorted, which names them."""
        if not self._cover(ids.lo, ids.hi):
            return False
        at = ids.word - self._base // 64
        held = self._words[at : at + len(ids.words)]
        if (held & ids.words).any():
            return None
        held |= ids.words
        self.spans.append((first_row, rows, ids.lo, ids.hi))
        return True

    def _test_and_set(self, at: Array, masks: Array) -> Array:
        """Set the bits ``masks`` of the bitmap's bytes ``at`` (of distinct ids, so several may
        share a byte); which bits were set before. One scatter sets them, save where ids share
        a byte: only one write per byte lands, and the bits of the others (few, where ids are
        sparse) are OR-ed in with ``ufunc.at``: no sort, and no ``ufunc.at`` over every id."""
        held = self._bytes[at]
        met: Array = (held & masks) != 0
        self._bytes[at] = held | masks
        lost = (self._bytes[at] & masks) == 0
        if lost.any():
            np.bitwise_or.at(self._bytes, at[lost], masks[lost])
        return met

    def repeated(self) -> Array:
        """The ids met more than once, sorted, each once."""
        if not self._repeated:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(self._repeated))

    def ranges_holding(self, values: Array) -> list[tuple[int, int]]:
        """The row ranges, as (first row, end), of the slices whose id range holds one of
        ``values`` (sorted): the only rows that can hold them. Of a repeated id, every
        occurrence but the first added was found as a repeat, and the first was added before
        it: slices added after the last that found a repeat hold none, and are left out."""
        out: list[tuple[int, int]] = []
        for first, rows, lo, hi in self.spans[: self._last_found + 1]:
            a = int(np.searchsorted(values, lo, side="left"))
            if int(np.searchsorted(values, hi, side="right")) > a:
                out.append((first, first + rows))
        return out

    def _cover(self, lo: int, hi: int) -> bool:
        """Grow the words to cover ids ``lo`` to ``hi`` (doubling, within the budget)."""
        old = len(self._words)
        top = self._base + 64 * old - 1
        if old and self._base <= lo and hi <= top:
            return True
        low = lo if not old else min(lo, self._base)
        high = hi if not old else max(hi, top)
        low -= low % 64
        need = (high - low) // 64 + 1
        if need > self._max_words:
            return False
        size = max(need, min(2 * old, self._max_words))
        if old and lo < self._base:  # growing down: the room to spare goes below
            low = max(low - 64 * (size - need), -(1 << 63))
        grown = np.zeros(size, "<u8")
        if old:
            at = (self._base - low) // 64
            grown[at : at + old] = self._words
        self._base, self._words = low, grown
        self._bytes = grown.view(np.uint8)  # little-endian words: id's bit k is byte k // 8
        return True
