"""An annotation of a declared class whose box or points are missing or not numbers (a VOC
``<object>`` without a numeric ``<bndbox>``, a CVAT shape, a labelme shape or a Label Studio
region whose coordinates are not numbers) is a rejected row: its loader raises on it, so it is
no usable target. LG031 names it by id with its class index, it is counted rejected in its
source and in its class, and rows = usable + ignored + rejected holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import run_cli
from tests.test_annotation_records import accounted, findings, validate_json


def per_class(report: dict[str, Any]) -> dict[str, tuple[int, int]]:
    """Class name -> (usable targets, rows rejected) from the report's class table."""
    return {c["name"]: (c["count"], c["rejected"]) for c in report["classes"]}


def lg031(report: dict[str, Any]) -> tuple[str, list[tuple[str, Any]]]:
    found = findings(report)["LG031"]
    assert found["severity"] == "error"
    return found["message"], [(e["id"], e["value"]) for e in found["examples"]]


class TestVoc:
    def write(self, folder: Path, objects: str) -> Path:
        folder.mkdir()
        (folder / "class_names.txt").write_text("cat\ndog\n")
        size = "<size><width>100</width><height>80</height></size>"
        (folder / "a.xml").write_text(f"<annotation>{size}{objects}</annotation>")
        return folder

    def test_missing_and_non_numeric_bndbox_are_rejected_rows(self, tmp_path: Path) -> None:
        good = "<object><name>cat</name><bndbox><xmin>1</xmin><ymin>2</ymin><xmax>30</xmax>"
        good += "<ymax>40</ymax></bndbox></object>"
        missing = "<object><name>dog</name></object>"
        text = good.replace("<xmin>1</xmin>", "<xmin>abc</xmin>")
        folder = self.write(tmp_path / "v", good + missing + text)
        code, report = validate_json(str(folder))
        assert code == 1
        assert report["counts"] == {"rows": 3, "usable": 1, "ignored": 0, "rejected": 2}
        assert report["sources"] == [
            {"source": "v", "rows": 3, "usable": 1, "ignored": 0, "rejected": 2}
        ]
        accounted(report)
        message, named = lg031(report)
        assert message == "objects without a numeric <bndbox>"
        assert named == [("a.xml#1", 1), ("a.xml#2", 0)]  # file#object, its class index
        assert per_class(report) == {"cat": (1, 1), "dog": (0, 1)}

    def test_the_text_report_shows_the_identity(self, tmp_path: Path) -> None:
        folder = self.write(tmp_path / "v", "<object><name>cat</name></object>")
        done = run_cli("validate", str(folder), "--classes", "2")
        assert done.returncode == 1
        assert "rows 1 = usable 0 + ignored 0 + rejected 1" in done.stdout
        assert "LG031 error (1 row): objects without a numeric <bndbox>" in done.stdout


def cvat(path: Path, shapes: str) -> Path:
    path.write_text(
        "<annotations><version>1.1</version><meta><task><labels><label><name>car</name></label>"
        "<label><name>person</name></label></labels></task></meta>"
        f'<image id="0" name="a.jpg" width="100" height="100">{shapes}</image></annotations>'
    )
    return path


def test_cvat_shapes_whose_coordinates_are_not_numbers_are_rejected_rows(
    tmp_path: Path,
) -> None:
    shapes = (
        '<box label="car" xtl="1" ytl="1" xbr="9" ybr="9"/>'
        '<box label="car" xtl="abc" ytl="1" xbr="9" ybr="9"/>'
        '<box label="person" ytl="1" xbr="9" ybr="9"/>'
        '<polygon label="person" points="1,1;x,5;5,9"/>'
        '<polygon label="person" points="1,1;9,5;5,9"/>'
        '<tag label="car"/>'
    )
    code, report = validate_json(str(cvat(tmp_path / "a.xml", shapes)))
    assert code == 1
    assert report["counts"] == {"rows": 6, "usable": 3, "ignored": 0, "rejected": 3}
    accounted(report)
    message, named = lg031(report)
    assert message == "shapes whose coordinates are not numbers"
    assert named == [("a.jpg#1", 0), ("a.jpg#2", 1), ("a.jpg#3", 1)]
    assert per_class(report) == {"car": (2, 1), "person": (1, 2)}


def test_labelme_shapes_whose_points_are_not_numbers_are_rejected_rows(tmp_path: Path) -> None:
    folder = tmp_path / "lm"
    folder.mkdir()
    (folder / "labels.txt").write_text("__ignore__\ncat\ndog\n")
    shapes = [
        ("cat", "rectangle", [[1, 1], [9, 9]]),
        ("cat", "rectangle", [["a", 1], [9, 9]]),
        ("dog", "polygon", None),
        ("dog", "polygon", [[1, 1], [9, 1], [5, 9]]),
    ]
    doc = {
        "shapes": [{"label": n, "shape_type": k, "points": p} for n, k, p in shapes],
        "imagePath": "a.jpg",
        "imageHeight": 40,
        "imageWidth": 50,
    }
    (folder / "a.json").write_text(json.dumps(doc))
    code, report = validate_json(str(folder))
    assert code == 1
    assert report["counts"] == {"rows": 4, "usable": 2, "ignored": 0, "rejected": 2}
    accounted(report)
    message, named = lg031(report)
    assert message == "shapes whose points are not [x, y] number pairs"
    assert named == [("a.json#1", 0), ("a.json#2", 1)]
    assert per_class(report) == {"cat": (1, 1), "dog": (1, 1)}


def test_label_studio_regions_whose_coordinates_are_not_numbers_are_rejected_rows(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ls"
    folder.mkdir()
    (folder / "label_config.xml").write_text(
        '<View><Image name="image" value="$image"/><RectangleLabels name="box" toName="image">'
        '<Label value="cat"/><Label value="dog"/></RectangleLabels>'
        '<BrushLabels name="brush" toName="image"><Label value="cat"/></BrushLabels></View>'
    )
    box = {"x": 10, "y": 10, "width": 20, "height": 20}
    values = [
        ("rectanglelabels", box | {"rectanglelabels": ["cat"]}),
        ("rectanglelabels", box | {"x": "10", "rectanglelabels": ["cat", "dog"]}),
        ("rectanglelabels", {"x": 1, "y": 1, "width": 5, "rectanglelabels": ["dog"]}),
        ("brushlabels", {"format": "rle", "rle": [0], "brushlabels": ["cat"]}),
    ]
    results = [
        {"id": f"r{n}", "type": t, "from_name": t[:-6].replace("rectangle", "box"), "value": v}
        | {"to_name": "image"}
        for n, (t, v) in enumerate(values)
    ]
    task = {"id": 1, "data": {"image": "a.jpg"}, "annotations": [{"id": 7, "result": results}]}
    (folder / "export.json").write_text(json.dumps([task]))
    code, report = validate_json(str(folder / "export.json"))
    assert code == 1
    assert report["counts"] == {"rows": 5, "usable": 2, "ignored": 0, "rejected": 3}
    accounted(report)
    message, named = lg031(report)
    assert message == "regions whose coordinates are missing or not numbers"
    ident = "task 1 annotation 7 result"  # a result is named once, its first label's class
    assert named == [(f"{ident} r1", 0), (f"{ident} r2", 1)]
    assert per_class(report) == {"cat": (2, 1), "dog": (0, 2)}
