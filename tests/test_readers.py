"""The reader interface: detection by confidence over every sample and real file, plugins found
through entry points, and nothing a validation makes outliving it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import labelgate
from labelgate.errors import InputError, UsageError
from labelgate.readers import MANIFEST, choose, names, reader
from labelgate.readers.base import Claim, Read, Reader
from labelgate.readers.manifest import Entry
from tests.conftest import ROOT, SAMPLES, run_cli

# What each sample is: every file and folder of data_samples/ down to a dataset's own level.
# "-" is a file no reader claims (class lists, contracts, scripts): refused as unknown, never read
# as something else.
SAMPLE_FORMATS = {
    "all_ignored_batch.parquet": "table",
    "classes.txt": "-",
    "classes_duplicate.txt": "-",
    "clean.jsonl": "table",
    "clean.parquet": "table",
    "coco_sparse_ids.parquet": "table",
    "formats/coco_bad.json": "coco",
    "formats/coco_good.json": "coco",
    "formats/cvat_bad.xml": "cvat",
    "formats/cvat_good.xml": "cvat",
    "formats/labelme_bad": "labelme",
    "formats/labelme_good": "labelme",
    "formats/labelme_good/img_0.json": "labelme",
    "formats/labelme_good/labels.txt": "-",
    "formats/labelstudio_bad/export.json": "labelstudio",
    "formats/labelstudio_good/export.json": "labelstudio",
    "formats/labelstudio_good/label_config.xml": "-",
    "formats/hf_bad.parquet": "hf",
    "formats/hf_good.parquet": "hf",
    "formats/imagefolder_bad": "imagefolder",
    "formats/imagefolder_bad/train": "imagefolder",
    "formats/imagefolder_good": "imagefolder",
    "formats/imagefolder_good/train": "imagefolder",
    "formats/imagefolder_good/val": "imagefolder",
    "formats/voc_bad": "voc",
    "formats/voc_bad/0000.xml": "voc",
    "formats/voc_good": "voc",
    "formats/voc_good/class_names.txt": "-",
    "formats/yolo_bad": "yolo",
    "formats/yolo_good": "yolo",
    "formats/yolo_good/data.yaml": "yolo",
    "formats/yolo_good/train/labels/img_0.txt": "-",
    "ignore_inside_range.parquet": "table",
    "ignore_inside_range.yaml": "-",
    "make_samples.py": "-",
    "masks/binary_0_255": "masks",
    "masks/cityscapes": "masks",
    "masks/npy": "masks",
    "masks/voc_bad": "masks",
    "masks/voc_good": "masks",
    "masks/voc_good/2011_000000.png": "masks",
    "masks/rgb.yaml": "-",
    "multilabel.jsonl": "table",
    "neg1_sentinel.parquet": "table",
    "one_based_no_header.csv": "table",
    "oob_0_2_4.parquet": "table",
    "soft_labels.parquet": "table",
    "tokens.yaml": "-",
    "tokens_all_ignored_batch.parquet": "table",
    "two_sources_one_based.parquet": "table",
    "README.md": "-",
}

# The same for ../shared/real_world (CI only): each dataset as its MANIFEST describes it.
REAL_FORMATS = {
    "01_coco_val2014_sampled_gts.json": "coco",
    "02_coco_toy_single_category_id0.json": "coco",
    "03_yolo_cvat_obj.names": "-",
    "04_yolo_label_2007_001430.txt": "-",
    "05_pascalvoc_2007_001430.xml": "voc",
    "06_cityscapes_labels.py": "-",
    "07_agnews_classes.txt": "-",
    "08_agnews_test_first200.csv": "table",
    "11_imagenet_classes_pytorch_hub.txt": "-",
    "annotations/coco/chess_pieces_v23_valid__annotations.coco.json": "coco",
    "annotations/coco/datumaro_instances_val.json": "coco",
    "annotations/coco/datumaro_panoptic/panoptic_val.json": "coco",
    "annotations/coco/datumaro_person_keypoints_train.json": "coco",
    "annotations/coco/labelme2coco_voc2011_annotations.json": "coco",
    "annotations/hf/fdm045_save_to_disk_test": "hf",
    "annotations/hf/imdb_dataset_infos.json": "-",
    "annotations/imagefolder/datumaro_imagenet_dataset": "imagefolder",
    "annotations/other/cvat_export_task_train.xml": "cvat",
    "annotations/other/datumaro_kaggle_multilabel_ann.csv": "table",
    "annotations/other/labelme_semantic_2011_000003.json": "labelme",
    "annotations/other/labelstudio_export_yolo_data.json": "labelstudio",
    "annotations/other/labelstudio_export_yolo_label_config.xml": "-",
    "annotations/other/raccoon_labels.csv": "detcsv",
    "annotations/other/raccoon_object-detection.pbtxt": "-",
    "annotations/segmentation/datumaro_common_semseg": "masks",
    "annotations/segmentation/datumaro_common_semseg/masks": "masks",
    "annotations/segmentation/labelme_semantic_voc2011/SegmentationClass": "masks",
    "annotations/segmentation/labelme_semantic_voc2011/SegmentationClassNpy": "masks",
    "annotations/segmentation/mmseg_cityscapes_frankfurt": "masks",
    "annotations/segmentation/ultralytics_cityscapes.yaml": "-",
    "annotations/voc/datumaro_voc_dataset2": "voc",
    "annotations/voc/datumaro_voc_dataset2/Annotations": "voc",
    "annotations/voc/labelme_bbox_voc2011": "voc",
    "annotations/voc/raccoon": "voc",
    "annotations/yolo/datumaro_darknet_strict": "yolo",
    "annotations/yolo/datumaro_roboflow_yolo": "yolo",
    "annotations/yolo/labelstudio_import_yolo": "yolo",
    "annotations/yolo/ultralytics_coco8.yaml": "yolo",
}


def detected(path: Path) -> str:
    try:
        return choose([str(path)]).reader.name
    except InputError as exc:
        assert "unknown format: no reader claims" in str(exc), exc
        return "-"


@pytest.mark.parametrize(("name", "fmt"), sorted(SAMPLE_FORMATS.items()))
def test_every_sample_is_detected_as_what_it_is(name: str, fmt: str) -> None:
    assert detected(SAMPLES / name) == fmt


def test_the_sample_table_covers_every_sample_file() -> None:
    """A new sample gets its line above: nothing is detected by accident."""
    files = {
        p.relative_to(SAMPLES).as_posix()
        for p in SAMPLES.rglob("*")
        if p.is_file() and p.parent == SAMPLES
    }
    assert files <= set(SAMPLE_FORMATS)


@pytest.mark.parametrize(("name", "fmt"), sorted(REAL_FORMATS.items()))
def test_every_real_file_is_detected_as_what_it_is(
    name: str, fmt: str, shared_real_world: Path
) -> None:
    assert detected(shared_real_world / name) == fmt


def _hidden_claims(path: Path) -> list[str]:
    """The built-in readers that claim ``path`` when asked although their manifest entry says
    they may not (detection would never ask them)."""
    return [
        name
        for name, entry in MANIFEST.items()
        if reader(name).detect(path) is not None and not entry.may_claim(path)
    ]


@pytest.mark.parametrize("name", sorted(SAMPLE_FORMATS))
def test_no_sample_is_claimed_beyond_its_reader_s_manifest_entry(name: str) -> None:
    assert _hidden_claims(SAMPLES / name) == []


@pytest.mark.parametrize("name", sorted(REAL_FORMATS))
def test_no_real_file_is_claimed_beyond_its_reader_s_manifest_entry(
    name: str, shared_real_world: Path
) -> None:
    assert _hidden_claims(shared_real_world / name) == []


def test_the_manifest_s_suffixes_are_the_readers_own() -> None:
    from labelgate.readers.masks.maskdecode import MASK_SUFFIXES
    from labelgate.readers.table import TableReader

    assert MANIFEST["table"].suffixes == TableReader.suffixes
    assert MANIFEST["masks"].suffixes == MASK_SUFFIXES


def test_a_path_neither_file_nor_folder_is_asked_of_every_reader(tmp_path: Path) -> None:
    fifo = tmp_path / "labels.fifo"
    os.mkfifo(fifo)
    assert all(entry.may_claim(fifo) for entry in MANIFEST.values())
    assert choose([str(fifo)]).reader.name == "table"  # which says it is no regular file


def test_a_folder_mark_is_looked_for_directly_inside(tmp_path: Path) -> None:
    assert not MANIFEST["cvat"].may_claim(tmp_path)
    (tmp_path / "annotations.xml").write_text("<annotations/>")
    assert MANIFEST["cvat"].may_claim(tmp_path)
    assert not MANIFEST["detcsv"].may_claim(tmp_path)  # claims files only


def test_detecting_a_parquet_file_imports_only_the_readers_it_could_be() -> None:
    code = (
        "import sys; from labelgate.readers import MANIFEST, detect; "
        "print(detect('data_samples/oob_0_2_4.parquet').reader.name); "
        "print(*(n for n, e in MANIFEST.items() if e.target.split(':')[0] in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.splitlines()
    assert out == ["table", "table hf"]


def test_a_table_folder_is_a_table_whatever_txt_lies_beside_it(tmp_path: Path) -> None:
    """The README's own layout: labels.parquet beside its classes.txt (YOLO claims a class list
    only with label files beside it)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"label": [0, 1, 2]}), tmp_path / "labels.parquet")
    (tmp_path / "classes.txt").write_text("a\nb\nc\n")
    assert choose([str(tmp_path)]).reader.name == "table"
    report = labelgate.validate(str(tmp_path), classes=3)
    assert report.passed and report.counts["rows"] == 3


