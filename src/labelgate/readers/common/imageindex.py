"""The images a detection input lists, in the dataset's order: each image's key, file name and
recorded size, and which image each box row belongs to.

Batches of a detection DataLoader are batches of images (an image with all its boxes, through a
``collate_fn``), not of boxes; images without a box are items too. The readers record each image
(``ImageIndex.add``) and name each row's image (``RowWriter.add(..., group=key)``); the run turns
that into the image of each row (``ImageIndex.rows_to_images``) for the batch plan, and the image
checks (``readers/images/imagecheck.py``) open the files recorded here.
"""

from __future__ import annotations

import operator
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple, overload

import numpy as np
import numpy.typing as npt

__all__ = ["ImageIndex", "ImageRecord", "ImageRows", "ListedImages"]

I64 = npt.NDArray[np.int64]
Ints = npt.NDArray[np.signedinteger[Any]]  # 32 bits where the images are fewer than 2**31
_CHUNK = 1 << 20  # rows indexed at once


class ImageRecord(NamedTuple):
    """One image as its annotation file records it.

    Attributes:
        key: what the rows name it by (COCO: file and image id; YOLO and VOC: the label file).
        name: how a finding names it (COCO: ``image 12``; others: the label file's path).
        file: the image file name as written, relative to the images folder (``None``: none
            written); YOLO: the label file's path under ``labels/`` without its suffix (``stem``).
        size: (width, height) as recorded, or ``None``.
        origin: the annotation file (or YOLO's ``labels`` folder) the image was listed in: the
            conventional images folder is found from it.
        stem: whether ``file`` lacks its suffix (YOLO: any image suffix).

    A named tuple: a COCO file lists hundreds of thousands of images, and a tuple is made three
    times faster than a frozen dataclass.
    """

    key: Any
    name: str
    file: str | None = None
    size: tuple[float, float] | None = None
    origin: Path | None = None
    stem: bool = False


@dataclass(frozen=True, slots=True)
class ImageRows:
    """The image of each row, for batches of images.

    Attributes:
        image: per row, the position of its image in the dataset's image order.
        images: how many images (those without a box included).
        without_boxes: images that hold no box.
    """

    image: Ints
    images: int
    without_boxes: int

    @property
    def pair(self) -> tuple[Ints, int]:
        """(image of each row, image count): what the batch plan takes."""
        return self.image, self.images


