"""The oracle of ``--framework torchvision``: random detection targets (boxes with degenerate,
NaN and infinite coordinates, labels below 0 and at or past num_classes) through the checks
torchvision's detection models run on them, reproduced from torchvision 0.23.0's source (its wheel
does not load with the CPU torch here) and run with CPU torch:

- ``GeneralizedRCNN.forward`` (torchvision/models/detection/generalized_rcnn.py:101-111):
  ``degenerate_boxes = boxes[:, 2:] <= boxes[:, :2]``; any such box fails
  ``torch._assert(False, "All bounding boxes should have positive height and width. ...")``.
- ``fastrcnn_loss`` (torchvision/models/detection/roi_heads.py:35):
  ``F.cross_entropy(class_logits, labels)`` over ``num_classes`` logits, the labels of the ground
  truth boxes each proposal matched (roi_heads.py:591; the ground-truth boxes are proposals
  themselves, so every box's label reaches the loss): a label outside ``[0, num_classes)`` other
  than -100 raises IndexError on the CPU (a device-side assert on CUDA).

labelgate, as ``--framework torchvision``, must name exactly the annotations they reject: LG027 the
boxes of the first check, LG004/LG005 the labels of the second. What torchvision accepts but trains
wrongly is checked apart: NaN coordinates pass its comparison and make the loss NaN (LG029), and a
label 0 is trained as background (LG032)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate import Contract
from labelgate.run.validation import run

torch = pytest.importorskip("torch")
F = torch.nn.functional

# YOLO rows (class cx cy w h): a grid of values exact in float32 and float64, and non-finite ones
CENTRE = st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, math.nan, math.inf, -math.inf])
SIZE = st.sampled_from([-0.5, -0.25, 0.0, 0.25, 0.5, math.nan, math.inf])
BOX = st.tuples(CENTRE, CENTRE, SIZE, SIZE)


def xyxy(cx: float, cy: float, w: float, h: float) -> list[float]:
    """A YOLO box as the corners a loader gives torchvision (normalised: the image's size, a
    positive factor, changes no comparison)."""
    return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]


def torchvision_rejects_box(box: tuple[float, float, float, float]) -> bool:
    """generalized_rcnn.py:101-104 on the box: ``boxes[:, 2:] <= boxes[:, :2]``."""
    boxes = torch.tensor([xyxy(*box)], dtype=torch.float32)
    return bool((boxes[:, 2:] <= boxes[:, :2]).any())


def torchvision_rejects_label(label: int, num_classes: int) -> bool:
    """roi_heads.py:35: F.cross_entropy over num_classes logits, run on the CPU."""
    try:
        F.cross_entropy(torch.zeros(1, num_classes), torch.tensor([label]))
    except IndexError:
        return True
    return False


Target = tuple[int, tuple[float, float, float, float]]


@st.composite
def datasets(draw: st.DrawFn) -> tuple[int, list[list[Target]]]:
    """num_classes (the background 0 included) and images of (label, box) targets."""
    k = draw(st.integers(2, 5))
    target = st.tuples(st.integers(-2, k + 2), BOX)
    images = draw(st.lists(st.lists(target, max_size=4), min_size=1, max_size=3))
    return k, images


def _yolo(folder: Path, k: int, images: list[list[Target]]) -> dict[str, Target]:
    """A YOLO folder whose class list reserves 0 for the background (so the file's classes are
    torchvision's labels as they are); annotation id -> its target."""
    (folder / "labels").mkdir()
    (folder / "classes.txt").write_text(
        "__background__\n" + "".join(f"c{i}\n" for i in range(1, k))
    )
    named: dict[str, Target] = {}
    for n, targets in enumerate(images):
        lines = [f"{label} {' '.join(repr(v) for v in box)}" for label, box in targets]
        (folder / "labels" / f"{n}.txt").write_text("".join(f"{line}\n" for line in lines))
        for line, target in enumerate(targets, 1):
            named[f"labels/{n}.txt:{line}"] = target
    return named


def flagged(report: Any, *codes: str) -> set[str]:
    return {
        str(e.id)
        for f in report.findings
        if f.code in codes and f.severity == "error"
        for e in f.examples
    }


@pytest.mark.slow
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(datasets())
def test_labelgate_flags_exactly_what_torchvision_rejects(
    data: tuple[int, list[list[Target]]],
) -> None:
    k, images = data
    with tempfile.TemporaryDirectory() as folder:
        named = _yolo(Path(folder), k, images)
        contract = Contract(framework="torchvision")
        report = run([folder], contract, max_examples=0).report
    assert report.contract["resolved"]["num_classes"]["value"] == k
    boxes = {i for i, (_, box) in named.items() if torchvision_rejects_box(box)}
    # the box assert runs in forward, before the loss sees a label: a row whose box is rejected
    # fails there first, and is named by that fault alone (a rejected row, its label unread)
    labels = {
        i
        for i, (label, _) in named.items()
        if i not in boxes and torchvision_rejects_label(label, k)
    }
    assert flagged(report, "LG027") == boxes
    assert flagged(report, "LG004", "LG005") == labels
    # accepted by torchvision, trained wrongly: NaN loss, or objects taught as background
    nonfinite = {i for i, (_, box) in named.items() if not all(map(math.isfinite, box))}
    assert flagged(report, "LG029") == nonfinite
    assert flagged(report, "LG032") == {i for i, (label, _) in named.items() if label == 0}
