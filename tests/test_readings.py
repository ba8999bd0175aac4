"""Detection inputs judged with no framework named: category ids as ids, and each framework's
reading held against that framework's own id mapping, reproduced from its source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate.contract import Contract
from labelgate.core.report import Report
from labelgate.run.validation import run

# ultralytics/data/converter.py:39-136@ultralytics 8.4.190, coco91_to_coco80_class(): index
# category_id - 1, None where COCO's 2014 release left an id out (and for id 91).
_LEFT_OUT = {12, 26, 29, 30, 45, 66, 68, 69, 71, 83, 91}
COCO91_TO_80: list[int | None] = []
for _cid in range(1, 92):
    COCO91_TO_80.append(
        None if _cid in _LEFT_OUT else sum(COCO91_TO_80[i] is not None for i in range(_cid - 1))
    )


def coco(path: Path, cats: list[int], labels: list[int]) -> Path:
    images = [{"id": 1, "file_name": "1.jpg", "width": 100, "height": 80}]
    anns = [
        {"id": 10 + i, "image_id": 1, "category_id": c, "bbox": [5, 5, 20, 20]}
        for i, c in enumerate(labels)
    ]
    categories = [{"id": c, "name": f"c{c}"} for c in cats]
    path.write_text(json.dumps({"images": images, "annotations": anns, "categories": categories}))
    return path


def validate(path: Path, **kw: Any) -> Report:
    contract = Contract(num_classes=kw.pop("classes", None), framework=kw.pop("framework", None))
    return run([str(path)], contract, max_examples=0).report


def reading(report: Report, name: str) -> dict[str, Any]:
    return next(r for r in report.frameworks if r["framework"] == name)


def raises_in_cross_entropy(labels: list[int], num_classes: int) -> bool:
    """What torchvision's roi_heads.py:35 does with these labels: F.cross_entropy on CPU."""
    try:
        F.cross_entropy(torch.zeros(len(labels), num_classes), torch.tensor(labels))
    except IndexError:
        return True
    return False


class TestReadingsAgreeWithEachFramework:
    @settings(
        max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        cats=st.sets(st.integers(1, 95), min_size=1, max_size=6).map(sorted),
        picks=st.lists(st.integers(0, 5), min_size=1, max_size=8),
        undeclared=st.lists(st.integers(0, 99), max_size=2),
    )
    def test_property(
        self, tmp_path: Path, cats: list[int], picks: list[int], undeclared: list[int]
    ) -> None:
        extra = [u for u in undeclared if u not in cats]
        labels = [cats[p % len(cats)] for p in picks] + extra
        report = validate(coco(tmp_path / "a.json", cats, labels))
        # the verdict with no framework: only what every framework refuses (an undeclared id)
        assert report.failed == bool(extra)
        assert report.counts["rejected"] == len(extra)

        tv = reading(report, "torchvision")  # labels as they are (roi_heads.py:646)
        assert tv["num_classes"] == max(cats) + 1
        declared = [c for c in labels if c in cats]
        assert not raises_in_cross_entropy(declared, tv["num_classes"])
        assert raises_in_cross_entropy([max(cats)], tv["num_classes"] - 1)
        assert (tv["verdict"] == "fails") == bool(extra)

        d2 = reading(report, "detectron2")  # coco.py:81,102-103: contiguous by sorted id
        mapping = {cid: i for i, cid in enumerate(sorted(cats))}
        assert d2["num_classes"] == len(cats)
        try:
            mapped = [mapping[c] for c in labels]  # coco.py:211-219: KeyError when undeclared
        except KeyError:
            assert d2["verdict"] == "fails"
        else:
            assert d2["verdict"] == "runs"
            assert not raises_in_cross_entropy(mapped, d2["num_classes"] + 1)  # + background

        mm = reading(report, "mmdet")  # coco.py:70-72, 155-156: by name, the others skipped
        assert mm["num_classes"] == len(cats)
        assert mm["verdict"] == ("drops" if extra else "runs")

        ul = reading(report, "ultralytics")  # converter.py:323: coco80[category_id - 1]
        used = sorted(set(declared))  # convert_coco reads the annotations, not the table
        default = [COCO91_TO_80[c - 1] if c <= 91 else None for c in used]
        official = all(c <= 91 and COCO91_TO_80[c - 1] is not None for c in cats)
        if None in default:
            assert ul["verdict"] == "fails" and ul["raises"]
        elif official:  # the classes of the table, numbered as COCO's own
            assert ul["num_classes"] == max(COCO91_TO_80[c - 1] or 0 for c in cats) + 1
            assert not ul["raises"] and not ul["wrong"]
        else:  # the default renumbers what it does not refuse; cls91to80=False gives id - 1
            assert not ul["raises"] and ul["num_classes"] == max(cats)
            moved = any(d != c - 1 for d, c in zip(default, used, strict=True))
            assert bool(ul["wrong"]) == moved and (ul["verdict"] == "fails") == moved

    def test_given_k_is_held_against_each_reading(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [1, 3, 7], [1, 3, 7])
        fits = {
            k: {r["framework"]: r["fits_classes"] for r in validate(path, classes=k).frameworks}
            for k in (3, 8)
        }
        assert fits[3]["detectron2"] and not fits[3]["torchvision"]
        assert fits[8]["torchvision"] and not fits[8]["detectron2"]
        assert not validate(path, classes=3).failed and not validate(path, classes=8).failed
        assert validate(path, classes=2).failed  # fits no reading

    def test_text_report_has_one_line_per_framework(self, tmp_path: Path) -> None:
        from labelgate.render.text import render_text

        report = validate(coco(tmp_path / "a.json", [1, 3, 7], [1, 3, 7]))
        text = render_text(report)
        for name in ("torchvision", "detectron2", "mmdet", "ultralytics"):
            assert f"  {name}: " in text


