"""Ids as 64-bit keys, radix-partitioned into bounded memory: what the duplicate-id check reads.

An integer id is its own key; a text, binary, UUID or other id is hashed by its bytes. Each
(key, row) pair goes to one of a power-of-two number of partitions (by a mix of the key), held in
memory while one partition fits the budget, else appended to temporary files. The scan's workers
feed ``IdKeys`` from their threads as they decode the id column, so the column is decoded
once; the duplicate-id check (``labelgate.scan.ids``) then reads one partition at a time.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from labelgate.core.arrow import bool_mask, numbers
from labelgate.scan.idbitmap import IdBitmap, packed_ids, sorted_ids

__all__ = [
    "PAIR",
    "RESOLVERS",
    "IdKeys",
    "hash_keys",
    "integer_keys",
    "keyed_pairs",
    "mix",
    "partitions",
    "repeated_pairs",
    "split_keys",
    "split_pairs",
]

PAIR = np.dtype([("key", "<i8"), ("row", "<i8")])
_FLUSH = 1 << 20  # pairs held before they are written out, partition by partition
RESOLVERS = 2  # partitions sorted at once, each in its share of the budget
_NULL = np.int64(-0x5A5A5A5A5A5A5A5B)  # the key of a null text id (nulls repeat each other)

Array = np.ndarray[Any, Any]


def partitions(rows: int, memory: int) -> int:
    """Partitions (a power of two) such that one, with its sort's copies, fits ``memory``."""
    need = 4 * PAIR.itemsize * max(rows, 1)  # the pairs, a sort order and two sorted columns
    parts = 1
    while need / parts > memory and parts < 4096:
        parts *= 2
    return parts


def mix(x: Array) -> Array:
    """splitmix64's finaliser (as uint64): every input bit reaches every output bit."""
    return _mixed(x.view(np.uint64).copy())


def _mixed(z: Array) -> Array:
    """``mix`` in place, its shifts written into this thread's work array, not into a fresh
    array each (a fresh array of a slice's size costs a page fault every 4 KB)."""
    shifted = _work(len(z), np.uint64)
    for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, 0)):
        np.right_shift(z, np.uint64(shift), out=shifted)
        z ^= shifted
        if factor:
            z *= np.uint64(factor)
    return z


_local = threading.local()


def _work(n: int, dtype: Any, slot: int = 0) -> Array:
    """This thread's work array of ``dtype`` (one per dtype and ``slot``), of ``n`` items."""
    held: dict[tuple[Any, int], Array] = _local.__dict__.setdefault("work", {})
    key = (np.dtype(dtype), slot)
    if key not in held or len(held[key]) < n:
        held[key] = np.empty(n, key[0])
    return held[key][:n]


def integer_keys(col: Any) -> tuple[Array, Array | None]:
    """An integer id is its own key (a uint64 by its bits), and which ids are null."""
    values = numbers(col, 0)
    keys = values.view(np.int64) if values.dtype == np.uint64 else values.astype(np.int64)
    nulls = bool_mask(col.is_null()) if col.null_count else None
    return np.ascontiguousarray(keys), nulls


