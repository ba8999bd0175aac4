"""``--framework``: each framework's conventions (contract.frameworks) applied to generated
datasets with planted faults, named by annotation id or file:line, and clean ones kept clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from labelgate import Contract
from labelgate.contract.classmap import ClassMap
from labelgate.contract.frameworks import FRAMEWORKS
from labelgate.core.report import Finding, Report
from labelgate.errors import ContractError
from labelgate.run.validation import run

from .conftest import run_cli


def validate(paths: list[Path], framework: str, **fields: Any) -> Report:
    contract = Contract(framework=framework, **fields)
    return run([str(p) for p in paths], contract, max_examples=0).report


def codes(report: Report) -> set[str]:
    return {f.code for f in report.findings}


def one(report: Report, code: str) -> Finding:
    (f,) = [f for f in report.findings if f.code == code]
    return f


def coco(
    path: Path,
    categories: list[tuple[int, str]],
    anns: list[tuple[int, int, list[float]]],
    images: int = 1,
) -> Path:
    """A COCO file: ``anns`` as (annotation id, category id, bbox), all on image 1."""
    path.write_text(
        json.dumps(
            {
                "images": [
                    {"id": i, "file_name": f"{i}.jpg", "width": 100, "height": 80}
                    for i in range(1, images + 1)
                ],
                "annotations": [
                    {"id": a, "image_id": 1, "category_id": c, "bbox": b} for a, c, b in anns
                ],
                "categories": [{"id": c, "name": n} for c, n in categories],
            }
        )
    )
    return path


BOX = [5.0, 5.0, 20.0, 20.0]
ONE_BASED = [(1, "cat"), (2, "dog"), (3, "fox")]


def test_every_framework_cites_its_source_for_each_convention() -> None:
    for fw in FRAMEWORKS.values():
        assert fw.sources, fw.name
        for what, cited in fw.sources.items():
            assert ":" in cited.split(" ")[0] or "#" in cited, (fw.name, what, cited)


def test_contract_field_and_schema(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("framework: detectron2\n")
    assert Contract.from_yaml(path).framework == "detectron2"
    path.write_text("framework: yolo\n")
    with pytest.raises(ContractError, match="framework"):
        Contract.from_yaml(path)
    with pytest.raises(ContractError, match="mmseg"):
        Contract(framework="torchvision", reduce_zero_label=True)
    schema = json.loads(Path("schemas/contract.schema.json").read_text())
    assert set(FRAMEWORKS) <= set(schema["properties"]["framework"]["enum"])


class TestTorchvision:
    def test_one_based_ids_clean_with_implied_background(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", ONE_BASED, [(10, 1, BOX), (11, 3, BOX)])
        report = validate([path], "torchvision")
        assert not {"LG004", "LG009", "LG011", "LG016"} & codes(report)
        resolved = report.contract["resolved"]
        assert resolved["num_classes"]["value"] == 4  # 3 categories and the background
        assert resolved["background_index"]["value"] == 0
        assert "torchvision" in resolved["background_index"]["from"]

    def test_degenerate_box_is_an_error_that_raises(self, tmp_path: Path) -> None:
        anns = [(10, 1, BOX), (11, 2, [5.0, 5.0, 0.0, 10.0])]
        report = validate([coco(tmp_path / "a.json", ONE_BASED, anns)], "torchvision")
        f = one(report, "LG027")
        assert f.severity == "error" and [e.id for e in f.examples] == [11]
        assert "torchvision raises" in f.message and "generalized_rcnn.py" in f.message

    def test_label_past_k_names_the_device_assert(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", ONE_BASED, [(10, 1, BOX), (11, 3, BOX)])
        report = validate([path], "torchvision", num_classes=3)
        f = one(report, "LG004")
        assert f.severity == "error" and [e.id for e in f.examples] == [11]
        assert "device-side assert" in f.message and "roi_heads.py:35" in f.message


class TestDetectron2:
    def test_sparse_ids_are_made_contiguous(self, tmp_path: Path) -> None:
        cats = [(1, "a"), (2, "b"), (4, "d"), (90, "z")]
        anns = [(10, 1, BOX), (11, 4, BOX), (12, 90, BOX)]
        report = validate([coco(tmp_path / "a.json", cats, anns)], "detectron2")
        assert not {"LG004", "LG016", "LG009"} & codes(report)
        assert report.contract["resolved"]["num_classes"]["value"] == 4
        assert any("contiguous by sorted id" in n for n in report.notes)

    def test_degenerate_boxes_are_lost_with_a_count(self, tmp_path: Path) -> None:
        anns = [(10, 1, BOX), (11, 2, [1.0, 1.0, 0.0, 4.0]), (12, 2, [1.0, 1.0, 4.0, -1.0])]
        report = validate([coco(tmp_path / "a.json", ONE_BASED, anns)], "detectron2")
        f = one(report, "LG027")
        assert f.severity == "warning" and {e.id for e in f.examples} == {11, 12}
        assert f.count == 2
        assert "training would lose 2 boxes" in f.message and "detection_utils.py" in f.message
        assert report.passed

    def test_images_without_boxes_dropped_by_default(self, tmp_path: Path) -> None:
        yolo = _yolo(tmp_path, {"a.txt": "0 0.5 0.5 0.2 0.2\n", "b.txt": ""})
        report = validate([yolo], "detectron2")
        assert any("1 image without boxes: detectron2 drops them" in n for n in report.notes)
        report = validate([yolo], "torchvision", num_classes=3)
        assert any("torchvision keeps them as negatives" in n for n in report.notes)


class TestMmdet:
    def test_classes_by_name_and_unlisted_categories_dropped(self, tmp_path: Path) -> None:
        cats = [(1, "cat"), (2, "dog"), (7, "fox")]
        anns = [(10, 1, BOX), (11, 7, BOX), (12, 2, BOX), (13, 2, BOX)]
        path = coco(tmp_path / "a.json", cats, anns)
        classes = ClassMap.from_names(["cat", "fox", "Dog"])  # misspelt: mmdet#9611
        report = validate([path], "mmdet", class_map=classes)
        f = one(report, "LG030")
        assert f.severity == "warning"
        assert "absent from metainfo.classes (2)" in f.message
        assert "'Dog' at 2" in f.message
        assert not {"LG004", "LG016"} & codes(report)
        # the two dog boxes are not trained on: counted rejected, named by id, never lost
        assert report.counts["rows"] == 4 and report.counts["rejected"] == 2
        assert report.counts["usable"] == 2
        assert {e.id for e in f.examples} >= {12, 13}
        # each named by the category it holds as written, not by a missing value
        assert {e.value for e in f.examples if e.id in (12, 13)} == {2}

    def test_all_classes_listed_is_clean(self, tmp_path: Path) -> None:
        cats = [(1, "cat"), (2, "dog"), (7, "fox")]
        path = coco(tmp_path / "a.json", cats, [(10, 1, BOX), (11, 7, BOX), (12, 2, BOX)])
        classes = ClassMap.from_names(["cat", "dog", "fox"])
        report = validate([path], "mmdet", class_map=classes)
        assert not codes(report) - {"LG012"}

    def test_classes_in_another_order_than_the_table(self, tmp_path: Path) -> None:
        cats = [(1, "cat"), (2, "dog")]
        path = coco(tmp_path / "a.json", cats, [(10, 1, BOX), (11, 2, BOX)])
        report = validate([path], "mmdet", class_map=ClassMap.from_names(["dog", "cat"]))
        assert "another order" in one(report, "LG030").message


def _yolo(root: Path, files: dict[str, str], names: int = 3) -> Path:
    (root / "labels").mkdir(parents=True, exist_ok=True)
    (root / "classes.txt").write_text("".join(f"c{i}\n" for i in range(names)))
    for name, text in files.items():
        (root / "labels" / name).write_text(text)
    return root


class TestUltralytics:
    def test_images_past_one_point_zero_one_are_dropped_as_corrupt(self, tmp_path: Path) -> None:
        files = {
            "a.txt": "0 0.5 0.5 0.2 0.2\n1 0.5 1.02 0.2 0.2\n",
            "b.txt": "1 0.5 0.5 0.2 0.2\n0 1.005 0.5 0.2 0.2\n",  # inside ultralytics' 1.01
            "c.txt": "2 0.5 0.5 0.2 0.2\n",
        }
        report = validate([_yolo(tmp_path, files)], "ultralytics")
        f = one(report, "LG028")
        assert f.unit == "images" and f.count == 1
        assert [e.id for e in f.examples] == ["labels/a.txt:2"]
        assert "1 image dropped as corrupt" in f.message

    def test_within_tolerance_is_kept(self, tmp_path: Path) -> None:
        files = {"b.txt": "1 0.5 0.5 0.2 0.2\n0 1.005 0.5 0.2 0.2\n"}
        report = validate([_yolo(tmp_path, files)], "ultralytics")
        f = one(report, "LG028")
        assert f.unit == "rows" and "ultralytics keeps them" in f.message

    def test_class_past_nc_drops_the_image(self, tmp_path: Path) -> None:
        report = validate([_yolo(tmp_path, {"a.txt": "3 0.5 0.5 0.2 0.2\n"})], "ultralytics")
        f = one(report, "LG004")
        assert [e.id for e in f.examples] == ["labels/a.txt:1"]
        assert "drops each image holding one as corrupt" in f.message


class TestMmseg:
    def test_reduce_zero_label(self, tmp_path: Path) -> None:
        masks = tmp_path / "masks"
        masks.mkdir()
        ok = np.zeros((4, 4), np.uint8)
        ok[0, :] = 1
        ok[1, :] = 3  # after the transform: 0 (ignored 255), 0, 2: inside K=3
        Image.fromarray(ok).save(masks / "ok.png")
        bad = np.full((4, 4), 4, np.uint8)  # 4 -> 3: past K=3 (mmsegmentation#1180)
        Image.fromarray(bad).save(masks / "bad.png")
        report = validate(
            [masks], "mmseg", num_classes=3, reduce_zero_label=True, task="segmentation"
        )
        f = one(report, "LG004")
        assert [str(e.id).rsplit("/", 1)[-1] for e in f.examples] == ["bad.png"]
        assert "mmsegmentation#1180" in f.message
        assert report.contract["resolved"]["ignore_index"]["value"] == 255
        plain = validate([masks], "mmseg", num_classes=5, task="segmentation")
        assert "LG004" not in codes(plain)


def test_cli_flag(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", ONE_BASED, [(10, 1, BOX), (11, 2, [5.0, 5.0, 0.0, 1.0])])
    done = run_cli("validate", str(path), "--framework", "detectron2", "--format", "json")
    assert done.returncode == 0, done.stderr
    (f,) = [f for f in json.loads(done.stdout)["findings"] if f["code"] == "LG027"]
    assert f["severity"] == "warning" and f["examples"][0]["id"] == 11
    done = run_cli("validate", str(path), "--framework", "yolo")
    assert done.returncode == 2 and "invalid choice" in done.stderr


class TestTorchvisionIndices:
    def test_coco_ids_as_they_are_with_gaps_named_n_a(self, tmp_path: Path) -> None:
        cats = [(1, "a"), (2, "b"), (4, "d")]
        path = coco(tmp_path / "a.json", cats, [(10, 1, BOX), (11, 4, BOX)])
        report = validate([path], "torchvision")
        assert not {"LG004", "LG009", "LG016"} & codes(report)
        assert report.contract["resolved"]["num_classes"]["value"] == 5  # 0..4, as torchvision
        assert "'N/A'" in report.contract["resolved"]["num_classes"]["from"]

    def test_yolo_classes_become_one_based(self, tmp_path: Path) -> None:
        root = _yolo(tmp_path, {"a.txt": "0 0.5 0.5 0.2 0.2\n2 0.5 0.5 0.2 0.2\n"})
        report = validate([root], "torchvision")
        assert "LG032" not in codes(report) and report.passed
        assert report.contract["resolved"]["num_classes"]["value"] == 4

    def test_minus_one_becomes_the_background(self, tmp_path: Path) -> None:
        root = _yolo(tmp_path, {"a.txt": "1 0.5 0.5 0.2 0.2\n-1 0.5 0.5 0.2 0.2\n"})
        report = validate([root], "torchvision")
        assert [e.id for e in one(report, "LG032").examples] == ["labels/a.txt:2"]
        assert "LG005" not in codes(report)

    def test_a_class_map_reserving_zero_is_not_shifted(self, tmp_path: Path) -> None:
        root = _yolo(tmp_path, {"a.txt": "0 0.5 0.5 0.2 0.2\n1 0.5 0.5 0.2 0.2\n"})
        (root / "classes.txt").write_text("_background_\ndog\ncat\n")
        report = validate([root], "torchvision")
        f = one(report, "LG032")
        assert [e.id for e in f.examples] == ["labels/a.txt:1"]
        assert report.contract["resolved"]["num_classes"]["value"] == 3


def test_a_background_entry_is_no_unused_class_with_no_framework(tmp_path: Path) -> None:
    """A class map opening with ``_background_`` (labelme2voc's class_names.txt) names no object
    class: with no framework named, it is not one that "never occurs" (LG012), as COCO's is not."""
    root = _yolo(tmp_path, {"a.txt": "1 0.5 0.5 0.2 0.2\n2 0.5 0.5 0.2 0.2\n"})
    (root / "classes.txt").write_text("_background_\ndog\ncat\n")
    report = run([str(root)], Contract(), max_examples=0).report
    assert "LG012" not in codes(report)
    (root / "labels" / "a.txt").write_text("1 0.5 0.5 0.2 0.2\n")
    f = one(run([str(root)], Contract(), max_examples=0).report, "LG012")
    assert f.details["classes"] == [2]  # cat never occurs; the background is no class


# Real exports (../shared/real_world/annotations, MANIFEST.tsv): clean under every framework
# that trains on their format; the one planted-by-its-author fault found.
REAL_CLEAN = {
    "coco/chess_pieces_v23_valid__annotations.coco.json": ("torchvision", "detectron2", "mmdet"),
    "coco/labelme2coco_voc2011_annotations.json": ("torchvision", "detectron2", "mmdet"),
    "coco/datumaro_instances_val.json": ("torchvision", "detectron2", "mmdet"),
    "voc/raccoon": ("torchvision", "detectron2", "mmdet"),
    "voc/labelme_bbox_voc2011": ("torchvision", "detectron2", "mmdet"),
    "yolo/datumaro_roboflow_yolo": ("torchvision", "ultralytics"),
    "yolo/labelstudio_import_yolo": ("torchvision", "ultralytics"),
    "yolo/datumaro_darknet_strict": ("torchvision", "ultralytics"),
}


@pytest.mark.parametrize("path", sorted(REAL_CLEAN))
def test_real_exports_clean_under_each_framework(shared_real_world: Path, path: str) -> None:
    for fw in REAL_CLEAN[path]:
        report = validate([shared_real_world / "annotations" / path], fw)
        assert codes(report) <= {"LG012"}, (fw, [(f.code, f.message) for f in report.findings])
        assert report.passed


def test_real_labelme_voc_background_is_no_unused_class(shared_real_world: Path) -> None:
    path = shared_real_world / "annotations/voc/labelme_bbox_voc2011"
    f = one(run([str(path)], Contract(), max_examples=0).report, "LG012")
    assert 0 not in f.details["classes"] and 1 in f.details["classes"]


def test_real_voc_object_named_background(shared_real_world: Path) -> None:
    path = shared_real_world / "annotations/voc/datumaro_voc_dataset2"
    f = one(validate([path], "torchvision"), "LG032")
    assert [e.id for e in f.examples] == ["Annotations/a.xml#0"]
    assert "LG032" not in codes(validate([path], "detectron2"))


def test_ultralytics_zero_size_boxes_lost_negative_size_drops_the_image(tmp_path: Path) -> None:
    files = {"a.txt": "0 0.5 0.5 0.0 0.2\n", "b.txt": "1 0.5 0.5 -0.2 0.2\n"}
    report = validate([_yolo(tmp_path, files)], "ultralytics")
    lost = one(report, "LG027")
    assert lost.severity == "warning" and "augment.py:776-777" in lost.message
    dropped = one(report, "LG028")
    assert [e.id for e in dropped.examples] == ["labels/b.txt:1"] and dropped.unit == "images"


def test_python_keyword_and_contract_yaml(tmp_path: Path) -> None:
    import labelgate

    cats = [(1, "a"), (2, "b"), (4, "d")]
    path = coco(tmp_path / "a.json", cats, [(10, 1, BOX), (11, 4, BOX)])
    report = labelgate.validate(str(path), framework="detectron2")
    assert not {"LG004", "LG016"} & codes(report)
    assert report.contract["framework"] == "detectron2"
    schema = tmp_path / "c.yaml"
    schema.write_text("framework: mmseg\nreduce_zero_label: true\n")
    contract = Contract.from_yaml(schema)
    assert contract.framework == "mmseg" and contract.reduce_zero_label is True


def test_cli_reduce_zero_label_needs_mmseg(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", ONE_BASED, [(10, 1, BOX)])
    done = run_cli("validate", str(path), "--reduce-zero-label")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--framework mmseg" in done.stderr


def test_coco_images_without_boxes_kept_or_dropped(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", ONE_BASED, [(10, 1, BOX), (11, 2, BOX)], images=3)
    dropped = validate([path], "detectron2")
    assert any("2 images without boxes: detectron2 drops them" in n for n in dropped.notes)
    kept = validate([path], "torchvision")
    assert any("2 images without boxes: torchvision keeps them" in n for n in kept.notes)
    assert dropped.input["annotations"]["read"]["images_without_boxes"] == 2
