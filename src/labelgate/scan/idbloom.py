"""Hashed ids (text, binary, UUIDs) checked against a Bloom filter of the hashes met so far.

A 64-bit hash fills its range, so no bitmap of values holds it; a Bloom filter does, in a fixed
budget: each hash sets three bits of one 64-bit word (the word chosen by the hash's top bits, the
bits by its low bits: one cache line per id), and a hash whose three bits are already set may have
been met before. Such rows are candidates, never findings: their hashes (and those repeated within
one slice, found exactly) are kept, every id is read and hashed again, and the rows whose hash is
a candidate go through the same confirmation against the real ids as the keyed pairs did
(``labelgate.scan.ids``). No (key, row) pair is kept, written out or sorted for the other rows. Too
many candidates (ids that do repeat, many times) give the filter up: the caller then keys every
row as a pair, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["HashBloom", "Probe", "candidate_filter", "probe"]

Array = np.ndarray[Any, Any]
_SIX = np.uint64(63)


@dataclass(frozen=True, slots=True)
class Probe:
    """One slice's hashes as the filter reads them, computed without the lock.

    Attributes:
        keys: the slice's hashes (int64), one per row.
        word: the word of the filter each hash falls in (its top ``words`` bits).
        words: the filter's size, as a power of two.
        bits: the three bits each hash sets in its word.
        within: the hashes met more than once within the slice (sorted, distinct).
        shared: the rows whose hash shares its top ``width`` bits with another row's: the only
            rows that can fall in one word of the filter with another row of the slice.
        width: the top bits of a hash that ``shared`` compares.
    """

    keys: Array
    word: Array
    words: int
    bits: Array
    within: Array
    shared: Array
    width: int


def _bits(keys: Array) -> Array:
    """The three bits a hash sets in its word, from its low 18 bits."""
    h = keys.view(np.uint64)
    one = np.uint64(1)
    bits: Array = np.left_shift(one, h & _SIX)
    bits |= np.left_shift(one, (h >> np.uint64(6)) & _SIX)
    bits |= np.left_shift(one, (h >> np.uint64(12)) & _SIX)
    return bits


def probe(keys: Array, words: int) -> Probe:
    """The slice's words and bits in a filter of ``2 ** words`` words, and its rows that share a slot of a table four times the slice's size
    (by their hash's top bits): few, and only they are sorted, for the hashes repeated within
    the slice."""
    n = len(keys)
    width = max(10, (4 * n - 1).bit_length())
    within, shared = keys[:0], np.zeros(0, np.intp)
    if n > 1:
        slot = (keys.view(np.uint64) >> np.uint64(64 - width)).astype(np.intp)
        owner = np.empty(1 << width, np.int32)  # only the slots written are read back
        at = np.arange(n, dtype=np.int32)
        owner[slot] = at
        clash = np.flatnonzero(owner[slot] != at)
        if len(clash):
            member = np.zeros(n, np.bool_)
            member[clash] = True
            member[owner[slot[clash]]] = True  # the row each clashing row met in its slot
            shared = np.flatnonzero(member)
            ordered = np.sort(keys[shared])
            within = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    word = (keys.view(np.uint64) >> np.uint64(64 - words)).astype(np.intp)
    return Probe(keys, word, words, _bits(keys), within, shared, width)


class HashBloom:
    """The hashes met so far, as a blocked Bloom filter within ``memory`` bytes (not
    thread-safe: the caller holds a lock around ``add``).

    Attributes:
        width: the filter holds ``2 ** width`` words (a hash's top ``width`` bits choose one).
        candidates: rows whose hash may have been met before (an upper bound of the repeats).
        spans: every slice added, as (first row, rows).
    """

    def __init__(self, rows: int, memory: int) -> None:
        # A power of two words: about 16 bits per expected row (false candidates under 0.1%),
        # at most ``memory`` bytes (at 100M rows and 64 MB, about 3% of rows are candidates).
        fit = max(1, memory // 8).bit_length() - 1
        want = max(1, rows // 4).bit_length()
        self.width = max(10, min(fit, want))
        self._words = np.zeros(1 << self.width, np.uint64)
        # Candidates held: 8 bytes each, and 24 more each while they are confirmed.
        self._max = max(1024, memory // 16)
        self._found: list[Array] = []
        self.candidates = 0
        self.spans: list[tuple[int, int]] = []

    def add(self, slice_: Probe, first_row: int, rows: int) -> bool:
        """Set the bits of one slice's hashes (rows ``first_row`` to ``first_row + rows``) and
        keep those that may have been met; False once the candidates pass the budget (the
        filter is then of no further use: the caller keys every row another way)."""
        if slice_.words != self.width:
            raise ValueError(f"a probe of {slice_.words} bits for a filter of {self.width}")
        keys, bits, word = slice_.keys, slice_.bits, slice_.word
        held = self._words[word]
        hit = (held & bits) == bits
        self._words[word] = held | bits
        # Two rows of the slice in one word: the buffered store kept one row's bits; set the
        # others' until every row's bits are in. Rows of one word share its top bits, so they
        # are among ``shared`` where that compares no more bits than the word's; else every row
        # is checked.
        lost = slice_.shared if slice_.width <= self.width else np.arange(len(keys))
        lost = lost[(self._words[word[lost]] & bits[lost]) != bits[lost]]
        while len(lost):
            self._words[word[lost]] |= bits[lost]
            lost = lost[(self._words[word[lost]] & bits[lost]) != bits[lost]]
        if hit.any():
            self._found.append(keys[hit])
            self.candidates += int(np.count_nonzero(hit))
        if len(slice_.within):
            self._found.append(slice_.within)
            self.candidates += len(slice_.within)
        self.spans.append((first_row, rows))
        return self.candidates <= self._max

    def found(self) -> Array:
        """The candidate hashes, sorted, each once; the filter's words are released."""
        self._words = np.zeros(0, np.uint64)
        if not self._found:
            return np.zeros(0, np.int64)
        return np.unique(np.concatenate(self._found))


def candidate_filter(found: Array) -> Callable[[Array], Array]:
    """A test of which hashes are among ``found`` (sorted): a bitmap of their top bits first
    (one bit per candidate's prefix, a few MB), then an exact search for the few that pass."""
    width = max(10, (8 * max(1, len(found)) - 1).bit_length())  # about 1/8 of bits set
    shift = np.uint64(64 - width)
    marks = np.zeros(1 << width, np.bool_)
    marks[(found.view(np.uint64) >> shift).astype(np.intp)] = True

    def among(keys: Array) -> Array:
        maybe = np.flatnonzero(marks[(keys.view(np.uint64) >> shift).astype(np.intp)])
        if not len(maybe) or not len(found):
            return maybe
        at = np.searchsorted(found, keys[maybe])
        at[at == len(found)] = 0
        kept: Array = maybe[found[at] == keys[maybe]]
        return kept

    return among