def test_a_folder_of_subfolders_is_not_imagefolder_when_it_holds_annotations(
    tmp_path: Path,
) -> None:
    """A COCO dataset folder (annotations/ + images/) is no image classification set: it is
    read as the COCO root it is; without a COCO file in annotations/, as nothing."""
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "a.jpg").write_bytes(b"\xff\xd8\xff")
    (tmp_path / "annotations").mkdir()
    (tmp_path / "annotations" / "notes.json").write_text('{"about": "not COCO"}')
    with pytest.raises(InputError, match="unknown format"):
        choose([str(tmp_path)])
    (tmp_path / "annotations" / "instances.json").write_text('{"images": []}')
    assert choose([str(tmp_path)]).reader.name == "coco"


def test_unknown_names_and_several_formats_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"did you mean 'coco'"):
        choose([str(tmp_path)], "cocoo")
    a = SAMPLES / "clean.parquet"
    b = SAMPLES / "formats" / "coco_good.json"
    with pytest.raises(InputError, match="different formats"):
        choose([str(a), str(b)])
    with pytest.raises(UsageError, match="yolo reads one file or folder, got 2 paths"):
        choose([str(a), str(a)], "yolo")
    result = run_cli("validate", str(SAMPLES / "tokens.yaml"), "--classes", "3")
    assert result.returncode == 2 and "unknown format" in result.stderr


