"""COCO instance masks and keypoints: each planted fault found and named by annotation id, its
severity set by --task, clean files clean (generated and real)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, ClassVar

import pytest

from labelgate import Contract
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.report import Example, Finding, Report
from labelgate.readers.common.instances import check_segmentation, finite, polygon_area, rle_counts
from labelgate.run.validation import run

from .conftest import run_cli

SQUARE = [10.0, 10.0, 30.0, 10.0, 30.0, 30.0, 10.0, 30.0]  # area 400, inside 100 x 80


def validate(path: Path, task: str | None = None) -> Report:
    contract = Contract(task=task, background_index=0 if task else None)
    return run([str(path)], contract, max_examples=50).report


def by_code(report: Report) -> dict[str, Finding]:
    return {f.code: f for f in report.findings}


def ids(finding: Finding) -> list[Any]:
    return [e.id for e in finding.examples]


def ann(ident: int, **fields: Any) -> dict[str, Any]:
    base = {"id": ident, "image_id": 1, "category_id": 1, "bbox": [10, 10, 20, 20], "iscrowd": 0}
    return base | fields


def write(
    path: Path, anns: list[dict[str, Any]], *, cats: list[dict[str, Any]] | None = None
) -> Path:
    images = [{"id": 1, "file_name": "1.jpg", "width": 100, "height": 80}]
    cats = cats or [{"id": 1, "name": "a"}]
    # categories after the annotations, as COCO's own files order them
    path.write_text(json.dumps({"images": images, "annotations": anns, "categories": cats}))
    return path


class TestPolygons:
    def test_clean_polygons_and_rles_are_clean(self, tmp_path: Path) -> None:
        rle = {"size": [80, 100], "counts": [10, 30, 8000 - 40]}
        anns = [
            ann(1, segmentation=[SQUARE], area=400.0),
            ann(2, segmentation=[SQUARE, [50, 50, 60, 50, 60, 60]], area=450.0),
            ann(3, segmentation=rle, area=30, iscrowd=1),
            ann(4, segmentation=[], area=0),  # no mask: a keypoints-only export
        ]
        found = by_code(validate(write(tmp_path / "a.json", anns), "instance"))
        assert not {"LG028", "LG044", "LG045"} & set(found)

    def test_each_planted_polygon_fault_is_named(self, tmp_path: Path) -> None:
        anns = [
            ann(1, segmentation=[SQUARE[:7]]),  # odd count
            ann(2, segmentation=[[10, 10, 30, 10]]),  # 2 points (pycocotools: a box)
            ann(3, segmentation=[[10, 10, "30", 10, 30, 30]]),  # a string
            ann(4, segmentation=[[10, 10, 130, 10, 130, 30]]),  # past the 100-wide image
            ann(5, segmentation=[SQUARE], area=4000.0),  # area 10 x the polygon's
            ann(6, segmentation=[SQUARE], area=400.0, iscrowd=1),  # crowd as a polygon
            ann(7, segmentation="x"),
            ann(8, segmentation=[SQUARE], area=400.0),  # clean
        ]
        found = by_code(validate(write(tmp_path / "a.json", anns)))
        assert ids(found["LG044"]) == [1, 2, 3, 7]
        assert found["LG044"].severity == "warning"  # boxes train without the masks
        assert ids(found["LG028"]) == [4]
        assert ids(found["LG045"]) == [5, 6]

    def test_task_instance_makes_malformed_masks_errors(self, tmp_path: Path) -> None:
        path = write(tmp_path / "a.json", [ann(1, segmentation=[SQUARE[:4]])])
        assert by_code(validate(path, "instance"))["LG044"].severity == "error"
        assert by_code(validate(path, "keypoints"))["LG044"].severity == "warning"


class TestRle:
    def test_each_planted_rle_fault_is_named(self, tmp_path: Path) -> None:
        anns = [
            ann(1, iscrowd=1, segmentation={"size": [100, 80], "counts": [10, 30, 7960]}),
            ann(2, iscrowd=1, segmentation={"size": [80, 100], "counts": [10, 30, 7900]}),
            ann(3, iscrowd=1, segmentation={"size": [80, 100], "counts": [10, 30, 8000]}),
            ann(4, iscrowd=1, segmentation={"size": [80, 100], "counts": "0@"}),
            ann(5, iscrowd=1, segmentation={"size": [80, 100], "counts": []}),
            ann(6, iscrowd=1, segmentation={"size": [80], "counts": [8000]}),
            ann(7, iscrowd=1, segmentation={"size": [100000, 100000], "counts": [10**10]}),
            ann(8, iscrowd=0, segmentation={"size": [80, 100], "counts": [0, 8000]}),
            ann(9, iscrowd=1, segmentation={"size": [80, 100], "counts": [0, 8000]}, area=10),
        ]
        found = by_code(validate(write(tmp_path / "a.json", anns), "instance"))
        assert ids(found["LG044"]) == [1, 2, 3, 4, 5, 6, 7]
        assert found["LG044"].severity == "error"
        assert ids(found["LG045"]) == [8, 9]

    def test_compressed_counts_decode_as_pycocotools_does(self) -> None:
        np = pytest.importorskip("numpy")
        mask = pytest.importorskip("pycocotools.mask")
        rng = np.random.default_rng(0)
        for _ in range(50):
            pixels = rng.random((7, 9)) < rng.random()
            rle = mask.encode(np.asfortranarray(pixels.astype("uint8")))
            runs = rle_counts(rle["counts"].decode())
            assert runs is not None and sum(runs) == 63
            assert sum(runs[1::2]) == int(mask.area(rle)) == int(pixels.sum())

    def test_polygon_area_is_the_shoelace(self) -> None:
        assert polygon_area(SQUARE) == (400.0, 80.0)

    def test_an_integer_past_a_float_is_not_finite(self) -> None:
        """ijson refuses integers past int64; a caller of the checks may hold one: no crash."""
        assert not finite([1.0, 10**400]) and finite([1, 2.5]) and not finite([math.nan])
        facts = AnnotationFacts(format="coco", why="test")
        item = {"segmentation": [[10**400, 0, 30, 0, 30, 30]], "area": 10**400}
        check_segmentation(facts, item, Example(row=0, id=1), False)
        rle = {"segmentation": {"size": [2, 2], "counts": [10**400]}, "iscrowd": 1}
        check_segmentation(facts, rle, Example(row=1, id=2), False)
        assert [e.id for e in facts.hits["LG044"].examples] == [1, 2]


class TestKeypoints:
    CATS: ClassVar[list[dict[str, Any]]] = [
        {"id": 1, "name": "person", "keypoints": ["a", "b"], "skeleton": [[1, 2]]}
    ]

    def test_clean_keypoints_are_clean(self, tmp_path: Path) -> None:
        anns = [ann(1, keypoints=[20, 20, 2, 0, 0, 0], num_keypoints=1)]
        found = by_code(validate(write(tmp_path / "a.json", anns, cats=self.CATS), "keypoints"))
        assert not {"LG028", "LG046", "LG047"} & set(found)

    def test_each_planted_keypoint_fault_is_named(self, tmp_path: Path) -> None:
        anns = [
            ann(1, keypoints=[20, 20, 2], num_keypoints=1),  # one triple for two names
            ann(2, keypoints=[20, 20, 2, 30, 30], num_keypoints=2),  # not a multiple of 3
            ann(3, keypoints=[20, 20, 3, 0, 0, 0], num_keypoints=1),  # visibility 3
            ann(4, keypoints=[20, 20, 2, 30, 30, 1], num_keypoints=1),  # two are labelled
            ann(5, keypoints=[20, 20, 2, 0, 0, 0], num_keypoints=1, iscrowd=1),
            ann(6, keypoints=[200, 20, 2, 0, 0, 0], num_keypoints=1),  # past the image
            ann(7, keypoints=[20, 20, 2, 0, 0, 0], num_keypoints=1),  # clean
        ]
        cats = [
            self.CATS[0],
            {"id": 2, "name": "b", "keypoints": ["a"], "skeleton": [[0, 1]]},  # 0-based
        ]
        found = by_code(validate(write(tmp_path / "a.json", anns, cats=cats), "keypoints"))
        assert ids(found["LG046"]) == [2, 3, "category 2", 1]  # 1: once its category is read
        assert found["LG046"].severity == "error"
        assert ids(found["LG047"]) == [4, 5]
        assert ids(found["LG028"]) == [6]
        without = by_code(validate(write(tmp_path / "a.json", anns, cats=cats)))
        assert without["LG046"].severity == "warning"

    def test_cli_accepts_the_tasks(self, tmp_path: Path) -> None:
        path = write(tmp_path / "a.json", [ann(1, segmentation=[SQUARE[:5]])])
        for task in ("instance", "keypoints"):
            result = run_cli("validate", str(path), "--task", task, "--background", "0")
            assert result.returncode == (1 if task == "instance" else 0), result.stderr
            assert "LG044" in result.stdout


REAL = {
    "datumaro_instances_val.json": set(),
    "labelme2coco_voc2011_annotations.json": set(),
    # its MANIFEST line records the 0-based skeleton [[0, 1], [1, 2]] of both categories
    "datumaro_person_keypoints_train.json": {"LG046"},
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_coco_files_give_no_false_alarm(name: str, shared_real_world: Path) -> None:
    path = shared_real_world / "annotations" / "coco" / name
    for task in (None, "instance", "keypoints"):
        found = set(by_code(validate(path, task))) & {"LG028", "LG044", "LG045", "LG046", "LG047"}
        assert found == REAL[name], (name, task)


class TestOneRecordOneCount:
    def test_a_box_and_its_polygon_past_the_image_are_one_row_of_lg028(
        self, tmp_path: Path
    ) -> None:
        past = [90.0, 10.0, 130.0, 10.0, 90.0, 30.0]  # x to 130 in an image 100 wide
        anns = [
            ann(1, bbox=[90, 10, 40, 20], segmentation=[past], area=400.0),
            ann(2, bbox=[10, 10, 20, 20], segmentation=[past], area=400.0),  # polygon only
        ]
        found = by_code(validate(write(tmp_path / "a.json", anns)))["LG028"]
        assert found.count == 2  # annotation 1 once, although its box and polygon both pass
        assert sorted(ids(found)) == [1, 2]
        assert "boxes" in found.message and "polygons" in found.message


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1.5, 2, 3.25], True),
        ([1e308, 1e308], True),  # the sum overflows; every value is finite
        ([1.0, math.nan], False),
        ([math.inf, -math.inf], False),
        ([1, 10**400], False),  # past a float's range
        ([], True),
    ],
)
def test_finite_takes_every_value_as_a_float(values: list[Any], expected: bool) -> None:
    assert finite(values) is expected
