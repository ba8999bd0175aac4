"""Detection CSVs of class names (TF Object Detection, OpenImages, keras-retinanet): generated
files of each layout, clean and with planted faults, and the real raccoon_dataset CSV."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest

from labelgate import Contract
from labelgate.contract.classmap import load_class_map
from labelgate.core.report import Report
from labelgate.readers import choose
from labelgate.run.validation import run

from .support.inproc import run_here

TFOD_HEADER = "filename,width,height,class,xmin,ymin,xmax,ymax"
OI_HEADER = (
    "ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,"
    "IsOccluded,IsTruncated,IsGroupOf,IsDepiction,IsInside"
)
LABEL_MAP = "item {\n  id: 1\n  name: 'cat'\n}\nitem {\n  id: 2\n  name: 'dog'\n}\n"


def validate(path: Path, **kw: Any) -> Report:
    contract = Contract(num_classes=kw.pop("classes", None), class_map=kw.pop("class_map", None))
    return run([str(path)], contract, max_examples=0, **kw).report


def codes(report: Report) -> set[str]:
    return {f.code for f in report.findings}


def finding(report: Report, code: str) -> Any:
    (f,) = [f for f in report.findings if f.code == code]
    return f


def tfod(folder: Path, rows: list[str], *, label_map: str | None = LABEL_MAP) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "train_labels.csv"
    path.write_text("\n".join([TFOD_HEADER, *rows]) + "\n")
    if label_map is not None:
        (folder / "label_map.pbtxt").write_text(label_map)
    return path


CLEAN_TFOD = [
    "b.jpg,100,80,dog,5,5,60,70",
    "a.jpg,100,80,cat,10,10,50,40",
    "a.jpg,100,80,dog,0,0,100,80",
]


class TestDetection:
    @pytest.mark.parametrize(
        "first",
        [
            TFOD_HEADER,
            "image,label,xmin,ymin,xmax,ymax",  # another header of image, names and boxes
            OI_HEADER,
        ],
    )
    def test_headers_of_names_and_boxes_are_detection_csvs(
        self, tmp_path: Path, first: str
    ) -> None:
        path = tmp_path / "boxes.csv"
        cells = first.split(",")
        row = ["x" if c.lower() in ("class", "label", "labelname") else "1" for c in cells]
        path.write_text(f"{first}\n{','.join(row)}\n")
        assert choose([str(path)]).reader.name == "detcsv"

    def test_retinanet_rows_without_a_header(self, tmp_path: Path) -> None:
        path = tmp_path / "annotations.csv"
        path.write_text("img_001.jpg,837,346,981,456,cow\nimg_003.jpg,,,,,\n")
        assert choose([str(path)]).reader.name == "detcsv"

    @pytest.mark.parametrize(
        "text",
        [
            f"{TFOD_HEADER}\na.jpg,100,80,1,10,10,50,40\n",  # integer labels: a label table
            "img.jpg,1,2,3,4,0\n",  # retinanet's shape with an integer class: a table
            "id,label\n1,cat\n",  # names without boxes: a table (LG002)
        ],
    )
    def test_tables_stay_tables(self, tmp_path: Path, text: str) -> None:
        path = tmp_path / "t.csv"
        path.write_text(text)
        assert choose([str(path)]).reader.name == "table"

    def test_a_task_other_than_detection_reads_it_as_a_table(self, tmp_path: Path) -> None:
        path = tfod(tmp_path, CLEAN_TFOD)
        assert choose([str(path)], task="multiclass").reader.name == "table"


class TestTfObjectDetection:
    def test_clean_with_its_label_map_beside(self, tmp_path: Path) -> None:
        report = validate(tfod(tmp_path, CLEAN_TFOD))
        assert report.findings == () and report.counts["rows"] == 3
        assert report.contract["num_classes"] == 3  # ids 1..2 and the background 0
        assert any("label_map_util.py:37-39" in n for n in report.notes)
        names = {c["index"]: c["name"] for c in report.classes}
        assert names[1] == "cat" and names[2] == "dog"
        counts = {c["index"]: c["count"] for c in report.classes}
        assert (counts[1], counts[2]) == (1, 2)

    def test_without_a_map_the_sorted_names_and_a_note(self, tmp_path: Path) -> None:
        report = validate(tfod(tmp_path, CLEAN_TFOD, label_map=None))
        assert report.findings == () and report.contract["num_classes"] == 2
        assert [c["name"] for c in report.classes] == ["cat", "dog"]
        assert any("sorted names (0..N-1)" in n and "label map" in n for n in report.notes)

    def test_images_in_sorted_order_rows_named_by_file_line_image(self, tmp_path: Path) -> None:
        path = tfod(tmp_path, [*CLEAN_TFOD, "c.jpg,100,80,cat,0,0,0,10"])
        report = validate(path)
        (example,) = finding(report, "LG027").examples
        assert example.id == "train_labels.csv:5:c.jpg"
        assert example.batch == 0 and report.batches["unit"] == "images"
        assert report.input["annotations"]["read"]["images"] == 3

    def test_zero_area_box_past_width_and_unknown_name(self, tmp_path: Path) -> None:
        path = tfod(
            tmp_path,
            [
                "a.jpg,100,80,cat,10,10,10,40",  # zero width: LG027
                "b.jpg,100,80,dog,50,10,120,40",  # past width 100: LG028
                "c.jpg,100,80,horse,5,5,20,20",  # not in label_map.pbtxt: LG030
                "d.jpg,100,80,cat,5,5,20,20",
            ],
        )
        report = validate(path)
        assert codes(report) == {"LG027", "LG028", "LG030"}
        assert [e.id for e in finding(report, "LG027").examples] == ["train_labels.csv:2:a.jpg"]
        assert [e.id for e in finding(report, "LG028").examples] == ["train_labels.csv:3:b.jpg"]
        lg030 = finding(report, "LG030")
        assert "'horse'" in lg030.message and "label_map.pbtxt" in lg030.fix
        assert lg030.details["names"] == ["horse"]
        assert report.counts["rows"] == 3  # the horse box is no row: no index stands for it
        assert report.failed

    def test_a_name_spelled_otherwise_than_the_map(self, tmp_path: Path) -> None:
        report = validate(tfod(tmp_path, ["a.jpg,100,80,Cat,10,10,50,40"]))
        lg030 = finding(report, "LG030")
        assert "'Cat'" in lg030.message and "spells 'cat'" in lg030.message

    def test_a_text_class_map_given_numbers_from_0(self, tmp_path: Path) -> None:
        (tmp_path / "classes.txt").write_text("cat\ndog\n")
        given = load_class_map(tmp_path / "classes.txt")
        report = validate(tfod(tmp_path, CLEAN_TFOD, label_map=None), class_map=given)
        assert report.findings == () and report.contract["num_classes"] == 2

    def test_two_label_maps_beside_are_named_not_guessed(self, tmp_path: Path) -> None:
        path = tfod(tmp_path, CLEAN_TFOD)
        (tmp_path / "other.pbtxt").write_text(LABEL_MAP)
        report = validate(path)
        assert any("2 .pbtxt label maps beside the CSV" in n for n in report.notes)
        assert report.contract["num_classes"] == 2  # the sorted names

    def test_images_beside_the_csv_are_checked(self, tmp_path: Path) -> None:
        from PIL import Image

        (tmp_path / "images").mkdir()
        Image.new("RGB", (100, 80)).save(tmp_path / "images" / "a.jpg")
        Image.new("RGB", (90, 80)).save(tmp_path / "images" / "b.jpg")  # the CSV says 100
        report = validate(tfod(tmp_path, [*CLEAN_TFOD, "c.jpg,100,80,cat,1,1,5,5"]))
        assert codes(report) == {"LG041", "LG043"}
        assert [e.id for e in finding(report, "LG041").examples] == ["c.jpg"]
        assert [e.id for e in finding(report, "LG043").examples] == ["b.jpg"]

    def test_cli_exit_status_and_a_broken_label_map(self, tmp_path: Path) -> None:
        path = tfod(tmp_path, CLEAN_TFOD)
        assert run_here("validate", str(path)).returncode == 0
        (tmp_path / "label_map.pbtxt").write_text("item { id: 0 name: 'cat' }\n")
        result = run_here("validate", str(path))
        assert result.returncode == 2 and "reserves for the background" in result.stderr
        assert "Traceback" not in result.stderr


class TestOpenImages:
    ROWS: ClassVar[list[str]] = [
        "000026e7ee790996,xclick,/m/07j7r,1,0.071875,0.1453125,0.20625,0.39166668,0,1,1,0,0",
        "000062a39995e348,freeform,/m/015p6,1,0.20620842,0.849224,0.15463917,1,0,0,0,0,0",
        "000062a39995e348,xclick,/m/05s2s,1,0.13747229,0.37694013,0,0.88365245,1,1,0,0,0",
    ]

    def write(self, folder: Path, rows: list[str]) -> Path:
        path = folder / "validation-annotations-bbox.csv"
        path.write_text("\n".join([OI_HEADER, *rows]) + "\n")
        return path

    def test_clean_sorted_ids_and_sources(self, tmp_path: Path) -> None:
        report = validate(self.write(tmp_path, self.ROWS))
        assert report.findings == () and report.contract["num_classes"] == 3
        assert [c["name"] for c in report.classes] == ["/m/015p6", "/m/05s2s", "/m/07j7r"]
        assert {s["source"] for s in report.sources} == {"xclick", "freeform"}
        read = report.input["annotations"]["read"]
        assert (read["images"], read["IsGroupOf"], read["IsOccluded"]) == (2, 1, 1)

    def test_normalised_past_one_and_zero_area(self, tmp_path: Path) -> None:
        rows = [
            *self.ROWS,
            "00ff,xclick,/m/07j7r,1,0.2,1.3,0.1,0.5,0,0,0,0,0",  # XMax 1.3: LG028
            "00fe,xclick,/m/07j7r,1,0.4,0.4,0.1,0.5,0,0,0,0,0",  # XMin == XMax: LG027
        ]
        report = validate(self.write(tmp_path, rows))
        assert codes(report) == {"LG027", "LG028"}
        assert [e.id for e in finding(report, "LG028").examples] == [
            "validation-annotations-bbox.csv:5:00ff"
        ]

    def test_class_descriptions_one_level_up_are_the_map(self, tmp_path: Path) -> None:
        (tmp_path / "class-descriptions-boxable.csv").write_text(
            "/m/011k07,Tortoise\n/m/015p6,Bird\n/m/05s2s,Plant\n/m/07j7r,Tree\n"
        )
        (tmp_path / "validation").mkdir()
        path = self.write(tmp_path / "validation", [*self.ROWS, "00ff,xclick,/m/0zzz,1,0,1,0,1"])
        report = validate(path)
        assert report.contract["num_classes"] == 4  # the descriptions' rows, in their order
        assert [c["name"] for c in report.classes][:2] == ["/m/011k07", "/m/015p6"]
        assert codes(report) == {"LG030", "LG012"}  # /m/0zzz unknown; Tortoise never used
        assert "'/m/0zzz'" in finding(report, "LG030").message


class TestRetinanet:
    def write(self, folder: Path, rows: list[str], classes: str | None = "cow,0\ncat,1\n") -> Path:
        path = folder / "annotations.csv"
        path.write_text("\n".join(rows) + "\n")
        if classes is not None:
            (folder / "classes.csv").write_text(classes)
        return path

    def test_clean_with_negatives_and_its_classes_file(self, tmp_path: Path) -> None:
        path = self.write(
            tmp_path,
            [
                "img_001.jpg,837,346,981,456,cow",
                "img_002.jpg,215,312,279,391,cat",
                "img_003.jpg,,,,,",
            ],
        )
        report = validate(path)
        assert report.findings == () and report.contract["num_classes"] == 2
        read = report.input["annotations"]["read"]
        assert (read["images"], read["negative_rows"], read["images_without_boxes"]) == (3, 1, 1)

    def test_faults(self, tmp_path: Path) -> None:
        path = self.write(
            tmp_path,
            [
                "img_001.jpg,837,346,981,456,cow",
                "img_002.jpg,215,312,215,391,cat",  # x2 == x1: LG027 (retinanet raises too)
                "img_003.jpg,1,1,2.5,8,cow",  # int() refuses 2.5: LG031
                "img_004.jpg,1,1,5,8,horse",  # not in classes.csv: LG030
            ],
        )
        report = validate(path)
        # cat's one box has no width: a rejected row, so cat has no usable box left (LG012)
        assert codes(report) == {"LG012", "LG027", "LG030", "LG031"}
        assert "'cat'" in finding(report, "LG012").message
        assert "int()" in finding(report, "LG031").message
        assert "unknown class name" in finding(report, "LG030").fix

    def test_classes_file_as_class_names(self, tmp_path: Path) -> None:
        (tmp_path / "my_classes.csv").write_text("cow,0\ncat,1\nbird,2\n")
        cmap = load_class_map(tmp_path / "my_classes.csv")
        assert cmap.entries == ((0, "cow"), (1, "cat"), (2, "bird"))
        path = self.write(tmp_path, ["a.jpg,1,1,5,8,bird"], classes=None)
        report = validate(path, class_map=cmap)
        assert report.findings != () and report.contract["num_classes"] == 3
        assert codes(report) == {"LG012"}  # cow and cat unused


def test_a_file_named_detcsv_that_is_not_one_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,label\n1,2\n")
    result = run_here("validate", str(path), "--input-format", "detcsv")
    assert result.returncode == 2 and "not a detection CSV" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_csv_without_a_whole_row_is_a_one_line_error(tmp_path: Path) -> None:
    path = tfod(tmp_path, ["a.jpg,100,80,cat,1,1,5"], label_map=None)  # ymax missing
    result = run_here("validate", str(path))
    assert result.returncode == 2 and "no row holds the header's 8 columns" in result.stderr


def test_undecodable_csv_is_a_one_line_error(tmp_path: Path) -> None:
    path = tfod(tmp_path, CLEAN_TFOD)
    path.write_bytes(path.read_bytes() + b"e.jpg,100,80,\xff\xfe,1,1,5,5\n")
    result = run_here("validate", str(path))
    assert result.returncode == 2 and "not a readable CSV file" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_real_raccoon_csv_passes(shared_real_world: Path, tmp_path: Path) -> None:
    """datitran/raccoon_dataset's data/raccoon_labels.csv (217 boxes, 200 images, one class) and
    its training/object-detection.pbtxt: clean with no flag, with its label map, and alone."""
    other = shared_real_world / "annotations" / "other"
    csv, pbtxt = other / "raccoon_labels.csv", other / "raccoon_object-detection.pbtxt"
    result = run_here("validate", str(csv))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "read as detcsv" in result.stdout and "K=2" in result.stdout
    result = run_here("validate", str(csv), "--class-names", str(pbtxt))
    assert result.returncode == 0, result.stdout + result.stderr
    alone = tmp_path / csv.name
    shutil.copy(csv, alone)
    result = run_here("validate", str(alone))
    assert result.returncode == 0 and "K=1" in result.stdout, result.stdout + result.stderr
    report = validate(csv)
    assert report.counts["rows"] == 217 and report.input["annotations"]["read"]["images"] == 200