class TwinOfCoco(Reader):
    """Claims COCO files exactly as surely as the COCO reader: a tie."""

    name = "twin"

    def detect(self, path: Path, task: str | None = None) -> Claim | None:
        return reader("coco").detect(path, task)

    def read(self, paths, sink, facts, options):  # type: ignore[no-untyped-def]
        return Read()


@pytest.fixture
def twin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setitem(
        MANIFEST, "twin", Entry("tests.test_readers:TwinOfCoco", suffixes=(".json",), folders=True)
    )
    reader.cache_clear()
    yield
    reader.cache_clear()


def test_a_tie_names_both_readers(twin: None) -> None:
    with pytest.raises(InputError, match=r"ambiguous format: coco \(.*\) and twin"):
        choose([str(SAMPLES / "formats" / "coco_good.json")])


def test_capabilities_decide_what_fix_and_smoke_do() -> None:
    assert reader("masks").can("files") and reader("masks").can("stack")
    assert not any(reader(n).can("files") for n in names() if n != "masks")
    assert all(reader(n).can("many") for n in ("coco", "cvat", "labelstudio"))
    assert reader("table").can("table") and reader("table").can("many")
    assert all(isinstance(reader(n), Reader) for n in names())


def test_readers_are_imported_only_when_asked() -> None:
    code = (
        "import sys, labelgate.readers as r; "
        "print(sorted(m for m in sys.modules if m.startswith('labelgate.readers.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['labelgate.readers.manifest', 'labelgate.readers.registry']"


# -- nothing outlives its validation ----------------------------------------------------------


def test_many_validations_leave_the_temporary_directory_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pandas as pd

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    coco = SAMPLES / "formats" / "coco_good.json"
    frame = pd.DataFrame({"label": [0, 1, 2, 1] * 8})
    for _ in range(30):
        assert labelgate.validate(str(coco)).counts["rows"] > 0
        assert labelgate.validate(frame, classes=3).passed
    masks = SAMPLES / "masks" / "voc_good"
    assert labelgate.validate(str(masks), classes=21, ignore_index=255).counts["rows"] == 4
    assert list(scratch.iterdir()) == []
    from labelgate.io import sources

    assert not [n for n in vars(sources) if n.isupper() and "TABLE" in n]


def test_a_validation_kept_open_keeps_its_rows_until_closed(tmp_path: Path) -> None:
    from labelgate.contract import Contract
    from labelgate.run.validation import run

    with run([str(SAMPLES / "formats" / "coco_good.json")], Contract()) as done:
        rows = Path(done.dataset.files[0].path)
        assert rows.is_file()
    assert not rows.exists()


# -- the report says where K and the class map came from --------------------------------------


def test_the_report_prints_where_k_and_the_class_map_came_from() -> None:
    result = run_cli(
        "validate", str(SAMPLES / "formats" / "voc_good"), "--format", "json", "--strict"
    )
    doc = json.loads(result.stdout)
    resolved = doc["contract"]["resolved"]
    assert resolved["num_classes"]["from"].startswith("class_names.txt beside the annotations")
    assert resolved["class_map"]["value"] == resolved["num_classes"]["value"]
    assert any(n.startswith("K = ") and "class_names.txt" in n for n in doc["notes"])
    assert doc["contract"]["num_classes"] == 3  # the contract applied; "resolved" says whence


def test_voc_indices_do_not_change_with_the_folder_level_given(tmp_path: Path) -> None:
    """The dataset root and its Annotations/ read the same label map."""
    root = tmp_path / "voc"
    (root / "Annotations").mkdir(parents=True)
    (root / "labelmap.txt").write_text(
        "# label:color_rgb:parts:actions\nbackground:0,0,0::\ncat:1,1,1::\ndog:2,2,2::\n"
    )
    (root / "Annotations" / "a.xml").write_text(
        "<annotation><object><name>dog</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>"
    )
    top = labelgate.validate(str(root))
    inner = labelgate.validate(str(root / "Annotations"))
    assert [c["name"] for c in top.classes] == [c["name"] for c in inner.classes]
    assert [c["name"] for c in inner.classes] == ["background", "cat", "dog"]
    assert any("labelmap.txt" in n for n in inner.notes)


# -- plugins -----------------------------------------------------------------------------------


def _blocks(doc: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", doc, flags=re.S)


@pytest.mark.slow
def test_the_plugin_of_the_docs_is_installed_and_read(tmp_path: Path) -> None:
    """docs/plugins.md's package, built and installed as a user would, then detected by its
    entry point and read by a validation like any built-in format."""
    doc = (ROOT / "docs" / "plugins.md").read_text()
    (toml,) = _blocks(doc, "toml")
    (module,) = _blocks(doc, "python")
    package = tmp_path / "labelgate-lbl"
    package.mkdir()
    (package / "pyproject.toml").write_text(toml)
    (package / "labelgate_lbl.py").write_text(module)
    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(site),
            str(package),
        ],
        check=True,
        capture_output=True,
    )
    data = tmp_path / "train.lbl"
    data.write_text("img_0 0\nimg_1 2\nimg_2 three\nimg_3 3\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "labelgate",
            "validate",
            str(data),
            "--classes",
            "3",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["input"]["annotations"]["format"] == "lbl"
    assert "read as lbl (a .lbl file)" in report["notes"]
    by_code = {f["code"]: f for f in report["findings"]}
    assert by_code["LG004"]["examples"][0]["id"] == "img_3"
    assert by_code["LG031"]["examples"][0]["id"] == "train.lbl:3"
    assert report["counts"]["rows"] == 3
    listed = subprocess.run(
        [sys.executable, "-c", "import labelgate.readers as r; print(r.names())"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert "'lbl'" in listed.stdout
