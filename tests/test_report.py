"""The JSON report is a stable contract: its keys are pinned, and a golden file holds one report."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from labelgate import Contract
from labelgate.render import render
from labelgate.run.validation import report_of
from tests.conftest import ROOT, SAMPLES

GOLDEN = ROOT / "tests" / "golden"

TOP = {
    "schema_version",
    "status",
    "strict",
    "counts",
    "findings",
    "input",
    "environment",
    "contract",
    "batches",
    "sources",
    "classes",
    "notes",
}
FINDING = {
    "code",
    "severity",
    "count",
    "unit",
    "message",
    "fix",
    "examples",
    "batches",
    "batch_count",
    "details",
}
EXAMPLE = {"row", "id", "batch", "source", "value"}
ENVIRONMENT = {
    "labelgate",
    "python",
    "platform",
    "pyarrow",
    "numpy",
    "torch",
    "backend",
    "code_revision",
}


def report_for(name: str, **contract: object) -> dict[str, object]:
    cwd = Path.cwd()
    os.chdir(SAMPLES)  # paths in the report are as given: keep them relative
    try:
        rep = report_of([name], Contract(**contract))  # type: ignore[arg-type]
    finally:
        os.chdir(cwd)
    return json.loads(render(rep, "json"))  # type: ignore[no-any-return]


class TestSchema:
    def test_keys(self) -> None:
        doc = report_for("two_sources_one_based.parquet", num_classes=4)
        assert set(doc) == TOP
        assert doc["schema_version"] == 1
        assert set(doc["counts"]) == {"rows", "usable", "ignored", "rejected"}
        assert set(doc["environment"]) == ENVIRONMENT
        for f in doc["findings"]:
            assert set(f) == FINDING
            for e in f["examples"]:
                assert set(e) == EXAMPLE
        assert set(doc["input"]["files"][0]) == {
            "path",
            "format",
            "size",
            "rows",
            "row_groups",
            "hash",
        }

    def test_tokens_examples_carry_position(self, tmp_path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = tmp_path / "t.parquet"
        pq.write_table(pa.table({"tags": pa.array([[0, 1], [1, 7]], pa.list_(pa.int64()))}), path)
        rep = report_of([str(path)], Contract(num_classes=4, label_column="tags"))
        doc = json.loads(render(rep, "json"))
        (lg004,) = [f for f in doc["findings"] if f["code"] == "LG004"]
        assert lg004["unit"] == "tokens"
        assert lg004["examples"] == [
            {"row": 1, "id": None, "batch": 0, "source": None, "value": 7, "position": 1}
        ]
        assert doc["counts"]["tokens"] == 4 and doc["counts"]["rejected_tokens"] == 1

    @pytest.mark.parametrize(
        "name", ["clean.parquet", "oob_0_2_4.parquet", "all_ignored_batch.parquet"]
    )
    def test_accounting_identity(self, name: str) -> None:
        c = report_for(name, num_classes=4)["counts"]
        assert isinstance(c, dict)
        assert c["rows"] == c["usable"] + c["ignored"] + c["rejected"]


class TestGolden:
    """Regenerate with LABELGATE_REGOLD=1 after a deliberate change, and review the diff."""

    @pytest.mark.parametrize(
        ("name", "k"), [("oob_0_2_4.parquet", 4), ("two_sources_one_based.parquet", 4)]
    )
    def test_json_golden(self, name: str, k: int) -> None:
        doc = report_for(name, num_classes=k)
        doc.pop("environment")
        golden = GOLDEN / (Path(name).stem + ".json")
        text = json.dumps(doc, indent=2, sort_keys=True) + "\n"
        if os.environ.get("LABELGATE_REGOLD"):
            golden.write_text(text)
        assert text == golden.read_text()

    def test_text_report(self) -> None:
        os.chdir(SAMPLES)
        try:
            rep = report_of(["oob_0_2_4.parquet"], Contract(num_classes=4))
        finally:
            os.chdir(ROOT)
        text = render(rep, "text", width=100)
        golden = GOLDEN / "oob_0_2_4.txt"
        if os.environ.get("LABELGATE_REGOLD"):
            golden.write_text(text)
        assert text == golden.read_text()