REAL = [
    "01_coco_val2014_sampled_gts.json",
    "02_coco_toy_single_category_id0.json",
    "05_pascalvoc_2007_001430.xml",
    "annotations/coco/chess_pieces_v23_valid__annotations.coco.json",
    "annotations/coco/datumaro_instances_val.json",
    "annotations/coco/datumaro_person_keypoints_train.json",
    "annotations/coco/datumaro_panoptic/panoptic_val.json",
    "annotations/coco/labelme2coco_voc2011_annotations.json",
    "annotations/yolo/datumaro_roboflow_yolo",
    "annotations/yolo/datumaro_darknet_strict",
    "annotations/yolo/labelstudio_import_yolo",
    "annotations/voc/raccoon",
    "annotations/voc/labelme_bbox_voc2011",
    "annotations/voc/datumaro_voc_dataset2",
    "annotations/other/labelme_semantic_2011_000003.json",
    "annotations/other/labelstudio_export_yolo_data.json",
]
# True findings under one framework, each checked by hand against the file:
TRUE_UNDER = {
    # category 0 'cat' is an object: torchvision trains it as its background (LG032)
    ("02_coco_toy_single_category_id0.json", "torchvision"): {"LG032"},
    # convert_coco(cls91to80=False) makes category 0 class -1: every image dropped
    ("02_coco_toy_single_category_id0.json", "ultralytics"): {"LG005", "LG008"},
    # a.xml's one object is named 'background', the labelmap's entry 0
    ("annotations/voc/datumaro_voc_dataset2", "torchvision"): {"LG032"},
}


@pytest.mark.shared
@pytest.mark.parametrize("rel", REAL)
@pytest.mark.parametrize("framework", [None, "torchvision", "detectron2", "mmdet", "ultralytics"])
def test_real_files_pass_with_no_flags_and_under_each_framework(
    shared_real_world: Path, rel: str, framework: str | None
) -> None:
    report = validate(shared_real_world / rel, framework=framework)
    errors = {f.code for f in report.findings if f.severity == "error"}
    assert errors == TRUE_UNDER.get((rel, framework), set()), [f.message for f in report.findings]
    if framework is None and report.frameworks:
        assert {r["framework"] for r in report.frameworks} == {
            "torchvision",
            "detectron2",
            "mmdet",
            "ultralytics",
        }


