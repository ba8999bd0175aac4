"""Dataset roots as downloaded or exported, read as the dataset they are: COCO 2017, Datumaro's COCO,
Roboflow's COCO and VOC splits, Kaggle's VOC, ultralytics' data YAML and labels tree; each split
its own source, ids unique per COCO file, examples naming the user's files.

The categories are 0..K-1 throughout: COCO's sparse ids are judged per framework elsewhere, and
these tests are about reading roots (detection, sources, ids, example naming)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import labelgate
from labelgate.cli import main
from labelgate.errors import InputError
from labelgate.readers import choose
from labelgate.readers.common.roots import Mixed, Root, coco_kind, dataset_root, source_names
from tests.support.inproc import run_here

CATEGORIES = [{"id": 0, "name": "cat"}, {"id": 1, "name": "dog"}]


def _image(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (20, 20)).save(path)


def coco_file(path: Path, split: str, images: Path | None, *, fault: str = "") -> None:
    """Three 20x20 images and four boxes; ``fault``: ``category`` (annotation 3 names category
    7, absent from the table), ``duplicate`` (annotation 2 repeats id 1)."""
    listed: list[dict[str, Any]] = [
        {"id": i, "file_name": f"{split}_{i}.jpg", "width": 20, "height": 20} for i in (1, 2, 3)
    ]
    boxes = []
    for a in (1, 2, 3, 4):  # ids restart at 1 in every file, as Roboflow writes them
        cid = 7 if fault == "category" and a == 3 else a % 2
        ident = 1 if fault == "duplicate" and a == 2 else a
        boxes.append({"id": ident, "image_id": 1 + a % 3, "category_id": cid, "bbox": [1, 1, 5, 5]})
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"images": listed, "annotations": boxes, "categories": CATEGORIES}
    path.write_text(json.dumps(doc))
    if images is not None:
        for entry in listed:
            _image(images / entry["file_name"])


def validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    """Exit status and the JSON report of ``labelgate validate ARGS``."""
    capsys.readouterr()
    status = main(["validate", *args, "--format", "json"])
    return status, json.loads(capsys.readouterr().out)


def findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["code"]: f for f in report["findings"]}


def sources(report: dict[str, Any]) -> list[str]:
    return [s["source"] for s in report["sources"]]


def no_scratch_file(report: dict[str, Any]) -> None:
    """No example, no message names a file the run wrote."""
    text = json.dumps(report["findings"])
    assert "labelgate-input-" not in text and ".parquet" not in text


# -- COCO ------------------------------------------------------------------------------------


def coco2017(root: Path, fault: str = "") -> Path:
    for split in ("train2017", "val2017"):
        bad = fault if split == "val2017" else ""
        coco_file(root / "annotations" / f"instances_{split}.json", split, root / split, fault=bad)
    return root


def test_a_coco_2017_root_is_read_split_by_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = coco2017(tmp_path / "coco")
    assert choose([str(root)]).reader.name == "coco"
    status, report = validate(capsys, str(root))
    assert status == 0, report["findings"]
    assert sources(report) == ["train2017", "val2017"]
    read = report["input"]["annotations"]["read"]
    assert read["annotations"] == 8 and read["images"] == 6 and read["categories"] == 2
    assert read["images_checked"] == 6  # found in train2017/ and val2017/ beside annotations/


def test_a_fault_in_one_coco_split_names_the_split_file_and_annotation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = coco2017(tmp_path / "coco", fault="category")
    status, report = validate(capsys, str(root))
    assert status == 1
    (example,) = findings(report)["LG030"]["examples"]
    assert example["source"] == "val2017" and example["id"] == 3 and example["value"] == 7
    assert example["file"] == str(root / "annotations" / "instances_val2017.json")
    assert example["row"] == 4 + 2  # after train2017's 4 rows: the third annotation of val2017
    no_scratch_file(report)


def test_a_coco_root_reads_the_instances_and_names_the_files_left_out(tmp_path: Path) -> None:
    root = coco2017(tmp_path / "coco")
    (root / "annotations" / "captions_val2017.json").write_text('{"images": [], "annotations": []}')
    keypoints = root / "annotations" / "person_keypoints_val2017.json"
    coco_file(keypoints, "val2017", None)
    found = dataset_root(root)
    assert isinstance(found, Root) and found.format == "coco"
    assert [s.name for s in found.splits] == ["train2017", "val2017"]
    assert [s.path.name for s in found.splits] == [
        "instances_train2017.json",
        "instances_val2017.json",
    ]
    assert any("captions_val2017.json (captions: no category labels)" in n for n in found.left_out)
    assert any("person_keypoints_val2017.json" in n for n in found.left_out)


def test_datumaros_coco_root_finds_its_images_under_images_subset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "datumaro"
    for subset in ("train", "val"):
        coco_file(
            root / "annotations" / f"instances_{subset}.json", subset, root / "images" / subset
        )
    status, report = validate(capsys, str(root))
    assert status == 0
    assert sources(report) == ["train", "val"]
    assert report["input"]["annotations"]["read"]["images_checked"] == 6


def roboflow_coco(root: Path, fault: str = "", split: str = "valid") -> Path:
    for name in ("train", "valid", "test"):
        folder = root / name
        coco_file(
            folder / "_annotations.coco.json", name, folder, fault=fault if name == split else ""
        )
    return root


def test_a_roboflow_coco_export_is_three_sources_and_ids_restart_per_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = roboflow_coco(tmp_path / "rf")
    status, report = validate(capsys, str(root))
    assert status == 0, report["findings"]
    assert "LG014" not in findings(report)  # ids 1..4 in each file: unique per file
    assert sources(report) == ["train", "valid", "test"]
    assert report["input"]["annotations"]["read"]["images"] == 9  # no split's images merged


def test_the_three_files_of_a_roboflow_export_given_together_are_its_splits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = roboflow_coco(tmp_path / "rf")
    files = [str(root / s / "_annotations.coco.json") for s in ("train", "valid", "test")]
    status, report = validate(capsys, *files)
    assert status == 0 and "LG014" not in findings(report)
    assert sources(report) == ["train", "valid", "test"]


def test_a_duplicate_id_within_one_split_names_that_split_and_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = roboflow_coco(tmp_path / "rf", fault="duplicate")
    files = [str(root / s / "_annotations.coco.json") for s in ("train", "valid", "test")]
    for given in ([str(root)], files):
        _, report = validate(capsys, *given)
        dup = findings(report)["LG014"]
        assert dup["count"] == 1 and "in their file" in dup["message"]
        (example,) = dup["examples"]
        assert example["source"] == "valid" and example["id"] == 1
        assert example["file"] == str(root / "valid" / "_annotations.coco.json")
        assert example["row"] == 4 + 1 and example["file_row"] == 1
        no_scratch_file(report)


def test_a_faulty_category_in_one_roboflow_split_is_named_in_the_clustering_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = roboflow_coco(tmp_path / "rf", fault="category", split="test")
    status, report = validate(capsys, str(root))
    assert status == 1
    (example,) = findings(report)["LG030"]["examples"]
    assert (example["source"], example["id"]) == ("test", 3)
    assert example["file"] == str(root / "test" / "_annotations.coco.json")
    no_scratch_file(report)


def test_split_tables_that_differ_are_compared(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = roboflow_coco(tmp_path / "rf")
    valid = root / "valid" / "_annotations.coco.json"
    doc = json.loads(valid.read_text())
    doc["categories"][1]["name"] = "puppy"
    valid.write_text(json.dumps(doc))
    status, report = validate(capsys, str(root))
    assert status == 1
    (example,) = findings(report)["LG030"]["examples"]
    assert example["source"] == "valid"  # compared with train's, the first split's


def test_input_format_coco_reads_a_root_and_refuses_a_folder_without_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = roboflow_coco(tmp_path / "rf")
    status, report = validate(capsys, str(root), "--input-format", "coco")
    assert status == 0 and sources(report) == ["train", "valid", "test"]
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_here("validate", str(empty), "--input-format", "coco")
    assert result.returncode == 2 and "no COCO annotation file" in result.stderr
    assert "Traceback" not in result.stderr and "Is a directory" not in result.stderr


# -- VOC -------------------------------------------------------------------------------------


def voc_file(path: Path, image: str, name: str = "cat") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"<annotation><filename>{image}</filename><size><width>20</width><height>20</height>"
        f"<depth>3</depth></size><object><name>{name}</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>"
    )


def test_a_roboflow_voc_export_is_read_split_by_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "voc"
    root.mkdir()
    (root / "class_names.txt").write_text("cat\ndog\n")
    for split in ("train", "valid"):
        for i, name in enumerate(("cat", "dog")):
            _image(root / split / f"{split}_{i}.jpg")
            voc_file(root / split / f"{split}_{i}.xml", f"{split}_{i}.jpg", name)
    assert choose([str(root)]).reader.name == "voc"
    status, report = validate(capsys, str(root))
    assert status == 0, report["findings"]
    assert sources(report) == ["train", "valid"]
    assert report["input"]["annotations"]["read"]["images_checked"] == 4
    voc_file(root / "valid" / "valid_1.xml", "valid_1.jpg", "tvmonitor")
    status, report = validate(capsys, str(root))
    assert status == 1
    (example,) = findings(report)["LG030"]["examples"]
    assert (example["source"], example["id"]) == ("valid", "valid/valid_1.xml#0")


def test_kaggles_voc_layouts_are_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """annotations/ beside images/; and split folders keeping their XML in Annotations/."""
    flat = tmp_path / "kaggle"
    for i in range(2):
        _image(flat / "images" / f"{i}.png")
        voc_file(flat / "annotations" / f"{i}.xml", f"{i}.png")
    status, report = validate(capsys, str(flat))
    assert status == 0 and report["input"]["annotations"]["read"]["images_checked"] == 2
    nested = tmp_path / "nested"
    for split in ("train", "test"):
        _image(nested / split / "JPEGImages" / "a.jpg")
        voc_file(nested / split / "Annotations" / "a.xml", "a.jpg")
    status, report = validate(capsys, str(nested))
    assert status == 0 and sources(report) == ["train", "test"]


# -- YOLO ------------------------------------------------------------------------------------


def yolo_split(labels: Path, images: Path | None, rows: list[str]) -> None:
    labels.mkdir(parents=True, exist_ok=True)
    for i, row in enumerate(rows):
        (labels / f"img_{i}.txt").write_text(row + "\n")
        if images is not None:
            _image(images / f"img_{i}.jpg")


def roboflow_yolo(root: Path, val_rows: list[str]) -> Path:
    """Roboflow's YOLO export: data.yaml inside the root, its splits written ``../train/images``."""
    yolo_split(root / "train" / "labels", root / "train" / "images", ["0 0.5 0.5 0.2 0.2"] * 2)
    yolo_split(root / "valid" / "labels", root / "valid" / "images", val_rows)
    (root / "data.yaml").write_text(
        "train: ../train/images\nval: ../valid/images\n\nnc: 2\nnames: ['cat', 'dog']\n"
    )
    return root


