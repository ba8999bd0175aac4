"""YOLO segment and pose rows, judged as ultralytics reads them (``ultralytics/data/utils.py``,
``verify_image_label``, ultralytics 8.4.190; docs/formats.md cites the lines).

ultralytics reads a row of more than 6 fields as a segment (``class x1 y1 x2 y2 ...``) and
reshapes its coordinates to pairs: an odd count raises and the image is dropped as corrupt. With
``kpt_shape: [K, dims]`` in data.yaml every row of a pose dataset must hold ``5 + K * dims`` values
(class, box, then K keypoints of x, y and, with dims 3, a visibility), or the image is dropped.
A row of up to 6 fields is read as a box: one that is not 5 stays a malformed line (LG031).
"""

from __future__ import annotations

from pathlib import Path

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.errors import InputError
from labelgate.readers.common.boxes import PRINTED_TOLERANCE
from labelgate.readers.common.drawn import drawn
from labelgate.readers.common.instances import finite, hit
from labelgate.readers.common.keypoints import (
    Stray,
    bad_visibility,
    check_keypoints_in_box,
    non_finite,
    outside_box,
)

__all__ = ["check_mixed", "check_pose", "kpt_shape", "kpt_shape_of", "row_fault"]


def kpt_shape(root: Path) -> tuple[int, int] | None:
    """data.yaml's ``kpt_shape`` as (K, dims), or ``None`` when it declares none.

    Raises:
        InputError: a ``kpt_shape`` that is not ``[K, 2]`` or ``[K, 3]`` with K >= 1.
    """
    for name in ("data.yaml", "data.yml"):
        path = root / name
        if path.is_file():
            return kpt_shape_of(path)
    return None


def kpt_shape_of(path: Path) -> tuple[int, int] | None:
    """The ``kpt_shape`` of one dataset YAML (``data.yaml``, or ultralytics' ``coco8-pose.yaml``
    kept beside the dataset), or ``None`` when it declares none.

    Raises:
        InputError: the file is not YAML, or its ``kpt_shape`` is not ``[K, 2]`` or ``[K, 3]``.
    """
    import yaml

    from labelgate.io.bounded import yaml_problem
    from labelgate.io.files import load_yaml, read_small_text

    try:
        data = load_yaml(read_small_text(path, path.name))
    except yaml.YAMLError as exc:
        raise InputError(f"not valid YAML: {yaml_problem(exc)}", path=str(path)) from None
    shape = data.get("kpt_shape") if isinstance(data, dict) else None
    if shape is None:
        return None
    if (
        not isinstance(shape, list)
        or len(shape) != 2
        or not all(type(v) is int for v in shape)
        or shape[0] < 1
        or shape[1] not in (2, 3)
    ):
        raise InputError(
            "kpt_shape must be [K, 2] or [K, 3]: K keypoints of x, y (and a visibility)",
            path=str(path),
        )
    return shape[0], shape[1]


def row_fault(
    facts: AnnotationFacts,
    n: int,
    kpt: tuple[int, int] | None,
    example: Example,
    task: str | None,
) -> str | None:
    """``None`` where a row of ``n`` fields is a box, a segment or (with ``kpt``) a pose row;
    else the code it is counted under (LG031 for a short line, LG044 a segment's odd count,
    LG046 a pose row of another width): no row of a class."""
    if kpt is not None:
        width = 5 + kpt[0] * kpt[1]
        if n == width:
            return None
        if n == 5:
            hit(
                facts,
                "LG046",
                example,
                task == "keypoints",
                message=f"box rows in a pose dataset without the {kpt[0]} keypoints of kpt_shape",
                fix=f"give every row its {kpt[0]} keypoints (x y{' v' if kpt[1] == 3 else ''}, "
                "zeros where not labelled): ultralytics drops the image as corrupt",
            )
            return None
        hit(
            facts,
            "LG046",
            example,
            task == "keypoints",
            message=f"pose rows of another length than 5 + {kpt[0]} x {kpt[1]} = {width} values "
            f"(kpt_shape {list(kpt)})",
            fix="write class, box and every keypoint of kpt_shape on each row, or correct "
            "kpt_shape: ultralytics drops the image as corrupt",
        )
        return "LG046"
    if n == 5 or (n >= 7 and n % 2 == 1):
        return None
    if n >= 7:
        hit(
            facts,
            "LG044",
            example,
            task == "instance",
            message="YOLO segment rows with an odd count of coordinates",
            fix="write the polygon as x y pairs: ultralytics' reshape(-1, 2) raises and the "
            "image is dropped as corrupt",
        )
        return "LG044"
    facts.hit(
        "LG031",
        example,
        message="YOLO lines that are neither 'class cx cy w h' (5 fields) nor a "
        "polygon 'class x1 y1 x2 y2 x3 y3 ...'",
        fix="rewrite these lines; a loader splitting on spaces misreads them",
    )
    return "LG031"


def check_pose(
    facts: AnnotationFacts,
    values: list[float],
    kpt: tuple[int, int],
    example: Example,
    task: str | None,
) -> None:
    """Count a pose row's keypoints: not finite or a visibility outside {0, 1, 2} (LG046), a
    labelled keypoint outside [0, 1] beyond the printed precision (LG028)."""
    points = values[4:]
    dims = kpt[1]
    strict = task == "keypoints"
    if not finite(points):
        non_finite(facts, example, strict)
        return
    labelled: list[Stray] = []
    for k in range(0, len(points), dims):
        x, y = points[k], points[k + 1]
        if dims == 3:
            v = points[k + 2]
            if v not in (0.0, 1.0, 2.0):
                bad_visibility(
                    facts,
                    example,
                    strict,
                    fix="write visibility 0 (not labelled), 1 (hidden) or 2 (visible)",
                )
            if v > 0:
                labelled.append((k // dims, x, y))
        elif x >= 0 and y >= 0:  # dims 2: ultralytics marks negative coordinates unlabelled
            labelled.append((k // dims, x, y))
    example = drawn(
        example, "keypoints", [(x, y) for _, x, y in labelled], (1.0, 1.0), relative=True
    )
    t = PRINTED_TOLERANCE
    if any(not (-t <= c <= 1 + t) for _, x, y in labelled for c in (x, y)):
        facts.hit(
            "LG028",
            example,
            message="keypoints outside [0, 1]",
            fix="normalise keypoints by the image's width and height: ultralytics drops an "
            "image with a coordinate past 1.01",
        )
    cx, cy, w, h = values[:4]
    box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
    strays = outside_box(labelled, box, t)  # an edge written cx - w/2 from printed values
    check_keypoints_in_box(facts, strays, (1.0, 1.0), example, strict, tolerance=t)


def check_mixed(
    facts: AnnotationFacts,
    widths: set[int],
    kpt: tuple[int, int] | None,
    example: Example,
    task: str | None,
) -> None:
    """Count a label file (``example`` names it) mixing box rows and segment rows (LG044):
    ultralytics asserts "labels mix segment and detection rows" and drops the image as corrupt
    (``ultralytics/data/utils.py`` line 467), whatever the task but pose."""
    if kpt is None and 5 in widths and any(n > 6 for n in widths):
        hit(
            facts,
            "LG044",
            example,
            task == "instance",
            message="label files mixing box rows and segment rows",
            fix="write every object of an image in one form: ultralytics drops the image as "
            "corrupt ('labels mix segment and detection rows')",
        )
