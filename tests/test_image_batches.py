"""Detection batches are batches of images (an image with all its boxes), in the dataset's image
order, images without a box counted as legal negatives; no BatchNorm finding for detection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate.core.batchplan import BatchPlan
from labelgate.core.report import Report
from labelgate.run.validation import run

from .conftest import run_cli


def validate(path: Path, **batching: Any) -> Report:
    from labelgate import Contract
    from labelgate.contract.batching import Batching

    contract = Contract(num_classes=3, batching=Batching(**batching))
    return run([str(path)], contract, max_examples=0).report


def coco(path: Path, image_ids: list[int], boxes: dict[int, list[int]]) -> Path:
    """A COCO file listing ``image_ids`` (in that order) and, per image id, its boxes' labels."""
    images = [{"id": i, "file_name": f"{i}.jpg", "width": 100, "height": 80} for i in image_ids]
    anns = []
    for image, labels in boxes.items():
        for label in labels:
            anns.append(
                {
                    "id": 100 + len(anns),
                    "image_id": image,
                    "category_id": label,
                    "bbox": [1, 1, 9, 9],
                }
            )
    cats = [{"id": c, "name": f"c{c}"} for c in (0, 1, 2)]
    path.write_text(json.dumps({"images": images, "annotations": anns, "categories": cats}))
    return path


