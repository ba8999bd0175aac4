"""The box rules every detection reader applies: torchvision's own test of a box's size, finite
coordinates, boxes inside their image, and objects labelled with the background index."""

from __future__ import annotations

import math

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example

__all__ = ["check_background", "check_box"]


def check_box(
    facts: AnnotationFacts,
    box: tuple[float, float, float, float],
    size: tuple[float, float] | None,
    example: Example,
    *,
    normalised: bool = False,
) -> None:
    """Count a box (x0, y0, x1, y1) that torchvision's detection models refuse or mislearn:
    without area by torchvision's own comparison (LG027: exactly the boxes it raises on), not
    finite (LG029), outside its image or, ``normalised``, outside [0, 1] (LG028)."""
    x0, y0, x1, y1 = box
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
    w, h = (1.0, 1.0) if normalised else (size if size is not None else (math.inf, math.inf))
    if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
        where = "outside [0, 1]" if normalised else "past their image's edges"
        facts.hit(
            "LG028",
            example,
            message=f"boxes reaching {where}",
            fix="clip them to the image, or check the coordinate convention (pixels, normalised, "
            "xywh or xyxy) of the tool that wrote them",
        )


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
