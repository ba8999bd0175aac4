"""The images of a detection input against its annotations: each planted fault (missing, a
``../`` name, undecodable, truncated, a decompression bomb, a wrong size, a size that is right
only before its EXIF rotation) named by image; a clean folder clean; images absent: no check."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from labelgate import Contract
from labelgate.core.report import Finding, Report
from labelgate.run.validation import run

from .conftest import run_cli


def jpeg(path: Path, size: tuple[int, int], orientation: int | None = None) -> None:
    image = Image.new("RGB", size, (120, 30, 200))
    if orientation is None:
        image.save(path, "JPEG")
        return
    exif = Image.Exif()
    exif[0x0112] = orientation
    image.save(path, "JPEG", exif=exif.tobytes())


def png(path: Path, size: tuple[int, int]) -> None:
    Image.new("L", size, 7).save(path, "PNG")


def bomb(path: Path) -> None:
    """A PNG whose header claims 30,000 x 30,000 pixels: a few bytes on disk."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", 30_000, 30_000, 1, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 64)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def coco(folder: Path, images: list[tuple[str, int, int]], name: str = "ann.json") -> Path:
    entries = [
        {"id": i + 1, "file_name": f, "width": w, "height": h} for i, (f, w, h) in enumerate(images)
    ]
    anns = [
        {"id": 100 + 2 * i + c, "image_id": i + 1, "category_id": c + 1, "bbox": [1, 1, 5, 5]}
        for i in range(len(images))
        for c in (0, 1)
    ]
    cats = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]  # COCO's ids count from 1
    path = folder / name
    path.write_text(json.dumps({"images": entries, "annotations": anns, "categories": cats}))
    return path


def validate(path: Path, **kw: Any) -> Report:
    contract = Contract(num_classes=2, images=kw.pop("images", None))
    return run([str(path)], contract, max_examples=0, **kw).report


def by_code(report: Report) -> dict[str, Finding]:
    return {f.code: f for f in report.findings}


