"""Every annotation a reader reads is a row: one no class index stands for (an undeclared label, an
empty one, a category id that is no integer) is a rejected row, named by id in its source and batch
with its label as written, so that rows = usable + ignored + rejected; and an input that holds no
annotation says what it holds. Judged from the JSON report, as a user's CI reads it."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate.cli import main
from tests.conftest import run_cli

OTHER = "annotations/other"
COCO = "annotations/coco"


def validate_json(*args: str) -> tuple[int, dict[str, Any]]:
    """``labelgate validate ARGS --format json`` in this process: its exit status and report."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report.json"
        code = main(["validate", *args, "--format", "json", "--output", str(out)])
        return code, json.loads(out.read_text())


def findings(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["code"]: f for f in report["findings"]}


def accounted(report: dict[str, Any]) -> None:
    """The accounting identity, in the totals and in every source."""
    c = report["counts"]
    assert c["rows"] == c["usable"] + c["ignored"] + c["rejected"]
    for s in report["sources"]:
        assert s["rows"] == s["usable"] + s["ignored"] + s["rejected"]
    assert sum(s["rows"] for s in report["sources"]) == c["rows"]


# -- CVAT --------------------------------------------------------------------------------------


def cvat(path: Path, labels: list[str], shapes: list[str], *, version: bool = True) -> Path:
    """A CVAT for images file declaring ``labels``, one box per entry of ``shapes`` (its label)."""
    declared = "".join(f"<label><name>{n}</name></label>" for n in labels)
    boxes = "".join(
        f'<box label="{n}" occluded="0" xtl="1" ytl="1" xbr="9" ybr="9"/>' for n in shapes
    )
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<annotations>'
        + ("<version>1.1</version>" if version else "")
        + f"<meta><task><labels>{declared}</labels></task></meta>"
        + f'<image id="0" name="a.jpg" width="100" height="100">{boxes}</image></annotations>'
    )
    return path


class TestCvat:
    def test_a_shape_of_an_undeclared_label_is_a_rejected_row_naming_it(
        self, tmp_path: Path
    ) -> None:
        xml = cvat(tmp_path / "a.xml", ["car", "person"], ["car", "truck", "person"])
        code, report = validate_json(str(xml))
        assert code == 1
        assert report["counts"] == {"rows": 3, "usable": 2, "ignored": 0, "rejected": 1}
        assert report["sources"] == [
            {"source": "a.xml", "rows": 3, "usable": 2, "ignored": 0, "rejected": 1}
        ]
        lg030 = findings(report)["LG030"]
        assert "'truck'" in lg030["message"]
        assert [(e["row"], e["id"], e["batch"], e["value"]) for e in lg030["examples"]] == [
            (1, "a.jpg#1", 0, "truck")
        ]
        assert lg030["details"]["labels"] == {"truck": 1}
        assert "LG003" not in findings(report)  # the reader's rejection, not a lost label

    def test_an_empty_label_is_a_warning_and_a_rejected_row(self, tmp_path: Path) -> None:
        xml = cvat(tmp_path / "a.xml", ["car"], ["car", "", "car"])
        code, report = validate_json(str(xml))
        assert code == 0
        assert report["counts"] == {"rows": 3, "usable": 2, "ignored": 0, "rejected": 1}
        assert {c: f["severity"] for c, f in findings(report).items()} == {"LG048": "warning"}
        assert [e["id"] for e in findings(report)["LG048"]["examples"]] == ["a.jpg#1"]
        assert report["input"]["annotations"]["read"]["rejected_by_reader"] == 1

    def test_a_file_without_version_is_cvat_and_its_two_point_polygon_named(
        self, tmp_path: Path
    ) -> None:
        xml = cvat(tmp_path / "a.xml", ["car"], ["car"], version=False)
        xml.write_text(
            xml.read_text().replace("</image>", '<polygon label="car" points="1,1;5,5"/></image>')
        )
        code, report = validate_json(str(xml))
        assert code == 1
        assert report["input"]["annotations"]["format"] == "cvat"
        assert [e["id"] for e in findings(report)["LG031"]["examples"]] == ["a.jpg#1"]

    def test_a_vertex_within_a_pixel_of_the_edge_is_no_finding(self, tmp_path: Path) -> None:
        xml = cvat(tmp_path / "a.xml", ["car"], [])
        xml.write_text(
            xml.read_text().replace(
                "</image>",
                '<polygon label="car" points="1,1;100.4,5;5,9"/>'
                '<polygon label="car" points="1,1;101.5,5;5,9"/></image>',
            )
        )
        code, report = validate_json(str(xml))
        assert code == 0  # LG028 is a warning
        assert [e["id"] for e in findings(report)["LG028"]["examples"]] == ["a.jpg#1"]

    @settings(
        max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        shapes=st.lists(
            st.sampled_from(["car", "person", "truck", "cow", "Car ", ""]), min_size=1, max_size=30
        )
    )
    def test_every_shape_is_a_row_whatever_its_label(
        self, tmp_path: Path, shapes: list[str]
    ) -> None:
        xml = cvat(Path(tempfile.mkdtemp(dir=tmp_path)) / "a.xml", ["car", "person"], shapes)
        _, report = validate_json(str(xml))
        accounted(report)
        declared = [s for s in shapes if s.strip().lower() in ("car", "person")]
        undeclared = Counter(s for s in shapes if s.strip() and s not in declared)
        counts = report["counts"]
        assert counts["rows"] == len(shapes)
        assert counts["usable"] == len(declared)
        assert counts["rejected"] == len(shapes) - len(declared)
        found = findings(report)
        assert found.get("LG030", {}).get("details", {}).get("labels", {}) == dict(undeclared)
        assert found.get("LG048", {}).get("count", 0) == shapes.count("")
        assert "LG003" not in found


