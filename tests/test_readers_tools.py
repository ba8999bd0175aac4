"""The exports annotation tools write (CVAT XML, Label Studio JSON, labelme JSON and MIT LabelMe
XML), layouts refused rather than guessed, and files read together as one dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import labelgate
from labelgate.errors import InputError
from labelgate.readers import choose
from tests.conftest import SAMPLES, run_cli

OTHER = "annotations/other"


def by_code(report: labelgate.Report) -> dict[str, list[str]]:
    """Each finding's code -> the ids it names."""
    return {f.code: [str(e.id) for e in f.examples] for f in report.findings}


# -- CVAT --------------------------------------------------------------------------------------


class TestCvat:
    def test_the_real_export_passes_naming_its_unlabelled_shapes(
        self, shared_real_world: Path
    ) -> None:
        report = labelgate.validate(str(shared_real_world / OTHER / "cvat_export_task_train.xml"))
        # label1 (box) and label2 (points) are declared; the polyline and polygon say label="",
        # Datumaro's export of annotations without a label: rejected rows, a warning
        assert [c["name"] for c in report.classes] == ["label1", "label2"]
        assert report.counts == {"rows": 4, "usable": 2, "ignored": 0, "rejected": 2}
        assert by_code(report) == {"LG048": ["img0.jpg#1", "img1.jpg#0"]}
        assert report.passed

    def test_planted_faults_are_named_by_image_and_shape(self) -> None:
        report = labelgate.validate(str(SAMPLES / "formats" / "cvat_bad.xml"))
        found = by_code(report)
        assert found["LG030"] == ["img_1.jpg#0"]  # cow
        assert found["LG028"] == ["img_1.jpg#1"]  # past the edge
        assert found["LG027"] == ["img_1.jpg#2"]  # zero width
        assert found["LG031"] == ["img_1.jpg#3"]  # a two-point polygon

    def test_video_tracks_give_a_row_per_visible_frame(self, tmp_path: Path) -> None:
        xml = tmp_path / "video.xml"
        xml.write_text(
            "<annotations><version>1.1</version><meta><task><labels>"
            "<label><name>car</name></label><label><name>person</name></label></labels>"
            "<original_size><width>100</width><height>50</height></original_size></task></meta>"
            '<track id="3" label="car">'
            '<box frame="11" outside="0" occluded="0" xtl="1" ytl="1" xbr="9" ybr="9"/>'
            '<box frame="12" outside="0" occluded="1" xtl="90" ytl="1" xbr="120" ybr="9"/>'
            '<box frame="13" outside="1" occluded="0" xtl="1" ytl="1" xbr="9" ybr="9"/></track>'
            '<track id="4" label="bicycle">'
            '<box frame="11" outside="0" occluded="0" xtl="1" ytl="1" xbr="9" ybr="9"/></track>'
            "</annotations>"
        )
        report = labelgate.validate(str(xml))
        # frames 11 and 12 of track 3 (13 is outside), and track 4's frame: a rejected row
        assert report.counts == {"rows": 3, "usable": 2, "ignored": 0, "rejected": 1}
        found = by_code(report)
        assert found["LG028"] == ["track 3 frame 12"]  # past the 100-pixel frame
        assert found["LG030"] == ["track 4 frame 11"]  # bicycle is not declared
        assert any("marked outside" in n for n in report.notes)
        assert report.to_dict()["input"]["annotations"]["read"]["occluded"] == 1


# -- Label Studio ------------------------------------------------------------------------------