class GroupCodes:
    """Each row's image key kept as a small integer code (4 bytes a row) and the keys the codes
    stand for, each once: a file of millions of boxes holds no Python object per row.

    Attributes:
        codes: per row, the position of its key in ``keys`` (-1: the row names no image).
        keys: the keys met, in the order first met (after the ``seeded`` ones).
        seeded: how many keys were given in advance (``seed``): the images listed, whose codes
            a worker and its parent agree on without sending the keys.
        indexed: where the seeded keys start among the image index's records, when they are
            those records' keys in order (``expect``); ``None`` where not known.
    """

    def __init__(self) -> None:
        self.codes = array("i")  # 32 bits: codes of images, far fewer than 2**31
        self.keys: list[Any] = []
        self._code: dict[Any, int] = {}
        self._lookup: Callable[[Any], int | None] | None = None
        self._source: Callable[[int], Any] | None = None
        self.seeded = 0
        self.indexed: int | None = None

    def __len__(self) -> int:
        return len(self.codes)

    def seed(self, keys: Iterable[Any]) -> None:
        """Give the listed images' keys in advance, in their order (before any row)."""
        for key in keys:
            if key not in self._code:
                self._code[key] = len(self.keys)
                self.keys.append(key)
        self.seeded = len(self.keys)

    def expect(
        self,
        count: int,
        lookup: Callable[[Any], int | None],
        source: Callable[[int], Any] | None = None,
        indexed: int | None = None,
    ) -> None:
        """Seed, as ``seed`` would, ``count`` keys without a table of their own: ``lookup``
        gives a seeded key's code (``None`` for any other key), ``source`` the key of a code
        when asked (``None``: not kept; a worker judging a share of a file's boxes pays nothing
        per listed image), ``indexed`` where they start among the image index's records, if
        they are those records' keys."""
        self.keys = [None] * count
        self.seeded = count
        self.indexed = indexed
        self._lookup = lookup
        self._source = source

    def key(self, code: int) -> Any:
        """The key a code stands for (a seeded key not kept: ``None``)."""
        if code < self.seeded and self._source is not None:
            return self._source(code)
        return self.keys[code]

    def _find(self, key: Any) -> int | None:
        code = self._code.get(key)
        if code is None and self._lookup is not None:
            code = self._lookup(key)
        return code

    def append(self, key: Any) -> None:
        """Name the next row's image (``None``: it names none)."""
        if key is None:
            self.codes.append(-1)
            return
        code = self._find(key)
        if code is None:
            code = self._code[key] = len(self.keys)
            self.keys.append(key)
        self.codes.append(code)

    def extend_codes(self, codes: npt.NDArray[np.int64]) -> None:
        """Name the next rows' images by their codes (seeded keys' codes, or -1)."""
        self.codes.frombytes(codes.astype(np.int32).tobytes())

    def extend(self, other: GroupCodes, canonical: Callable[[Any], Any] | None = None) -> None:
        """The rows of ``other`` appended, their codes translated to this table's; a key new to
        this table is kept as ``canonical`` gives it (the image index's own key object, so that
        keys unpickled from a worker's result do not outlive it). Codes of keys both tables
        were seeded with alike stay as they are."""
        table = np.empty(len(other.keys) + 1, dtype=np.int64)
        table[-1] = -1  # code -1 (no image) indexes the last slot
        start = 0
        if other.seeded and other.seeded == self.seeded:
            table[: other.seeded] = np.arange(other.seeded)
            start = other.seeded
        for i in range(start, len(other.keys)):
            key = other.key(i)
            if canonical is not None:
                key = canonical(key)
            code = self._find(key)
            if code is None:
                code = self._code[key] = len(self.keys)
                self.keys.append(key)
            table[i] = code
        codes = np.frombuffer(other.codes, dtype=np.int32) if len(other.codes) else None
        if codes is not None:
            self.codes.frombytes(table[codes].astype(np.int32).tobytes())

    def __getstate__(self) -> tuple[bytes, list[Any], int]:
        # the seeded keys and the lookup table stay behind: the receiver was seeded alike
        return self.codes.tobytes(), self.keys[self.seeded :], self.seeded

    def __setstate__(self, state: tuple[bytes, list[Any], int]) -> None:
        self.codes = array("i")
        self.codes.frombytes(state[0])
        self.seeded = state[2]
        self.keys = [None] * self.seeded + state[1]
        self._code = {key: self.seeded + i for i, key in enumerate(state[1])}
        self._lookup = None
        self._source = None
        self.indexed = None


class _Records(Sequence[ImageRecord]):
    """Records made when asked for: a subclass gives the one at a position (``_at``)."""

    __slots__ = ()

    @overload
    def __getitem__(self, at: int) -> ImageRecord: ...
    @overload
    def __getitem__(self, at: slice) -> Sequence[ImageRecord]: ...
    def __getitem__(self, at: int | slice) -> ImageRecord | Sequence[ImageRecord]:
        if isinstance(at, slice):
            return [self._at(i) for i in range(*at.indices(len(self)))]
        if at < 0:
            at += len(self)
        if not 0 <= at < len(self):
            raise IndexError(at)
        return self._at(at)

    def _at(self, at: int) -> ImageRecord:
        raise NotImplementedError


