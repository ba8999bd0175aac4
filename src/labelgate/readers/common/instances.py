"""COCO instance masks: one annotation's ``segmentation`` (polygons or an RLE) and ``area``, judged
as the mask loaders read them, without pycocotools.

What the loaders do with a bad mask (docs/formats.md cites the lines):

- detectron2 (``detectron2/data/datasets/coco.py``, ``load_coco_json``) keeps only polygons with an
  even count of at least 6 coordinates and drops the whole instance, box included, when none is
  left, logging only a count; an RLE whose decoded shape is not the image's fails an assert
  (``data/detection_utils.py``, ``transform_instance_annotations``).
- pycocotools (``frPyObjects``) takes a 4-value polygon for a box, reads an odd count as one point
  fewer, refuses counts summing past ``h * w`` and decodes counts summing short of it, or an empty
  counts list, into uninitialised memory.

So these are LG044 (an error with ``--task instance``, a warning otherwise: boxes train without
the masks), and an ``area`` or ``iscrowd`` that disagrees with the mask is LG045. An RLE is
decoded only as its run lengths (never into pixels), and one of more than ``MAX_MASK_PIXELS``
pixels is refused.
"""

from __future__ import annotations

import math
from operator import mul, sub
from typing import Any

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.codes import Code
from labelgate.core.report import Example
from labelgate.readers.common.maskfile import MAX_MASK_PIXELS

__all__ = [
    "POINT_TOLERANCE",
    "Extent",
    "check_extent",
    "check_segmentation",
    "finite",
    "hit",
    "polygon_area",
    "rle_counts",
]

# Pixels a polygon vertex or keypoint may lie past its image's edge: annotation tools write vertices
# on the last pixel's far edge (x = width) and round half-pixels outward.
POINT_TOLERANCE = 1.0

Extent = tuple[float, float, float, float]  # x0, y0, x1, y1 of the points, for the image's size


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float


_NUMBERS = frozenset({int, float})  # JSON numbers as parsed: no bool, no str


def finite(values: list[Any]) -> bool:
    """Whether every number is finite as a float: NaN, infinity and a JSON integer past a
    float's range (``math.isfinite(10**400)`` raises) are not."""
    try:  # a finite sum has no NaN and no infinity in it: one C loop in the usual case
        if math.isfinite(sum(values)):
            return True
    except OverflowError:
        pass  # integers past a float's range: the loop below says which
    try:
        return all(math.isfinite(v) for v in values)
    except OverflowError:
        return False


def hit(
    facts: AnnotationFacts, code: Code, example: Example, strict: bool, *, message: str, fix: str
) -> None:
    """Count ``code``; with ``strict`` (the task that trains on it) its finding is an error."""
    h = facts.hit(code, example, message=message, fix=fix)
    if strict:
        h.severity = "error"


def polygon_area(coords: list[float]) -> tuple[float, float]:
    """The shoelace area and the perimeter of one polygon ``[x1, y1, x2, y2, ...]``."""
    xs, ys = coords[0::2], coords[1::2]
    xn, yn = xs[1:] + xs[:1], ys[1:] + ys[:1]  # each vertex's successor
    twice = sum(map(mul, xs, yn)) - sum(map(mul, xn, ys))
    perimeter = sum(map(math.hypot, map(sub, xn, xs), map(sub, yn, ys)))
    return abs(twice) / 2, perimeter


def rle_counts(counts: str) -> list[int] | None:
    """The run lengths of a compressed RLE string, decoded as pycocotools' ``rleFrString`` does
    (``common/maskApi.c``: 5 bits a character from ``'0'``, a continuation bit, the sign bit
    extended, each count after the second a difference from the one two before), or ``None``
    when the string is not one: a character outside ``'0'..'o'``, a value cut short, or a
    negative run."""
    out: list[int] = []
    p, n = 0, len(counts)
    while p < n:
        x, k, more = 0, 0, True
        while more:
            if p >= n:
                return None  # the last value continues past the string's end
            c = ord(counts[p]) - 48
            if not 0 <= c < 64:
                return None
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and c & 0x10:
                x |= -1 << (5 * k)
        if len(out) > 2:
            x += out[-2]
        if x < 0:
            return None
        out.append(x)
    return out


def check_segmentation(
    facts: AnnotationFacts, item: dict[str, Any], example: Example, strict: bool
) -> tuple[Extent | None, tuple[int, int] | None]:
    """Count the faults of ``item``'s segmentation that need no image: the polygons' form and
    area, the RLE's counts and area, ``iscrowd`` against COCO's convention; return what the
    image's size settles (the polygons' extent, the RLE's ``size`` as (height, width))."""
    seg = item.get("segmentation")
    crowd = item.get("iscrowd")
    if isinstance(seg, list):
        if not seg:
            return None, None  # no mask (a keypoints-only export): nothing to judge
        area, band, extent = _polygons(facts, seg, example, strict)
        if crowd == 1:
            _metadata(facts, example, "crowd annotations (iscrowd 1) drawn as polygons")
        if area is not None:
            _area(facts, item.get("area"), area, band, example)
        return extent, None
    if isinstance(seg, dict):
        size, area = _rle(facts, seg, example, strict)
        if crowd == 0 and size is not None:
            _metadata(facts, example, "RLE masks on annotations that are not crowds (iscrowd 0)")
        if area is not None:
            _area(facts, item.get("area"), float(area), 0.5, example)
        return None, size
    if seg is not None:
        _malformed(facts, example, strict, "segmentations that are neither polygons nor an RLE")
    return None, None