def test_examples_show_the_category_id_as_written(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", [1, 3, 7], [1, 3, 7, 7])
    report = validate(path, classes=2)  # fits no reading: the contiguous index 2 reaches K
    lg004 = next(f for f in report.findings if f.code == "LG004")
    assert {e.value for e in lg004.examples} == {7} and "as written: 7" in lg004.message


@pytest.mark.parametrize("name", ["a.json", "instances_minival2014.json"])
def test_repeated_annotation_ids_fail_under_the_loaders_that_assert_them(
    tmp_path: Path, name: str
) -> None:
    """detectron2's load_coco_json asserts unique annotation ids (coco.py:140-147), except in a
    file whose name holds 'minival'; mmdet's CocoDataset asserts it in every file (ANN_ID_UNIQUE,
    coco.py:57,93-96); torchvision never reads the ids."""
    path = coco(tmp_path / name, [1, 2], [1, 2, 2])
    doc = json.loads(path.read_text())
    doc["annotations"][2]["id"] = doc["annotations"][1]["id"]
    path.write_text(json.dumps(doc))
    asserted = "minival" not in name
    neutral = validate(path)
    for name, fails in (("detectron2", asserted), ("mmdet", True), ("torchvision", False)):
        raises = reading(neutral, name)["raises"]
        assert any("repeating an id" in r for r in raises) == fails, name
    lg014 = next(f for f in neutral.findings if f.code == "LG014")
    assert lg014.severity == "warning" and ("detectron2" in lg014.message) == asserted
    assert "mmdet" in lg014.message
    for framework in ("detectron2", "torchvision", "mmdet"):
        report = validate(path, framework=framework)
        lg014 = next(f for f in report.findings if f.code == "LG014")
        failing = framework == "mmdet" or (framework == "detectron2" and asserted)
        assert (lg014.severity == "error") == failing, framework
        assert (report.status == "fail") == failing, framework


class TestWhatFailsUnderOneFramework:
    """A framework line that says "fails" is said by a finding too, and ``--framework`` agrees."""

    def voc(self, folder: Path, names: list[str]) -> Path:
        (folder / "Annotations").mkdir(parents=True)
        labelmap = ["# label:color_rgb:parts:actions", "background:0,0,0::", "cat:128,0,0::"]
        (folder / "labelmap.txt").write_text("\n".join(labelmap) + "\n")
        objects = "".join(
            f"<object><name>{n}</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>4</xmax>"
            "<ymax>6</ymax></bndbox></object>"
            for n in names
        )
        (folder / "Annotations" / "a.xml").write_text(
            "<annotation><filename>a.jpg</filename><size><width>10</width><height>10</height>"
            f"<depth>3</depth></size>{objects}</annotation>"
        )
        return folder

    def test_objects_of_the_background_entry_warn_under_torchvision(self, tmp_path: Path) -> None:
        folder = self.voc(tmp_path / "bg", ["background", "cat"])
        report = validate(folder)
        assert not report.failed  # dropped or trained, no framework raises on it
        assert reading(report, "torchvision")["verdict"] == "fails"
        assert any(
            "'background' (0) as the background" in w
            for w in reading(report, "torchvision")["wrong"]
        )
        (lg032,) = [f for f in report.findings if f.code == "LG032"]
        assert (lg032.severity, lg032.count) == ("warning", 1)
        assert "fails under torchvision" in lg032.message
        named = validate(folder, framework="torchvision")
        assert [(f.code, f.severity) for f in named.findings if f.code == "LG032"] == [
            ("LG032", "error")
        ]
        clean = validate(self.voc(tmp_path / "clean", ["cat"]))
        assert "LG032" not in {f.code for f in clean.findings}
        assert reading(clean, "torchvision")["verdict"] == "runs"

    def test_a_table_id_no_annotation_names_raises_nowhere(self, tmp_path: Path) -> None:
        # 12 is not one of COCO's own ids: convert_coco's default would raise on an annotation
        unused = reading(validate(coco(tmp_path / "a.json", [1, 12], [1, 1])), "ultralytics")
        assert not unused["raises"] and unused["verdict"] == "runs"
        used = reading(validate(coco(tmp_path / "b.json", [1, 12], [1, 12])), "ultralytics")
        assert used["raises"] and "ids 12 " in used["raises"][0]