class TestLabelStudio:
    def test_the_real_export_takes_its_classes_from_the_config_beside_it(
        self, shared_real_world: Path
    ) -> None:
        report = labelgate.validate(
            str(shared_real_world / OTHER / "labelstudio_export_yolo_data.json")
        )
        assert report.passed
        assert [c["name"] for c in report.classes] == ["parasites", "white"]
        assert report.counts["rows"] == 6  # both annotators of task 1 are read
        assert any("label_config.xml" in n for n in report.notes)

    def test_planted_faults_are_named_by_task(self) -> None:
        report = labelgate.validate(str(SAMPLES / "formats" / "labelstudio_bad" / "export.json"))
        found = by_code(report)
        assert found["LG030"] == ["task 1 annotation 10 result c1"]  # no Choice of its control
        assert found["LG027"] == ["task 2 annotation 20 result r2"]
        assert found["LG028"] == ["task 3 annotation 30 result r3"]
        assert found["LG031"] == ["task 4 annotation 40 result g4"]
        assert "1 cancelled annotations skipped (task 4 annotation 41)" in report.notes
        assert report.to_dict()["input"]["annotations"]["read"]["cancelled"] == 1

    def test_predictions_are_not_rows(self) -> None:
        report = labelgate.validate(str(SAMPLES / "formats" / "labelstudio_good" / "export.json"))
        assert report.passed and report.counts["rows"] == 9
        assert any("1 predictions" in n for n in report.notes)

    def test_json_min_and_ner_spans(self, tmp_path: Path) -> None:
        (tmp_path / "label_config.xml").write_text(
            '<View><Text name="text" value="$text"/><Labels name="label" toName="text">'
            '<Label value="PER"/><Label value="ORG"/></Labels>'
            '<Choices name="topic" toName="text"><Choice value="news"/></Choices></View>'
        )
        rows = [
            {
                "id": 5,
                "text": "Ada works at ACME",
                "annotation_id": 9,
                "annotator": 1,
                "label": [
                    {"start": 0, "end": 3, "text": "Ada", "labels": ["PER"]},
                    {"start": 12, "end": 12, "text": "", "labels": ["ORG"]},
                    {"start": 12, "end": 17, "text": "ACME", "labels": ["LOC"]},
                ],
                "topic": "news",
            }
        ]
        export = tmp_path / "export_min.json"
        export.write_text(json.dumps(rows))
        assert choose([str(export)]).reader.name == "labelstudio"
        report = labelgate.validate(str(export))
        found = by_code(report)
        assert found["LG031"] == ["task 5 annotation 9 label#1"]  # an empty span
        assert found["LG030"] == ["task 5 annotation 9 label#2"]  # LOC is not a Label
        # PER, the empty ORG span (a row, LG031), LOC (a rejected row) and the topic
        assert report.counts == {"rows": 4, "usable": 3, "ignored": 0, "rejected": 1}

    def test_spans_whose_offsets_miss_their_text(self, tmp_path: Path) -> None:
        task = {
            "id": 1,
            "data": {"text": "Ada works at ACME"},
            "annotations": [
                {
                    "id": 2,
                    "result": [
                        {
                            "id": "s",
                            "type": "labels",
                            "from_name": "label",
                            "to_name": "text",
                            "value": {"start": 1, "end": 4, "text": "Ada", "labels": ["PER"]},
                        }
                    ],
                }
            ],
        }
        export = tmp_path / "export.json"
        export.write_text(json.dumps([task]))
        report = labelgate.validate(str(export))
        assert by_code(report)["LG031"] == ["task 1 annotation 2 result s"]
        assert any("labels found, sorted" in n for n in report.notes)


# -- LabelMe -----------------------------------------------------------------------------------


class TestLabelMe:
    def test_the_real_file_leaves_ignore_regions_out(self, shared_real_world: Path) -> None:
        report = labelgate.validate(
            str(shared_real_world / OTHER / "labelme_semantic_2011_000003.json")
        )
        assert report.passed and report.counts["rows"] == 4  # person x3, bottle
        assert any("__ignore__" in n for n in report.notes)

    def test_labels_txt_given_with_ignore_as_a_class_is_named(
        self, shared_real_world: Path
    ) -> None:
        labels = shared_real_world / "annotations/segmentation/labelme_semantic_voc2011/labels.txt"
        report = labelgate.validate(
            str(shared_real_world / OTHER / "labelme_semantic_2011_000003.json"),
            class_names=str(labels),
        )
        assert by_code(report)["LG030"] == ["labels.txt:1"]

    def test_planted_faults_are_named_by_file_and_shape(self) -> None:
        report = labelgate.validate(str(SAMPLES / "formats" / "labelme_bad"), background=0)
        found = by_code(report)
        assert found["LG031"] == ["img_1.json#0"]  # a one-point rectangle
        assert found["LG030"] == ["img_1.json#1"]  # cow
        assert found["LG028"] == ["img_1.json#2"]
        # labels.txt beside the files: __ignore__ is no class, _background_ is 0
        assert [c["name"] for c in report.classes][:2] == ["_background_", "cat"]

    def test_mit_labelme_xml(self, tmp_path: Path) -> None:
        def obj(name: str, points: list[tuple[int, int]], deleted: int = 0) -> str:
            pts = "".join(f"<pt><x>{x}</x><y>{y}</y></pt>" for x, y in points)
            return (
                f"<object><name>{name}</name><deleted>{deleted}</deleted>"
                f"<polygon><username>a</username>{pts}</polygon></object>"
            )

        (tmp_path / "a.xml").write_text(
            "<annotation><filename>a.jpg</filename><folder>f</folder>"
            "<imagesize><nrows>40</nrows><ncols>60</ncols></imagesize>"
            + obj("car", [(1, 1), (9, 1), (9, 9)])
            + obj("car", [(1, 1), (9, 1)])
            + obj("tree", [(1, 1), (80, 1), (9, 9)])
            + obj("car", [(1, 1), (9, 1), (9, 9)], deleted=1)
            + "</annotation>"
        )
        assert choose([str(tmp_path)]).reader.name == "labelme"
        assert choose([str(tmp_path / "a.xml")]).reader.name == "labelme"
        report = labelgate.validate(str(tmp_path))
        found = by_code(report)
        assert found["LG031"] == ["a.xml#1"]
        assert found["LG028"] == ["a.xml#2"]
        assert report.counts["rows"] == 3
        assert any("1 deleted" in n for n in report.notes)


