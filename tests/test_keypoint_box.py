"""LG050: a labelled keypoint inside its image but outside its own box, which torchvision's and
detectron2's keypoint heads leave out of the loss. The box is closed, as torchvision's
``keypoints_to_heatmap`` compares; v = 0 is never judged, a keypoint past its image stays LG028's,
a box without width judges none. Info by default (clean COCO holds such keypoints), a warning
with ``--task keypoints`` or a framework that drops them, never an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from labelgate import Contract
from labelgate.core.report import Finding, Report
from labelgate.readers.common.keypoints import outside_box
from labelgate.render.html import render_html
from labelgate.run.validation import run
from tests.conftest import run_cli
from tests.test_pictures import BLUE, _png, _sections

PERSON = [{"id": 1, "name": "person", "keypoints": ["head", "foot"], "skeleton": [[1, 2]]}]
BOX = [10, 20, 30, 40]  # x 10..40, y 20..60, in a 100 x 80 image


def coco(path: Path, keypoints: list[list[float]], *, bbox: list[float] = BOX) -> Path:
    """One annotation a keypoint list, ids 1, 2, ...; every box ``bbox``."""
    anns = [
        {
            "id": n + 1,
            "image_id": 1,
            "category_id": 1,
            "bbox": bbox,
            "iscrowd": 0,
            "keypoints": k,
            "num_keypoints": sum(1 for v in k[2::3] if v > 0),
        }
        for n, k in enumerate(keypoints)
    ]
    images = [{"id": 1, "file_name": "a.png", "width": 100, "height": 80}]
    path.write_text(json.dumps({"images": images, "annotations": anns, "categories": PERSON}))
    return path


def validate(path: Path, **contract: Any) -> Report:
    return run([str(path)], Contract(**contract), max_examples=50).report


def lg050(report: Report) -> Finding | None:
    found = [f for f in report.findings if f.code == "LG050"]
    return found[0] if found else None


class TestTheBox:
    """``outside_box`` against torchvision's comparison: a closed box."""

    def test_the_edges_are_inside_and_just_past_them_is_out(self) -> None:
        box = (10.0, 20.0, 40.0, 60.0)
        edges = [(0, 10.0, 20.0), (1, 40.0, 60.0), (2, 10.0, 60.0), (3, 40.0, 20.0)]
        assert outside_box(edges, box) == []
        past = [(0, 9.99, 30.0), (1, 40.01, 30.0), (2, 20.0, 19.99), (3, 20.0, 60.01)]
        assert outside_box(past, box) == past

    def test_a_box_without_width_or_height_judges_none(self) -> None:
        far = [(0, 90.0, 70.0)]
        assert outside_box(far, (10.0, 20.0, 10.0, 60.0)) == []
        assert outside_box(far, (10.0, 20.0, 40.0, 20.0)) == []
        assert outside_box(far, (float("nan"), 20.0, 40.0, 60.0)) == []

    def test_a_tolerance_widens_it(self) -> None:
        assert outside_box([(0, 0.6000005, 0.5)], (0.4, 0.4, 0.6, 0.6), 1e-6) == []