# -- Label Studio ------------------------------------------------------------------------------

CONFIG = (
    '<View><Image name="image" value="$image"/><Choices name="choice" toName="image">'
    '<Choice value="cat"/><Choice value="dog"/></Choices></View>'
)


def studio(folder: Path, tasks: list[list[str]], *, config: str | None = CONFIG) -> Path:
    """A Label Studio export: one task per entry of ``tasks``, one choice result per label."""
    folder.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (folder / "label_config.xml").write_text(config)
    doc = [
        {
            "id": t + 1,
            "data": {"image": f"{t}.jpg"},
            "annotations": [
                {
                    "id": 10 * (t + 1),
                    "result": [
                        {
                            "id": f"r{t}-{n}",
                            "type": "choices",
                            "from_name": "choice",
                            "to_name": "image",
                            "value": {"choices": [label]},
                        }
                        for n, label in enumerate(labels)
                    ],
                }
            ],
        }
        for t, labels in enumerate(tasks)
    ]
    export = folder / "export.json"
    export.write_text(json.dumps(doc))
    return export


class TestLabelStudio:
    def test_an_undeclared_choice_is_a_rejected_row_naming_it(self, tmp_path: Path) -> None:
        code, report = validate_json(str(studio(tmp_path, [["cat"], ["cow"], ["dog"]])))
        assert code == 1
        assert report["counts"] == {"rows": 3, "usable": 2, "ignored": 0, "rejected": 1}
        lg030 = findings(report)["LG030"]
        assert "'cow'" in lg030["message"]
        assert [(e["id"], e["value"]) for e in lg030["examples"]] == [
            ("task 2 annotation 20 result r1-0", "cow")
        ]

    def test_a_region_without_a_label_is_a_rejected_row(self, tmp_path: Path) -> None:
        export = studio(tmp_path, [["cat"]])
        doc = json.loads(export.read_text())
        doc[0]["annotations"][0]["result"].append(
            {
                "id": "box",
                "type": "rectanglelabels",
                "from_name": "box",
                "to_name": "image",
                "value": {"x": 1, "y": 1, "width": 5, "height": 5, "rectanglelabels": []},
            }
        )
        export.write_text(json.dumps(doc))
        code, report = validate_json(str(export))
        assert code == 1
        assert report["counts"] == {"rows": 2, "usable": 1, "ignored": 0, "rejected": 1}
        assert [e["id"] for e in findings(report)["LG031"]["examples"]] == [
            "task 1 annotation 10 result box"
        ]

    def test_an_export_without_annotations_says_so(self, tmp_path: Path) -> None:
        export = studio(tmp_path, [[], []], config=None)
        doc = json.loads(export.read_text())
        for task in doc:
            task["annotations"] = []
        export.write_text(json.dumps(doc))
        result = run_cli("validate", str(export))
        assert result.returncode == 2
        assert "no annotation in 2 tasks" in result.stderr
        assert "num_classes" not in result.stderr and "Traceback" not in result.stderr
        code, report = validate_json(str(export), "--classes", "2")
        assert code == 1
        assert set(findings(report)) == {"LG008"}  # no LG009 for a class map of nothing
        assert "no annotation in 2 tasks" in findings(report)["LG008"]["message"]

    def test_a_config_declaring_none_of_the_export_s_labels_is_not_its_class_map(
        self, tmp_path: Path
    ) -> None:
        code, report = validate_json(str(studio(tmp_path, [["cow"], ["sheep"], ["cow"]])))
        assert code == 0
        assert report["counts"] == {"rows": 3, "usable": 3, "ignored": 0, "rejected": 0}
        assert [c["name"] for c in report["classes"]] == ["cow", "sheep"]
        assert any("is not its labelling config" in n for n in report["notes"])

    @settings(
        max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        tasks=st.lists(
            st.lists(st.sampled_from(["cat", "dog", "cow", "sheep"]), max_size=3),
            min_size=1,
            max_size=8,
        ).filter(lambda ts: any(ts))
    )
    def test_every_choice_is_a_row_whatever_its_label(
        self, tmp_path: Path, tasks: list[list[str]]
    ) -> None:
        export = studio(Path(tempfile.mkdtemp(dir=tmp_path)), tasks)
        _, report = validate_json(str(export))
        accounted(report)
        labels = [label for task in tasks for label in task]
        counts = report["counts"]
        assert counts["rows"] == len(labels)
        if {"cat", "dog"} & set(labels):  # the config is the export's: the others undeclared
            undeclared = Counter(n for n in labels if n not in ("cat", "dog"))
            assert counts["rejected"] == sum(undeclared.values())
            lg030 = findings(report).get("LG030", {})
            assert lg030.get("details", {}).get("labels", {}) == dict(undeclared)
        else:  # another project's config: the export's own labels
            assert counts["rejected"] == 0