# -- fix writes a label table from these formats ------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "path",
    ["formats/cvat_bad.xml", "formats/labelstudio_bad/export.json", "formats/labelme_bad"],
)
def test_fix_writes_a_label_table(path: str, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out, rejected = tmp_path / "fixed.parquet", tmp_path / "rejected.parquet"
    given = SAMPLES / path
    before = {p: p.stat().st_mtime_ns for p in ([given] if given.is_file() else given.iterdir())}
    result = run_cli("fix", str(given), "--out", str(out), "--quarantine", str(rejected))
    assert result.returncode in (0, 1), result.stderr
    table = pq.read_table(out)
    assert {"id", "label", "source", "name"} <= set(table.column_names)
    quarantined = pq.read_table(rejected).num_rows if rejected.exists() else 0
    report = labelgate.validate(str(given))
    assert table.num_rows + quarantined == report.counts["rows"]
    assert labelgate.validate(str(out), classes=len(report.classes)).passed
    assert before == {p: p.stat().st_mtime_ns for p in before}  # the export is left as it was


# -- layouts labelgate does not read -------------------------------------------------------------


_KITTI_LINE = (
    "Pedestrian 0.00 0 -0.20 712.40 143.00 810.73 307.92 1.89 0.48 1.20 1.84 1.47 8.41 0.01\n"
)
_JPEG = b"\xff\xd8\xff"

# Each layout's whole signature, as the dataset ships it (file -> its first bytes).
LAYOUTS: dict[str, dict[str, bytes | str]] = {
    "KITTI": {"training/label_2/000001.txt": _KITTI_LINE, "training/image_2/000001.png": _JPEG},
    "DOTA": {
        "labelTxt/P0001.txt": "imagesource:GoogleEarth\ngsd:0.14\n"
        "10 10 20 10 20 20 10 20 plane 0\n",
        "images/P0001.png": _JPEG,
    },
    "WIDER FACE": {
        "wider_face_split/wider_face_train_bbx_gt.txt": "0--Parade/0_Parade_marchingband_1_849.jpg\n",
        "WIDER_train/images/0--Parade/a.jpg": _JPEG,
    },
    "MOT": {
        "MOT17-02/seqinfo.ini": "[Sequence]\nname=MOT17-02\nimDir=img1\n",
        "MOT17-02/gt/gt.txt": "1,1,912,484,97,109,0,7,1\n",
        "MOT17-02/img1/000001.jpg": _JPEG,
    },
    "Market-1501": {
        "bounding_box_train/0001_c1s1_000151_01.jpg": _JPEG,
        "query/0001_c1s1_0001_00.jpg": _JPEG,
    },
    "CamVid": {
        "trainannot/0001TP_006690.png": _JPEG,
        "train/0001TP_006690.png": _JPEG,
        "label_colors.txt": "64 128 64\tAnimal\n",
    },
    "ADE20K": {
        "objectInfo150.txt": "Idx\tRatio\tTrain\tVal\tName\n1\t0.1576\t11664\t1172\twall\n",
        "images/training/a.jpg": _JPEG,
        "annotations/training/a.png": _JPEG,
    },
    "SYNTHIA": {"GT/LABELS/000000.png": _JPEG, "RGB/000000.png": _JPEG},
    "Cityscapes": {
        "leftImg8bit/train/aachen/a_000000_000019_leftImg8bit.png": _JPEG,
        "gtFine/train/aachen/a_000000_000019_gtFine_polygons.json": "{}",
    },
}


def _plant(root: Path, files: dict[str, bytes | str]) -> None:
    for f, content in files.items():
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        (root / f).write_bytes(data)


@pytest.mark.parametrize(("name", "files"), sorted(LAYOUTS.items()))
def test_layouts_labelgate_does_not_read_are_refused_by_their_signature(
    name: str, files: dict[str, bytes | str], tmp_path: Path
) -> None:
    _plant(tmp_path, files)
    detected = choose([str(tmp_path)])
    assert detected.reader.name == "unsupported"
    with pytest.raises(InputError, match=f"looks like {name}.*which labelgate does not read"):
        labelgate.validate(str(tmp_path), classes=3)


@pytest.mark.parametrize(
    "folders",
    [
        ["label_0", "label_1", "label_2"],  # MVTec-style class names
        ["image_2", "calib", "velodyne"],  # KITTI's folder names, holding images only
        ["labelTxt", "gt", "bounding_box_train", "trainannot", "leftImg8bit", "GT", "RGB"],
        ["WIDER_train", "wider_face_split", "gtFine", "ADEChallengeData2016"],
    ],
)
def test_a_folder_named_like_a_refused_layout_is_not_refused(
    folders: list[str], tmp_path: Path
) -> None:
    """A name is no signature: class folders called label_2 or calib hold images, and stay an
    ImageFolder tree."""
    from PIL import Image

    for name in folders:
        (tmp_path / name).mkdir()
        Image.new("RGB", (4, 4)).save(tmp_path / name / "a.jpg")
    assert choose([str(tmp_path)]).reader.name == "imagefolder"
    report = labelgate.validate(str(tmp_path))
    assert [c["name"] for c in report.classes] == sorted(folders)


def test_a_kitti_label_folder_of_other_lines_is_not_kitti(tmp_path: Path) -> None:
    """label_2/ beside image_2/ is KITTI only where its lines are KITTI's 15 fields."""
    _plant(tmp_path, {"label_2/a.txt": "0 0.5 0.5 0.1 0.1\n", "image_2/a.jpg": _JPEG})
    try:
        found = choose([str(tmp_path)]).reader.name
    except InputError as exc:
        found = str(exc)
    assert "unsupported" not in found and "KITTI" not in found


def test_refused_layouts_exit_2_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "bounding_box_test").mkdir()
    (tmp_path / "bounding_box_test" / "0001_c1s1_000151_01.jpg").write_bytes(b"\xff\xd8\xff")
    result = run_cli("validate", str(tmp_path), "--classes", "3")
    assert result.returncode == 2
    assert "looks like Market-1501" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_cityscapes_tree_with_label_masks_stays_masks(tmp_path: Path) -> None:
    folder = tmp_path / "gtFine" / "val" / "frankfurt"
    folder.mkdir(parents=True)
    (folder / "f_gtFine_labelTrainIds.png").write_bytes(b"")
    assert choose([str(tmp_path)]).reader.name == "masks"