def check_extent(
    facts: AnnotationFacts,
    extent: Extent | None,
    rle_size: tuple[int, int] | None,
    size: tuple[float, float],
    example: Example,
    strict: bool,
    *,
    what: str = "polygons",
) -> None:
    """Count a polygon (``what``: or keypoints) reaching past its image (LG028) or an RLE whose
    ``size`` is not the image's [height, width] (LG044); ``size`` is the image's (width, height)."""
    w, h = size
    if extent is not None:
        x0, y0, x1, y1 = extent
        t = POINT_TOLERANCE
        if x0 < -t or y0 < -t or x1 > w + t or y1 > h + t:
            facts.hit(
                "LG028",
                example,
                message="polygons with points past their image's edges"
                if what == "polygons"
                else f"{what} past their image's edges",
                fix="clip them to the image: a mask is cut at its edge, and detectron2 marks "
                "such keypoints unlabelled",
            )
    if rle_size is not None and (float(rle_size[0]), float(rle_size[1])) != (h, w):
        _malformed(
            facts,
            example,
            strict,
            "RLE masks whose size is not their image's [height, width]",
            fix="encode the mask at the image's size: detectron2 asserts the decoded mask's "
            "shape equals the image's",
        )


def _polygons(
    facts: AnnotationFacts, seg: list[Any], example: Example, strict: bool
) -> tuple[float | None, float, Extent | None]:
    """(area of the usable polygons or ``None`` when one is broken, its tolerance band, extent)."""
    total, band = 0.0, 1.0
    xs: list[float] = []
    ys: list[float] = []
    broken = False
    for poly in seg:
        if not isinstance(poly, list) or not _NUMBERS.issuperset(map(type, poly)):
            _malformed(facts, example, strict, "polygons that are not lists of numbers")
            broken = True
            continue
        if not finite(poly):
            _malformed(facts, example, strict, "polygon coordinates that are NaN or infinite")
            broken = True
            continue
        if len(poly) % 2:
            _malformed(
                facts,
                example,
                strict,
                "polygons with an odd count of coordinates",
                fix="write x, y pairs: pycocotools drops the last value, detectron2 the polygon",
            )
            broken = True
        elif len(poly) < 6:
            _malformed(
                facts,
                example,
                strict,
                "polygons with fewer than 3 points (6 coordinates)",
                fix="redraw them: detectron2 drops them (and the instance when none is left); "
                "pycocotools reads a 4-value polygon as a box",
            )
            broken = True
        else:
            area, perimeter = polygon_area(poly)
            total += area
            band += perimeter
        xs.extend(poly[0::2])
        ys.extend(poly[1::2])
    extent = (min(xs), min(ys), max(xs), max(ys)) if xs else None
    return (None if broken else total), band, extent


def _rle(
    facts: AnnotationFacts, seg: dict[str, Any], example: Example, strict: bool
) -> tuple[tuple[int, int] | None, int | None]:
    """(the RLE's size, its area), each ``None`` when the RLE cannot give it."""
    size, counts = seg.get("size"), seg.get("counts")
    if (
        not isinstance(size, list)
        or len(size) != 2
        or not all(type(v) is int and v >= 0 for v in size)
    ):
        _malformed(facts, example, strict, "RLE masks without a size [height, width]")
        return None, None
    h, w = size
    if h * w > MAX_MASK_PIXELS:
        _malformed(
            facts,
            example,
            strict,
            f"RLE masks of more than {MAX_MASK_PIXELS:,} pixels (not decoded)",
            fix="check the size: no mask of the other formats may be that large either",
        )
        return None, None  # counted once: its size is the fault
    runs: list[int] | None
    if isinstance(counts, list):
        whole = all(
            (type(v) is int or (type(v) is float and v.is_integer())) and v >= 0 for v in counts
        )
        runs = [int(v) for v in counts] if whole else None  # pycocotools truncates 3.5 to 3
    elif isinstance(counts, str):
        runs = rle_counts(counts)
    else:
        runs = None
    if runs is None:
        _malformed(
            facts,
            example,
            strict,
            "RLE masks whose counts do not decode",
            fix="re-encode the mask with pycocotools.mask.encode: counts are non-negative run "
            "lengths (a list) or COCO's compressed string",
        )
        return (h, w), None
    if sum(runs) != h * w:
        _malformed(
            facts,
            example,
            strict,
            "RLE masks whose counts do not cover height x width pixels",
            fix="re-encode the mask: pycocotools refuses counts past h x w and decodes "
            "memory it never wrote for counts short of it",
        )
        return (h, w), None
    return (h, w), sum(runs[1::2])


def _area(
    facts: AnnotationFacts, given: Any, computed: float, band: float, example: Example
) -> None:
    """Count an ``area`` further from the mask's than ``band`` (LG045)."""
    if not _number(given) or not finite([given]):
        return  # no area written: nothing to disagree with
    if abs(given - computed) > band:
        facts.hit(
            "LG045",
            example,
            message="annotations whose area is not their mask's",
            fix="recompute area from the mask (pycocotools.mask.area): COCO's evaluation sorts "
            "objects into small, medium and large by it",
        )


def _metadata(facts: AnnotationFacts, example: Example, message: str) -> None:
    facts.hit(
        "LG045",
        example,
        message=message,
        fix="COCO writes crowds as RLE with iscrowd 1 and single objects as polygons with "
        "iscrowd 0; detectron2 and COCO's evaluation ignore crowds: check which is meant",
    )


def _malformed(
    facts: AnnotationFacts,
    example: Example,
    strict: bool,
    message: str,
    *,
    fix: str = "redraw or re-export these masks: a mask loader drops or refuses them",
) -> None:
    hit(facts, "LG044", example, strict, message=message, fix=fix)