# -- LabelMe -----------------------------------------------------------------------------------


def labelme(folder: Path, shapes: list[tuple[str, list[list[float]]]], **extra: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "version": "5.0.1",
        "flags": {},
        "shapes": [
            {"label": label, "points": points, "shape_type": "polygon", "flags": {}}
            for label, points in shapes
        ],
        "imagePath": "a.jpg",
        "imageData": None,
        "imageHeight": 375,
        "imageWidth": 500,
    } | extra
    (folder / "a.json").write_text(json.dumps(doc))
    return folder


class TestLabelMe:
    def test_a_shape_of_an_undeclared_label_is_a_rejected_row(self, tmp_path: Path) -> None:
        folder = labelme(tmp_path / "lm", [("cat", [[1, 1], [9, 1], [5, 9]])] * 2)
        (folder / "labels.txt").write_text("__ignore__\n_background_\ndog\n")
        code, report = validate_json(str(folder))
        assert code == 1
        assert report["counts"] == {"rows": 2, "usable": 0, "ignored": 0, "rejected": 2}
        assert [e["value"] for e in findings(report)["LG030"]["examples"]] == ["cat", "cat"]

    def test_a_vertex_a_fraction_of_a_pixel_past_the_edge_is_labelme_s_own(
        self, tmp_path: Path
    ) -> None:
        """labelme's examples/instance_segmentation/data_annotated/2011_000006.json holds a
        chair vertex at y = 375.38 in a 375-pixel image (labelme@51e50e43)."""
        near = [[165.5, 300.0], [170.0, 375.38461538461536], [160.0, 370.0]]
        far = [[165.5, 300.0], [170.0, 376.5], [160.0, 370.0]]
        code, report = validate_json(str(labelme(tmp_path / "lm", [("chair", near)])))
        assert (code, findings(report)) == (0, {})
        code, report = validate_json(str(labelme(tmp_path / "far", [("chair", far)])))
        assert [e["id"] for e in findings(report)["LG028"]["examples"]] == ["a.json#0"]

    def test_a_set_of_flags_only_says_what_it_holds(self, tmp_path: Path) -> None:
        folder = labelme(tmp_path / "lm", [], flags={"cat": True, "dog": False})
        result = run_cli("validate", str(folder))
        assert result.returncode == 2
        assert "no shape in 1 labelme files" in result.stderr and "'cat'" in result.stderr
        assert "num_classes" not in result.stderr and "Traceback" not in result.stderr


# -- COCO --------------------------------------------------------------------------------------