def test_five_images_in_batches_of_two_make_three_batches(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", [5, 3, 1, 4, 2], {1: [1, 2, 0], 3: [2], 5: [1, 1]})
    report = validate(path, size=2)
    b = report.batches
    assert b["count"] == 3 and b["last_size"] == 1 and b["unit"] == "images"
    # sorted image ids 1..5: batch 0 = images 1, 2 (3 boxes); 1 = images 3, 4 (1); 2 = image 5 (2)
    assert b["usable_per_batch"] == [3, 1, 2]
    assert report.input["annotations"]["read"]["images_without_boxes"] == 2
    assert any("2 of them hold no box: legal negatives for torchvision" in n for n in report.notes)
    # category 0 holds boxes: torchvision's background, said as a warning with no framework named
    assert [(f.code, f.severity) for f in report.findings] == [("LG032", "warning")]


def test_a_bad_label_names_the_batch_of_its_image(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", [1, 2, 3, 4, 5], {5: [7], 1: [1]})
    (f,) = [f for f in validate(path, size=2).findings if f.code == "LG030"]  # 7: no category
    assert [e.batch for e in f.examples] == [2]  # image 5 is in the third batch of images


def test_one_box_file_gets_no_batchnorm_finding(tmp_path: Path) -> None:
    report = validate(coco(tmp_path / "a.json", [1], {1: [1]}))
    assert "LG013" not in {f.code for f in report.findings}
    assert report.batches["count"] == 1


def test_images_without_boxes_are_not_nan_batches(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", [1, 2, 3, 4], {1: [1]})
    report = validate(path, size=2)
    assert {f.code for f in report.findings}.isdisjoint({"LG007", "LG013"})
    assert report.batches["usable_per_batch"] == [1, 0]


def test_drop_last_counts_images(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", [1, 2, 3], {1: [1], 3: [1, 2]})
    report = validate(path, size=2, drop_last=True)
    (f,) = [f for f in report.findings if f.code == "LG013"]
    assert f.severity == "info" and "the last batch of 1 image:" in f.message
    assert report.batches["dropped_rows"] == 2  # image 3's two boxes are never trained


def test_yolo_label_files_are_the_images(tmp_path: Path) -> None:
    labels = tmp_path / "ds" / "labels" / "train"
    labels.mkdir(parents=True)
    (tmp_path / "ds" / "data.yaml").write_text("names: [a, b, c]\n")
    for n, lines in enumerate(["0 .5 .5 .1 .1\n1 .5 .5 .1 .1\n", "", "1 .5 .5 .2 .2\n"]):
        (labels / f"{n}.txt").write_text(lines)
    report = validate(tmp_path / "ds", size=2)
    assert report.batches["count"] == 2 and report.batches["usable_per_batch"] == [2, 1]
    assert report.input["annotations"]["read"]["images_without_boxes"] == 1


def test_voc_files_are_the_images(tmp_path: Path) -> None:
    ann = tmp_path / "voc" / "Annotations"
    ann.mkdir(parents=True)
    for n, names in enumerate([["cat", "dog"], ["dog"], ["cat"]]):
        objects = "".join(
            f"<object><name>{x}</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax>"
            "<ymax>5</ymax></bndbox></object>"
            for x in names
        )
        (ann / f"{n}.xml").write_text(
            f"<annotation><filename>{n}.jpg</filename><size><width>10</width>"
            f"<height>10</height></size>{objects}</annotation>"
        )
    result = run_cli("validate", str(tmp_path / "voc"), "--batch-size", "2", "--format", "json")
    assert result.returncode == 0, result.stdout
    batches = json.loads(result.stdout)["batches"]
    assert batches["count"] == 2 and batches["usable_per_batch"] == [3, 1]


@pytest.mark.parametrize("seed", [None, 3])
def test_plan_of_images_maps_every_row_to_its_image_batch(seed: int | None) -> None:
    import numpy as np

    image = np.array([4, 0, 0, 2, 3], dtype=np.int64)  # rows of 5 images, image 1 without a box
    plan = BatchPlan.build(2, drop_last=False, rows=5, seed=seed, images=(image, 5))
    batches = plan.batch_of(0, 5)
    assert plan.kept_batches(5) == 3 and plan.last_size(5) == 1
    assert batches[1] == batches[2]  # one image, one batch
    if seed is None:
        assert batches.tolist() == [2, 0, 0, 1, 1]
    assert sorted(np.bincount(plan.order_of(0, 5) // 2, minlength=3).tolist()) in (
        [1, 2, 2],
        [0, 2, 3],
        [1, 1, 3],
        [0, 1, 4],
    )


def test_ranks_of_detection_batches_find_no_nan(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", [1, 2, 3, 4, 5, 6], {1: [1, 2, 0]})
    report = validate(path, size=1, world_size=2)
    assert "LG007" not in {f.code for f in report.findings}  # negatives are no NaN on any rank


@settings(max_examples=60, deadline=None)
@given(
    image=st.lists(st.integers(0, 30), min_size=0, max_size=60),
    extra=st.integers(0, 5),
    size=st.integers(1, 8),
    drop_last=st.booleans(),
    narrow=st.booleans(),
    chunk=st.integers(1, 7),
)
def test_image_plan_agrees_with_a_loader_of_images(
    image: list[int], extra: int, size: int, drop_last: bool, narrow: bool, chunk: int
) -> None:
    """Rows' images held in 32 bits (as a reader gives them) or 64, the dropped rows counted a
    few rows at a time: the batches a loader of images yields."""
    import numpy as np

    from labelgate.core import batchplan

    images = max(image, default=-1) + 1 + extra  # some images hold no box
    rows = np.asarray(image, dtype=np.int32 if narrow else np.int64)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(batchplan, "CHUNK", chunk)
    plan = BatchPlan.build(
        size, drop_last=drop_last, rows=len(rows), seed=None, images=(rows, images)
    )
    loader = [list(range(i, min(i + size, images))) for i in range(0, images, size)]
    if drop_last and loader and len(loader[-1]) < size:
        loader.pop()
    assert plan.kept_batches(len(rows)) == len(loader)
    for r, b in zip(image, plan.batch_of(0, len(rows)).tolist(), strict=True):
        assert r in (loader[b] if b < len(loader) else range(b * size, (b + 1) * size))
    kept_rows = sum(1 for r in image if any(r in batch for batch in loader))
    assert plan.dropped_rows(len(rows)) == len(rows) - kept_rows
    assert plan.batch_of(0, len(rows)).dtype == np.int64
    monkeypatch.undo()


@pytest.mark.parametrize(
    "rel",
    [
        "coco/chess_pieces_v23_valid__annotations.coco.json",
        "coco/labelme2coco_voc2011_annotations.json",
        "voc/raccoon",
        "yolo/datumaro_roboflow_yolo",
    ],
)
def test_real_exports_batch_images_and_raise_no_image_finding(
    shared_real_world: Path, rel: str
) -> None:
    path = shared_real_world / "annotations" / rel
    result = run_cli("validate", str(path), "--batch-size", "4", "--format", "json")
    assert result.returncode == 0, result.stdout
    doc = json.loads(result.stdout)
    assert doc["batches"]["unit"] == "images"
    assert {f["code"] for f in doc["findings"]}.isdisjoint({"LG013", "LG041", "LG042", "LG043"})
    read = doc["input"]["annotations"]["read"]
    if rel.endswith(".json"):  # the images and the images holding a box, counted apart here
        data = json.loads(path.read_text())
        boxed = {a["image_id"] for a in data["annotations"]}
        assert read["images_without_boxes"] == len(data["images"]) - len(boxed)
        assert doc["batches"]["count"] == -(-len(data["images"]) // 4)


def test_the_report_header_says_detection_and_counts_images(tmp_path: Path) -> None:
    path = coco(tmp_path / "a.json", [1, 2, 3, 4, 5], {1: [1], 2: [1], 4: [2]})
    result = run_cli("validate", str(path), "--batch-size", "2", "--framework", "detectron2")
    header = result.stdout.splitlines()[1]
    assert "task detection (detectron2)" in header  # not the rows' multiclass shape
    assert "3 batches of 2 images" in header


@settings(max_examples=60, deadline=None)
@given(
    before=st.lists(st.integers(-50, 50), max_size=5, unique=True),
    ids=st.lists(st.integers(-50, 50), min_size=1, max_size=30, unique=True),
    rows=st.lists(st.integers(-1, 40), max_size=60),
    sort=st.booleans(),
)
def test_rows_name_the_same_images_whether_the_seeded_keys_are_known_as_records(
    before: list[int], ids: list[int], rows: list[int], sort: bool
) -> None:
    """``GroupCodes.indexed`` (the seeded keys are the index's records from there on) is a
    shortcut: each row's image is the one the lookup of every key finds."""
    from labelgate.readers.common.imageindex import GroupCodes, ImageIndex, ImageRecord

    index = ImageIndex()
    index.sort = sort
    for i in before:
        index.add(ImageRecord(("other.json", i), f"image {i}"))
    start = len(index.records)
    index.extend([ImageRecord(("a.json", i), f"image {i}") for i in ids])
    keys = [r.key for r in index.records[start:]]
    made = []
    for indexed in (start, None):
        groups = GroupCodes()
        groups.expect(len(keys), {k: n for n, k in enumerate(keys)}.get, keys.__getitem__, indexed)
        for r in rows:  # a code past the listed: an image not listed, after the listed ones
            groups.append(keys[r] if 0 <= r < len(keys) else ("a.json", 1000 + r))
        made.append(index.rows_to_images(groups))
    fast, slow = made
    assert fast is not None and slow is not None
    assert fast.image.tolist() == slow.image.tolist()
    assert (fast.images, fast.without_boxes) == (slow.images, slow.without_boxes)


def _columns(name: str, ids: list[int], sizes: list[int], origin: Path) -> Any:
    """``ids`` as ``ListedImages`` (size code -1: none; file ``None`` for every third image)."""
    import numpy as np

    from labelgate.readers.common.imageindex import ListedImages

    keys = np.array(ids, dtype=np.int64)
    files = [None if i % 3 == 0 else f"{i}.jpg" for i in ids]
    made = [(float(w), 80.0) for w in range(max(sizes, default=-1) + 1)]
    order = np.argsort(keys, kind="stable")
    return ListedImages(name, keys, order, files, np.array(sizes, dtype=np.int32), made, origin)


@settings(max_examples=80, deadline=None)
@given(
    ids=st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=40, unique=True),
    data=st.data(),
    later=st.lists(st.integers(-20, 20), max_size=6),
    sort=st.booleans(),
)
def test_images_kept_as_columns_answer_as_their_records_would(
    ids: list[int], data: st.DataObject, later: list[int], sort: bool
) -> None:
    """A file's images recorded as columns (``extend_columns``: no Python object per image) give
    the records, look-ups, order and image of each row that the same images recorded one by one
    give, before and after more images are recorded behind them."""
    from labelgate.readers.common.imageindex import GroupCodes, ImageIndex, ImageRecord

    origin = Path("a.json")
    sizes = data.draw(st.lists(st.integers(-1, 2), min_size=len(ids), max_size=len(ids)))
    listed = _columns("a.json", ids, sizes, origin)
    by_columns, by_records = ImageIndex(), ImageIndex()
    by_columns.sort = by_records.sort = sort
    by_columns.extend_columns(listed)
    by_records.extend(list(listed))
    assert [r.key for r in listed] == [("a.json", i) for i in ids]
    for index in (by_columns, by_records):
        for i in later:  # records one by one behind, some of them keys already listed
            index.add(ImageRecord(("a.json", i), f"image {i}", None, None, origin))
    assert list(by_columns.records) == list(by_records.records)
    assert len(by_columns) == len(by_records.records)
    probes = [*ids, *later, 2**70, -(2**70)]
    asked = [("a.json", i) for i in probes]
    asked += [("a.json", float(i)) for i in ids[:3]] + [("a.json", str(ids[0])), ("b.json", ids[0])]
    asked += [("a.json", ids[0] + 0.5), ("a.json", float("nan")), ("a.json",), "a.json"]
    asked += [("a.json", True), ("a.json", False)]
    for key in asked:
        assert by_columns.position(key) == by_records.position(key), key
        assert by_columns.canonical(key) == by_records.canonical(key)
    count = len(by_records.records)
    for position in range(-1, count + 1):
        assert by_columns.record_at(position) == by_records.record_at(position)
    rows = data.draw(st.lists(st.sampled_from(asked[: len(probes)]), max_size=50))
    made = []
    for index in (by_columns, by_records):
        groups = GroupCodes()
        for key in rows:
            groups.append(key)
        made.append(index.rows_to_images(groups))
    a, b = made
    assert a is not None and b is not None
    assert (a.image.tolist(), a.images, a.without_boxes) == (
        b.image.tolist(),
        b.images,
        b.without_boxes,
    )


def test_a_detection_report_has_no_note_of_the_rows_columns(tmp_path: Path) -> None:
    """The rows of a COCO file are the reader's own: how their label, id, source and name
    columns were found is no note for the user, whose file has no such columns."""
    path = coco(tmp_path / "a.json", [1, 2], {1: [1], 2: [2]})
    notes = validate(path).notes
    assert notes and notes[0].startswith("read as coco")
    assert not [n for n in notes if "column '" in n], notes