def test_a_data_yaml_given_as_the_path_reads_its_splits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = roboflow_yolo(tmp_path / "rf", ["1 0.5 0.5 0.2 0.2"])
    assert choose([str(root / "data.yaml")]).reader.name == "yolo"
    status, report = validate(capsys, str(root / "data.yaml"))
    assert status == 0, report["findings"]
    assert sources(report) == ["train", "val"]
    assert [c["name"] for c in report["classes"]] == ["cat", "dog"]


def test_a_class_past_nc_in_one_split_names_the_split_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = roboflow_yolo(tmp_path / "rf", ["1 0.5 0.5 0.2 0.2", "2 0.5 0.5 0.2 0.2"])
    for given in (root / "data.yaml", root):
        status, report = validate(capsys, str(given))
        assert status == 1
        (example,) = findings(report)["LG004"]["examples"]
        assert example["id"] == "valid/labels/img_1.txt:1" and example["value"] == 2
        assert example["source"] == ("val" if given.is_file() else "valid")


def test_data_yaml_keys_as_ultralytics_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """path: relative to the YAML's folder here; lists of folders; names as a dict; test: the
    val folder again (read once)."""
    root = tmp_path / "ds"
    yolo_split(root / "labels" / "a", None, ["0 0.5 0.5 0.2 0.2"])
    yolo_split(root / "labels" / "b", None, ["1 0.5 0.5 0.2 0.2"])
    yolo_split(root / "labels" / "v", None, ["2 0.5 0.5 0.2 0.2"])
    yaml = tmp_path / "ds.yaml"
    yaml.write_text(
        f"path: {root}\ntrain: [images/a, images/b]\nval: images/v\ntest: images/v\n"
        "names:\n  0: cat\n  1: dog\n  2: bird\n"
    )
    status, report = validate(capsys, str(yaml))
    assert status == 0, report["findings"]
    assert sources(report) == ["train[0]", "train[1]", "val"]
    assert report["counts"]["rows"] == 3
    assert any("test names the folder of val: read once" in n for n in report["notes"])