def ids(f: Finding) -> set[Any]:
    return {e.id for e in f.examples}


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    """A Roboflow-style export: the COCO file among its images, a fault planted per image."""
    jpeg(tmp_path / "good.jpg", (100, 80))
    jpeg(tmp_path / "turned.jpg", (100, 80), orientation=6)  # loads as 80 x 100
    jpeg(tmp_path / "turned_wrong.jpg", (100, 80), orientation=6)
    png(tmp_path / "wrong.png", (64, 48))
    (tmp_path / "noise.png").write_bytes(b"not an image at all" * 10)
    data = (tmp_path / "good.jpg").read_bytes()
    (tmp_path / "cut.jpg").write_bytes(data[: len(data) // 2])
    whole = tmp_path / "whole.png"
    png(whole, (300, 300))
    (tmp_path / "cut.png").write_bytes(whole.read_bytes()[:200])
    whole.unlink()
    bomb(tmp_path / "bomb.png")
    (tmp_path.parent / "outside.jpg").write_bytes(data)
    return coco(
        tmp_path,
        [
            ("good.jpg", 100, 80),  # image 1
            ("turned.jpg", 80, 100),  # 2: right once rotated
            ("turned_wrong.jpg", 100, 80),  # 3: right only before rotation
            ("wrong.png", 100, 80),  # 4
            ("noise.png", 10, 10),  # 5
            ("cut.jpg", 100, 80),  # 6
            ("cut.png", 300, 300),  # 7
            ("bomb.png", 30_000, 30_000),  # 8
            ("gone.jpg", 10, 10),  # 9
            ("../outside.jpg", 100, 80),  # 10
            ("/etc/hostname", 10, 10),  # 11
        ],
    )


def test_each_planted_fault_is_named(planted: Path) -> None:
    found = by_code(validate(planted))
    assert ids(found["LG041"]) == {"image 9", "image 10", "image 11"}
    assert ids(found["LG042"]) == {"image 5", "image 6", "image 7", "image 8"}
    assert ids(found["LG043"]) == {"image 3", "image 4"}
    assert "decompression bomb" in found["LG042"].message
    assert "EXIF orientation" in found["LG043"].message
    assert "leave the images folder" in found["LG041"].message
    files = {e.file for e in found["LG041"].examples}
    assert files == {"gone.jpg", "../outside.jpg", "/etc/hostname"}


def test_clean_folder_is_clean(tmp_path: Path) -> None:
    jpeg(tmp_path / "a.jpg", (100, 80))
    jpeg(tmp_path / "b.jpg", (100, 80), orientation=8)
    png(tmp_path / "c.png", (30, 20))
    path = coco(tmp_path, [("a.jpg", 100, 80), ("b.jpg", 80, 100), ("c.png", 30, 20)])
    report = validate(path)
    assert not report.findings, [f.message for f in report.findings]
    assert report.input["annotations"]["read"]["images_checked"] == 3


def test_a_link_leaving_the_folder_is_refused(tmp_path: Path) -> None:
    images = tmp_path / "imgs"
    images.mkdir()
    jpeg(tmp_path / "secret.jpg", (10, 10))
    (images / "x.jpg").symlink_to(tmp_path / "secret.jpg")
    path = coco(images, [("x.jpg", 10, 10)])
    (f,) = validate(path).findings
    assert f.code == "LG041" and "link" in f.message


def test_images_absent_means_no_check_and_no_finding(tmp_path: Path) -> None:
    path = coco(tmp_path, [("a.jpg", 100, 80), ("b.jpg", 100, 80)])
    report = validate(path)
    assert not report.findings
    assert any("2 images not checked" in n for n in report.notes)


def test_images_flag_names_the_folder_and_everything_missing_there(tmp_path: Path) -> None:
    (tmp_path / "pics").mkdir()
    jpeg(tmp_path / "pics" / "a.jpg", (100, 80))
    path = coco(tmp_path, [("a.jpg", 100, 80), ("b.jpg", 100, 80)])
    result = run_cli("validate", str(path), "--images", str(tmp_path / "pics"))
    assert result.returncode == 1 and "LG041" in result.stdout and "image 2" in result.stdout
    missing = run_cli("validate", str(path), "--images", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "no such folder" in missing.stderr


def test_images_flag_on_a_table_is_a_usage_error(tmp_path: Path) -> None:
    table = tmp_path / "t.csv"
    table.write_text("label\n0\n1\n")
    result = run_cli("validate", str(table), "-k", "2", "--images", str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_coco_images_folder_one_level_up(tmp_path: Path) -> None:
    (tmp_path / "annotations").mkdir()
    (tmp_path / "train2017").mkdir()
    jpeg(tmp_path / "train2017" / "1.jpg", (40, 30))
    path = coco(tmp_path / "annotations", [("1.jpg", 40, 30), ("2.jpg", 40, 30)])
    path = path.rename(tmp_path / "annotations" / "instances_train2017.json")
    (f,) = validate(path).findings
    assert f.code == "LG041" and ids(f) == {"image 2"}


def test_yolo_images_beside_labels(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    (root / "labels" / "train").mkdir(parents=True)
    (root / "images" / "train").mkdir(parents=True)
    (root / "data.yaml").write_text("names: [a, b]\n")
    for n in range(3):
        (root / "labels" / "train" / f"{n}.txt").write_text("0 .5 .5 .2 .2\n1 .5 .5 .1 .1\n")
    jpeg(root / "images" / "train" / "0.jpg", (20, 20))
    png(root / "images" / "train" / "1.PNG", (20, 20))
    report = validate(root)
    (f,) = report.findings
    assert f.code == "LG041" and ids(f) == {"labels/train/2.txt"}


def test_voc_jpegimages_beside_annotations(tmp_path: Path) -> None:
    root = tmp_path / "voc"
    (root / "Annotations").mkdir(parents=True)
    (root / "JPEGImages").mkdir()
    for n, (w, h) in enumerate([(50, 40), (50, 40)]):
        (root / "Annotations" / f"{n}.xml").write_text(
            f"<annotation><filename>{n}.jpg</filename><size><width>{w}</width>"
            f"<height>{h}</height></size><object><name>a</name><bndbox><xmin>1</xmin>"
            "<ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox></object><object><name>b"
            "</name><bndbox><xmin>1</xmin><ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox>"
            "</object></annotation>"
        )
    jpeg(root / "JPEGImages" / "0.jpg", (50, 40))
    jpeg(root / "JPEGImages" / "1.jpg", (40, 50))
    (f,) = validate(root / "Annotations").findings
    assert f.code == "LG043" and ids(f) == {"1.xml"}


def test_many_images_go_through_the_pool(tmp_path: Path) -> None:
    names = []
    for n in range(150):
        jpeg(tmp_path / f"{n}.jpg", (16, 12))
        names.append((f"{n}.jpg", 16, 12 if n != 137 else 13))
    report = run([str(coco(tmp_path, names))], Contract(num_classes=2), max_examples=0).report
    (f,) = report.findings
    assert f.code == "LG043" and ids(f) == {"image 138"}


def test_masks_pair_with_their_images_when_a_folder_is_given(tmp_path: Path) -> None:
    masks, images = tmp_path / "SegmentationClass", tmp_path / "JPEGImages"
    masks.mkdir()
    images.mkdir()
    for n, size in enumerate([(40, 30), (40, 30), (40, 30)]):
        Image.new("L", size, n % 2).save(masks / f"{n}.png")
    jpeg(images / "0.jpg", (40, 30))
    jpeg(images / "1.jpg", (30, 40))  # turned the other way: not the mask's size
    contract = Contract(num_classes=2, images=str(images))
    report = run([str(masks)], contract, input_format="masks", max_examples=0).report
    found = by_code(report)
    assert set(found) - {"LG013"} == {"LG041", "LG043"}, [f.message for f in report.findings]
    assert ids(found["LG041"]) == {"2.png"} and ids(found["LG043"]) == {"1.png"}
    plain = run([str(masks)], Contract(num_classes=2), input_format="masks").report
    assert {f.code for f in plain.findings} <= {"LG013"}  # without --images: no image looked for


def test_images_no_annotation_names_are_counted_as_not_checked(tmp_path: Path) -> None:
    """A darknet folder whose label files lie under no labels/ folder names no image: the report
    says how many images were not checked, never nothing at all."""
    (tmp_path / "obj.names").write_text("a\nb\n")
    (tmp_path / "obj_train_data").mkdir()
    (tmp_path / "obj_train_data" / "1.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    (tmp_path / "obj_train_data" / "2.txt").write_text("1 0.5 0.5 0.1 0.1\n")
    notes = validate(tmp_path).notes
    assert any(
        n.startswith("2 images not checked: the yolo annotations name no image") for n in notes
    )