class ListedImages(_Records):
    """The images of one file recorded as columns (a COCO file's 200,000 at once): unique
    integer ids under the key ``(name, id)``, each named ``image <id>``, their file names and
    sizes (``which``: the position of each size in ``sizes``, -1: none recorded). A record is made
    when asked for, so that the index holds no Python object per image (about 300 bytes each);
    ``lookup`` finds a key as a dict of the records' keys would."""

    __slots__ = ("_files", "_ids", "_order", "_sizes", "_sorted", "_which", "name", "origin")

    def __init__(
        self,
        name: str,
        ids: I64,
        order: I64,
        files: list[str | None],
        which: Ints,
        sizes: list[tuple[float, float]],
        origin: Path,
    ) -> None:
        self.name, self.origin = name, origin
        self._ids, self._order = ids, order
        self._files, self._which, self._sizes = files, which, sizes
        self._sorted: I64 | None = None  # the ids in ascending order, made when first asked

    def __len__(self) -> int:
        return len(self._ids)

    def _at(self, at: int) -> ImageRecord:
        key = int(self._ids[at])
        code = int(self._which[at])
        size = None if code < 0 else self._sizes[code]
        return ImageRecord((self.name, key), f"image {key}", self._files[at], size, self.origin)

    def __iter__(self) -> Iterator[ImageRecord]:
        sizes = [*self._sizes, None]  # code -1: the last
        for at in range(0, len(self), 4096):  # made a few thousand at a time
            ids = self._ids[at : at + 4096].tolist()
            fields = zip(
                zip(repeat(self.name), ids),
                map("image {}".format, ids),
                self._files[at : at + 4096],
                map(sizes.__getitem__, self._which[at : at + 4096].tolist()),
                repeat(self.origin),
                repeat(False),
            )
            yield from map(tuple.__new__, repeat(ImageRecord), fields)

    def order(self) -> I64:
        """The records' positions in ascending order of id (their keys' order)."""
        return self._order

    def unnamed(self) -> int:
        """How many of the images have no file name."""
        return self._files.count(None)

    def lookup(self, key: Any) -> int | None:
        """The position of the record whose key equals ``key`` (as ``==`` and ``hash`` take it:
        ``(name, 7.0)`` is ``(name, 7)``), or ``None``."""
        if not isinstance(key, tuple) or len(key) != 2 or key[0] != self.name:
            return None
        number = key[1]
        if isinstance(number, float):
            if not number.is_integer():
                return None
            number = int(number)
        else:
            try:
                number = operator.index(number)
            except TypeError:
                return None
        if not -(2**63) <= number < 2**63:
            return None
        if self._sorted is None:
            self._sorted = self._ids[self._order]
        at = int(np.searchsorted(self._sorted, number))
        found = at < len(self._sorted) and int(self._sorted[at]) == number
        return int(self._order[at]) if found else None


class _Joined(_Records):
    """Records read as columns, then records one by one."""

    __slots__ = ("_head", "_tail")

    def __init__(self, head: ListedImages, tail: list[ImageRecord]) -> None:
        self._head, self._tail = head, tail

    def __len__(self) -> int:
        return len(self._head) + len(self._tail)

    def _at(self, at: int) -> ImageRecord:
        head = len(self._head)
        return self._head[at] if at < head else self._tail[at - head]

    def __iter__(self) -> Iterator[ImageRecord]:
        return chain(self._head, self._tail)


