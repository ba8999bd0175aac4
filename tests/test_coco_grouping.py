"""A COCO category that only groups the others (Roboflow's first category: the supercategory of
every class, used by no annotation) is a placeholder of the class map, at its index under every
reading: no class that never occurs (LG012), K unchanged, said once in a note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from labelgate import Contract
from labelgate.core.report import Finding, Report
from labelgate.run.validation import run

CHESS = "annotations/coco/chess_pieces_v23_valid__annotations.coco.json"


def coco(path: Path, categories: list[tuple[int, str, str | None]], used: list[int]) -> Path:
    """A COCO file: ``categories`` as (id, name, supercategory), one box of each id in ``used``."""
    path.write_text(
        json.dumps(
            {
                "images": [{"id": 1, "file_name": "1.jpg", "width": 100, "height": 80}],
                "annotations": [
                    {"id": n, "image_id": 1, "category_id": c, "bbox": [5, 5, 20, 20]}
                    for n, c in enumerate(used, 1)
                ],
                "categories": [
                    {"id": c, "name": name} | ({} if sup is None else {"supercategory": sup})
                    for c, name, sup in categories
                ],
            }
        )
    )
    return path


# Roboflow's shape (roboflow-100-benchmark#45): id 0 groups the classes, which name it.
ROBOFLOW = [
    (0, "pieces", "none"),
    (1, "bishop", "pieces"),
    (2, "king", "pieces"),
    (3, "rook", "pieces"),
]


def validate(paths: list[Path], **fields: Any) -> Report:
    return run([str(p) for p in paths], Contract(**fields), max_examples=0).report


def unused(report: Report) -> list[int]:
    found: list[Finding] = [
        f for f in report.findings if f.code == "LG012" and f.severity == "warning"
    ]
    return list(found[0].details["classes"]) if found else []


def grouping_notes(report: Report) -> list[str]:
    return [n for n in report.notes if "rf-detr drops" in n]


class TestGroupingCategory:
    def test_no_unused_class_but_a_real_one_is(self, tmp_path: Path) -> None:
        report = validate([coco(tmp_path / "a.json", ROBOFLOW, [2, 3, 3])])
        assert unused(report) == [1]  # bishop never occurs; pieces only groups
        assert report.contract["num_classes"] == 4  # K counts it: the table trained as it is
        (note,) = grouping_notes(report)
        assert note.startswith("category 0 ('pieces') groups the others")
        assert "its head has 1 class fewer" in note and "rf-detr#1303" in note

    def test_an_annotated_parent_keeps_its_class(self, tmp_path: Path) -> None:
        report = validate([coco(tmp_path / "a.json", ROBOFLOW, [0, 2, 3])])
        assert unused(report) == [1] and grouping_notes(report) == []
        report = validate([coco(tmp_path / "b.json", ROBOFLOW, [0, 1, 2, 3])])
        assert unused(report) == []

    @pytest.mark.parametrize(
        "categories",
        [
            [(0, "pieces", None), (1, "bishop", None), (2, "king", None)],  # flat: no supercategory
            [(0, "pieces", "none"), (1, "bishop", "none"), (2, "king", "")],  # "no parent" words
            [(0, "pieces", "pieces"), (1, "bishop", "bishop"), (2, "king", "king")],  # own name
        ],
    )
    def test_no_parent_named_no_placeholder(
        self, tmp_path: Path, categories: list[tuple[int, str, str | None]]
    ) -> None:
        report = validate([coco(tmp_path / "a.json", categories, [2])])
        assert unused(report) == [0, 1] and grouping_notes(report) == []

    def test_a_table_of_parents_only_loses_none(self, tmp_path: Path) -> None:
        # rf-detr's fallback: filtering that would drop every category drops none
        cats = [(0, "a", "b"), (1, "b", "a")]
        report = validate([coco(tmp_path / "a.json", cats, [])])
        assert grouping_notes(report) == []

    def test_splits_the_placeholder_is_unused_in_every_one(self, tmp_path: Path) -> None:
        train = coco(tmp_path / "train.json", ROBOFLOW, [1, 2, 3])
        valid = coco(tmp_path / "valid.json", ROBOFLOW, [2, 3])
        report = validate([train, valid])
        assert unused(report) == [] and len(grouping_notes(report)) == 1  # said once
        coco(tmp_path / "valid.json", ROBOFLOW, [0, 2])  # annotated in one split: a class
        report = validate([train, valid])
        assert unused(report) == [] and grouping_notes(report) == []


# Ids that every reading renumbers: 5 groups; 7, 9, 11 are its classes, 11 never used.
SPARSE = [(5, "fish", "none"), (7, "cod", "fish"), (9, "eel", "fish"), (11, "ray", "fish")]


@pytest.mark.parametrize(
    ("fields", "ray"),
    [
        ({}, 3),  # contiguous by sorted id
        ({"num_classes": 12}, 11),  # torchvision's reading with no framework: the ids as they are
        ({"framework": "torchvision"}, 11),
        ({"framework": "detectron2"}, 3),
        ({"framework": "mmdet"}, 3),
        ({"framework": "ultralytics"}, 10),  # convert_coco through COCO's 80: 11 is class 10
    ],
)
def test_the_placeholder_moves_with_the_remap(
    tmp_path: Path, fields: dict[str, Any], ray: int
) -> None:
    report = validate([coco(tmp_path / "a.json", SPARSE, [7, 9, 9])], **fields)
    assert unused(report) == [ray]  # the grouping category, wherever it went, is not listed


def test_real_roboflow_export(shared_real_world: Path) -> None:
    path = shared_real_world / CHESS
    report = validate([path])
    assert unused(report) == [1]  # 'bishop' is unused in this split; 'pieces' only groups
    assert report.contract["num_classes"] == 14
    (note,) = grouping_notes(report)
    assert note.startswith("category 0 ('pieces') groups the others")
    for fw in ("torchvision", "detectron2", "mmdet"):
        assert unused(validate([path], framework=fw)) == [1], fw
    assert unused(validate([path], framework="ultralytics")) == [0]  # bishop, id - 1
