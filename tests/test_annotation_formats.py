"""Annotation formats read natively: real files from public projects, and generated files with
planted faults (each found by file and line or by annotation id; each clean file clean)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate import Contract
from labelgate.core.report import Report
from labelgate.errors import InputError
from labelgate.readers import choose
from labelgate.run.validation import run

from .support.inproc import run_here


def validate(path: Path, **kw: Any) -> Report:
    contract = Contract(num_classes=kw.pop("classes", None), class_map=kw.pop("class_map", None))
    return run([str(path)], contract, max_examples=0, **kw).report


def codes(report: Report) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"error": set(), "warning": set(), "info": set()}
    for f in report.findings:
        out[f.severity].add(f.code)
    return out


def finding(report: Report, code: str) -> Any:
    (f,) = [f for f in report.findings if f.code == code]
    return f


# -- COCO ---------------------------------------------------------------------------------------


def coco(
    path: Path,
    annotations: list[dict[str, Any]],
    categories: list[dict[str, Any]],
    images: list[dict[str, Any]] | None = None,
) -> Path:
    if images is None:
        images = [{"id": i, "file_name": f"{i}.jpg", "width": 100, "height": 80} for i in range(4)]
    path.write_text(
        json.dumps({"images": images, "annotations": annotations, "categories": categories})
    )
    return path


def boxes(n: int, **over: Any) -> list[dict[str, Any]]:
    return [
        {"id": 10 + i, "image_id": i % 4, "category_id": i % 3, "bbox": [5, 5, 20, 20]} | over
        for i in range(n)
    ]


CATS = [{"id": i, "name": n} for i, n in enumerate(["cat", "dog", "bird"])]


def test_coco_clean_file_is_clean(tmp_path: Path) -> None:
    report = validate(coco(tmp_path / "a.json", boxes(12), CATS))
    # category 0 ('cat') holds boxes: torchvision would train them as its background, said as a
    # warning with no framework named; nothing fails under every framework
    assert codes(report)["error"] == set() and codes(report)["warning"] == {"LG032"}
    assert report.input["annotations"]["format"] == "coco"
    assert report.input["annotations"]["read"]["annotations"] == 12
    assert report.counts["rows"] == 12


def test_coco_planted_faults_are_named_by_annotation_id(tmp_path: Path) -> None:
    ann = boxes(12)
    ann[1]["bbox"] = [5, 5, 0, 10]  # LG027
    ann[2]["bbox"] = [90, 70, 20, 20]  # LG028: past 100x80
    ann[3]["category_id"] = 9  # LG030: no category; its row rejected, named by LG030 alone
    ann[4]["image_id"] = 77  # LG031: image not listed
    ann[5]["id"] = 10  # LG014: a repeated annotation id
    ann[6]["category_id"] = "dog"  # LG031: not an integer category
    report = validate(coco(tmp_path / "a.json", ann, CATS))
    assert [e.id for e in finding(report, "LG027").examples] == [11]
    assert [e.id for e in finding(report, "LG028").examples] == [12]
    assert [e.id for e in finding(report, "LG030").examples] == [13]
    lg031 = finding(report, "LG031")
    assert lg031.count == 2 and {e.id for e in lg031.examples} == {14, 16}
    assert [e.id for e in finding(report, "LG014").examples] == [10]
    assert "LG004" not in codes(report)["error"]
    c = report.counts
    assert c["rows"] == c["usable"] + c["ignored"] + c["rejected"] and c["rejected"] >= 1


def test_coco_categories_after_annotations_and_deferred_boxes(tmp_path: Path) -> None:
    """Images and categories may follow the annotations: boxes are checked at the end."""
    ann = boxes(4)
    ann[0]["bbox"] = [95, 5, 20, 20]
    doc = {
        "annotations": ann,
        "categories": CATS,
        "images": [
            {"id": i, "file_name": f"{i}.jpg", "width": 100, "height": 80} for i in range(4)
        ],
    }
    path = tmp_path / "late.json"
    path.write_text(json.dumps(doc))
    report = validate(path)
    assert [e.id for e in finding(report, "LG028").examples] == [10]


def test_coco_background_and_sparse_ids(tmp_path: Path) -> None:
    cats = [{"id": 0, "name": "background"}, {"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}]
    ann = boxes(6)
    report = validate(coco(tmp_path / "a.json", ann, cats), background=0)
    assert finding(report, "LG032").count == 2  # category 0 on annotations 10 and 13
    assert "LG012" not in codes(report)["warning"]  # the background class is not expected
    sparse = [{"id": i, "name": f"c{i}"} for i in (1, 2, 4, 8)]
    ann = [dict(a, category_id=[1, 2, 4, 8][i % 4]) for i, a in enumerate(boxes(16))]
    report = validate(coco(tmp_path / "s.json", ann, sparse), classes=4)
    assert not report.failed  # category ids are ids: four categories, made 0..3
    report = validate(coco(tmp_path / "s.json", ann, sparse), classes=3)  # fits no reading
    assert {"LG009"} <= codes(report)["error"]
    assert all(r["verdict"] == "fails" for r in report.frameworks)


@pytest.mark.parametrize(
    "text",
    [
        b'{"images": [], "annotations": [{"id": 1,',
        # a surrogate written as UTF-8 bytes, which yajl hands on to the decoder
        b'{"images": [], "annotations": [{"id": 1, "note": "\xed\xa0\x80"}]}',
        b'{"images": [], "annotations": [{"id": 1, "note": "\xff"}]}',
    ],
)
def test_coco_invalid_json_is_a_one_line_error(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(text)
    result = run_here("validate", str(path), "--classes", "3")
    assert result.returncode == 2 and "not valid JSON" in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_real_coco_files(shared_real_world: Path) -> None:
    for k in (None, 80, 91):  # 80 fits the contiguous reading, 91 torchvision's
        report = validate(shared_real_world / "01_coco_val2014_sampled_gts.json", classes=k)
        assert codes(report)["error"] == set(), k
    chess = validate(
        shared_real_world / "annotations/coco/chess_pieces_v23_valid__annotations.coco.json"
    )
    assert codes(chess)["error"] == set() and chess.counts["rows"] == 386
    unused = finding(chess, "LG012")
    # 'pieces' only groups the others (tests/test_coco_grouping.py); 'bishop' is a class unused
    assert "0 ('pieces')" not in unused.message and "1 ('bishop')" in unused.message
    datumaro = validate(shared_real_world / "annotations/coco/datumaro_instances_val.json")
    assert codes(datumaro)["error"] == set()  # ids {1, 2, 4}: three categories
    keypoints = validate(
        shared_real_world / "annotations/coco/datumaro_person_keypoints_train.json"
    )
    assert keypoints.counts["rows"] == 1
    panoptic = validate(shared_real_world / "annotations/coco/datumaro_panoptic/panoptic_val.json")
    assert panoptic.counts["rows"] == 2  # one row per segment
    labelme = validate(shared_real_world / "annotations/coco/labelme2coco_voc2011_annotations.json")
    assert labelme.counts["rows"] == 12 and codes(labelme)["error"] == set()


# -- YOLO ---------------------------------------------------------------------------------------


def yolo(
    root: Path, files: dict[str, str], names: str = "names: [cat, dog, bird]\nnc: 3\n"
) -> Path:
    root.mkdir()
    (root / "data.yaml").write_text(names)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_yolo_faults_by_file_and_line(tmp_path: Path) -> None:
    root = yolo(
        tmp_path / "y",
        {
            "train/labels/a.txt": "0 0.5 0.5 0.2 0.2\n1 0.5 0.5 0.2\n",  # line 2: 4 fields
            "train/labels/b.txt": "2 0.5 0.5 0.0 0.2\nx 0.5 0.5 0.2 0.2\n",  # no area; not a class
            "val/labels/c.txt": "3 0.5 0.5 0.2 0.2\n0 1.2 0.5 0.2 0.2\n1 nan 0.5 0.2 0.2\n",
            "val/labels/d.txt": "",  # an image without objects
            "val/labels/e.txt": "0 0.1 0.1 0.4 0.1 0.4 0.4\n",  # a polygon
        },
    )
    report = validate(root)
    assert report.input["annotations"]["read"]["images_without_objects"] == 1
    lg031 = finding(report, "LG031")
    assert [e.id for e in lg031.examples] == ["train/labels/a.txt:2", "train/labels/b.txt:2"]
    assert [e.id for e in finding(report, "LG027").examples] == ["train/labels/b.txt:1"]
    assert [e.id for e in finding(report, "LG028").examples] == ["val/labels/c.txt:2"]
    assert [e.id for e in finding(report, "LG029").examples] == ["val/labels/c.txt:3"]
    assert [e.id for e in finding(report, "LG004").examples] == ["val/labels/c.txt:1"]
    # the two unreadable lines are rows too: rejected (ultralytics drops their images), and so
    # is the box without area, which no framework trains on
    assert report.counts == {"rows": 8, "usable": 4, "ignored": 0, "rejected": 4}
    assert [(e.row, e.value) for e in lg031.examples] == [(1, "1"), (3, "x")]


def test_yolo_clean_and_names_count(tmp_path: Path) -> None:
    root = yolo(
        tmp_path / "y",
        {"labels/a.txt": "0 0.5 0.5 0.2 0.2\n2 0.3 0.3 0.1 0.1\n"},
        names="nc: 4\nnames: [cat, dog, bird]\n",
    )
    report = validate(root)
    assert "states 4 classes and names 3" in finding(report, "LG009").message


def test_real_yolo_folders(real_world: Path) -> None:
    base = real_world / "annotations/yolo"
    roboflow = validate(base / "datumaro_roboflow_yolo")
    assert codes(roboflow)["error"] == set() and roboflow.counts["rows"] == 4
    darknet = validate(base / "datumaro_darknet_strict")
    assert darknet.input["annotations"]["format"] == "yolo"
    assert codes(darknet)["error"] == set()
    unused = finding(darknet, "LG012")
    assert unused.count == 8  # obj.names has 10 classes, 1.txt uses 2 and 4
    studio = validate(base / "labelstudio_import_yolo")  # CRLF class list and label files
    assert studio.counts["rows"] == 25 and codes(studio)["error"] == set()
    assert "\r" not in json.dumps(studio.classes)


# -- Pascal VOC ---------------------------------------------------------------------------------


def voc(folder: Path, name: str, objects: list[tuple[str, tuple[int, int, int, int]]]) -> None:
    body = "".join(
        f"<object><name>{n}</name><difficult>1</difficult><bndbox><xmin>{b[0]}</xmin>"
        f"<ymin>{b[1]}</ymin><xmax>{b[2]}</xmax><ymax>{b[3]}</ymax></bndbox></object>"
        for n, b in objects
    )
    (folder / name).write_text(
        f"<annotation><size><width>50</width><height>40</height></size>{body}</annotation>"
    )


def test_voc_name_not_in_map_is_named_with_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "v"
    folder.mkdir()
    (folder / "class_names.txt").write_text("person\ntv\n")
    voc(folder, "a.xml", [("person", (1, 1, 10, 10)), ("tvmonitor", (1, 1, 5, 5))])
    voc(folder, "b.xml", [("tv", (40, 1, 60, 10)), ("tv", (5, 5, 5, 9))])
    report = validate(folder)
    assert [e.id for e in finding(report, "LG030").examples] == ["a.xml#1"]
    assert [e.id for e in finding(report, "LG028").examples] == ["b.xml#0"]
    assert [e.id for e in finding(report, "LG027").examples] == ["b.xml#1"]
    assert report.input["annotations"]["read"]["difficult"] == 3
    assert [e.value for e in finding(report, "LG030").examples] == ["tvmonitor"]
    # tvmonitor (no class) and the box without area (b.xml#1): no framework trains on them
    assert report.counts == {"rows": 4, "usable": 2, "ignored": 0, "rejected": 2}


def test_real_voc_files(shared_real_world: Path) -> None:
    base = shared_real_world / "annotations/voc"
    raccoon = validate(base / "raccoon")
    assert codes(raccoon)["error"] == set() and raccoon.counts["rows"] == 6
    labelme = base / "labelme_bbox_voc2011"
    from labelgate.contract.classmap import load_class_map

    names = load_class_map(labelme / "class_names.txt")
    report = validate(labelme / "Annotations", class_map=names)
    assert report.counts["rows"] == 9 and codes(report)["error"] == set()
    datumaro = validate(base / "datumaro_voc_dataset2", background=0)
    assert finding(datumaro, "LG032").count == 1  # the object named "background"


# -- ImageFolder --------------------------------------------------------------------------------


def tree(root: Path, layout: dict[str, int]) -> None:
    for folder, n in layout.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            (root / folder / f"{i}.jpg").write_bytes(b"\xff\xd8\xff\xd9")


def test_imagefolder_stray_empty_and_splits(tmp_path: Path) -> None:
    root = tmp_path / "data"
    tree(
        root,
        {"train/cat": 2, "train/dog": 2, "train/.ipynb_checkpoints": 1, "val/cat": 1, "val/dog": 0},
    )
    (root / "train/cat/readme.md").write_text("x")
    report = validate(root)
    lg033 = finding(report, "LG033")
    assert [e.id for e in lg033.examples] == ["train/.ipynb_checkpoints", "val/dog", "val"]
    assert "becomes class 0 and shifts the 2 classes after it" in lg033.message
    assert report.input["annotations"]["read"]["skipped_files"] == 1
    clean = tmp_path / "clean"
    tree(clean, {"cat": 2, "dog": 3})
    ok = validate(clean)
    assert codes(ok)["error"] == set() and ok.counts["rows"] == 5
    assert ok.classes[1]["name"] == "dog"


def test_real_imagefolder(real_world: Path) -> None:
    report = validate(real_world / "annotations/imagefolder/datumaro_imagenet_dataset")
    assert report.counts["rows"] == 3  # the root's own image is skipped; the nested one counts
    assert [c["name"] for c in report.classes] == ["label_0", "label_1"]


# -- Hugging Face -------------------------------------------------------------------------------


def hf_parquet(path: Path, labels: list[int]) -> Path:
    features = {"label": {"names": ["neg", "pos"], "_type": "ClassLabel"}}
    meta = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    pq.write_table(pa.table({"label": labels}).replace_schema_metadata(meta), path)
    return path


def test_hf_parquet_class_label_and_no_label(tmp_path: Path) -> None:
    good = validate(hf_parquet(tmp_path / "a.parquet", [0, 1, 1, 0]))
    assert codes(good)["error"] == set() and good.classes[1]["name"] == "pos"
    bad = validate(hf_parquet(tmp_path / "b.parquet", [0, 1, -1, -1]))
    lg005 = finding(bad, "LG005")
    assert "Hugging Face" in lg005.fix and "--ignore-index -1" in lg005.fix


def test_real_hf_save_to_disk(shared_real_world: Path) -> None:
    folder = shared_real_world / "annotations/hf/fdm045_save_to_disk_test"
    assert choose([str(folder)]).reader.name == "hf"
    with pytest.raises(Exception, match="--classes K is required"):
        validate(folder)  # a plain int64 column: no ClassLabel, no class count
    report = validate(folder, classes=11)
    assert report.counts["rows"] == 749 and codes(report)["error"] == set()


# -- detection and the command line -------------------------------------------------------------


def test_detection_of_each_format(tmp_path: Path) -> None:
    assert choose([str(coco(tmp_path / "a.json", boxes(1), CATS))]).reader.name == "coco"
    (tmp_path / "x.parquet").write_bytes(b"")
    assert choose([str(tmp_path / "x.parquet")]).reader.name == "table"
    other = tmp_path / "o.json"
    other.write_text('{"a": 1}')
    with pytest.raises(InputError, match=r"unknown format: no reader claims this \.json file"):
        choose([str(other)])


def test_input_format_flag_and_report(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", boxes(6), CATS)
    result = run_here("validate", str(path), "--input-format", "coco", "--format", "json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["input"]["annotations"]["detected_because"] == "--input-format coco"
    assert doc["input"]["files"] == [{"path": str(path), "format": "coco"}]
    wrong = run_here("validate", str(path), "--input-format", "yolo")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1


def test_an_entity_bomb_in_voc_xml_stops_at_once(tmp_path: Path) -> None:
    lol = "".join(f'<!ENTITY l{i} "{("&l" + str(i - 1) + ";") * 10}">' for i in range(1, 10))
    (tmp_path / "a.xml").write_text(
        f'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY l0 "lol">{lol}]>'
        "<annotation><object><name>&l9;</name></object></annotation>"
    )
    result = run_here("validate", str(tmp_path), "--classes", "2")
    assert result.returncode == 2 and "not a readable Pascal VOC XML file" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("name", ["saved", "reviews.parquet"])
def test_files_written_by_the_datasets_library(name: str) -> None:
    """tests/fixtures/hf_written/ was written by datasets 5.2.0 (make.py beside the files)."""
    path = Path(__file__).parent / "fixtures" / "hf_written" / name
    assert choose([str(path)]).reader.name == "hf"
    report = validate(path)
    assert [c["name"] for c in report.classes] == ["neg", "neu", "pos"]
    lg005 = finding(report, "LG005")
    assert lg005.count == 2 and "Hugging Face" in lg005.fix
    assert report.counts["rows"] == 12


def test_background_index_from_the_contract(tmp_path: Path) -> None:
    cats = [{"id": 0, "name": "background"}, {"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}]
    path = coco(tmp_path / "a.json", boxes(6), cats)
    contract = tmp_path / "contract.yaml"
    contract.write_text("num_classes: 3\nbackground_index: 0\n")
    result = run_here("validate", str(path), "--schema", str(contract), "--format", "json")
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert [f["count"] for f in doc["findings"] if f["code"] == "LG032"] == [2]
    assert doc["contract"]["background_index"] == 0
    contract.write_text("num_classes: 3\nbackground_index: zero\n")
    bad = run_here("validate", str(path), "--schema", str(contract))
    assert bad.returncode == 2 and "background_index" in bad.stderr


def test_coco_source_field_names_each_row_by_its_image(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", boxes(8), CATS)
    report = run([str(path)], Contract(), source_field="file_name").report
    assert [s["source"] for s in report.sources] == ["0.jpg", "1.jpg", "2.jpg", "3.jpg"]
    plain_report = validate(path)
    assert [s["source"] for s in plain_report.sources] == ["a.json"]
    result = run_here("validate", str(tmp_path), "--input-format", "yolo", "--source-field", "x")
    assert result.returncode == 2 and "--source-field" in result.stderr


def test_a_folder_of_tables_stays_a_table_whatever_else_it_holds(tmp_path: Path) -> None:
    """Shards beside a stray XML file or image are the table they always were."""
    (tmp_path / "part-0").mkdir()
    pq.write_table(pa.table({"label": [0, 1]}), tmp_path / "part-0" / "a.parquet")
    (tmp_path / "notes.xml").write_text("<a/>")
    (tmp_path / "part-0" / "plot.png").write_bytes(b"\x89PNG")
    found = choose([str(tmp_path)])
    assert (found.reader.name, found.why) == (
        "table",
        "a folder holding label tables (Parquet, CSV or JSONL)",
    )


def test_fix_writes_the_rows_of_a_format_as_a_table(tmp_path: Path, samples: Path) -> None:
    out, quarantine = tmp_path / "fixed.parquet", tmp_path / "rejected.parquet"
    result = run_here(
        "fix",
        str(samples / "formats" / "yolo_bad"),
        "--out",
        str(out),
        "--quarantine",
        str(quarantine),
    )
    assert result.returncode == 0, result.stderr
    # line 1 is unreadable (a rejected row), line 2 holds class 3 of 3; img_2.txt line 1 is a
    # box without area, which no framework trains on
    assert pq.read_table(quarantine).column("id").to_pylist() == [
        "train/labels/img_1.txt:1",
        "train/labels/img_1.txt:2",
        "train/labels/img_2.txt:1",
    ]
    assert pq.read_table(out).num_rows == 13
    assert (samples / "formats" / "yolo_bad" / "train" / "labels" / "img_1.txt").read_text() == (
        "1 0.5 0.5 0.2\n3 0.5 0.5 0.2 0.3\n0 0.95 0.5 0.2 0.3\n"
    )  # the annotation files are never rewritten


def test_one_yolo_label_file_asks_for_its_folder(tmp_path: Path) -> None:
    """A YOLO label file given alone has no class list: the error says what to give instead,
    not that it is no dataset YAML."""
    label = tmp_path / "2007_001430.txt"
    label.write_text("0 0.5 0.5 0.2 0.2\n")
    result = run_here("validate", str(label), "--input-format", "yolo")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "a YOLO label file alone: give the folder" in result.stderr
    assert "not a dataset YAML" not in result.stderr
