"""Integer ids checked against a bitmap of the ids met so far: one bit per id of their range.

Ids as datasets hold them (sorted, shuffled within each row group, or shuffled across the file)
fill a range not much wider than their count, so a bit per value of that range holds them all in
a few MB (100M ids: 12.5 MB), with no (key, row) pair kept, written out or sorted across the
file. Each slice of ids is sorted on its own (a slice's repeats sit side by side) and its bits
set a word at a time; a bit already set is an id met in an earlier slice. What the bitmap finds
is the set of repeated values, exactly; their rows are then read again, from the slices whose
range holds one of them (see ``labelgate.scan.ids``). Ids whose range outgrows the budget, or
too many repeated values, give the bitmap up: the caller then keys every row as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["IdBitmap", "SortedIds", "sorted_ids"]

Array = np.ndarray[Any, Any]
_ONE = np.uint64(1)


@dataclass(frozen=True, slots=True)
class SortedIds:
    """One slice's distinct ids (sorted) and the ids it holds more than once (sorted, distinct).

    Attributes:
        rows: the ids the slice holds (its null ids left out).
        distinct: the slice's ids, sorted, each once.
        repeated: the ids met twice or more within the slice.
    """

    rows: int
    distinct: Array
    repeated: Array


def sorted_ids(keys: Array) -> SortedIds:
    """The slice's ids sorted and split into distinct ids and repeats (no lock needed: the
    sort, the one costly step, runs on the calling worker's thread)."""
    ordered = np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return SortedIds(len(ordered), ordered, ordered[:0])
    keep = np.ones(len(ordered), bool)
    keep[1:] = ~same
    return SortedIds(len(ordered), ordered[keep], np.unique(ordered[1:][same]))


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
        self._words = np.zeros(0, np.uint64)
        self._repeated: list[Array] = []
        self.repeats = 0
        self.spans: list[tuple[int, int, int, int]] = []

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
        at = distinct - np.int64(self._base)
        word = at >> 6
        bit = np.left_shift(_ONE, (at & 63).astype(np.uint64))
        starts = np.flatnonzero(np.concatenate(([True], word[1:] != word[:-1])))
        words = word[starts]
        setting = np.bitwise_or.reduceat(bit, starts)
        held = self._words[words]
        met = held & setting
        self._words[words] = held | setting
        if len(ids.repeated):
            self._repeated.append(ids.repeated)
            self.repeats += ids.rows - len(distinct)
        if met.any():  # ids met in an earlier slice: those whose bit was already set
            earlier = (np.repeat(met, np.diff(np.append(starts, len(word)))) & bit) != 0
            self._repeated.append(distinct[earlier])
            self.repeats += int(np.count_nonzero(earlier))
        self.spans.append((first_row, rows, lo, hi))
        return self.repeats <= self._max_repeats

    def repeated(self) -> Array:
        """The ids met more than once, sorted, each once."""
        if not self._repeated:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(self._repeated))

    def ranges_holding(self, values: Array) -> list[tuple[int, int]]:
        """The row ranges, as (first row, end), of the slices whose id range holds one of
        ``values`` (sorted): the only rows that can hold them."""
        out: list[tuple[int, int]] = []
        for first, rows, lo, hi in self.spans:
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
        grown = np.zeros(size, np.uint64)
        if old:
            at = (self._base - low) // 64
            grown[at : at + old] = self._words
        self._base, self._words = low, grown
        return True
