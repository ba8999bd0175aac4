"""Segmentation masks (--input-format masks): per-pixel rules on each mask's histogram, the
encodings that break a mask as a whole (LG036-LG039), fix into new files, and the oracle:
labelgate's failing batches are those where cross_entropy on (N, C, H, W) logits raises or is NaN."""

from __future__ import annotations

import hashlib
import json
import tempfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from labelgate import Contract
from labelgate.commands.fix import FixOptions
from labelgate.commands.fixmasks import fix_masks
from labelgate.contract import Batching, cityscapes_value_map
from labelgate.errors import ContractError
from labelgate.readers.masks.maskdecode import decode
from labelgate.readers.masks.masklayout import mask_files
from labelgate.readers.masks.maskpool import decoded
from labelgate.run.validation import run

from .conftest import SAMPLES, cli_here, run_cli

MASKS = SAMPLES / "masks"


def report_of(path: Path | str, **contract: Any) -> Any:
    options = {"input_format": contract.pop("input_format", "auto")}
    return run([str(path)], Contract(**contract), **options).report


def finding(report: Any, code: str) -> Any:
    found = [f for f in report.findings if f.code == code]
    assert found, f"{code} not in {[f.code for f in report.findings]}"
    return found[0]


def errors(report: Any) -> set[str]:
    return {f.code for f in report.findings if f.severity == "error"}


