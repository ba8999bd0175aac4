"""Label files from public projects (tests/fixtures/real_world, and ../shared in CI): conventions nobody here invented."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from labelgate import ClassMap, Contract, load_class_map
from labelgate.run.validation import report_of


def codes(report: object, severity: str) -> set[str]:
    return {f.code for f in report.findings if f.severity == severity}  # type: ignore[attr-defined]


class TestAgNews:
    def test_one_based_source(self, shared_real_world: Path) -> None:
        csv = shared_real_world / "08_agnews_test_first200.csv"
        report = report_of([str(csv)], Contract(num_classes=4))
        assert report.contract["label_column"] == "0"  # headerless: the only integer column
        assert report.counts["rows"] == 200
        assert codes(report, "error") == {"LG004"}
        assert "LG011" in codes(report, "warning")
        lg004 = next(f for f in report.findings if f.code == "LG004")
        assert lg004.count == 57  # label 4 ("Sci/Tech"): 57 of the first 200 rows
        assert "1-based" in lg004.fix and "AG News" in lg004.fix
        lg011 = next(f for f in report.findings if f.code == "LG011")
        assert "values 1, 2, 3, 4 with 0 unused" in lg011.message

    def test_clean_once_shifted(self, shared_real_world: Path, tmp_path: Path) -> None:
        table = pcsv.read_csv(
            shared_real_world / "08_agnews_test_first200.csv",
            read_options=pcsv.ReadOptions(column_names=["label", "title", "description"]),
        )
        shifted = table.set_column(0, "label", pc.subtract(table["label"], 1))
        out = tmp_path / "agnews.parquet"
        pq.write_table(shifted, out)
        contract = Contract(
            num_classes=4, class_map=load_class_map(shared_real_world / "07_agnews_classes.txt")
        )
        report = report_of([str(out)], contract)
        assert not report.failed
        assert codes(report, "error") == codes(report, "warning") == set()
        assert [c["count"] for c in report.classes] == [61, 53, 29, 57]
        assert [c["name"] for c in report.classes] == ["World", "Sports", "Business", "Sci/Tech"]


class TestImageNetNames:
    def test_not_a_bijection(self, shared_real_world: Path, tmp_path: Path) -> None:
        names = shared_real_world / "11_imagenet_classes_pytorch_hub.txt"
        out = tmp_path / "labels.parquet"
        pq.write_table(pa.table({"label": list(range(1000))}), out)
        report = report_of([str(out)], Contract(num_classes=1000, class_map=load_class_map(names)))
        (lg009,) = [f for f in report.findings if f.code == "LG009"]
        assert lg009.severity == "error"
        assert "'crane' appears at indices 134, 517" in lg009.message
        assert "'maillot' appears at indices 638, 639" in lg009.message


class TestCoco:
    def test_sparse_category_ids(self, real_world: Path, tmp_path: Path) -> None:
        data = json.loads((real_world / "01_coco_val2014_sampled_gts.json").read_text())
        anns = data["annotations"]
        out = tmp_path / "coco.parquet"
        pq.write_table(
            pa.table(
                {"id": [a["id"] for a in anns], "category_id": [a["category_id"] for a in anns]}
            ),
            out,
        )
        report = report_of([str(out)], Contract(num_classes=len(data["categories"])))
        assert {"LG004", "LG016"} <= codes(report, "error")
        lg016 = next(f for f in report.findings if f.code == "LG016")
        assert lg016.details["max"] <= 90 and lg016.details["min"] >= 1
        assert {12, 26, 29, 30, 45, 66, 68, 69, 71, 83} & set(lg016.details["gaps"])

    def test_single_category_zero(self, real_world: Path, tmp_path: Path) -> None:
        data = json.loads((real_world / "02_coco_toy_single_category_id0.json").read_text())
        out = tmp_path / "toy.parquet"
        ids = [a["category_id"] for a in data["annotations"]]
        pq.write_table(pa.table({"id": [a["id"] for a in data["annotations"]], "label": ids}), out)
        report = report_of([str(out)], Contract(num_classes=1))
        assert not report.failed and report.counts["usable"] == 12


class TestCityscapes:
    def test_train_ids_are_not_a_bijection(self, real_world: Path) -> None:
        text = (real_world / "06_cityscapes_labels.py").read_text()
        rows = re.findall(r"Label\(\s*'([^']+)'\s*,\s*(-?\d+)\s*,\s*(-?\d+)", text)
        entries = tuple((int(train), name) for name, _, train in rows)
        problems = ClassMap(entries).problems(19)
        assert "index 255 is given 15 names" in problems
        assert "indices outside 0..18: -1, 255" in problems


class TestYoloThroughTheWrongNameList:
    def rows(self, real_world: Path) -> tuple[list[int], list[str]]:
        """YOLO ids paired with the VOC XML's names, matched box by box."""
        root = ET.parse(real_world / "05_pascalvoc_2007_001430.xml").getroot()
        w = int(root.findtext("size/width") or 0)
        h = int(root.findtext("size/height") or 0)
        named = []
        for obj in root.iter("object"):
            b = obj.find("bndbox")
            assert b is not None
            x0, y0, x1, y1 = (float(b.findtext(k) or 0) for k in ("xmin", "ymin", "xmax", "ymax"))
            named.append(
                (((x0 + x1) / 2 - 1) / w, ((y0 + y1) / 2 - 1) / h, obj.findtext("name") or "")
            )
        ids, names = [], []
        for line in (real_world / "04_yolo_label_2007_001430.txt").read_text().split("\n"):
            if not line.strip():
                continue
            cls, cx, cy, *_ = line.split()
            nearest = min(named, key=lambda n: (n[0] - float(cx)) ** 2 + (n[1] - float(cy)) ** 2)
            ids.append(int(cls))
            names.append(nearest[2])
        return ids, names

    def test_right_list_agrees_wrong_list_is_caught(self, real_world: Path, tmp_path: Path) -> None:
        ids, names = self.rows(real_world)
        out = tmp_path / "yolo.parquet"
        pq.write_table(
            pa.table({"id": list(range(len(ids))), "label": ids, "label_name": names}), out
        )
        cvat = load_class_map(real_world / "03_yolo_cvat_obj.names")
        right = report_of([str(out)], Contract(num_classes=20, class_map=cvat))
        assert "LG010" not in codes(right, "error")
        alphabetical = ClassMap.from_names(sorted(n for _, n in cvat.entries), origin="voc.names")
        wrong = report_of([str(out)], Contract(num_classes=20, class_map=alphabetical))
        (lg010,) = [f for f in wrong.findings if f.code == "LG010"]
        assert lg010.count == len(ids)  # every box is read as another class
