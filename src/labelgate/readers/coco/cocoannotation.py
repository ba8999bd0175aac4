"""One COCO annotation judged: the per-annotation function the sequential read calls on each
annotation and the block read's workers on those their bulk pass does not clear
(``readers/coco/cocofast.py``), so that both reads give one verdict; and the JSON values it takes
apart (image ids as tally keys, ``bbox`` as corners)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.coco.cocoshapes import CocoShapes, carries_shapes
from labelgate.readers.common.boxes import check_background, check_box
from labelgate.readers.common.sink import RowWriter, reject

__all__ = ["NUMBERS", "annotation", "corners", "plain", "tally_key"]


def annotation(
    item: dict[str, Any],
    writer: RowWriter,
    facts: AnnotationFacts,
    source: str,
    images: Mapping[Any, tuple[float, float] | None],
    used: Counter[Any],
    first_of: dict[Any, Example],
    unlisted: tuple[dict[Any, list[Example]], Counter[Any]],
    deferred: list[tuple[tuple[float, float, float, float], Any, Example]],
    counts: Counter[str],
    background: int | None,
    file: str = "",
    shapes: CocoShapes | None = None,
) -> None:
    image = tally_key(item.get("image_id"))  # any JSON value: a list is no key of the tallies
    group = (file, image)
    segments = item.get("segments_info")
    keyed = writer.id_type == "string"  # panoptic: segments keyed image/segment
    if segments is None and not keyed and plain(item, images.get(image), used, background):
        writer.add(item["id"], item["category_id"], source, None, group)  # the usual case
        box = item["bbox"]  # four numbers: ``plain`` has looked
        writer.sizes.add(item["category_id"], box[2], box[3])
        if shapes is not None and carries_shapes(item):  # its mask and keypoints
            cid, ident = item["category_id"], item["id"]
            fast = Example(row=writer.rows - 1, id=ident, source=source, value=cid)
            shapes.annotation(item, image, images, fast)
        if item.get("iscrowd"):
            counts["crowd"] += 1
        return
    parts = segments if isinstance(segments, list) else [item]
    for part in parts:
        if not isinstance(part, dict):
            part = {}  # a segment that is no object: no category_id, reported below (LG031)
        ident = tally_key(part.get("id"))
        cid = part.get("category_id")
        row = writer.rows
        shown = f"{image}/{ident}" if segments is not None else ident
        whole = isinstance(ident, int) and not isinstance(ident, bool)  # true is no id
        if keyed:
            named = str(shown) if whole else None
        else:
            named = ident if whole and segments is None else None
        if not isinstance(cid, int) or isinstance(cid, bool):
            facts.hit(
                "LG031",
                Example(row=row, id=shown, source=source, value=tally_key(cid)),
                message="annotations without an integer category_id",
                fix="give each annotation the id of a category in the categories table",
            )
            reject(writer, counts, named, source, group, "LG031")  # no class index: a rejected row
            continue
        example = Example(row=row, id=shown, source=source, value=cid)
        xyxy = None if segments is not None else corners(part.get("bbox"))
        if segments is None and xyxy is None:  # absent, null, or not four JSON numbers
            facts.hit(
                "LG031",
                example,
                message="annotations whose bbox is not [x, y, w, h]"
                if "bbox" in part
                else "annotations without a bbox",
                fix="write bbox as four numbers: x, y, width, height in pixels",
            )
            # no box to train: torchvision's and detectron2's loaders raise on it (formats.md)
            reject(writer, counts, named, source, group, "LG031")
            continue
        writer.add(named, cid, source, None, group)
        used[cid] += 1
        first_of.setdefault(cid, example)
        if shapes is not None and segments is None and carries_shapes(part):
            shapes.annotation(part, image, images, example)
        check_background(facts, cid, background, example)
        if image not in images:
            unlisted[1][image] += 1
            if len(unlisted[0].setdefault(image, [])) < 3:
                unlisted[0][image].append(example)
        if part.get("iscrowd"):
            counts["crowd"] += 1
        if segments is not None:
            continue  # a panoptic segment: the PNG holds its mask, its bbox is not judged
        assert xyxy is not None
        writer.sizes.add(cid, part["bbox"][2], part["bbox"][3])  # as written, as in bulk
        if image in images:
            check_box(facts, xyxy, images[image], example)
        elif len(deferred) < 1_000_000:
            deferred.append((xyxy, image, example))


def plain(
    item: dict[str, Any],
    size: tuple[float, float] | None,
    used: Counter[Any],
    background: int | None,
) -> bool:
    """Whether an annotation breaks no rule and names a category already met (so it needs no
    example): counted here when it does."""
    cid, ident = item.get("category_id"), item.get("id")
    if type(cid) is not int or cid not in used or cid == background or type(ident) is not int:
        return False
    xyxy = corners(item.get("bbox"))
    if size is None or xyxy is None:
        return False
    x0, y0, x1, y1 = xyxy
    if not (x1 > x0 and y1 > y0 and x0 >= 0 and y0 >= 0 and x1 <= size[0] and y1 <= size[1]):
        return False  # the slow path words it (NaN fails every comparison)
    used[cid] += 1
    return True


def tally_key(value: Any) -> Any:
    """A JSON value as a key of the per-id tallies: a number, a string or null as it is, any
    other value (a list, an object) as a marker naming its type, never its content."""
    if value is None or isinstance(value, int | float | str):
        return value
    return f"<a JSON {'array' if isinstance(value, list) else 'object'}>"


def corners(box: Any) -> tuple[float, float, float, float] | None:
    """A COCO ``[x, y, w, h]`` as corners, or ``None`` when it is not four numbers (strings and
    booleans included: a Roboflow export's ``["10", "20", ...]`` is refused by torchvision)."""
    if not isinstance(box, list) or len(box) != 4:
        return None
    x, y, w, h = box  # unrolled: this runs once per annotation
    if not (type(x) in NUMBERS and type(y) in NUMBERS and type(w) in NUMBERS) or (
        type(h) not in NUMBERS
    ):
        return None
    try:
        x, y, w, h = float(x), float(y), float(w), float(h)
    except (TypeError, ValueError):
        return None
    return x, y, x + w, y + h


NUMBERS = frozenset(
    {int, float}
)  # JSON numbers as parsed: no bool, no str: torchvision refuses them
