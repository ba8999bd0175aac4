"""YOLO segment and pose rows: each planted fault named by file:line, its severity set by --task,
clean folders clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from labelgate import Contract
from labelgate.core.report import Finding, Report
from labelgate.run.validation import run

from .conftest import run_cli

NAMES = "names: [person, dog]\nnc: 2\n"


def folder(root: Path, labels: str, yaml: str = NAMES) -> Path:
    root.mkdir()
    (root / "data.yaml").write_text(yaml)
    (root / "train" / "labels").mkdir(parents=True)
    (root / "train" / "labels" / "a.txt").write_text(labels)
    return root


def validate(root: Path, task: str | None = None) -> Report:
    return run([str(root)], Contract(task=task), max_examples=50).report


def by_code(report: Report) -> dict[str, Finding]:
    return {f.code: f for f in report.findings}


def lines(finding: Finding) -> list[int]:
    return [int(str(e.id).rsplit(":", 1)[1]) for e in finding.examples]


class TestSegments:
    def test_clean_segments_are_clean(self, tmp_path: Path) -> None:
        root = folder(tmp_path / "y", "0 0.1 0.1 0.4 0.1 0.4 0.4\n1 0 0 1 0 1 1 0 1\n")
        assert not {"LG028", "LG031", "LG044"} & set(by_code(validate(root, "instance")))

    def test_each_planted_segment_fault_is_named(self, tmp_path: Path) -> None:
        root = folder(
            tmp_path / "y",
            "0 0.1 0.1 0.4 0.1 0.4 0.4\n"  # clean
            "0 0.1 0.1 0.4 0.1 0.4 0.4 0.5\n"  # an odd count of coordinates
            "0 0.1 0.1 0.4\n"  # 3 values: no box, no polygon
            "1 0.1 0.1 1.4 0.1 0.4 0.4\n",  # past the image
        )
        found = by_code(validate(root, "instance"))
        assert lines(found["LG044"]) == [2] and found["LG044"].severity == "error"
        assert lines(found["LG031"]) == [3]
        assert lines(found["LG028"]) == [4]
        assert by_code(validate(root))["LG044"].severity == "warning"

    def test_a_file_mixing_boxes_and_segments_is_named(self, tmp_path: Path) -> None:
        root = folder(tmp_path / "y", "0 0.5 0.5 0.2 0.2\n0 0.1 0.1 0.4 0.1 0.4 0.4\n")
        found = by_code(validate(root, "instance"))
        assert [e.id for e in found["LG044"].examples] == ["train/labels/a.txt"]


POSE = NAMES + "kpt_shape: [2, 3]\n"


class TestPose:
    def test_clean_pose_rows_are_clean(self, tmp_path: Path) -> None:
        root = folder(
            tmp_path / "y",
            "0 0.5 0.5 0.2 0.2 0.45 0.45 2 0 0 0\n1 0.5 0.5 0.2 0.2 0.1 0.2 1 0.3 0.3 2\n",
            POSE,
        )
        report = validate(root, "keypoints")
        assert not {"LG028", "LG031", "LG044", "LG046"} & set(by_code(report))
        assert report.counts["rows"] == 2

    def test_each_planted_pose_fault_is_named(self, tmp_path: Path) -> None:
        root = folder(
            tmp_path / "y",
            "0 0.5 0.5 0.2 0.2 0.45 0.45 2 0 0 0\n"  # clean
            "0 0.5 0.5 0.2 0.2 0.45 0.45 2\n"  # one keypoint of two
            "0 0.5 0.5 0.2 0.2\n"  # a box without keypoints
            "0 0.5 0.5 0.2 0.2 0.45 0.45 3 0 0 0\n"  # visibility 3
            "0 0.5 0.5 0.2 0.2 1.45 0.45 2 0 0 0\n"  # a visible keypoint past 1
            "0 0.5 0.5 0.2 0.2 1.45 0.45 0 0 0 0\n",  # an unlabelled one: not judged
            POSE,
        )
        found = by_code(validate(root, "keypoints"))
        assert lines(found["LG046"]) == [2, 3, 4] and found["LG046"].severity == "error"
        assert lines(found["LG028"]) == [5]
        assert by_code(validate(root))["LG046"].severity == "warning"

    def test_a_kpt_shape_of_two_dims_marks_unlabelled_by_negatives(self, tmp_path: Path) -> None:
        root = folder(
            tmp_path / "y", "0 0.5 0.5 0.2 0.2 0.4 0.4 -1 -1\n", NAMES + "kpt_shape: [2, 2]\n"
        )
        assert not {"LG028", "LG046"} & set(by_code(validate(root, "keypoints")))

    def test_a_bad_kpt_shape_is_a_usage_error(self, tmp_path: Path) -> None:
        root = folder(tmp_path / "y", "0 0.5 0.5 0.2 0.2\n", NAMES + "kpt_shape: [17, 4]\n")
        result = run_cli("validate", str(root))
        assert result.returncode == 2
        assert "kpt_shape must be [K, 2] or [K, 3]" in result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "name", ["datumaro_roboflow_yolo", "datumaro_darknet_strict", "labelstudio_import_yolo"]
)
def test_real_yolo_folders_give_no_false_alarm(name: str, shared_real_world: Path) -> None:
    root = shared_real_world / "annotations" / "yolo" / name
    for task in (None, "instance", "keypoints"):
        found = set(by_code(validate(root, task))) & {"LG028", "LG031", "LG044", "LG046"}
        assert not found, (name, task)
