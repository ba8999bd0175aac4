"""The usual COCO annotation proved clean a block at a time: which annotations of a parsed block
the per-annotation function (``cocoannotation.annotation``) would only count, found with a few C loops and
numpy over the whole block instead of Python per annotation (``clear``, over orjson's objects;
``cocoarrow.clear_block`` runs the same proof, ``boxes_clear`` and ``polygons_clear``, over Arrow's
columns). The image table the proof looks images up in is here too.

The proof is conservative: an annotation it cannot clear (a box past its image, a category met for
the first time, a crowd, an RLE, keypoints, a polygon near a bound...) is judged one by one as
before, in its place, so the rows, counts, examples and messages are those of the per-annotation
read. A block whose values are of unusual types (ids that are no integers, a box that is no list of
four numbers, an odd polygon) is judged one by one whole.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter, truth
from typing import Any

import numpy as np
import numpy.typing as npt

from labelgate.readers.common.instances import POINT_TOLERANCE

__all__ = ["Cleared", "ImageSizes", "ImageTable", "boxes_clear", "clear", "polygons_clear"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]

_INT = {int}
_NUMBER = {int, float}
_LIST = {list}
_ID, _CATEGORY, _IMAGE, _BOX = map(itemgetter, ("id", "category_id", "image_id", "bbox"))
_MARGIN = 1e-9  # relative: an area this close to its tolerance is judged one by one


class ImageTable:
    """The listed images as a task sees them: each key's position (its group code: the tasks and
    the parent seed the listed images alike, in this order) and its size (NaN: none recorded).

    A table read as columns (``cocoarrow.image_columns``) holds its integer keys as an array,
    with their ascending order, and makes the key -> position dict only where it is asked for
    (in the worker that needs it: the parent that made the table never does)."""

    __slots__ = ("_keys", "_position", "_sorted", "height", "width")

    def __init__(
        self,
        position: dict[Any, int] | None,
        width: F64,
        height: F64,
        keys: I64 | None = None,
        order: I64 | None = None,
    ) -> None:
        self._position, self._keys, self.width, self.height = position, keys, width, height
        self._sorted: tuple[I64, I64] | None = None  # the keys in ascending order, their order
        if keys is not None:
            order = np.argsort(keys, kind="stable") if order is None else order
            self._sorted = (keys[order], order)

    @classmethod
    def of(cls, images: Mapping[Any, tuple[float, float] | None]) -> ImageTable:
        sizes = [(math.nan, math.nan) if s is None else s for s in images.values()]
        wh = np.array(sizes, dtype=np.float64).reshape(-1, 2)
        return cls({key: i for i, key in enumerate(images)}, wh[:, 0].copy(), wh[:, 1].copy())

    @property
    def position(self) -> dict[Any, int]:
        """Each key's position."""
        if self._position is None:
            keys = self._keys if self._keys is not None else np.zeros(0, np.int64)
            self._position = dict(zip(keys.tolist(), range(len(keys)), strict=True))
        return self._position

    def __len__(self) -> int:
        return len(self.width)

    def keys(self) -> list[Any]:
        """The keys, in order."""
        return self._keys.tolist() if self._keys is not None else list(self.position)

    def find(self, key: Any) -> int | None:
        """The position of ``key`` (``None``: not listed), as ``position.get`` finds it (where
        the dict is not made: 1.0 and True find 1, as in a dict)."""
        if self._position is not None or self._keys is None:
            return self.position.get(key)
        if (type(key) is float and key.is_integer()) or type(key) is bool:
            key = int(key)
        if type(key) is not int or not -(2**63) <= key < 2**63:
            return None
        at = int(self.codes(np.array([key], dtype=np.int64))[0])
        return None if at < 0 else at

    def codes(self, keys: I64) -> I64:
        """The position of each of ``keys`` (integers), -1 where not listed."""
        if self._sorted is None:
            position = self.position
            values = keys.tolist()
            return np.fromiter(map(position.get, values, repeat(-1)), np.int64, len(values))
        ordered, order = self._sorted
        if not len(ordered):
            return np.full(len(keys), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
        return np.where(ordered[at] == keys, order[at], -1).astype(np.int64)


class ImageSizes(Mapping[Any, "tuple[float, float] | None"]):
    """An image table read as the reader's image sizes (key -> (width, height), ``None`` where
    none was recorded): where the reader and its workers look up the images read as columns
    (``cocoarrow.record_images`` records them without a dict of their own)."""

    def __init__(self, table: ImageTable) -> None:
        self._table = table

    @property
    def table(self) -> ImageTable:
        """The table looked up."""
        return self._table

    def __getitem__(self, key: Any) -> tuple[float, float] | None:
        at = self._table.find(key)
        if at is None:
            raise KeyError(key)
        width, height = float(self._table.width[at]), float(self._table.height[at])
        return None if math.isnan(width) else (width, height)

    def __contains__(self, key: object) -> bool:
        return self._table.find(key) is not None

    def __iter__(self) -> Iterator[Any]:
        return iter(self._table.keys())

    def __len__(self) -> int:
        return len(self._table)


@dataclass(frozen=True, slots=True)
class Cleared:
    """A block's annotations: ``mask`` true where one only needs counting, and every
    annotation's id, category id, image code and bbox (meaningful where ``mask`` is true)."""

    mask: Mask
    ids: I64
    categories: I64
    codes: I64
    box: F64  # [x, y, w, h] as written, one row an annotation

    def count(self, used: Counter[Any]) -> None:
        """Count the cleared annotations' categories into ``used``."""
        values, counts = np.unique(self.categories[self.mask], return_counts=True)
        for value, n in zip(values.tolist(), counts.tolist(), strict=True):
            used[value] += n


def clear(
    items: list[dict[str, Any]],
    table: ImageTable,
    used: Counter[Any],
    background: int | None,
) -> Cleared | None:
    """Which of ``items`` (one block's annotations, all objects) need only counting, given the
    categories met before the block (``used``), or ``None`` when the block is for the
    per-annotation read whole."""
    n = len(items)
    if not n or any("keypoints" in a or "segments_info" in a for a in items):
        return None
    try:  # C loops: the four keys every annotation of a usual block has
        ids = list(map(_ID, items))
        cids = list(map(_CATEGORY, items))
        images = list(map(_IMAGE, items))
        boxes: list[Any] = list(map(_BOX, items))
    except KeyError:  # one lacks one: the per-annotation read words it
        return None
    if not (set(map(type, ids)) == set(map(type, cids)) == set(map(type, images)) == _INT):
        return None  # bool is its own type: a true id is no id
    if set(map(type, boxes)) != _LIST or set(map(len, boxes)) != {4}:
        return None
    values = list(chain.from_iterable(boxes))
    if not set(map(type, values)) <= _NUMBER:
        return None
    try:
        id_array = np.array(ids, dtype=np.int64)
        cid_array = np.array(cids, dtype=np.int64)
        box = np.array(values, dtype=np.float64).reshape(n, 4)
    except OverflowError:  # past int64 or a float: the per-annotation read words it
        return None
    position = table.position
    codes = np.fromiter(map(position.get, images, repeat(-1)), dtype=np.int64, count=n)
    crowd = np.fromiter(map(truth, (a.get("iscrowd") for a in items)), dtype=bool, count=n)
    mask, width, height = boxes_clear(table, used, background, cid_array, codes, box, crowd)
    if not _polygons(items, mask, width, height):
        return None
    return Cleared(mask, id_array, cid_array, codes, box)


def boxes_clear(
    table: ImageTable,
    used: Counter[Any],
    background: int | None,
    categories: I64,
    codes: I64,
    box: F64,
    crowd: Mask,
) -> tuple[Mask, F64, F64]:
    """Which annotations' boxes need only counting (inside a listed image with a size, with an
    area, no crowd, not the background, a category met before), and each one's image size."""
    listed = codes >= 0
    width = np.full(len(codes), np.nan)  # no size where the image is not listed
    height = np.full(len(codes), np.nan)
    width[listed] = table.width[codes[listed]]
    height[listed] = table.height[codes[listed]]
    x0, y0 = box[:, 0], box[:, 1]
    x1, y1 = x0 + box[:, 2], y0 + box[:, 3]  # as the per-annotation read adds them
    with np.errstate(invalid="ignore"):  # NaN fails every comparison, as it does there
        mask = (x1 > x0) & (y1 > y0) & (x0 >= 0) & (y0 >= 0) & (x1 <= width) & (y1 <= height)
    mask &= ~crowd
    if background is not None:
        mask &= categories != background
    seen, first = np.unique(categories, return_index=True)
    new = [i for c, i in zip(seen.tolist(), first.tolist(), strict=True) if c not in used]
    mask[new] = False  # a category's first annotation is its example: judged one by one
    return mask, width, height


def _polygons(items: list[dict[str, Any]], mask: Mask, width: F64, height: F64) -> bool:
    """Clear from ``mask`` the annotations whose segmentation would be counted (a polygon
    broken, past its image, an area off its mask's; an RLE or any other form: judged one by
    one); false where the block's polygons are of a form this does not read."""
    absent: list[Any] = []
    segs = [a.get("segmentation", absent) for a in items]
    kinds = set(map(type, segs))
    if not kinds <= {list, type(None)}:
        for i, seg in enumerate(segs):
            if type(seg) is not list and seg is not None:
                mask[i] = False  # an RLE: judged one by one
    lists = [i for i, seg in enumerate(segs) if type(seg) is list and seg and mask[i]]
    if not lists:
        return True
    chosen = [segs[i] for i in lists]
    polys = list(chain.from_iterable(chosen))
    if set(map(type, polys)) != _LIST:
        return False
    lengths = np.fromiter(map(len, polys), dtype=np.int64, count=len(polys))
    if bool((lengths % 2).any()):
        return False  # an odd polygon shifts every pair after it
    coords = list(chain.from_iterable(polys))
    if not set(map(type, coords)) <= _NUMBER:
        return False
    try:
        flat = np.array(coords, dtype=np.float64)
    except OverflowError:
        return False
    per_item = np.fromiter(map(len, chosen), dtype=np.int64, count=len(chosen))
    given = np.array([_area_of(items[i].get("area")) for i in lists], dtype=np.float64)
    at = np.array(lists, dtype=np.int64)
    polygons_clear(mask, at, per_item, lengths, flat, given, width, height)
    return True


def polygons_clear(
    mask: Mask,
    at: I64,
    per_item: I64,
    lengths: I64,
    flat: F64,
    given: F64,
    width: F64,
    height: F64,
) -> None:
    """Clear from ``mask`` the annotations ``at`` whose polygons would be counted: each has
    ``per_item`` polygons of ``lengths`` coordinates (even), all in ``flat``, and a written area
    ``given`` (NaN: none)."""
    count_items, count_polys = len(at), len(lengths)
    owner = np.repeat(np.arange(count_items), per_item)  # each polygon's annotation
    points = lengths // 2
    poly_of = np.repeat(np.arange(count_polys), points)  # each point's polygon
    xs, ys = flat[0::2], flat[1::2]
    ends = np.cumsum(points)
    succ = np.arange(1, len(xs) + 1)
    succ[ends[points > 0] - 1] = (ends - points)[points > 0]  # a polygon's last point: its first
    xn, yn = xs[succ], ys[succ]
    with np.errstate(all="ignore"):
        forward, backward = xs * yn, xn * ys
        twice = np.bincount(poly_of, forward, count_polys) - np.bincount(
            poly_of, backward, count_polys
        )
        perimeter = np.bincount(poly_of, np.hypot(xn - xs, yn - ys), count_polys)
        area = np.bincount(owner, np.abs(twice) / 2, count_items)
        band = 1.0 + np.bincount(owner, perimeter, count_items)
        # how far the sums may round from the per-annotation read's (in another order): far
        # above any rounding, so that only an area within it of its tolerance is judged again
        terms = np.bincount(poly_of, np.abs(forward) + np.abs(backward), count_polys)
        count = np.bincount(owner, points.astype(np.float64), count_items)
        slack = _MARGIN * (1.0 + count) * (np.bincount(owner, terms, count_items) + band)
    ok = np.bincount(owner, (lengths < 6).astype(np.float64), count_items) == 0
    point_owner = owner[poly_of]
    broken = ~(np.isfinite(xs) & np.isfinite(ys))
    ok &= np.bincount(point_owner, broken.astype(np.float64), count_items) == 0
    ok &= np.isfinite(area) & np.isfinite(band)
    # the extent of each annotation's points against its image, with the tolerance
    lo_x = np.full(count_items, np.inf)
    lo_y = np.full(count_items, np.inf)
    hi_x = np.full(count_items, -np.inf)
    hi_y = np.full(count_items, -np.inf)
    np.minimum.at(lo_x, point_owner, xs)
    np.minimum.at(lo_y, point_owner, ys)
    np.maximum.at(hi_x, point_owner, xs)
    np.maximum.at(hi_y, point_owner, ys)
    t = POINT_TOLERANCE
    with np.errstate(invalid="ignore"):
        ok &= (lo_x >= -t) & (lo_y >= -t) & (hi_x <= width[at] + t) & (hi_y <= height[at] + t)
    with np.errstate(invalid="ignore"):
        gap = np.abs(given - area)
        ok &= ~np.isfinite(given) | (gap + slack + _MARGIN * np.abs(given) < band)
    mask[at[~ok]] = False


def _area_of(value: Any) -> float:
    """A written area as a float, NaN where it is no JSON number (nothing to compare)."""
    if type(value) is int or type(value) is float:
        try:
            return float(value)
        except OverflowError:
            return math.nan  # past a float's range: never finite, never compared
    return math.nan
