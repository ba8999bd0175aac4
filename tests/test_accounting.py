"""Every annotation read is a row: rows = usable + ignored + rejected on every detection sample,
under every framework and none, and every rejected row is named by a finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from labelgate.contract import Contract
from labelgate.run.validation import run

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples" / "formats"
DETECTION = [
    "coco_good.json",
    "coco_bad.json",
    "yolo_good",
    "yolo_bad",
    "voc_good",
    "voc_bad",
    "cvat_good.xml",
    "cvat_bad.xml",
    "labelme_good",
    "labelme_bad",
    "labelstudio_good/export.json",
    "labelstudio_bad/export.json",
]


@pytest.mark.parametrize("sample", DETECTION)
@pytest.mark.parametrize("framework", [None, "torchvision", "detectron2", "mmdet", "ultralytics"])
def test_rows_add_up_and_the_rejected_are_named(sample: str, framework: str | None) -> None:
    done = run([str(SAMPLES / sample)], Contract(framework=framework), max_examples=0)
    report, facts = done.report, done.context.annotations
    c = report.counts
    assert c["rows"] == c["usable"] + c["ignored"] + c["rejected"]
    assert facts is not None and c["rows"] >= facts.counts.get("annotations", 0)
    named = {e.row for f in report.findings for e in f.examples if e.row >= 0}
    refused = set(facts.refused)
    assert refused <= named, sorted(refused - named)  # each rejected row has its finding
    per_source = sum(s["rejected"] for s in report.sources)
    assert per_source == c["rejected"]
    # in its class: every rejected row whose label was a class is counted in that class's row
    per_class = {k["index"]: k["rejected"] for k in report.classes}
    assert sum(per_class.values()) == sum(facts.rejected_classes.values())
    assert all(per_class.get(i) == n for i, n in facts.rejected_classes.items())
    assert sum(per_class.values()) <= c["rejected"]


def test_a_box_without_area_is_rejected_under_every_reading(tmp_path: Path) -> None:
    import json

    images = [{"id": 1, "file_name": "1.jpg", "width": 100, "height": 80}]
    anns = [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [5, 5, 20, 20]},
        {"id": 2, "image_id": 1, "category_id": 1, "bbox": [5, 5, 0, 20]},
    ]
    path = tmp_path / "a.json"
    path.write_text(
        json.dumps({"images": images, "annotations": anns, "categories": [{"id": 1, "name": "a"}]})
    )
    for framework in (None, "torchvision", "detectron2", "mmdet"):
        report = run([str(path)], Contract(framework=framework), max_examples=0).report
        assert report.counts["rejected"] == 1 and report.counts["usable"] == 1, framework
        lg027 = next(f for f in report.findings if f.code == "LG027")
        assert [e.id for e in lg027.examples] == [2]
        assert (lg027.severity == "error") == (framework == "torchvision")
        assert "LG003" not in {f.code for f in report.findings}
        assert [k["rejected"] for k in report.classes][-1] == 1, framework  # in its class


@pytest.mark.parametrize("framework", [None, "torchvision", "mmdet"])
def test_fix_quarantines_each_rejected_row_under_its_own_finding(
    tmp_path: Path, framework: str | None
) -> None:
    """A reader's rejected row (an undeclared label, a line that is no box) and a reading's (a
    box without area) reach the quarantine under the code that named them, never LG003's."""
    import pyarrow.parquet as pq

    from labelgate.commands.fix import fix
    from labelgate.commands.fixtypes import FixOptions

    out, quarantine = tmp_path / "fixed.parquet", tmp_path / "q.parquet"
    contract = Contract(framework=framework)
    result = fix(
        [str(SAMPLES / "cvat_bad.xml")],
        contract,
        FixOptions(out=str(out), quarantine=str(quarantine)),
    )
    table = pq.read_table(quarantine).to_pylist()
    reasons = {r["id"]: r["labelgate_reason"] for r in table}
    assert reasons == {"img_1.jpg#0": "LG030", "img_1.jpg#2": "LG027"}, result
    assert pq.read_metadata(out).num_rows + len(table) == 13


def test_fix_names_a_yolo_line_that_is_no_box(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from labelgate.commands.fix import fix
    from labelgate.commands.fixtypes import FixOptions

    (tmp_path / "labels").mkdir()
    (tmp_path / "classes.txt").write_text("a\nb\n")
    (tmp_path / "labels" / "1.txt").write_text("0 0.5 0.5 0.2 0.2\n1 0.5 0.5\nx 0.5 0.5 0.1 0.1\n")
    quarantine = tmp_path / "q.parquet"
    options = FixOptions(out=str(tmp_path / "f.parquet"), quarantine=str(quarantine))
    fix([str(tmp_path)], Contract(), options)
    reasons = {r["id"]: r["labelgate_reason"] for r in pq.read_table(quarantine).to_pylist()}
    assert reasons == {"labels/1.txt:2": "LG031", "labels/1.txt:3": "LG031"}


def test_fix_names_a_shard_sample_without_a_label(tmp_path: Path) -> None:
    """The shard readers' rejected rows go through the sink's batch stream: their code too."""
    import io
    import tarfile

    import pyarrow.parquet as pq

    from labelgate.commands.fix import fix
    from labelgate.commands.fixtypes import FixOptions

    shards = tmp_path / "shards"
    shards.mkdir()
    with tarfile.open(shards / "train-000000.tar", "w") as tar:
        for name, data in (("a.cls", b"0"), ("a.jpg", b"x"), ("b.jpg", b"x"), ("c.cls", b"1")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    quarantine = tmp_path / "q.parquet"
    options = FixOptions(out=str(tmp_path / "f.parquet"), quarantine=str(quarantine))
    fix([str(shards)], Contract(num_classes=2), options)
    reasons = [r["labelgate_reason"] for r in pq.read_table(quarantine).to_pylist()]
    assert reasons == ["LG031"]
