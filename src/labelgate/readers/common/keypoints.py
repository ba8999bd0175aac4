"""COCO keypoints: one annotation's ``keypoints`` and ``num_keypoints``, and a category's
``skeleton``, judged as the keypoint loaders read them.

detectron2 reshapes an annotation's keypoints to ``(-1, 3)`` (``data/detection_utils.py``,
``transform_keypoint_annotations``): a count that is no multiple of 3 raises, one that is not
3 x the category's keypoints misaligns every point after it; it counts the visible keypoints as
``v > 0`` (``data/build.py``, ``filter_images_with_few_keypoints``) and trains no crowd. So a
keypoint list of the wrong form is LG046 (an error with ``--task keypoints``, a warning
otherwise), and ``num_keypoints`` or keypoints on a crowd are LG047. COCO's skeleton pairs are
1-based indices into the category's keypoint names.
"""

from __future__ import annotations

from typing import Any

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.common.instances import Extent, finite, hit

__all__ = [
    "bad_visibility",
    "check_keypoint_count",
    "check_keypoints",
    "check_skeleton",
    "keypoint_names",
    "non_finite",
]

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
