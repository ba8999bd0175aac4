"""Detection targets against torchvision's own checks.

torchvision 0.28.0 (the release for torch 2.13) installs here but its C++ operators do not load
against the CPU build of torch ("operator torchvision::nms does not exist"), so its models cannot
run. The oracle is therefore the exact target check of
``torchvision/models/detection/generalized_rcnn.py`` (0.28.0, ``GeneralizedRCNN.forward``), copied
below and run on torch tensors: labelgate's LG027 must flag exactly the boxes it raises on.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example
from labelgate.readers.common.boxes import check_box

torch = pytest.importorskip("torch")


def torchvision_raises(boxes: list[list[float]]) -> bool:
    """GeneralizedRCNN.forward's target checks (torchvision 0.28.0), verbatim but for the
    ``torch._assert(False, ...)`` calls, which become the return value."""
    targets = [{"boxes": torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4)}]
    for target in targets:
        boxes_t = target["boxes"]
        if not (len(boxes_t.shape) == 2 and boxes_t.shape[-1] == 4):
            return True
    for target in targets:
        boxes_t = target["boxes"]
        degenerate_boxes = boxes_t[:, 2:] <= boxes_t[:, :2]
        if degenerate_boxes.any():
            return True
    return False


coordinate = st.one_of(
    st.floats(-50, 700, allow_nan=False, width=32),
    st.sampled_from([0.0, 10.0, math.nan, math.inf, -math.inf]),
)


@settings(max_examples=300, deadline=None)
@given(box=st.tuples(coordinate, coordinate, coordinate, coordinate))
def test_lg027_is_exactly_where_torchvision_raises(
    box: tuple[float, float, float, float],
) -> None:
    facts = AnnotationFacts(format="coco", why="test")
    check_box(facts, box, (640.0, 480.0), Example(row=0, id=1))
    assert ("LG027" in facts.hits) == torchvision_raises([list(box)])
    finite = all(math.isfinite(v) for v in box)
    assert ("LG029" in facts.hits) == (not finite)


def test_a_nan_box_passes_torchvision_and_is_still_an_error() -> None:
    """torchvision's comparison lets NaN through (its loss is then NaN): LG029 catches it."""
    assert not torchvision_raises([[1.0, 1.0, math.nan, 5.0]])
    facts = AnnotationFacts(format="coco", why="test")
    check_box(facts, (1.0, 1.0, math.nan, 5.0), (10.0, 10.0), Example(row=0, id=1))
    assert set(facts.hits) == {"LG029"}
