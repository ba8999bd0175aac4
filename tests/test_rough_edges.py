"""What a new user trips on: flags that cannot apply, and inputs a careless run hands in, each
a one-line error and exit 2 (never a traceback, never a flag accepted without a word)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labelgate.cli import main

SAMPLES = Path(__file__).resolve().parent.parent / "data_samples"


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The one error line of ``labelgate ARGS``, which must exit 2."""
    capsys.readouterr()
    status = main(list(args))
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("labelgate: error: "), err
    assert "Traceback" not in err
    return err


def test_a_header_that_repeats_a_column_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,label,label\n1,0,1\n2,1,2\n")
    err = refused(capsys, "validate", str(path), "--classes", "4")
    assert "two columns 'label' (columns 2 and 3)" in err


@pytest.mark.parametrize(
    ("sample", "framework", "said"),
    [
        ("oob_0_2_4.parquet", "torchvision", "a table of class labels"),
        ("formats/coco_good.json", "mmseg", "detection (coco)"),
        ("formats/imagefolder_good", "detectron2", "classification (imagefolder)"),
    ],
)
def test_a_framework_that_does_not_read_the_input_is_refused(
    capsys: pytest.CaptureFixture[str], sample: str, framework: str, said: str
) -> None:
    err = refused(
        capsys, "validate", str(SAMPLES / sample), "--classes", "4", "--framework", framework
    )
    assert f"--framework {framework} applies to" in err and said in err


def test_a_framework_of_the_input_s_task_is_taken(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["validate", str(SAMPLES / "formats/coco_good.json"), "--framework", "mmdet"])
    assert status == 0, capsys.readouterr().err


@pytest.mark.parametrize(("background", "status"), [("5", 2), ("4", 2), ("-1", 2), ("3", 1)])
def test_a_background_index_outside_k_is_refused(
    capsys: pytest.CaptureFixture[str], background: str, status: int
) -> None:
    args = ["validate", str(SAMPLES / "formats/coco_good.json"), "--classes", "4"]
    if status == 2:
        err = refused(capsys, *args, "--background", background)
        assert f"--background {background} is no class index of K=4" in err
    else:  # a class of K: taken, and its objects (the birds) found under it (LG032)
        assert main([*args, "--background", background]) == 1
        assert "LG032" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("sample", "task"),
    [
        ("clean.parquet -k 4", "multiclass"),
        ("masks/voc_good --classes 21", "segmentation"),
        ("formats/imagefolder_good", "classification"),
    ],
)
def test_a_background_index_outside_detection_is_refused(
    capsys: pytest.CaptureFixture[str], sample: str, task: str
) -> None:
    """No object of these can be labelled the background: the index would be taken unused."""
    path, *flags = sample.split()
    err = refused(capsys, "validate", str(SAMPLES / path), *flags, "--background", "0")
    assert "--background applies to detection inputs" in err
    assert err.endswith(f"this input's task is {task}: drop --background")


@pytest.mark.parametrize(
    ("sample", "said"),
    [
        ("clean.parquet", "is a table: --source-column names its source column"),
        ("formats/yolo_good", "is read as yolo: drop --source-field"),
    ],
)
def test_a_source_field_outside_coco_is_refused(
    capsys: pytest.CaptureFixture[str], sample: str, said: str
) -> None:
    err = refused(capsys, "validate", str(SAMPLES / sample), "-k", "4", "--source-field", "site")
    assert "--source-field applies to COCO inputs (a field of each image), and this input " in err
    assert err.endswith(said)


def test_a_source_field_no_image_has_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = SAMPLES / "formats/coco_good.json"
    err = refused(capsys, "validate", str(path), "--source-field", "nosuchfield")
    assert "--source-field 'nosuchfield': no image" in err
    doc = json.loads(path.read_text())
    for image in doc["images"]:
        image["site"] = "a"
    (tmp_path / "a.json").write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["validate", str(tmp_path / "a.json"), "--source-field", "site"]) == 0


