"""COCO masks against pycocotools, the library COCO's own tools decode them with.

Random polygons and RLEs, valid and broken, through ``pycocotools.mask``: labelgate flags a mask
(LG044) exactly where pycocotools refuses it or reads another mask than the one written (a
4-value polygon read as a box, an odd count read one value short, counts decoded to another
string), and an ``area`` (LG045) exactly where it is not the area pycocotools computes, outside
the tolerance of a one-pixel band along the outline (tools count boundary pixels differently).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.common.instances import check_extent, check_segmentation

np = pytest.importorskip("numpy")
mask = pytest.importorskip("pycocotools.mask")

H, W = 80, 100


def judged(item: dict[str, Any]) -> set[str]:
    facts = AnnotationFacts(format="coco", why="test")
    example = Example(row=0, id=1)
    extent, size = check_segmentation(facts, item, example, True)
    check_extent(facts, extent, size, (float(W), float(H)), example, True)
    return set(facts.hits)


def polygon_verdict(poly: list[Any]) -> tuple[bool, float | None]:
    """(pycocotools refuses or misreads it, the area it computes)."""
    if any(isinstance(v, str) for v in poly):
        # pycocotools casts "70.0" to a float, but detectron2's transforms compute on the
        # polygon as np.asarray gives it: an array of strings, which raises
        return True, None
    if not all(math.isfinite(v) for v in poly):
        # not run: pycocotools' rasteriser on a NaN vertex allocates without bound (killed for
        # memory here; a segmentation fault under ulimit -v)
        return True, None
    try:
        rles = mask.frPyObjects([poly], H, W)
    except Exception:  # noqa: BLE001 (pycocotools raises a bare Exception too)
        return True, None
    area = float(mask.area(rles)[0])
    if len(poly) == 4:
        return True, area  # frPyObjects takes four values for a box [x, y, w, h]
    if len(poly) % 2 or len(poly) < 6:
        return True, area  # reads len // 2 points: not the polygon written
    return False, area


@st.composite
def polygons(draw: st.DrawFn) -> list[Any]:
    k = draw(st.integers(3, 9))
    turn = draw(st.floats(0, 2 * math.pi))
    poly: list[Any] = []
    for i in range(k):
        a = turn + 2 * math.pi * (i + draw(st.floats(0, 0.5))) / k
        r = draw(st.floats(20, 35))
        poly += [round(50 + r * math.cos(a), 2), round(40 + r * math.sin(a), 2)]
    broken = draw(st.sampled_from(["none", "none", "odd", "four", "two", "nan", "string"]))
    if broken == "odd":
        poly = poly[:-1]
    elif broken == "four":
        poly = poly[:4]
    elif broken == "two":
        poly = poly[:2]
    elif broken == "nan":
        poly[draw(st.integers(0, len(poly) - 1))] = math.nan
    elif broken == "string":
        poly[0] = str(poly[0])
    return poly


@settings(max_examples=200, deadline=None)
@given(poly=polygons(), factor=st.sampled_from([None, 1.0, 1.0, 0.4, 2.0, 0.0]))
def test_polygons_flagged_exactly_where_pycocotools_refuses_or_disagrees(
    poly: list[Any], factor: float | None
) -> None:
    refused, area = polygon_verdict(poly)
    item: dict[str, Any] = {"segmentation": [poly], "iscrowd": 0}
    if factor is not None and area is not None:
        item["area"] = area * factor
    found = judged(item)
    assert ("LG044" in found) == refused
    wrong_area = not refused and factor is not None and factor != 1.0
    assert ("LG045" in found) == wrong_area
    assert "LG028" not in found


@st.composite
def rles(draw: st.DrawFn) -> tuple[dict[str, Any], bool]:
    """An RLE of the image's size as COCO writes it (compressed or not), perhaps broken, and
    whether pycocotools refuses or misreads it."""
    seed = draw(st.integers(0, 2**32 - 1))
    pixels = np.random.default_rng(seed).random((H, W)) < draw(st.floats(0, 1))
    rle = mask.encode(np.asfortranarray(pixels.astype("uint8")))
    text = rle["counts"].decode()
    broken = draw(st.sampled_from(["none", "none", "cut", "extra", "char", "list", "list-"]))
    if broken in ("list", "list-"):
        flat = pixels.flatten(order="F").astype(int)
        edges = np.flatnonzero(np.diff(np.concatenate([[0], flat, [1 - flat[-1]]])))
        counts = np.diff(np.concatenate([[0], edges])).tolist()
        if broken == "list-":
            counts[-1] -= draw(st.integers(1, counts[-1])) if counts[-1] else -1
        segm: dict[str, Any] = {"size": [H, W], "counts": counts}
    else:
        if broken == "cut":
            text = text[:-1]
        elif broken == "extra":
            text += "1"  # one run more, of 1 + the run two before: past h x w
        elif broken == "char":
            text = text[:1] + "~" + text[2:]
        segm = {"size": [H, W], "counts": text}
    return segm, misread(segm)


def misread(segm: dict[str, Any]) -> bool:
    """pycocotools refuses the RLE, or its decoding encodes to other counts than written."""
    try:
        compressed = mask.frPyObjects(segm, H, W) if isinstance(segm["counts"], list) else segm
        if isinstance(compressed["counts"], str):
            compressed = {"size": segm["size"], "counts": compressed["counts"].encode()}
        decoded = mask.decode(compressed)
    except Exception:  # noqa: BLE001 (pycocotools raises a bare Exception too)
        return True
    again = mask.encode(np.asfortranarray(decoded))["counts"]
    return bool(again != compressed["counts"])


@settings(max_examples=200, deadline=None)
@given(case=rles(), wrong_area=st.booleans())
def test_rles_flagged_exactly_where_pycocotools_refuses_or_misreads(
    case: tuple[dict[str, Any], bool], wrong_area: bool
) -> None:
    segm, refused = case
    item: dict[str, Any] = {"segmentation": segm, "iscrowd": 1}
    if not refused:
        compressed = mask.frPyObjects(segm, H, W) if isinstance(segm["counts"], list) else segm
        if isinstance(compressed["counts"], str):
            compressed = {"size": segm["size"], "counts": compressed["counts"].encode()}
        item["area"] = float(mask.area(compressed)) + (7.0 if wrong_area else 0.0)
    found = judged(item)
    assert ("LG044" in found) == refused
    assert ("LG045" in found) == (not refused and wrong_area)
