"""labelgate.validate on data in memory: every kind gives the report the CLI gives on the same
data written to Parquet; the report's notebook and Python methods."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import labelgate
from labelgate import LabelError, UsageError

from .conftest import run_cli

LABELS = [0, 1, 2, 3, 1, 2, 4, 0, -100, 1] * 7  # a 4 among 4 classes, an ignored row
K = 4
COMPARED = ("status", "counts", "findings", "batches", "classes", "sources")


def cli_report(table: pa.Table, tmp_path: Path, *args: str) -> dict[str, Any]:
    path = tmp_path / "same.parquet"
    pq.write_table(table, path)
    r = run_cli("validate", str(path), "--format", "json", *args)
    assert r.returncode in (0, 1), r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def same(report: labelgate.Report, doc: dict[str, Any]) -> None:
    mine = report.to_dict()
    for key in COMPARED:
        assert mine[key] == doc[key], key
    assert mine["contract"]["num_classes"] == doc["contract"]["num_classes"]


class TorchStyleDataset:
    """A Dataset as torchvision writes them: items, and .targets and .classes."""

    def __init__(self, targets: list[int]) -> None:
        self.targets = targets
        self.classes = ["cat", "dog", "bird", "fish"]

    def __len__(self) -> int:
        return len(self.targets)

    def __getitem__(self, i: int) -> tuple[None, int]:
        return None, self.targets[i]


class ItemsOnly:
    """A Dataset with no .targets: the label is the second element of each item."""

    def __init__(self, targets: list[int]) -> None:
        self._targets = targets

    def __len__(self) -> int:
        return len(self._targets)

    def __getitem__(self, i: int) -> tuple[str, int]:
        return f"img-{i}", self._targets[i]


def kinds() -> list[tuple[str, Any, dict[str, Any]]]:
    import pandas as pd
    import polars as pl
    import torch

    frame = pd.DataFrame({"id": range(len(LABELS)), "label": LABELS})
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return [
        ("pandas", frame, {}),
        ("polars", pl.from_pandas(frame), {}),
        ("pyarrow.Table", table, {}),
        (
            "RecordBatchReader",
            pa.RecordBatchReader.from_batches(table.schema, table.to_batches()),
            {},
        ),
        ("numpy", np.asarray(LABELS), {}),
        ("torch.Tensor", torch.tensor(LABELS), {}),
        ("torch Dataset .targets", TorchStyleDataset(LABELS), {}),
        ("torch Dataset target_getter", ItemsOnly(LABELS), {"target_getter": lambda item: item[1]}),
    ]


@pytest.mark.parametrize("name", [k[0] for k in kinds()])
def test_in_memory_report_equals_the_cli_on_parquet(name: str, tmp_path: Path) -> None:
    _, data, extra = next(k for k in kinds() if k[0] == name)
    report = labelgate.validate(data, classes=K, **extra)
    table = pa.table({"id": range(len(LABELS)), "label": LABELS})
    if name in ("numpy", "torch.Tensor") or name.startswith("torch Dataset"):
        table = pa.table({"label": LABELS})
    names: tuple[str, ...] = ()
    if name == "torch Dataset .targets":  # its .classes are the class map
        (tmp_path / "classes.txt").write_text("cat\ndog\nbird\nfish\n")
        names = ("--class-names", str(tmp_path / "classes.txt"))
    doc = cli_report(table, tmp_path, "--classes", str(K), *names)
    same(report, doc)
    assert report.status == "fail" and "LG004" in {f.code for f in report.findings}
    assert report.input["files"][0]["path"].endswith("(in memory)")


def test_hugging_face_dataset_class_label(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=["neg", "pos"])}
    )
    ds = datasets.Dataset.from_dict(
        {"text": [f"review {i}" for i in range(20)], "label": [0, 1] * 10}, features=features
    )
    report = labelgate.validate(ds)  # K and the names come from the ClassLabel
    assert report.contract["num_classes"] == 2
    assert [c["name"] for c in report.classes] == ["neg", "pos"]
    path = tmp_path / "hf.parquet"
    ds.to_parquet(str(path))
    r = run_cli("validate", str(path), "--format", "json")
    same(report, json.loads(r.stdout))
    # a shuffled, selected view: its own rows only
    assert labelgate.validate(ds.shuffle(seed=0).select(range(5))).counts["rows"] == 5


def test_hugging_face_token_classification() -> None:
    datasets = pytest.importorskip("datasets")
    features = datasets.Features(
        {"ner_tags": datasets.Sequence(datasets.ClassLabel(names=["O", "B", "I"]))}
    )
    ds = datasets.Dataset.from_dict({"ner_tags": [[0, 1, 2], [-100, -100]]}, features=features)
    report = labelgate.validate(ds, batch_size=1)
    assert report.contract["task"] == "tokens"
    assert [f.code for f in report.findings if f.severity == "error"] == ["LG007"]


def test_refusals() -> None:
    with pytest.raises(UsageError, match="target_getter"):
        labelgate.validate(ItemsOnly([0, 1]), classes=2)
    with pytest.raises(UsageError, match=r"cannot validate a builtins\.int"):
        labelgate.validate(42, classes=2)
    assert labelgate.validate({"label": [0, 1, 5]}, classes=2).status == "fail"  # columns by name
    with pytest.raises(UsageError, match="streaming engine"):
        labelgate.validate(np.array([0, 1]), classes=2, engine="pandera")
    with pytest.raises(UsageError, match="3 dimensions"):
        labelgate.validate(np.zeros((2, 2, 2), dtype=np.int64), classes=2)


class TestReportMethods:
    def report(self) -> labelgate.api.ValidationReport:
        return labelgate.validate(np.array([0, 1, 2, 4, 1]), classes=4)

    def test_passed_and_raise_for_errors(self) -> None:
        bad = self.report()
        assert not bad.passed
        with pytest.raises(LabelError, match=r"LG004 error, 1 rows: .*first: row 3"):
            bad.raise_for_errors()
        good = labelgate.validate(np.array([0, 1, 2, 3]), classes=4)
        assert good.passed
        good.raise_for_errors()  # nothing to raise

    def test_to_dict_to_json_and_save(self, tmp_path: Path) -> None:
        report = self.report()
        assert json.loads(report.to_json()) == json.loads(json.dumps(report.to_dict(), default=str))
        for name, marker in (
            ("r.json", '"schema_version"'),
            ("r.html", "<!DOCTYPE html>"),
            ("r.md", "## labelgate validate"),
            ("r.xml", "<testsuites"),
            ("r.txt", "LG004"),
        ):
            written = report.save(tmp_path / name)
            assert marker in written.read_text()
        assert "::error" in report.save(tmp_path / "gh.log", format="github").read_text()
        with pytest.raises(UsageError, match="format must be one of"):
            report.save(tmp_path / "x", format="pdf")

    def test_notebook_display(self) -> None:
        report = self.report()
        html = report._repr_html_()
        assert html.startswith('<div class="labelgate-report">') and "<script" not in html
        assert "Content-Security-Policy" not in html and "<body" not in html
        assert "body{" not in html and ".labelgate-report table{" in html  # scoped style
        assert "LG004" in html and "<svg" in html
        assert report._repr_markdown_().startswith("## labelgate validate")
        assert repr(report).startswith("<labelgate report: fail, 5 rows; LG004 error")