def hash_keys(col: Any, *, out: Array | None = None) -> Array:
    """A 64-bit hash of each id's bytes (of its text, for a type that is neither text nor binary).

    Ids of one length are hashed together, one 8-byte word at a time (a word that would run past
    the end overlaps the one before; ids under 8 bytes are zero-padded), read in place where the
    whole chunk has one length (paths, UUIDs, hashes), gathered otherwise. Null ids share a key.
    ``out`` (uint64, at least as long), where given, receives the hashes of ids of one length.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    t = col.type
    n = len(col)
    if pa.types.is_fixed_size_binary(t):  # UUIDs: n ids of one width, back to back
        width = t.byte_width
        data = np.frombuffer(col.buffers()[1] or b"", np.uint8)
        lo = col.offset * width
        hashed = _hash_fixed(data[lo : lo + n * width], n, width, out)
    else:
        if pa.types.is_large_string(t) or pa.types.is_large_binary(t):
            wide = "<i8"
        else:
            wide = "<i4"
            if not (pa.types.is_string(t) or pa.types.is_binary(t)):
                col = pc.cast(col, pa.string())  # decimals, dates, floats: by their text
        offsets = np.frombuffer(col.buffers()[1], wide)[col.offset : col.offset + n + 1]
        offsets = offsets.astype(np.int64)
        data = np.frombuffer(col.buffers()[2] or b"", np.uint8)
        lengths = np.diff(offsets)
        if n and (lengths == lengths[0]).all():
            hashed = _hash_fixed(data[offsets[0] : offsets[-1]], n, int(lengths[0]), out)
        else:
            hashed = np.empty(n, np.uint64)
            for length in np.unique(lengths).tolist():
                idx = np.flatnonzero(lengths == length)
                block = data[offsets[idx, None] + np.arange(length)]
                hashed[idx] = _hash_fixed(block.reshape(-1), len(idx), length)
    keys = hashed.view(np.int64)
    if col.null_count:
        keys[bool_mask(col.is_null())] = _NULL
    return keys


_PRIME = np.uint64(0x9E3779B97F4A7C15)


def _hash_fixed(data: Array, n: int, length: int, out: Array | None = None) -> Array:
    """The hash of ``n`` ids of ``length`` bytes each, back to back in ``data`` (written into
    ``out``, uint64, where given)."""
    h = np.empty(n, np.uint64) if out is None else out[:n]
    h.fill(length + 1)
    h *= _PRIME
    if length == 0 or n == 0:
        return _mixed(h)
    if length < 8:
        padded = np.zeros((n, 8), np.uint8)
        padded[:, :length] = data.reshape(n, length)
        words: list[Array] = [padded.view(np.uint64).reshape(n)]
    else:
        at = list(range(0, length - 7, 8))
        if length % 8:
            at.append(length - 8)  # the last word overlaps the one before
        buffer = np.ascontiguousarray(data)
        words = [np.ndarray((n,), "<u8", buffer=buffer, offset=o, strides=(length,)) for o in at]
    for w in words:
        h ^= w
        h *= _PRIME
    return _mixed(h)


def _allow_open_files(n: int) -> None:
    """Raise this process's soft limit on open files to ``n`` where it is lower (up to the hard
    limit): a billion rows take 1,024 partition files, and 1,024 is a common soft limit.

    Raises:
        OSError: the hard limit is lower than ``n`` (the message says how to avoid it).
    """
    try:
        import resource
    except ImportError:  # not POSIX: no such limit to raise
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= n:
        return
    if hard != resource.RLIM_INFINITY and hard < n:
        raise OSError(
            f"the duplicate-id check needs {n} open files and the limit is {hard}: "
            "raise --id-memory (fewer, larger partitions) or `ulimit -n`"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (n, hard))


def keyed_pairs(col: Any, first_row: int, *, integer: bool) -> tuple[Array, Array]:
    """The (key, row) pairs of ids at rows ``first_row``, ... (an Arrow array), and the rows of
    null integer ids, which are kept apart (no integer key can stand for a null)."""
    keys, nulls = integer_keys(col) if integer else (hash_keys(col), None)
    rows = np.arange(first_row, first_row + len(keys), dtype=np.int64)
    null_rows = np.zeros(0, np.int64)
    if nulls is not None and nulls.any():
        null_rows = rows[nulls]
        keys, rows = keys[~nulls], rows[~nulls]
    pairs = np.empty(len(keys), PAIR)
    pairs["key"], pairs["row"] = keys, rows
    return pairs, null_rows


def split_pairs(pairs: Array, parts: int, *, hashed: bool = False) -> tuple[Array, Array]:
    """Pairs ordered by partition (the top bits of the key, mixed unless it is a ``hashed`` one
    already; rows stay in order within each), and where each of the ``parts`` partitions starts
    (``parts + 1`` bounds)."""
    if parts == 1:
        return pairs, np.array([0, len(pairs)])
    bits = parts.bit_length() - 1
    spread = pairs["key"].view(np.uint64) if hashed else mix(pairs["key"])
    part = (spread >> np.uint64(64 - bits)).astype(np.uint16)
    order = np.argsort(part, kind="stable")  # a radix sort for 16-bit keys: linear
    bounds = np.searchsorted(part[order], np.arange(parts + 1))
    return pairs[order], bounds


def repeated_pairs(pairs: Array) -> Array:
    """The pairs whose key another pair has too, found by one sort of the keys (usually none)."""
    if len(pairs) < 2:
        return np.empty(0, PAIR)
    ordered = np.array(pairs["key"])  # a contiguous copy, sorted in place
    ordered.sort()
    twice = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(twice):
        return np.empty(0, PAIR)
    return np.array(pairs[np.isin(pairs["key"], np.unique(twice))])


def _repeating_in_file(path: Path) -> Array:
    """``repeated_pairs`` of the pairs in the file at ``path`` (mapped, not read into fresh
    memory), which is then removed."""
    try:
        if path.stat().st_size == 0:
            return np.empty(0, PAIR)
        mapped = np.memmap(path, PAIR, mode="r")
        try:
            return repeated_pairs(mapped)
        finally:
            del mapped
    finally:
        path.unlink()


def split_keys(
    keys: Array, first_row: int, parts: int, *, hashed: bool, out: Array | None = None
) -> tuple[Array, Array]:
    """What ``split_pairs(keyed_pairs(...))`` gives for ids with no null, built in one step:
    the (key, row) pairs of ``keys`` (rows ``first_row``, ...) ordered by partition, rows in
    order within each, and the ``parts + 1`` bounds; the pairs are written once, in order, into
    ``out`` where given (pairs at least as long as ``keys``)."""
    n = len(keys)
    bits = parts.bit_length() - 1
    spread = _work(n, np.uint64)  # free here: the hashes are in ``keys``
    np.right_shift(keys.view(np.uint64) if hashed else mix(keys), np.uint64(64 - bits), out=spread)
    part = _work(n, np.uint16)
    part[:] = spread
    order = np.argsort(part, kind="stable")  # a radix sort for 16-bit keys: linear
    bounds = np.zeros(parts + 1, np.int64)
    np.cumsum(np.bincount(part, minlength=parts), out=bounds[1:])
    pairs = np.empty(n, PAIR) if out is None else out[:n]
    np.take(keys, order, out=pairs["key"], mode="clip")  # clip: no buffered copy
    np.add(order, first_row, out=pairs["row"])
    return pairs, bounds


class IdKeys:
    """The (key, row) pairs of every row fed so far, radix-partitioned; safe to feed from threads.

    Attributes:
        integer: integer ids are their own keys (no hash to confirm); else every id is hashed.
        active: whether the scan's workers feed it (set by the first worker whose ids do not
            strictly increase: while they do, the scan proves them distinct and nothing is kept).
        covered: the row ranges fed, as (first row, rows).
        nulls_seen, null_rows: for integer ids, how many were null, and the first few such rows.
        dense: integer ids as a bitmap (``labelgate.scan.idbitmap``) while their range and
            repeats fit the budget: no pair is kept for them; ``None`` once given up (the rows
            it held are then keyed again, see ``missing``) and for hashed ids.
        dense_nulls: the count and first few rows of null ids that the bitmap's rows hold.
    """

    def __init__(self, rows: int, memory: int, *, integer: bool, limit: int | None) -> None:
        self.integer = integer
        self.limit = limit
        self.parts = partitions(rows, memory // RESOLVERS)
        self.active = False
        self.covered: list[tuple[int, int]] = []
        self.nulls_seen = 0
        self.null_rows = np.zeros(0, np.int64)
        self._lock = threading.Lock()
        self._memory: list[Array] = []  # pairs held: all of them, or those not yet written
        self._held = 0
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self._files: list[Any] = []
        self._file_locks: list[threading.Lock] = []
        self.dense = IdBitmap(memory // RESOLVERS) if integer else None
        self.dense_nulls: tuple[int, Array] = (0, np.zeros(0, np.int64))

    def __enter__(self) -> IdKeys:
        if self.parts > 1:
            _allow_open_files(self.parts + 64)
            self._folder = tempfile.TemporaryDirectory(prefix="labelgate-ids-")
            root = Path(self._folder.name)
            self._files = [(root / f"{p}.bin").open("wb") for p in range(self.parts)]
            self._file_locks = [threading.Lock() for _ in range(self.parts)]
        return self

    def __exit__(self, *exc: object) -> None:
        _local.__dict__.pop("work", None)  # this thread's work arrays (the workers' end with them)
        for f in self._files:
            f.close()
        if self._folder is not None:
            self._folder.cleanup()

    def add(self, col: Any, first_row: int) -> None:
        """Key the ids of rows ``first_row``, ``first_row + 1``, ... (an Arrow array)."""
        if self.dense is not None and self._add_dense(col, first_row):
            return
        hashed = not self.integer
        split = None
        if self.parts > 1 and len(col) >= _FLUSH // 8 and not (self.integer and col.null_count):
            if self.integer:
                keys = integer_keys(col)[0]
            else:  # into this thread's work array, read before its next slice
                keys = hash_keys(col, out=_work(len(col), np.uint64, slot=1))
            out = _work(len(keys), PAIR)  # written out by this thread before its next slice
            split = split_keys(keys, first_row, self.parts, hashed=hashed, out=out)
            pairs, null_rows = split[0], np.zeros(0, np.int64)
        else:
            pairs, null_rows = keyed_pairs(col, first_row, integer=self.integer)
            if self.parts > 1 and len(pairs) >= _FLUSH // 8:
                split = split_pairs(pairs, self.parts, hashed=hashed)
        with self._lock:
            self.covered.append((first_row, len(col)))
            if len(null_rows):
                self.nulls_seen, self.null_rows = self._noted(
                    (self.nulls_seen, self.null_rows), null_rows
                )
            if split is None:
                self._memory.append(pairs)
                self._held += len(pairs)
                if self.parts > 1 and self._held >= _FLUSH:
                    self._write_held()
        if split is not None:  # large enough to write at once, without holding it; outside
            self._write(*split)  # the lock, so that one worker writes while another keys

    def _add_dense(self, col: Any, first_row: int) -> bool:
        """Set the bitmap's bits for these ids; False where the bitmap is (or is now) given up.
        A dense slice is packed; one that is not, or whose ids met earlier ones, is sorted (on
        this worker's thread, outside the lock)."""
        keys, nulls = integer_keys(col)
        null_rows = np.zeros(0, np.int64)
        if nulls is not None and nulls.any():
            null_rows = np.flatnonzero(nulls) + first_row
            keys = keys[~nulls]
        packed = packed_ids(keys)
        if packed is not None:
            with self._lock:
                if self.dense is None:
                    return False
                done = self.dense.add_packed(packed, first_row, len(col))
                if done is not None:
                    return self._settled(done, null_rows)
        ids = sorted_ids(keys)
        with self._lock:
            if self.dense is None:
                return False
            return self._settled(self.dense.add(ids, first_row, len(col)), null_rows)

    def _settled(self, added: bool, null_rows: Array) -> bool:
        """After the bitmap took a slice (``added``) or refused it: its null rows noted, or the
        bitmap given up (its rows are then missing again, and keyed as pairs)."""
        if added:
            if len(null_rows):
                self.dense_nulls = self._noted(self.dense_nulls, null_rows)
            return True
        self.dense = None
        self.dense_nulls = (0, np.zeros(0, np.int64))
        return False

    def _noted(self, held: tuple[int, Array], null_rows: Array) -> tuple[int, Array]:
        """``held`` (a count of null ids and the first rows) with ``null_rows`` added."""
        rows = np.sort(np.concatenate([held[1], null_rows]))
        return held[0] + len(null_rows), rows if self.limit is None else rows[: self.limit + 1]

    def _write_held(self) -> None:
        """Write the pairs held, partition by partition."""
        if self._memory:
            held = np.concatenate(self._memory)
            self._memory, self._held = [], 0
            self._write(*split_pairs(held, self.parts, hashed=not self.integer))

    def _write(self, pairs: Array, bounds: Array) -> None:
        """Append each partition's pairs to its file, each file under its own lock."""
        # One write of the contiguous bytes: ``ndarray.tofile`` on a Python file duplicates its
        # descriptor and opens a C stream at each call, thousands of times per partition.
        for p in np.flatnonzero(np.diff(bounds)).tolist():
            with self._file_locks[p]:
                self._files[p].write(np.ascontiguousarray(pairs[bounds[p] : bounds[p + 1]]).data)

    def partitions(self) -> Iterator[Callable[[], Array]]:
        """Each partition in turn, as a function that reads it and gives its pairs whose key
        another pair of the partition has too (usually none), to run on the resolvers' threads;
        a partition's file is mapped, not copied, and removed once read (call once, after the
        last ``add``)."""
        if self.parts == 1:
            held, self._memory = self._memory, []
            yield lambda: repeated_pairs(np.concatenate(held) if held else np.empty(0, PAIR))
            return
        self._write_held()
        for f in self._files:
            f.close()
        for f in self._files:
            yield partial(_repeating_in_file, Path(f.name))

    def missing(self, rows: int) -> list[tuple[int, int]]:
        """The row ranges of ``[0, rows)`` not fed yet, as (first row, end)."""
        out: list[tuple[int, int]] = []
        at = 0
        dense = [] if self.dense is None else [(f, n) for f, n, _, _ in self.dense.spans]
        for start, n in sorted(self.covered + dense):
            if start > at:
                out.append((at, start))
            at = max(at, start + n)
        if at < rows:
            out.append((at, rows))
        return out