def test_a_yaml_naming_a_missing_split_is_refused_as_ultralytics_refuses_it(
    tmp_path: Path,
) -> None:
    root = roboflow_yolo(tmp_path / "rf", ["1 0.5 0.5 0.2 0.2"])
    (root / "data.yaml").write_text("train: ../train/images\nval: ../val/images\nnames: [a, b]\n")
    result = run_here("validate", str(root / "data.yaml"))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "val: '../val/images'" in result.stderr and "FileNotFoundError" in result.stderr


def test_an_ultralytics_tree_with_its_yaml_beside_it_reads_with_class_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """coco8-pose: labels/train, labels/val; coco8-pose.yaml (names, kpt_shape) beside the
    dataset, named by --class-names; its pose rows read with its kpt_shape."""
    root = tmp_path / "coco8-pose"
    pose = "0 0.5 0.5 0.2 0.2 " + " ".join(["0.5 0.5 2"] * 17)
    for split in ("train", "val"):
        yolo_split(root / "labels" / split, root / "images" / split, [pose])
    yaml = tmp_path / "coco8-pose.yaml"
    yaml.write_text(
        "path: coco8-pose\ntrain: images/train\nval: images/val\nkpt_shape: [17, 3]\n"
        "names:\n  0: person\n"
    )
    assert choose([str(root)]).reader.name == "yolo"
    status, report = validate(capsys, str(root), "--class-names", str(yaml))
    assert status == 0, report["findings"]
    assert sources(report) == ["train", "val"]
    status, report = validate(capsys, str(yaml))  # path: found beside the YAML
    assert status == 0 and sources(report) == ["train", "val"]
    result = run_here("validate", str(root))
    assert result.returncode == 2 and "--class-names" in result.stderr