class TestCoco:
    def test_a_keypoint_outside_its_box_is_named_by_annotation_and_index(
        self, tmp_path: Path
    ) -> None:
        path = coco(tmp_path / "a.json", [[20, 30, 2, 25, 50, 2], [20, 30, 2, 45, 50, 2]])
        report = validate(path)
        found = lg050(report)
        assert found is not None
        assert (found.severity, found.count, found.unit) == ("info", 1, "keypoints")
        (example,) = found.examples
        assert (example.id, example.position, example.row) == (2, 1, 1)
        assert example.drawing is not None and example.drawing.kind == "keypoints"
        assert example.drawing.points == ((20.0, 30.0), (45.0, 50.0))
        assert report.counts == {"rows": 2, "usable": 2, "ignored": 0, "rejected": 0}

    def test_its_neighbours_are_not_flagged(self, tmp_path: Path) -> None:
        keypoints = [
            [10, 20, 2, 40, 60, 1],  # on the box's corners: inside, as torchvision keeps them
            [20, 30, 2, 90, 70, 0],  # outside but not labelled (v = 0)
            [20, 30, 2, 150, 50, 2],  # past the image: LG028's
        ]
        found = {f.code: f for f in validate(coco(tmp_path / "a.json", keypoints)).findings}
        assert "LG050" not in found
        assert [e.id for e in found["LG028"].examples] == [3]

    def test_a_box_of_zero_width_is_lg027s(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [[20, 30, 2, 45, 50, 2]], bbox=[10, 20, 0, 40])
        found = {f.code for f in validate(path).findings}
        assert "LG027" in found and "LG050" not in found

    def test_several_keypoints_count_each_and_name_the_first(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [[5, 30, 2, 45, 50, 1], [0, 0, 0, 50, 10, 2]])
        found = lg050(validate(path))
        assert found is not None and found.count == 3
        assert [(e.id, e.position) for e in found.examples] == [(1, 0), (2, 1)]

    @pytest.mark.parametrize(
        ("contract", "severity"),
        [
            ({}, "info"),
            ({"task": "keypoints", "background_index": 0}, "warning"),
            ({"framework": "torchvision"}, "warning"),
            ({"framework": "detectron2"}, "warning"),
            ({"framework": "ultralytics"}, "info"),
        ],
    )
    def test_its_severity(self, tmp_path: Path, contract: dict[str, Any], severity: str) -> None:
        found = lg050(validate(coco(tmp_path / "a.json", [[20, 30, 2, 45, 50, 2]]), **contract))
        assert found is not None and found.severity == severity
        if "framework" in contract and severity == "warning":
            assert "keypoint head leaves them out of the loss" in found.message

    def test_the_cli_passes_and_says_which_keypoint(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [[20, 30, 2, 45, 50, 2]])
        for task in ((), ("--task", "keypoints")):
            done = run_cli("validate", str(path), *task)
            assert done.returncode == 0, done.stderr
            assert "row 0, keypoint 1, id 1," in done.stdout
        done = run_cli("validate", str(path), "--format", "json")
        (example,) = next(f for f in json.loads(done.stdout)["findings"] if f["code"] == "LG050")[
            "examples"
        ]
        assert (example["id"], example["position"]) == (1, 1)

    def test_the_html_report_draws_it(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [[20, 30, 2, 45, 50, 2]])
        _png(tmp_path / "images" / "a.png", BLUE, (100, 80))
        report = validate(path, images=str(tmp_path / "images"))
        (picture,) = _sections(render_html(report))["LG050"]
        assert picture.startswith(b"\x89PNG")

    def test_a_file_without_keypoints_outside_their_boxes_gives_none(self, tmp_path: Path) -> None:
        keypoints = [[10 + n, 20 + n, 2, 40 - n, 60 - n, 2] for n in range(10)]
        keypoints.append([0, 0, 0, 0, 0, 0])
        report = validate(coco(tmp_path / "a.json", keypoints))
        assert lg050(report) is None
        assert report.findings == () or all(f.severity != "error" for f in report.findings)

    def test_the_bundled_sample(self) -> None:
        sample = Path(__file__).resolve().parent.parent / "data_samples" / "formats"
        found = lg050(validate(sample / "coco_keypoints_bad.json"))
        assert found is not None and [(e.id, e.position) for e in found.examples] == [(302, 1)]


def test_yolo_pose_rows_are_judged_against_their_own_box(tmp_path: Path) -> None:
    root = tmp_path / "y"
    (root / "train" / "labels").mkdir(parents=True)
    (root / "data.yaml").write_text("names: [person]\nnc: 1\nkpt_shape: [2, 3]\n")
    (root / "train" / "labels" / "a.txt").write_text(
        "0 0.5 0.5 0.2 0.2 0.45 0.45 2 0.6 0.6 2\n"  # the second on the box's corner
        "0 0.5 0.5 0.2 0.2 0.45 0.45 2 0.7 0.5 2\n"  # the second past its right edge
        "0 0.5 0.5 0.2 0.2 0.45 0.45 2 0.7 0.5 0\n"  # the same, unlabelled
    )
    found = lg050(validate(root))
    assert found is not None and found.count == 1 and found.severity == "info"
    (example,) = found.examples
    assert (str(example.id).rsplit(":", 1)[1], example.position) == ("2", 1)
    assert example.drawing is not None and example.drawing.relative


def test_the_real_datumaro_file_is_info(shared_real_world: Path) -> None:
    """Its one annotation's two labelled keypoints, (0, 2) and (4, 1), lie outside its box
    [2, 2, 3, 1] and inside its 10 x 5 image: counted, never more than info."""
    path = shared_real_world / "annotations/coco/datumaro_person_keypoints_train.json"
    found = lg050(validate(path))
    assert found is not None and (found.count, found.severity) == (2, "info")
    assert [(e.id, e.position) for e in found.examples] == [(1, 1)]
