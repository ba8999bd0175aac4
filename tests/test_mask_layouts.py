"""Mask inputs as users hold them: several files as one input, a folder holding two kinds of
mask, colour masks detected by their content with the known tables offered, and ImageFolder
trees whose class folders nest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import labelgate
from labelgate.readers import choose
from labelgate.readers.masks.colours import CAMVID, voc_palette
from tests.conftest import SAMPLES, run_cli

VOC_GOOD = SAMPLES / "masks" / "voc_good"


def test_several_mask_files_are_one_input_each_named() -> None:
    files = sorted(VOC_GOOD.glob("*.png"))[:2]
    assert choose([str(f) for f in files]).reader.name == "masks"
    report = labelgate.validate([str(f) for f in files], classes=21, ignore_index=255)
    assert report.counts["rows"] == 2
    assert [n for n in report.notes if "2 mask paths read as one input" in n]
    one = labelgate.validate(str(files[0]), classes=21, ignore_index=255)
    assert one.counts["rows"] == 1


def test_fix_and_smoke_refuse_several_mask_paths(tmp_path: Path) -> None:
    files = [str(f) for f in sorted(VOC_GOOD.glob("*.png"))[:2]]
    result = run_cli("fix", *files, "--classes", "21", "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "one file or folder at a time" in result.stderr


def _png(path: Path, array: np.ndarray) -> None:
    Image.fromarray(array).save(path)


def test_a_second_kind_of_mask_is_named_not_skipped(tmp_path: Path) -> None:
    train = np.zeros((4, 4), np.uint8)
    ids = np.full((4, 4), 7, np.uint8)
    for n in range(2):
        _png(tmp_path / f"f_{n}_gtFine_labelTrainIds.png", train)
        _png(tmp_path / f"f_{n}_gtFine_labelIds.png", ids)
    report = labelgate.validate(str(tmp_path), classes=19, ignore_index=255)
    assert report.counts["rows"] == 2
    (note,) = [n for n in report.notes if "left out" in n]
    assert note.startswith("2 other mask files") and "f_0_gtFine_labelIds.png" in note


@pytest.mark.parametrize(
    ("colours", "table"),
    [
        ([voc_palette(21)[i] for i in (0, 1, 15)], "Pascal VOC's palette"),
        ([CAMVID[n] for n in ("Sky", "Road", "Pedestrian")], "CamVid's 32 colours"),
    ],
)
def test_colour_masks_are_detected_and_the_known_table_offered(
    tmp_path: Path, colours: list[tuple[int, int, int]], table: str
) -> None:
    folder = tmp_path / "colour_masks"
    folder.mkdir()
    for n in range(2):
        rgb = np.zeros((6, 6, 3), np.uint8)
        for i, colour in enumerate(colours):
            rgb[2 * i : 2 * i + 2] = colour
        _png(folder / f"m{n}.png", rgb)
    found = choose([str(folder)])
    assert found.reader.name == "masks" and table in found.why
    report = labelgate.validate(str(folder), classes=3)
    (lg038,) = [f for f in report.findings if f.code == "LG038"]
    assert table in lg038.fix and "color_map" in lg038.fix


def test_a_photograph_is_no_colour_mask(tmp_path: Path) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    rng = np.random.default_rng(0)
    _png(folder / "a.png", rng.integers(0, 256, (32, 32, 3), dtype=np.uint8))
    with pytest.raises(labelgate.InputError, match="unknown format"):
        choose([str(folder)])


def test_imagefolder_names_a_class_folder_holding_subfolders(tmp_path: Path) -> None:
    for path in ("cat/a.jpg", "dog/b.jpg", "dog/puppies/c.jpg"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (4, 4)).save(tmp_path / path)
    report = labelgate.validate(str(tmp_path))
    assert report.counts["rows"] == 3
    (note,) = [n for n in report.notes if "holds subfolders with images" in n]
    assert "dog/puppies" in note and "class 1 (dog)" in note