class ImageIndex:
    """The images of one input, in the order they were listed.

    Attributes:
        records: the images, as listed (a key listed twice is kept once); a file's images
            recorded as columns (``extend_columns``) first, where they were the first listed.
        sort: whether the dataset's order is the sorted keys (COCO: torchvision's
            ``CocoDetection`` and detectron2's ``load_coco_json`` both sort the image ids).
    """

    def __init__(self) -> None:
        self._head: ListedImages | None = None  # the images recorded as columns
        self._tail: list[ImageRecord] = []  # the images recorded one by one, after them
        self._at: dict[Any, int] = {}  # the tail's keys: each one's position in ``records``
        self._order_of: tuple[int, Sequence[int] | I64] | None = None  # (records, their order)
        self.sort = False

    @property
    def records(self) -> Sequence[ImageRecord]:
        """The images, as listed."""
        if self._head is None:
            return self._tail
        return self._head if not self._tail else _Joined(self._head, self._tail)

    def __len__(self) -> int:
        return (0 if self._head is None else len(self._head)) + len(self._tail)

    def add(self, record: ImageRecord) -> None:
        """Record an image (the first record of a key stands)."""
        if self.position(record.key) is None:
            self._at[record.key] = len(self)
            self._tail.append(record)

    def extend(self, records: list[ImageRecord]) -> None:
        """Record many images, as ``add`` records each in turn (a file's 200,000 at once)."""
        start = len(self)
        keys = map(attrgetter("key"), records)
        fresh = dict(zip(keys, range(start, start + len(records)), strict=True))
        head = self._head
        # two views: the smaller one is walked (a first file's index is empty)
        if (
            len(fresh) != len(records)
            or not self._at.keys().isdisjoint(fresh.keys())
            or (head is not None and any(head.lookup(k) is not None for k in fresh))
        ):
            for record in records:  # a key twice, or listed before: the first stands
                self.add(record)
            return
        self._at.update(fresh)
        self._tail.extend(records)

    def extend_columns(self, listed: ListedImages) -> None:
        """Record a file's images read as columns (unique keys), as ``extend`` would; kept as
        columns where they are the first images recorded."""
        if len(self):
            self.extend(list(listed))
        else:
            self._head = listed

    def unnamed(self) -> int:
        """How many of the images recorded have no file name (without making their records)."""
        head = 0 if self._head is None else self._head.unnamed()
        return head + sum(1 for r in self._tail if r.file is None)

    def position(self, key: Any) -> int | None:
        """Where the image listed under ``key`` is in ``records`` (``None``: not listed)."""
        if self._head is not None:
            at = self._head.lookup(key)
            if at is not None:
                return at
        return self._at.get(key)

    def canonical(self, key: Any) -> Any:
        """The key object of the image listed under ``key`` (``key`` itself when not listed)."""
        at = self.position(key)
        return key if at is None else self.records[at].key

    def record_at(self, position: int) -> ImageRecord | None:
        """The record of the image at ``position`` in the dataset's order (``ImageRows.image``'s
        numbering; ``None``: an image not listed)."""
        if not 0 <= position < len(self):
            return None
        if not self.sort:
            return self.records[position]
        return self.records[int(self._order()[position])]

    def _order(self) -> Sequence[int] | I64:
        """The records' positions in the images' order in the dataset (kept until an image is
        recorded: a report's examples ask for one record each)."""
        if self._order_of is not None and self._order_of[0] == len(self):
            return self._order_of[1]
        order: Sequence[int] | I64
        if not self.sort:
            order = range(len(self))
        elif self._head is not None and not self._tail:
            order = self._head.order()  # the keys share their file: the ids' order
        else:
            at = list(range(len(self)))
            keys = [r.key for r in self.records]
            try:
                order = sorted(at, key=keys.__getitem__)
            except TypeError:  # ids of mixed types: the listed order
                order = at
        self._order_of = (len(self), order)
        return order

    def rows_to_images(self, groups: GroupCodes) -> ImageRows | None:
        """The image of each row (``groups``: each row's image key, in row order), or ``None``
        when a row names no image (a reader that records none). A key not listed is an image
        of its own, after the listed ones (the reader reports it)."""
        codes = np.frombuffer(groups.codes, dtype=np.int32) if len(groups) else None
        if not len(self) or (codes is not None and bool((codes < 0).any())):
            return None
        listed = len(self)
        rank = np.empty(listed, dtype=np.int64)  # each record's place in the dataset's order
        rank[np.asarray(self._order(), dtype=np.int64)] = np.arange(listed)
        extra: dict[Any, int] = {}
        # each row's image in 4 bytes (5M boxes: 20 MB, not 40) unless there are 2**31 images
        wide = listed + len(groups.keys) >= 2**31
        position: Ints = np.empty(len(groups.keys), dtype=np.int64 if wide else np.int32)
        first = 0
        if groups.indexed is not None:  # the seeded keys are records' keys: no lookup each
            first = groups.seeded
            position[:first] = rank[groups.indexed : groups.indexed + first]
        for i in range(first, len(groups.keys)):
            key = groups.key(i)
            at = self.position(key)
            if at is None:
                position[i] = extra.setdefault(key, listed + len(extra))
            else:
                position[i] = rank[at]
        out: Ints = position[codes] if codes is not None else position[:0]
        images = listed + len(extra)
        boxed = np.zeros(images, dtype=bool)
        for at in range(0, len(out), _CHUNK):  # indexing widens to 64 bits: a chunk at a time
            boxed[out[at : at + _CHUNK]] = True
        return ImageRows(out, images, images - int(np.count_nonzero(boxed)))