@pytest.mark.parametrize(("sample", "status"), [("labelstudio_good", 0), ("labelstudio_bad", 1)])
def test_a_label_studio_export_folder_is_read_as_its_export(
    capsys: pytest.CaptureFixture[str], sample: str, status: int
) -> None:
    """The folder the export dialog saved (export.json beside label_config.xml), as given."""
    capsys.readouterr()
    code = main(["validate", str(SAMPLES / "formats" / sample), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == status and report["input"]["annotations"]["format"] == "labelstudio"
    assert "export.json" in report["input"]["annotations"]["detected_because"]


def test_a_class_map_shorter_than_the_format_s_says_no_class_not_none(tmp_path: Path) -> None:
    from labelgate.contract import Contract
    from labelgate.contract.classmap import load_class_map
    from labelgate.run.validation import run

    (tmp_path / "labels").mkdir()
    (tmp_path / "classes.txt").write_text("cat\ndog\nbird\n")
    (tmp_path / "labels" / "1.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    names = tmp_path / "names.txt"
    names.write_text("cat\ndog\n")
    contract = Contract(class_map=load_class_map(names))
    report = run([str(tmp_path)], contract, max_examples=0).report
    lg030 = next(f for f in report.findings if f.code == "LG030")
    assert "2: no class vs 'bird'" in lg030.message and "None" not in lg030.message


def test_the_html_report_counts_one_problem_in_the_singular(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["validate", str(SAMPLES / "clean.parquet"), "--classes", "4"]
    args += ["--class-names", str(SAMPLES / "classes_duplicate.txt"), "--format", "html"]
    capsys.readouterr()
    assert main(args) == 1
    html = capsys.readouterr().out
    assert "<td>1 problem</td>" in html and "1 problems" not in html


@pytest.mark.parametrize(
    "name", ["a.json", "a.xml", "a.csv", "a.parquet", "a.json.gz", "a.csv.zst", "a.tsv.gz"]
)
def test_an_empty_file_is_empty_whatever_its_suffix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (tmp_path / name).write_bytes(b"")
    err = refused(capsys, "validate", str(tmp_path / name), "--classes", "2")
    assert "file is empty (0 bytes)" in err


def test_an_empty_folder_is_said_to_be_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "labels").mkdir()
    err = refused(capsys, "validate", str(tmp_path / "labels"), "--classes", "2")
    assert err.endswith("labels: folder is empty: nothing in it to read")


def test_splits_whose_class_folders_differ_name_the_missing_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from PIL import Image

    for split, classes in (
        ("train", ("cat", "dog", "fox", "owl")),
        ("test", ("cat", "dog", "owl")),
    ):
        for name in classes:
            (tmp_path / split / name).mkdir(parents=True)
            Image.new("RGB", (4, 4)).save(tmp_path / split / name / "0.png")
    main(["validate", str(tmp_path), "--format", "json"])
    (lg033,) = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] == "LG033"]
    assert "split 'train' has 4 class folders and 'test' 3 ('test' lacks 'fox')" in lg033["message"]
    assert "from index 2" in lg033["message"]


def test_image_findings_name_the_file_and_lg043_its_two_sizes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from PIL import Image

    Image.new("RGB", (64, 48)).save(tmp_path / "wrong.png")
    (tmp_path / "noise.png").write_bytes(b"not an image" * 10)
    files = [("wrong.png", 100, 80), ("gone.jpg", 10, 10), ("noise.png", 10, 10)]
    images = [
        {"id": i, "file_name": f, "width": w, "height": h} for i, (f, w, h) in enumerate(files, 1)
    ]
    boxes = [
        {"id": 10 + i, "image_id": i, "category_id": 0, "bbox": [1, 1, 2, 2]} for i in (1, 2, 3)
    ]
    coco = {"images": images, "annotations": boxes, "categories": [{"id": 0, "name": "a"}]}
    (tmp_path / "ann.json").write_text(json.dumps(coco))
    main(["validate", str(tmp_path / "ann.json"), "--classes", "1"])
    out = capsys.readouterr().out
    assert (
        "id 'image 1', file 'wrong.png', value '100 x 80 in the annotation, 64 x 48 loaded'" in out
    )
    assert "id 'image 2', file 'gone.jpg'" in out  # LG041
    assert "id 'image 3', file 'noise.png'" in out  # LG042


def test_validate_help_names_what_it_reads_and_only_formats_one_may_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from labelgate.cli.parser import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["validate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for kind in ("Parquet, CSV, TSV, JSONL", "(.gz, .zst)", "its .zip", "- reads standard input"):
        assert kind in text
    listed = text.split("a reader's name: ")[1].split(", or a plugin's")[0].split(", ")
    assert "table" in listed and "coco" in listed
    path = tmp_path / "t.csv"
    path.write_text("label\n0\n1\n")
    for name in listed:  # each one a format: none refuses being named
        capsys.readouterr()
        main(["validate", str(path), "--classes", "2", "--input-format", name])
        assert "names no format" not in capsys.readouterr().err, name


@pytest.mark.parametrize(
    ("sample", "flag"),
    [
        ("formats/coco_good.json", "--id-column"),
        ("formats/yolo_good", "--name-column"),
        ("formats/coco_good.json", "--label-columns"),
    ],
)
def test_a_column_a_format_s_rows_lack_names_them_not_a_temporary_file(
    capsys: pytest.CaptureFixture[str], sample: str, flag: str
) -> None:
    err = refused(capsys, "validate", str(SAMPLES / sample), flag, "nope")
    assert f"{flag} 'nope' is none of the columns of the rows this " in err
    assert "(id, label, source): name one of them" in err and "/tmp" not in err


@pytest.mark.parametrize(
    ("sample", "task"),
    [
        ("clean.parquet -k 4", "multiclass"),
        ("multilabel.jsonl -k 4 --label-column labels", "tokens"),
    ],
)
def test_a_label_encoding_outside_multilabel_is_refused(
    capsys: pytest.CaptureFixture[str], sample: str, task: str
) -> None:
    """Taken on another task it changed nothing; a list column without --task is read as
    tokens, so the message says the task that --label-encoding needs."""
    path, *flags = sample.split()
    err = refused(capsys, "validate", str(SAMPLES / path), *flags, "--label-encoding", "indices")
    assert "--label-encoding applies to multi-label rows (--task multilabel)" in err
    assert err.endswith(f"this input's task is {task}: drop --label-encoding")