@pytest.mark.parametrize("header", ["name,r,g,b", "class_name,R,G,B", "r,g,b,name"])
def test_a_colour_table_is_not_a_label_table(header: str, tmp_path: Path) -> None:
    table = tmp_path / "class_dict.csv"
    table.write_text(f"{header}\nsky,128,128,128\nroad,128,64,128\n")
    with pytest.raises(InputError, match="colour table"):
        labelgate.validate(str(table), classes=2)
    plain = tmp_path / "labels.csv"
    plain.write_text("id,label\n1,0\n2,1\n")
    assert choose([str(plain)]).reader.name == "table"


# -- several files as one dataset, nothing skipped without a word ----------------------------


def test_coco_files_read_together_are_sources_and_compare_their_tables(tmp_path: Path) -> None:
    good = SAMPLES / "formats" / "coco_good.json"
    doc = json.loads(good.read_text())
    doc["categories"][2]["name"] = "kitten"
    other = tmp_path / "val.json"
    other.write_text(json.dumps(doc))
    report = labelgate.validate([str(good), str(other)])
    assert {s["source"] for s in report.sources} == {"coco_good.json", "val.json"}
    assert by_code(report)["LG030"] == ["val.json"]
    same = tmp_path / "same.json"
    same.write_text(good.read_text())
    assert "LG030" not in by_code(labelgate.validate([str(good), str(same)]))


def test_imagefolder_root_files_are_named_in_a_note(tmp_path: Path) -> None:
    for name in ("cat", "dog"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "a.jpg").write_bytes(b"\xff\xd8\xff")
    (tmp_path / "stray.jpg").write_bytes(b"\xff\xd8\xff")
    (tmp_path / "cat" / "notes.md").write_text("x")
    report = labelgate.validate(str(tmp_path))
    assert report.counts["rows"] == 2
    assert any(
        "1 file directly in the root is not a row" in n and "stray.jpg" in n for n in report.notes
    )
    assert any("1 file in class folders is not a row" in n for n in report.notes)


def test_a_single_mask_file_is_an_input() -> None:
    mask = SAMPLES / "masks" / "voc_good" / "2011_000000.png"
    report = labelgate.validate(str(mask), classes=21, ignore_index=255)
    assert report.counts["rows"] == 1
