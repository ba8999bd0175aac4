"""COCO keypoints: one annotation's ``keypoints`` and ``num_keypoints``, and a category's
``skeleton``, judged as the keypoint loaders read them.

detectron2 reshapes an annotation's keypoints to ``(-1, 3)`` (``data/detection_utils.py``,
``transform_keypoint_annotations``): a count that is no multiple of 3 raises, one that is not
3 x the category's keypoints misaligns every point after it; it counts the visible keypoints as
``v > 0`` (``data/build.py``, ``filter_images_with_few_keypoints``) and trains no crowd. So a
keypoint list of the wrong form is LG046 (an error with ``--task keypoints``, a warning
otherwise), and ``num_keypoints`` or keypoints on a crowd are LG047. COCO's skeleton pairs are
1-based indices into the category's keypoint names.

A labelled keypoint inside its image but outside its own box is LG050: torchvision's and
detectron2's keypoint heads leave it out of the loss without a word (docs/checks.md), while a
person's box in COCO is its visible mask's, so clean data holds such keypoints too (info; a
warning with ``--task keypoints`` or a framework that drops them).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.common.instances import POINT_TOLERANCE, Extent, finite, hit

__all__ = [
    "Stray",
    "bad_visibility",
    "check_keypoint_count",
    "check_keypoints",
    "check_keypoints_in_box",
    "check_skeleton",
    "coco_outside_box",
    "keypoint_names",
    "non_finite",
    "outside_box",
]

Stray = tuple[int, float, float]  # a labelled keypoint outside its box: its index, x and y

_VISIBILITY = (0, 1, 2)


def _number(value: Any) -> bool:
    return type(value) is int or type(value) is float


def keypoint_names(category: dict[str, Any]) -> int | None:
    """The count of a category's keypoint names, or ``None`` when it declares none (an empty
    list, as Datumaro writes, declares no count to hold the annotations to)."""
    names = category.get("keypoints")
    return len(names) if isinstance(names, list) and names else None


def check_skeleton(
    facts: AnnotationFacts, category: dict[str, Any], example: Example, strict: bool
) -> None:
    """Count a skeleton that is not pairs of keypoint indices in 1..len(keypoints) (LG046)."""
    skeleton = category.get("skeleton")
    if skeleton is None:
        return
    top = keypoint_names(category)
    pairs = isinstance(skeleton, list) and all(
        isinstance(p, list) and len(p) == 2 and all(type(v) is int for v in p) for p in skeleton
    )
    if not pairs or any(v < 1 or (top is not None and v > top) for p in skeleton for v in p):
        hit(
            facts,
            "LG046",
            example,
            strict,
            message="skeletons whose pairs are not keypoint numbers 1..len(keypoints) (COCO's "
            "are 1-based)",
            fix="number the skeleton's keypoints from 1, as COCO does: a 0-based skeleton "
            "joins the wrong keypoints",
        )


def check_keypoints(
    facts: AnnotationFacts, item: dict[str, Any], example: Example, strict: bool
) -> tuple[int | None, Extent | None]:
    """Count the faults of ``item``'s keypoints that need no category or image; return the count
    of values (``None`` when not a list) and the extent of the labelled (v > 0) keypoints."""
    values = item.get("keypoints")
    if not isinstance(values, list) or not all(_number(v) for v in values):
        hit(
            facts,
            "LG046",
            example,
            strict,
            message="keypoints that are not a list of numbers",
            fix="write keypoints as x, y, v triples of numbers",
        )
        return None, None
    if len(values) % 3:
        hit(
            facts,
            "LG046",
            example,
            strict,
            message="keypoint lists whose length is not a multiple of 3 (x, y, v)",
            fix="write one x, y, v triple per keypoint: detectron2's reshape(-1, 3) raises",
        )
        return len(values), None
    xs, ys = values[0::3], values[1::3]
    vs = values[2::3]
    if not finite(values):
        non_finite(facts, example, strict)
        return len(values), None
    if any(v not in _VISIBILITY for v in vs):
        bad_visibility(
            facts,
            example,
            strict,
            fix="COCO's visibility is 0 (not labelled), 1 (labelled, hidden) or 2 (visible)",
        )
    shown = [k for k, v in enumerate(vs) if v > 0]
    written = item.get("num_keypoints")
    if _number(written) and written != len(shown):
        facts.hit(
            "LG047",
            example,
            message="annotations whose num_keypoints is not the count of keypoints with v > 0",
            fix="recompute num_keypoints: COCO's evaluation skips annotations whose "
            "num_keypoints is 0",
        )
    if shown and item.get("iscrowd") == 1:
        facts.hit(
            "LG047",
            example,
            message="keypoints on crowd annotations (iscrowd 1)",
            fix="crowds train no keypoints (detectron2 drops them): label each person, or clear "
            "the crowd's keypoints",
        )
    if not shown:
        return len(values), None
    return len(values), (
        min(xs[k] for k in shown),
        min(ys[k] for k in shown),
        max(xs[k] for k in shown),
        max(ys[k] for k in shown),
    )


def check_keypoint_count(
    facts: AnnotationFacts, length: int, names: int, example: Example, strict: bool
) -> None:
    """Count a keypoint list that is not 3 values per keypoint of its category (LG046)."""
    if length % 3 == 0 and length != 3 * names:
        hit(
            facts,
            "LG046",
            example,
            strict,
            message="keypoint lists that are not 3 values per keypoint of their category",
            fix="write one x, y, v triple for every keypoint the category names (v = 0 where "
            "it is not labelled): every keypoint after a missing one is misread",
        )


def bad_visibility(facts: AnnotationFacts, example: Example, strict: bool, *, fix: str) -> None:
    """Count keypoints whose visibility is not 0, 1 or 2 (LG046), ``fix`` in the format's words:
    COCO's and YOLO's pose rows alike."""
    hit(
        facts,
        "LG046",
        example,
        strict,
        message="keypoints whose visibility is not 0, 1 or 2",
        fix=fix,
    )


def non_finite(facts: AnnotationFacts, example: Example, strict: bool) -> None:
    """Count keypoints with a NaN or infinite value (LG046): COCO's and YOLO's pose rows alike."""
    hit(
        facts,
        "LG046",
        example,
        strict,
        message="keypoint values that are NaN or infinite",
        fix="redraw these keypoints: a non-finite coordinate makes the keypoint loss NaN",
    )


def outside_box(
    labelled: Iterable[Stray], box: tuple[float, float, float, float], tolerance: float = 0.0
) -> list[Stray]:
    """The keypoints of ``labelled`` (index, x, y) outside ``box`` (x0, y0, x1, y1), told as
    torchvision's ``keypoints_to_heatmap`` tells them: the box is closed, a keypoint on its far
    edge kept (``x == x1`` is set to the last heatmap cell) and one before its near edge or past
    its far one dropped (``valid_loc``); ``tolerance`` widens it by the coordinates' printed
    precision (YOLO's six decimals). A box without width or height (LG027's) judges none."""
    x0, y0, x1, y1 = box
    if not (x1 > x0 and y1 > y0):  # NaN fails too: not finite is LG029's
        return []
    t = tolerance
    return [s for s in labelled if not (x0 - t <= s[1] <= x1 + t and y0 - t <= s[2] <= y1 + t)]


def coco_outside_box(item: dict[str, Any]) -> list[Stray]:
    """The labelled keypoints (v > 0) of a COCO annotation whose keypoints ``check_keypoints``
    found well formed that lie outside its own ``bbox`` (x, y, w, h: ``outside_box``); none
    where the bbox is not four numbers (LG031's)."""
    box = item.get("bbox")
    if not isinstance(box, list) or len(box) != 4 or not all(_number(v) for v in box):
        return []
    values = item["keypoints"]
    triples = zip(values[0::3], values[1::3], values[2::3], strict=True)
    labelled = [(k, x, y) for k, (x, y, v) in enumerate(triples) if v > 0]
    return outside_box(labelled, (box[0], box[1], box[0] + box[2], box[1] + box[3]))


def check_keypoints_in_box(
    facts: AnnotationFacts,
    strays: list[Stray],
    size: tuple[float, float] | None,
    example: Example,
    keypoints: bool,
    *,
    tolerance: float = POINT_TOLERANCE,
) -> None:
    """Count the keypoints of ``strays`` that lie inside their image of ``size`` (within LG028's
    ``tolerance``: those past it are LG028's) as LG050, the example naming the first one's
    index (``position``); a warning with ``keypoints`` (the task that trains on them), else the
    catalog's info."""
    t = tolerance
    inside = [
        k
        for k, x, y in strays
        if size is None or (-t <= x <= size[0] + t and -t <= y <= size[1] + t)
    ]
    if not inside:
        return
    h = facts.hit(
        "LG050",
        replace(example, position=inside[0]),
        message="labelled keypoints inside their image but outside their own box",
        fix="if these keypoints should train a keypoint R-CNN, draw the box around the whole "
        "person (keypoints included); COCO's person boxes follow the visible mask, so some "
        "of its keypoints lie outside them too",
        unit="keypoints",
        count=len(inside),
    )
    if keypoints:
        h.severity = "warning"
