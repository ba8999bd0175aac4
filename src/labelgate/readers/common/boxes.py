"""The box rules every detection reader applies: torchvision's own test of a box's size, finite
coordinates, boxes inside their image, and objects labelled with the background index; and the
two rules the shape formats (CVAT, Label Studio, LabelMe) share: enough points for the shape,
and a name the class map holds."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from labelgate.contract.classmap import normalise_name
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.common.boxsizes import BoxSizes
from labelgate.readers.common.drawn import drawn, marked, redrawn

__all__ = [
    "PRINTED_TOLERANCE",
    "check_background",
    "check_box",
    "check_points",
    "check_tables",
    "class_index",
    "tally",
]

# Normalised coordinates are written with six decimals (YOLO's exporters, ultralytics' own
# converters): each printed value is off by up to 5e-7, so an edge computed as cx - w/2 from two of
# them by up to 7.5e-7. An edge that close to 0 or 1 is the printing, not a box past the image.
PRINTED_TOLERANCE = 1e-6


def check_box(
    facts: AnnotationFacts,
    box: tuple[float, float, float, float],
    size: tuple[float, float] | None,
    example: Example,
    *,
    normalised: bool = False,
    sizes: BoxSizes | None = None,
) -> None:
    """Count a box (x0, y0, x1, y1) that torchvision's detection models refuse or mislearn:
    without area by torchvision's own comparison (LG027: exactly the boxes it raises on), not
    finite (LG029), outside its image or, ``normalised``, outside [0, 1] beyond the printed
    precision of six decimals (LG028: ``PRINTED_TOLERANCE``); its width and height measured
    in ``sizes`` under its class (the example's value)."""
    x0, y0, x1, y1 = box
    if sizes is not None and type(example.value) is int:
        sizes.add(example.value, x1 - x0, y1 - y0)
    w, h = (1.0, 1.0) if normalised else (size if size is not None else (math.inf, math.inf))
    tol = PRINTED_TOLERANCE if normalised else 0.0
    # drawn (for the report's pictures) only when flagged: this runs once a box
    if not (x0 < x1 and y0 < y1 and -tol <= x0 and -tol <= y0 and x1 <= w + tol and y1 <= h + tol):
        frame = (1.0, 1.0) if normalised else size
        example = drawn(example, "box", ((x0, y0), (x1, y1)), frame, relative=_relative(frame))
    if x1 <= x0 or y1 <= y0:  # torchvision's own test: a NaN coordinate passes it
        facts.hit(
            "LG027",
            example,
            message="boxes with zero or negative width or height",
            fix=(
                "drop or redraw them: torchvision's detection models raise 'All bounding boxes "
                "should have positive height and width' on the first batch holding one"
            ),
        )
    if not all(math.isfinite(v) for v in box):
        facts.hit(
            "LG029",
            example,
            message="box coordinates that are NaN or infinite",
            fix="drop or redraw these boxes: one non-finite coordinate makes the box loss NaN",
        )
        return
    if x0 < -tol or y0 < -tol or x1 > w + tol or y1 > h + tol:
        where = "outside [0, 1]" if normalised else "past their image's edges"
        facts.hit(
            "LG028",
            example,
            message=f"boxes reaching {where}",
            fix="clip them to the image, or check the coordinate convention (pixels, normalised, "
            "xywh or xyxy) of the tool that wrote them",
        )


def _relative(frame: tuple[float, float] | None) -> bool:
    """Whether coordinates in ``frame`` scale with the image: YOLO's normalised ones and Label
    Studio's percentages (a 100 x 100 pixel image reads the same either way)."""
    return frame in ((1.0, 1.0), (100.0, 100.0))


def check_background(
    facts: AnnotationFacts, label: int, background: int | None, example: Example
) -> None:
    """Count an object labelled with the detection background index (LG032)."""
    if background is None or label != background:
        return
    facts.hit(
        "LG032",
        example,
        message=f"objects labelled {background}, the background index",
        fix=(
            "torchvision's detection models reserve the background index "
            "(FasterRCNN(num_classes=K+1), 0 the background): map the object classes to 1..K "
            "where the targets are built"
        ),
    )


def check_points(
    facts: AnnotationFacts,
    points: Sequence[tuple[float, float]],
    size: tuple[float, float] | None,
    example: Example,
    *,
    shape: str,
    least: int,
    tolerance: float = 0.0,
) -> None:
    """Count a polygon, polyline or point set with fewer than ``least`` points (LG031: a
    two-point polygon has no area, a loader building its mask or box gets nothing), a
    coordinate that is not finite (LG029), or a point more than ``tolerance`` outside its image
    (LG028; pixel coordinates take ``instances.POINT_TOLERANCE``, as COCO's polygons do)."""
    marks = marked(facts)
    _judge_points(facts, points, size, example, shape=shape, least=least, tolerance=tolerance)
    kind = "keypoints" if least == 1 else "polygon"
    redrawn(facts, marks, example, lambda e: drawn(e, kind, points, size, relative=_relative(size)))


def _judge_points(
    facts: AnnotationFacts,
    points: Sequence[tuple[float, float]],
    size: tuple[float, float] | None,
    example: Example,
    *,
    shape: str,
    least: int,
    tolerance: float,
) -> None:
    if len(points) < least:
        facts.hit(
            "LG031",
            example,
            message=f"{shape}s with fewer than {least} points",
            fix=f"redraw them: a {shape} needs {least} points or more",
        )
        return
    if not all(math.isfinite(v) for p in points for v in p):
        facts.hit(
            "LG029",
            example,
            message="shape coordinates that are NaN or infinite",
            fix="redraw these shapes: a non-finite vertex makes the box or mask built from it NaN",
        )
        return
    if size is None:
        return
    w, h = size
    t = tolerance
    if any(x < -t or y < -t or x > w + t or y > h + t for x, y in points):
        facts.hit(
            "LG028",
            example,
            message="shapes with points past their image's edges",
            fix="clip them to the image: a mask or box built from them reaches outside it",
        )


def class_index(
    facts: AnnotationFacts,
    name: str,
    index: Mapping[str, int],
    origin: str,
    example: Example,
    *,
    what: str = "shapes",
) -> int | None:
    """The index of ``name`` in the class map, or ``None`` counted as LG030, the name as written
    in the example's value and in the finding's ``labels`` (the reader then writes the record as
    a rejected row, at ``example.row``: no index stands for a name the map lacks)."""
    label = index.get(normalise_name(name))
    if label is None:
        h = facts.hit(
            "LG030",
            replace(example, value=name),
            message=f"{what} labelled {name!r}, which the class map does not declare",
            fix=f"declare the label in the class map ({origin}) or relabel these {what} with "
            "a declared one",
        )
        tally(h.details, "labels", name)
    return label


def tally(details: dict[str, Any], key: str, value: str) -> None:
    """Count ``value`` in ``details[key]`` (a finding's evidence), for the first 50 values."""
    seen = details.setdefault(key, {})
    if value in seen or len(seen) < 50:
        seen[value] = seen.get(value, 0) + 1


def check_tables(
    facts: AnnotationFacts, tables: Mapping[str, Mapping[int, str] | Sequence[str]]
) -> None:
    """Count the files read together whose class tables differ from the first file's (LG030):
    the same index would name another class in each, or a name would have no index. A table is
    a list of names by index, or a map of index to name (a COCO table of ids, whose gaps are
    never spelled out: its cost is its entries, not its largest id)."""
    items = [(source, _table(names)) for source, names in tables.items()]
    if len(items) < 2:
        return
    first, base = items[0]
    for source, names in items[1:]:
        count, at = _differ(base, names) if names != base else (0, 0)
        if not count:
            continue
        facts.hit(
            "LG030",
            Example(row=-1, id=source, source=source),
            message=f"files read together whose class tables differ ({source!r} and {first!r} "
            f"at {count} of {max(base[1], names[1])} indices, from index {at})",
            fix="give every file one class table (the same names in the same order): rows "
            "from each would otherwise train another class under the same index",
            unit="files",
        )


def _table(names: Mapping[int, str] | Sequence[str]) -> tuple[dict[int, str], int]:
    """A class table as its named indices and its length (the largest index + 1)."""
    if isinstance(names, Mapping):
        return dict(names), max(names, default=-1) + 1
    return dict(enumerate(names)), len(names)


def _differ(a: tuple[dict[int, str], int], b: tuple[dict[int, str], int]) -> tuple[int, int]:
    """How many indices of two tables differ, and the first: an index past a table's end
    differs from one inside the other (a gap inside a table names ""). Counted from the
    entries: the indices past the shorter table's end that the longer leaves unnamed are
    counted, not listed."""
    (da, na), (db, nb) = a, b

    def name(d: dict[int, str], n: int, i: int) -> str | None:
        return d.get(i, "") if i < n else None

    keyed = sorted(i for i in da.keys() | db.keys() if name(da, na, i) != name(db, nb, i))
    lo, hi = min(na, nb), max(na, nb)
    longer = da if na > nb else db
    unnamed = (hi - lo) - sum(1 for i in longer if lo <= i < hi)
    first = keyed[:1]
    if unnamed:
        first.append(next(i for i in itertools.count(lo) if i not in longer))
    return len(keyed) + unnamed, min(first, default=0)