def png(path: Path, array: np.ndarray, palette: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    img = Image.fromarray(array)
    if palette:
        img.putpalette([i % 256 for i in range(768)])
    img.save(path, format="PNG")


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


class TestPlantedFaults:
    def test_clean_voc_masks_pass_with_255_ignored(self) -> None:
        report = report_of(MASKS / "voc_good", num_classes=21, ignore_index=255)
        assert report.status == "pass"
        assert report.input["annotations"]["format"] == "masks"
        assert report.counts["rows"] == 4
        assert report.counts["pixels"] == 4 * 48 * 64
        assert report.counts["ignored_pixels"] > 0  # the 255 borders
        classes = {c["index"]: c for c in report.classes}
        assert classes[5]["images"] == 1 and classes[5]["count"] > 0

    def test_a_21_among_voc_classes_is_named_by_file_value_and_pixels(self) -> None:
        report = report_of(MASKS / "voc_bad", num_classes=21, ignore_index=255)
        f = finding(report, "LG004")
        assert f.unit == "pixels"
        [e] = f.examples
        assert (e.id, e.value) == ("2011_000001.png", 21)
        array = np.asarray(Image.open(MASKS / "voc_bad" / "2011_000001.png"))
        assert e.pixels == int((array == 21).sum()) == f.count
        assert "in 1 mask" in f.message
        assert report.batches["failing"] == [0]

    def test_255_with_the_default_ignore_index_suggests_declaring_it(self) -> None:
        report = report_of(MASKS / "voc_good", num_classes=21)
        f = finding(report, "LG004")
        assert f.examples[0].value == 255
        assert "--ignore-index 255" in f.fix

    def test_binary_mask_saved_as_0_255(self) -> None:
        report = report_of(MASKS / "binary_0_255", num_classes=2)
        f = finding(report, "LG036")
        assert f.count == 3
        assert [e.id for e in f.examples] == ["mask_0.png", "mask_1.png", "mask_2.png"]
        total = sum(
            int((np.asarray(Image.open(p)) == 255).sum())
            for p in sorted((MASKS / "binary_0_255").glob("*.png"))
        )
        assert sum(e.pixels for e in f.examples) == total
        assert "--map-value 255=1" in f.fix
        assert report_of(MASKS / "voc_good", num_classes=21, ignore_index=255).status == "pass"

    def test_jpeg_masks(self) -> None:
        report = report_of(MASKS / "jpeg", num_classes=6, input_format="masks")
        f = finding(report, "LG037")
        assert f.count == 2
        assert all(e.pixels > 0 and "rare values" in e.value for e in f.examples)

    def test_a_lossy_png_is_found_by_its_edges_and_a_clean_one_is_not(self, tmp_path: Path) -> None:
        clean = np.zeros((64, 64), np.uint8)
        clean[16:48, 16:48] = 40
        clean[20:30, 20:30] = 80
        png(tmp_path / "clean" / "a.png", clean)
        buffer = tmp_path / "a.jpg"
        Image.fromarray(clean).save(buffer, format="JPEG", quality=70)
        png(tmp_path / "lossy" / "a.png", np.asarray(Image.open(buffer)))
        assert decode(tmp_path / "clean" / "a.png", tmp_path / "clean", None).stray == (0, 0)
        assert decode(tmp_path / "lossy" / "a.png", tmp_path / "lossy", None).stray[0] >= 3
        small = np.zeros((64, 64), np.uint8)  # many small classes in blobs: not lossy
        for i in range(8):
            small[i * 8 : i * 8 + 3, 0:3] = i + 1
        png(tmp_path / "small" / "a.png", small)
        assert decode(tmp_path / "small" / "a.png", tmp_path / "small", None).stray == (0, 0)

    def test_rgb_colour_masks_need_the_colour_map(self) -> None:
        report = report_of(MASKS / "rgb", num_classes=3, input_format="masks")
        f = finding(report, "LG038")
        assert f.count == 2 and "color_map" in f.fix
        assert "#800000" in f.examples[0].value
        assert report.counts["rejected"] == 2  # no target can be read from them
        mapped = run(
            [str(MASKS / "rgb")], Contract.from_yaml(MASKS / "rgb.yaml"), input_format="masks"
        ).report
        f = finding(mapped, "LG038")  # the one colour the map lacks
        assert f.unit == "pixels" and f.count == 4
        assert [e.id for e in f.examples] == ["mask_1.png"] and "#ffff00" in f.examples[0].value
        assert mapped.counts["pixels"] == 2 * 48 * 64 - 4

    def test_cityscapes_label_ids_for_train_ids(self) -> None:
        report = report_of(MASKS / "cityscapes", num_classes=19, ignore_index=255)
        f = finding(report, "LG039")
        assert f.count == 2
        assert f.examples[0].value == [23, 26]
        assert f.details["value_map"]["26"] == 13
        assert "--map-value cityscapes" in f.fix
        assert cityscapes_value_map()[7] == 0 and cityscapes_value_map()[0] == 255

    def test_unreadable_mask_is_named_and_its_batch_fails(self, tmp_path: Path) -> None:
        png(tmp_path / "a.png", np.zeros((4, 4), np.uint8))
        (tmp_path / "b.png").write_bytes(b"not a png")
        np.save(tmp_path / "c.npy", np.zeros((2, 2, 2), np.int64))
        np.save(tmp_path / "d.npy", np.full((2, 2), 0.5))
        bomb = Image.new("L", (1, 1))
        bomb.info = {}
        bomb.save(tmp_path / "e.png")
        data = bytearray((tmp_path / "e.png").read_bytes())
        data[16:24] = (100_000).to_bytes(4, "big") * 2  # IHDR: 100,000 x 100,000 pixels claimed
        data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")  # its checksum redone
        (tmp_path / "e.png").write_bytes(bytes(data))
        report = report_of(tmp_path, num_classes=2, input_format="masks")
        f = finding(report, "LG031")
        assert [e.id for e in f.examples] == ["b.png", "c.npy", "d.npy", "e.png"]
        assert "DecompressionBombError" in f.examples[3].value  # refused before decoding
        assert report.counts["rows"] == 5 and report.counts["rejected"] == 4
        out = tmp_path.parent / "fixed"
        r = run_cli("fix", str(tmp_path), "--classes", "2", "--input-format", "masks",
                    "--map-value", "0=1", "--out", str(out), "--format", "json")  # fmt: skip
        assert r.returncode in (0, 1), r.stderr
        assert json.loads(r.stdout)["rows"] == {"in": 5, "fixed": 1, "quarantined": 4}

    def test_masks_of_every_kind_are_read_as_indices(self, tmp_path: Path) -> None:
        values = np.array([[0, 1], [2, 255]], np.uint8)
        png(tmp_path / "p.png", values, palette=True)  # palette index, not colour
        png(tmp_path / "l.png", values)
        Image.fromarray(values.astype(np.uint16) * 100).save(tmp_path / "i16.png")
        Image.fromarray(values).save(tmp_path / "t.tif")
        np.save(tmp_path / "n.npy", values.astype(np.int32) - 1)
        got = {
            d.path: (d.mode, d.values.tolist())
            for d in decoded(mask_files(tmp_path), tmp_path, None)
        }
        assert got["p.png"] == ("P", [0, 1, 2, 255])
        assert got["l.png"] == ("L", [0, 1, 2, 255])
        assert got["i16.png"][1] == [0, 100, 200, 25500]
        assert got["t.tif"][1] == [0, 1, 2, 255]
        assert got["n.npy"] == ("npy int32", [-1, 0, 1, 254])


def test_processes_give_the_rows_of_one_process(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    for i in range(150):
        png(tmp_path / f"d{i % 3}" / f"{i:03d}.png", rng.integers(0, 5, (16, 16), dtype=np.uint8))
    files = mask_files(tmp_path)
    inline = [
        (d.path, d.values.tolist(), d.pixels.tolist())
        for d in decoded(files, tmp_path, None, workers=1)
    ]
    pooled = [
        (d.path, d.values.tolist(), d.pixels.tolist())
        for d in decoded(files, tmp_path, None, workers=2)
    ]
    assert inline == pooled and len(inline) == 150
    report = report_of(tmp_path, num_classes=5, input_format="masks")
    assert report.counts["rows"] == 150 and report.counts["pixels"] == 150 * 256
    assert report.status == "pass"


def test_masks_decode_on_dask(tmp_path: Path) -> None:
    pytest.importorskip("dask.distributed")
    for i in range(3):
        png(tmp_path / f"{i}.png", np.full((4, 4), i, np.uint8))
    local = report_of(tmp_path, num_classes=2, input_format="masks")
    remote = run(
        [str(tmp_path)], Contract(num_classes=2), input_format="masks", dask="local[1]"
    ).report
    assert remote.findings == local.findings
    assert remote.counts == local.counts and remote.counts["rejected"] == 1


class TestFix:
    def test_remaps_into_a_new_folder_and_never_touches_the_originals(self, tmp_path: Path) -> None:
        before = digest(MASKS / "binary_0_255")
        out = tmp_path / "fixed"
        r = run_cli(
            "fix", str(MASKS / "binary_0_255"), "--classes", "2", "--map-value", "255=1",
            "--out", str(out), "--format", "json",
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        log = json.loads(r.stdout)
        assert log["rows"] == {"in": 3, "fixed": 3, "quarantined": 0}
        assert log["after"]["status"] == "pass"
        assert digest(MASKS / "binary_0_255") == before
        for p in sorted((MASKS / "binary_0_255").glob("*.png")):
            old = np.asarray(Image.open(p))
            new = np.asarray(Image.open(out / p.name))
            assert (new == np.where(old == 255, 1, old)).all()
        assert log["value_maps"] == {
            "255=1": int(
                sum(
                    (np.asarray(Image.open(p)) == 255).sum()
                    for p in sorted((MASKS / "binary_0_255").glob("*.png"))
                )
            )
        }

    def test_cityscapes_table_and_palette_kept(self, tmp_path: Path) -> None:
        r = run_cli(
            "fix", str(MASKS / "cityscapes"), "--classes", "19", "--ignore-index", "255",
            "--map-value", "cityscapes", "--out", str(tmp_path / "cs"),
        )  # fmt: skip
        assert r.returncode in (0, 1), r.stderr  # classes never present stay warnings
        report = report_of(tmp_path / "cs", num_classes=19, ignore_index=255)
        assert errors(report) == set()
        r = run_cli(
            "fix", str(MASKS / "voc_bad"), "--classes", "21", "--ignore-index", "255",
            "--map-value", "21=ignore", "--out", str(tmp_path / "voc"),
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        img = Image.open(tmp_path / "voc" / "2011_000001.png")
        assert img.mode == "P"
        assert img.getpalette() == Image.open(MASKS / "voc_bad" / "2011_000001.png").getpalette()
        assert 21 not in np.asarray(img)

    def test_refusals(self, tmp_path: Path) -> None:
        r = run_cli(
            "fix", str(MASKS / "voc_bad"), "--classes", "21", "--map-value", "21=0",
            "--out", str(MASKS / "voc_bad" / "out"),
        )  # fmt: skip
        assert r.returncode == 2 and "inside the input" in r.stderr
        r = run_cli(
            "fix", str(MASKS / "voc_bad"), "--classes", "21", "--map-value", "21=ignore",
            "--out", str(tmp_path / "x"),
        )  # fmt: skip
        assert r.returncode == 2 and "does not fit its uint8" in r.stderr
        assert "Traceback" not in r.stderr
        assert not (MASKS / "voc_bad" / "out").exists()


def test_colour_map_contract_errors(tmp_path: Path) -> None:
    bad = tmp_path / "c.yaml"
    bad.write_text("num_classes: 2\ncolor_map:\n  0: [0, 0, 0]\n  1: [0, 0, 0]\n")
    with pytest.raises(ContractError, match="also class 0"):
        Contract.from_yaml(bad)
    bad.write_text("num_classes: 2\ncolor_map:\n  0: [0, 0, 300]\n")
    with pytest.raises(ContractError, match=r"color_map\.0"):
        Contract.from_yaml(bad)
    bad.write_text("num_classes: 2\nvalue_map: kitti\n")
    with pytest.raises(ContractError, match="cityscapes"):
        Contract.from_yaml(bad)


DATUMARO_COUNTS = {"Void": 0, "Animal": 3, "Archway": 0, "Bicyclist": 4, "Child": 2, "Road": 1}


class TestRealMasks:
    def test_voc_palette_mask(self, shared_real_world: Path) -> None:
        folder = shared_real_world / "annotations" / "segmentation" / "labelme_semantic_voc2011"
        report = report_of(folder / "SegmentationClass", num_classes=21, ignore_index=255)
        assert report.status == "pass"
        classes = {c["index"]: c["count"] for c in report.classes}
        assert (classes[0], classes[5], classes[15]) == (125767, 873, 32900)
        assert report.counts["ignored_pixels"] == 9460
        npy = report_of(folder / "SegmentationClassNpy", num_classes=21, ignore_index=255)
        f = finding(npy, "LG005")  # the same mask as int32 with -1 where the PNG has 255
        assert (f.examples[0].value, f.examples[0].pixels) == (-1, 9460)

    def test_cityscapes(self, shared_real_world: Path) -> None:
        folder = shared_real_world / "annotations" / "segmentation" / "mmseg_cityscapes_frankfurt"
        train = report_of(folder, num_classes=19, ignore_index=255)  # trainIds chosen
        assert train.status == "pass" and train.counts["ignored_pixels"] == 3869
        ids = report_of(
            folder / "frankfurt_000000_000294_gtFine_labelIds.png", num_classes=19, ignore_index=255
        )
        assert "LG039" in errors(ids)

    def test_datumaro_colour_masks_through_dataset_meta(self, real_world: Path) -> None:
        folder = real_world / "annotations" / "segmentation" / "datumaro_common_semseg"
        report = report_of(folder, num_classes=6)
        assert report.status == "pass"
        counts = {c["name"]: c["count"] for c in report.classes}
        assert counts == DATUMARO_COUNTS

    def test_datumaro_fix_keeps_the_class_map_of_dataset_meta(
        self, real_world: Path, tmp_path: Path
    ) -> None:
        folder = real_world / "annotations" / "segmentation" / "datumaro_common_semseg"
        out = tmp_path / "fixed"
        r = run_cli("fix", str(folder), "--out", str(out), "--format", "json")
        assert r.returncode == 0, r.stderr
        log = json.loads(r.stdout)
        assert log["rows"] == {"in": 2, "fixed": 2, "quarantined": 0}
        assert log["after"]["status"] == "pass"
        assert sorted(p.name for p in out.iterdir()) == ["0001.png", "0002.png"]
        after = fix_masks(str(folder), Contract(), FixOptions(out=str(tmp_path / "api"))).after
        assert after is not None and after.status == "pass"
        counts = {c["name"]: c["count"] for c in after.classes}  # the input's counts, kept
        assert counts == DATUMARO_COUNTS


# -- the oracle ------------------------------------------------------------------------------

torch = pytest.importorskip("torch")
K, IGNORE = 3, 255
pixel = st.sampled_from([0, 1, 2, 0, 1, 2, IGNORE, IGNORE, IGNORE, 3, -1])


def torch_fails(batch: list[np.ndarray]) -> bool:
    target = torch.from_numpy(np.stack(batch).astype(np.int64))
    logits = torch.zeros(target.shape[0], K, *target.shape[1:])
    try:
        loss = torch.nn.functional.cross_entropy(logits, target, ignore_index=IGNORE)
    except (IndexError, RuntimeError):
        return True
    return not bool(torch.isfinite(loss))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    masks=st.lists(
        st.lists(pixel, min_size=4, max_size=4).map(lambda v: np.array(v).reshape(2, 2)),
        min_size=1,
        max_size=9,
    ),
    size=st.integers(1, 4),
)
def test_failing_batches_are_those_cross_entropy_fails(masks: list[np.ndarray], size: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for i, m in enumerate(masks):
            np.save(Path(folder) / f"{i:02d}.npy", m.astype(np.int64))
        contract = Contract(num_classes=K, ignore_index=IGNORE).replace(
            batching=Batching(size=size)
        )
        report = run([folder], contract, input_format="masks").report
    expected = [
        b for b in range(-(-len(masks) // size)) if torch_fails(masks[b * size : (b + 1) * size])
    ]
    assert report.batches["failing"] == expected


@pytest.mark.slow
def test_smoke_replays_real_mask_batches() -> None:
    """The mask files of each batch, stacked as default collate does, through a 1x1 conv and
    CrossEntropyLoss in a fresh process: the batch holding the 21 fails there, the others run."""
    r = cli_here(
        "smoke", str(MASKS / "voc_bad"), "--classes", "21", "--ignore-index", "255",
        "--batch-size", "1", "--device", "cpu", "--format", "json",
    )  # fmt: skip
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    run = doc["run"]
    assert run["path"] == str(MASKS / "voc_bad")
    assert run["batches_processed"] == run["batches_expected"] == 3
    [failure] = run["failures"]
    assert failure["batch"] == 1 and "Target 21 is out of bounds" in failure["error"]
    assert failure["examples"][0]["id"] == "2011_000001.png"
    assert run["shapes"]["first"] == {
        "logits": [1, 21, 48, 64],
        "target": [1, 48, 64],
        "dtype": "torch.int64",
    }
    good = cli_here(
        "smoke", str(MASKS / "voc_good"), "--classes", "21", "--ignore-index", "255",
        "--batch-size", "2", "--device", "cpu",
    )  # fmt: skip
    assert good.returncode == 0, good.stderr
