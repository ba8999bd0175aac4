"""Detection files judged without false alarms: sparse ids only where the ids have gaps, panoptic
segments keyed ``image/segment``, YOLO's printed precision, LG004's cause from the evidence; and
``--task detection`` with its background index."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from labelgate import Contract
from labelgate.core.report import Finding, Report
from labelgate.run.validation import run

from .support.inproc import run_here

COCO = Path("annotations/coco")  # under ../shared/real_world


def validate(paths: list[Path], **kw: Any) -> Report:
    contract = Contract(
        num_classes=kw.pop("classes", None),
        task=kw.pop("task", None),
        framework=kw.pop("framework", None),
    )
    return run([str(p) for p in paths], contract, max_examples=0, **kw).report


def found(report: Report) -> set[str]:
    return {f.code for f in report.findings}


def one(report: Report, code: str) -> Finding:
    (f,) = [f for f in report.findings if f.code == code]
    return f


def coco(path: Path, categories: list[int], labels: list[int], **extra: Any) -> Path:
    images = [{"id": 1, "file_name": "1.jpg", "width": 100, "height": 80}]
    anns = [
        {"id": 10 + i, "image_id": 1, "category_id": c, "bbox": [5, 5, 20, 20]}
        for i, c in enumerate(labels)
    ]
    cats = [{"id": c, "name": f"c{c}"} for c in categories]
    path.write_text(json.dumps({"images": images, "annotations": anns, "categories": cats} | extra))
    return path


class TestSparseIds:
    def test_dense_table_with_unused_classes_is_not_sparse(self, tmp_path: Path) -> None:
        report = validate([coco(tmp_path / "a.json", list(range(21)), [5, 6, 7, 9, 15, 18])])
        assert "LG016" not in found(report)
        assert one(report, "LG012").count == 15

    def test_category_ids_with_gaps_are_ids_not_indices(self, tmp_path: Path) -> None:
        report = validate([coco(tmp_path / "a.json", [1, 2, 4, 8], [1, 2, 4, 8])])
        assert not report.failed and not {"LG004", "LG009", "LG016"} & found(report)
        assert report.contract["num_classes"] == 4
        need = {r["framework"]: r["num_classes"] for r in report.frameworks}
        assert need == {"torchvision": 9, "detectron2": 4, "mmdet": 4, "ultralytics": 8}

    def test_table_with_gaps_under_torchvision_fills_them(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [1, 2, 4, 8], [1, 2, 4, 8])
        report = validate([path], framework="torchvision")
        assert report.contract["num_classes"] == 9
        assert not {"LG009", "LG012", "LG016"} & found(report)  # the fillers are labelgate's own

    def test_without_a_table_the_values_decide(self, tmp_path: Path) -> None:
        path = tmp_path / "t.parquet"
        pq.write_table(pa.table({"label": [1, 3, 7, 1, 3, 7]}), path)
        assert "LG016" in found(validate([path], classes=8))
        pq.write_table(pa.table({"label": [0, 1, 2, 3, 4, 5]}), path)
        assert "LG016" not in found(validate([path], classes=8))

    def test_real_dense_tables(self, shared_real_world: Path) -> None:
        base = shared_real_world / "annotations"
        for rel in (
            "coco/labelme2coco_voc2011_annotations.json",
            "voc/labelme_bbox_voc2011",
            "coco/chess_pieces_v23_valid__annotations.coco.json",
        ):
            report = validate([base / rel])
            assert "LG016" not in found(report), rel
            assert "LG012" in found(report), rel

    def test_real_sparse_table(self, shared_real_world: Path) -> None:
        report = validate([shared_real_world / COCO / "datumaro_instances_val.json"])
        assert not report.failed and "LG016" not in found(report)
        tv = next(r for r in report.frameworks if r["framework"] == "torchvision")
        assert tv["num_classes"] == 5 and "1 ids between" in tv["ids"]


class TestPanoptic:
    def test_segments_keyed_by_image_and_segment(self, tmp_path: Path) -> None:
        segments = [{"id": s, "category_id": 1, "bbox": [0, 0, 2, 2]} for s in (7, 20)]
        anns = [{"image_id": i, "file_name": f"{i}.png", "segments_info": segments} for i in (1, 2)]
        images = [{"id": i, "file_name": f"{i}.jpg", "width": 5, "height": 10} for i in (1, 2)]
        path = tmp_path / "p.json"
        cats = [{"id": 0, "name": "a"}, {"id": 1, "name": "b"}]
        path.write_text(json.dumps({"images": images, "annotations": anns, "categories": cats}))
        report = run([str(path)], Contract(), max_examples=0).report
        assert "LG014" not in found(report) and report.counts["rows"] == 4
        anns[1]["segments_info"] = [segments[0], segments[0]]  # a segment id twice in one image
        path.write_text(json.dumps({"images": images, "annotations": anns, "categories": cats}))
        report = run([str(path)], Contract(), max_examples=20).report
        assert [e.id for e in one(report, "LG014").examples] == ["2/7"]

    def test_real_panoptic(self, shared_real_world: Path) -> None:
        path = shared_real_world / COCO / "datumaro_panoptic/panoptic_val.json"
        report = run([str(path)], Contract(), max_examples=20).report
        assert "LG014" not in found(report)
        assert not report.failed  # category 2 is an id of the table, not past K=2


class TestYoloPrecision:
    def write(self, root: Path, line: str) -> Path:
        (root / "labels").mkdir(parents=True)
        (root / "data.yaml").write_text("names: [a, b, c]\nnc: 3\n")
        (root / "labels" / "a.txt").write_text(line)
        return root

    def test_six_decimals_within_the_image(self, tmp_path: Path) -> None:
        # cx - w/2 = 0.133333 - 0.1333335 = -5e-7: the printing, not the box
        report = validate([self.write(tmp_path / "y", "2 0.133333 0.300000 0.266667 0.2\n")])
        assert "LG028" not in found(report)

    def test_past_the_printed_precision(self, tmp_path: Path) -> None:
        report = validate([self.write(tmp_path / "y", "2 0.133333 0.300000 0.266680 0.2\n")])
        assert [e.id for e in one(report, "LG028").examples] == ["labels/a.txt:1"]

    def test_real_darknet(self, shared_real_world: Path) -> None:
        report = validate([shared_real_world / "annotations/yolo/datumaro_darknet_strict"])
        assert "LG028" not in found(report)


class TestTooHighCause:
    def table(self, tmp_path: Path, labels: list[int], names: list[str] | None = None) -> Path:
        path = tmp_path / "t.parquet"
        cols: dict[str, list[Any]] = {"label": labels}
        if names is not None:
            cols["class_name"] = names
        pq.write_table(pa.table(cols), path)
        return path

    def test_one_based_only_when_zero_unused_and_nothing_past_k(self, tmp_path: Path) -> None:
        report = validate([self.table(tmp_path, [1, 2, 3, 4] * 5)], classes=4)
        assert "1-based source" in one(report, "LG004").fix
        past = validate([self.table(tmp_path, [2, 3, 4, 5] * 5)], classes=4)
        assert "1-based source" not in one(past, "LG004").fix
        zero = validate([self.table(tmp_path, [0, 1, 2, 3, 4] * 5)], classes=4)
        assert "1-based source" not in one(zero, "LG004").fix

    def test_k_too_small_from_the_name_column(self, tmp_path: Path) -> None:
        names = ["a", "b", "c", "d"]
        report = validate([self.table(tmp_path, [0, 1, 2, 3] * 5, names * 5)], classes=3)
        fix = one(report, "LG004").fix
        assert "K=3 may be too small: the name column holds 4 names" in fix
        assert "set num_classes to 4" in fix and "Do not widen" not in fix
        assert "1-based" not in fix

    def test_real_chess_with_twelve_classes(self, shared_real_world: Path) -> None:
        path = shared_real_world / COCO / "chess_pieces_v23_valid__annotations.coco.json"
        fix = one(validate([path], classes=12), "LG004").fix
        assert "holds 14 names" in fix and "1-based" not in fix


def test_cli_real_clean_files_pass(shared_real_world: Path) -> None:
    base = shared_real_world / "annotations"
    for rel in ("coco/labelme2coco_voc2011_annotations.json", "yolo/datumaro_darknet_strict"):
        result = run_here("validate", str(base / rel))
        assert result.returncode == 0, result.stdout
        assert "LG016" not in result.stdout and "LG028" not in result.stdout


class TestDetectionTask:
    def test_background_needs_no_name_and_k_counts_it(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [1, 2, 3], [1, 2, 3, 3])
        report = validate([path], task="detection", background=0)
        assert not report.failed, [f.message for f in report.findings]
        assert report.contract["num_classes"] == 4 and report.contract["task"] == "detection"
        assert "LG013" not in found(report)
        assert any("batches here are batches of images" in n for n in report.notes)

    def test_labels_reaching_k_say_num_classes_counts_the_background(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [1, 2, 3], [1, 2, 3, 3])
        report = validate([path], task="detection", background=0, classes=3)
        lg004 = one(report, "LG004")
        assert "num_classes counts the background" in lg004.fix
        assert "Set num_classes (--classes) to 4" in lg004.fix and "1-based" not in lg004.fix
        assert "no name for" not in one(report, "LG009").message
        assert "LG011" not in found(report)  # class 0 unused: the background, not a 1-based source

    def test_one_based_ids_without_background_name_the_detection_convention(
        self, tmp_path: Path
    ) -> None:
        path = coco(tmp_path / "a.json", [0, 1, 2], [1, 2, 3, 3])
        report = validate([path], classes=3)
        lg030 = one(report, "LG030")  # 3 is no category: named as written, its rows rejected
        assert "3" in lg030.message and {e.value for e in lg030.examples} == {3}
        assert "LG004" not in found(report) and report.counts["rejected"] == 2
        path = tmp_path / "t.parquet"  # a table of the same labels: indices, judged as such
        pq.write_table(pa.table({"label": [1, 2, 3, 3]}), path)
        fix = one(validate([path], classes=3, task="detection", background=0), "LG004").fix
        assert "torchvision's detection models keep 0 for the background" in fix
        assert "AG News" not in fix

    def test_single_box_file_has_no_batchnorm_warning(self, tmp_path: Path) -> None:
        report = validate([coco(tmp_path / "a.json", [0, 1], [1])])
        assert "LG013" not in found(report)

    def test_task_detection_refused_for_masks(self, tmp_path: Path) -> None:
        from PIL import Image

        Image.new("L", (4, 4)).save(tmp_path / "m.png")
        result = run_here(
            "validate", str(tmp_path / "m.png"), "--classes", "2", "--task", "detection"
        )
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert "Traceback" not in result.stderr

    def test_contract_file_and_cli(self, tmp_path: Path) -> None:
        path = coco(tmp_path / "a.json", [1, 2], [1, 2, 2])
        contract = tmp_path / "c.yaml"
        contract.write_text("task: detection\nbackground_index: 0\n")
        result = run_here("validate", str(path), "--schema", str(contract))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "task detection" in result.stdout
        result = run_here("validate", str(path), "--task", "detection", "--background", "0")
        assert result.returncode == 0 and "LG009" not in result.stdout

    def test_real_files_with_background(self, shared_real_world: Path) -> None:
        base = shared_real_world / "annotations"
        for rel in ("coco/labelme2coco_voc2011_annotations.json", "voc/labelme_bbox_voc2011"):
            report = validate([base / rel], task="detection", background=0)
            assert {"LG009", "LG013", "LG016"}.isdisjoint(found(report)), rel
            assert not report.failed, rel


def test_coco_bbox_of_strings_or_booleans_is_lg031_by_annotation_id(tmp_path: Path) -> None:
    """A real Roboflow export wrote ``[73, 6, "996.0000", "1170.0000"]``: ``torch.as_tensor``
    raises on it; a boolean is no coordinate either (``True`` would read as 1)."""
    path = coco(tmp_path / "a.json", [0], [0, 0, 0])
    data = json.loads(path.read_text())
    data["annotations"][0]["bbox"] = [73, 6, "996.0000", "1170.0000"]
    data["annotations"][2]["bbox"] = [5, 5, True, 20]
    path.write_text(json.dumps(data))
    report = run([str(path)], Contract(), max_examples=20).report
    lg031 = one(report, "LG031")
    assert [e.id for e in lg031.examples] == [10, 12] and lg031.severity == "error"
    assert "bbox" in lg031.message and report.failed
    result = run_here("validate", str(path))
    assert result.returncode == 1 and "LG031" in result.stdout
    assert "996.0000" not in result.stdout  # rows are named by id, never by content


def test_a_table_of_boxes_with_task_detection(tmp_path: Path) -> None:
    path = tmp_path / "boxes.csv"
    path.write_text("id,label\n" + "".join(f"{i},{1 + i % 2}\n" for i in range(33)))
    report = validate([path], task="detection", background=0, classes=3)
    assert not report.failed and "LG013" not in found(report)  # 33 boxes: one left over
    assert any("not the batches a detection DataLoader forms" in n for n in report.notes)
    plain = validate([path], classes=3)
    assert "LG013" in found(plain)