# -- several formats, names ------------------------------------------------------------------


def test_a_folder_of_datasets_of_several_formats_is_refused_naming_both(tmp_path: Path) -> None:
    coco_file(tmp_path / "train" / "_annotations.coco.json", "train", tmp_path / "train")
    voc_file(tmp_path / "valid" / "a.xml", "a.jpg")
    found = dataset_root(tmp_path)
    assert isinstance(found, Mixed) and found.formats == {"train": "coco", "valid": "voc"}
    assert choose([str(tmp_path)]).reader.name == "unsupported"
    result = run_here("validate", str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "train/ (coco), valid/ (voc)" in result.stderr
    for fmt in ("coco", "voc"):
        with pytest.raises(InputError, match="several formats"):
            labelgate.validate(str(tmp_path), input_format=fmt)


def test_a_folder_without_a_dataset_is_no_root(tmp_path: Path) -> None:
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "notes.txt").write_text("hello\n")
    assert dataset_root(tmp_path) is None


def test_coco_kinds_and_source_names() -> None:
    assert coco_kind("instances_val2017") == ("instances", "val2017")
    assert coco_kind("person_keypoints_train2017") == ("person_keypoints", "train2017")
    assert coco_kind("val") == ("", "val")
    assert source_names([Path("a/train.json"), Path("a/val.json")]) == ["train.json", "val.json"]
    same = [Path("rf/train/_annotations.coco.json"), Path("rf/valid/_annotations.coco.json")]
    assert source_names(same) == ["train", "valid"]
    deep = [Path("x/train/a.json"), Path("y/train/a.json")]
    assert source_names(deep) == ["x/train/a.json", "y/train/a.json"]


# -- the real files (../shared, CI only) -----------------------------------------------------


def test_the_real_roboflow_data_yaml_is_read_as_ultralytics_reads_it(
    shared_real_world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Datumaro's copy of a Roboflow YOLO export: its data.yaml names val: ../valid/images, but
    the split is in val/: ultralytics stops there, so does labelgate, naming the key and the
    folder given instead; the folder, given, is read by its split folders."""
    folder = shared_real_world / "annotations" / "yolo" / "datumaro_roboflow_yolo"
    assert choose([str(folder / "data.yaml")]).reader.name == "yolo"
    result = run_here("validate", str(folder / "data.yaml"))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "val: '../valid/images'" in result.stderr and "FileNotFoundError" in result.stderr
    assert f"when the folder is given ({folder})" in result.stderr
    status, report = validate(capsys, str(folder))
    assert status == 0 and sources(report) == ["train", "val"]
    assert [c["name"] for c in report["classes"]] == ["label_0", "label_1"]


def test_the_real_label_n_imagefolder_is_read_as_imagefolder(
    shared_real_world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = shared_real_world / "annotations" / "imagefolder" / "datumaro_imagenet_dataset"
    status, report = validate(capsys, str(folder))
    assert status == 0 and report["input"]["annotations"]["format"] == "imagefolder"
    assert [c["name"] for c in report["classes"]] == ["label_0", "label_1"]