def coco(path: Path, images: list[dict[str, Any]], annotations: list[dict[str, Any]]) -> Path:
    categories = [{"id": 0, "name": "cat"}, {"id": 1, "name": "dog"}]
    doc = {"images": images, "annotations": annotations, "categories": categories}
    path.write_text(json.dumps(doc))
    return path


def image(i: int, name: str | None = None) -> dict[str, Any]:
    return {"id": i, "file_name": f"{i}.jpg" if name is None else name, "width": 10, "height": 10}


def box(i: int, image_id: int, category: Any = 0, **fields: Any) -> dict[str, Any]:
    return {"id": i, "image_id": image_id, "category_id": category, "bbox": [1, 1, 2, 2]} | fields


class TestCoco:
    def test_a_null_or_absent_bbox_is_malformed(self, tmp_path: Path) -> None:
        absent = box(3, 1)
        del absent["bbox"]
        path = coco(tmp_path / "a.json", [image(1)], [box(1, 1), box(2, 1, bbox=None), absent])
        code, report = validate_json(str(path))
        assert code == 1
        lg031 = findings(report)["LG031"]
        assert [e["id"] for e in lg031["examples"]] == [2, 3]
        assert "annotations without a bbox" in lg031["message"]

    def test_two_images_under_one_id_are_named(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [image(1), image(1, "b.jpg")], [box(1, 1)])
        code, report = validate_json(str(path))
        assert code == 1
        lg031 = findings(report)["LG031"]
        assert lg031["severity"] == "error" and lg031["unit"] == "images"
        assert [(e["id"], e["value"]) for e in lg031["examples"]] == [("image 1", 1)]
        assert "image ids 1" in lg031["message"]

    def test_a_category_id_that_is_no_integer_is_a_rejected_row(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [image(1)], [box(1, 1), box(2, 1, "1"), box(3, 1, 1)])
        code, report = validate_json(str(path))
        assert code == 1
        assert report["counts"] == {"rows": 3, "usable": 2, "ignored": 0, "rejected": 1}
        accounted(report)
        example = findings(report)["LG031"]["examples"][0]
        assert (example["row"], example["id"], example["value"]) == (1, 2, "1")

    @pytest.mark.parametrize("images_there", [True, False])
    def test_an_empty_file_name_is_named_never_read_as_the_folder(
        self, tmp_path: Path, images_there: bool
    ) -> None:
        path = coco(tmp_path / "a.json", [image(1, ""), image(2)], [box(1, 1), box(2, 2)])
        if images_there:
            (tmp_path / "2.jpg").write_bytes(b"")  # found there: the folder is the images'
        code, report = validate_json(str(path))
        assert code == 1
        found = findings(report)
        assert [e["id"] for e in found["LG041"]["examples"]] == ["image 1"]
        assert "empty" in found["LG041"]["message"]
        assert "image 1" not in [e["id"] for e in found.get("LG042", {}).get("examples", [])]


# -- the real files ----------------------------------------------------------------------------


@pytest.mark.shared
@pytest.mark.parametrize(
    "name",
    [
        f"{OTHER}/cvat_export_task_train.xml",
        f"{OTHER}/labelme_semantic_2011_000003.json",
        f"{OTHER}/labelstudio_export_yolo_data.json",
        f"{COCO}/chess_pieces_v23_valid__annotations.coco.json",
        f"{COCO}/labelme2coco_voc2011_annotations.json",
    ],
)
def test_the_clean_real_files_pass_with_every_annotation_counted(
    shared_real_world: Path, name: str
) -> None:
    result = run_cli("validate", str(shared_real_world / name), "--format", "json")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr
    report = json.loads(result.stdout)
    accounted(report)
    assert report["counts"]["rows"] == report["input"]["annotations"]["read"].get(
        "rows", report["counts"]["rows"]
    )


@pytest.mark.shared
def test_the_real_cvat_export_names_its_unlabelled_shapes(shared_real_world: Path) -> None:
    """Datumaro's tests/assets/cvat_dataset/for_images/export_task/train.xml: a polyline and a
    polygon with label="", which its own importer reads as annotations without a label."""
    code, report = validate_json(str(shared_real_world / OTHER / "cvat_export_task_train.xml"))
    assert code == 0
    assert report["counts"] == {"rows": 4, "usable": 2, "ignored": 0, "rejected": 2}
    lg048 = findings(report)["LG048"]
    assert lg048["severity"] == "warning"
    assert [(e["id"], e["value"]) for e in lg048["examples"]] == [
        ("img0.jpg#1", ""),
        ("img1.jpg#0", ""),
    ]
