"""The words a user reads on a mistake or in a header: the reason first, no content echoed, no
raw bytes, no tool's progress bars, nothing cut where it is copied."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from labelgate.core.report import Example, Finding, Report
from labelgate.render import render
from labelgate.render.html import render_html
from labelgate.render.text import render_text
from tests.conftest import ROOT, SAMPLES
from tests.support.inproc import run_here


def one_error_line(result: object) -> str:
    """The single stderr line of a usage error (exit 2, no traceback)."""
    assert result.returncode == 2, result.stderr  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr  # type: ignore[attr-defined]
    return str(lines[0])


class TestInputErrors:
    def test_yaml_as_path_is_an_unknown_format_first(self) -> None:
        line = one_error_line(run_here("validate", str(SAMPLES / "tokens.yaml")))
        assert "unknown format" in line and "--schema" in line
        assert "--classes K is required" not in line

    def test_hf_dataset_info_as_class_names_says_why_not_what(self, tmp_path: Path) -> None:
        description = "A long dataset card. " * 50  # over 1,000 characters
        info = tmp_path / "dataset_info.json"
        info.write_text(
            json.dumps(
                {
                    "description": description,
                    "features": {"label": {"dtype": "int64", "_type": "Value"}},
                }
            )
        )
        line = one_error_line(
            run_here(
                "validate",
                str(SAMPLES / "clean.parquet"),
                "--classes",
                "4",
                "--class-names",
                str(info),
            )
        )
        assert "A long dataset card" not in line
        assert "Hugging Face dataset_info.json, not a class map" in line
        assert len(line) < 400

    def test_coco_on_parquet_prints_no_raw_bytes(self) -> None:
        line = one_error_line(
            run_here(
                "validate",
                str(SAMPLES / "clean.parquet"),
                "--classes",
                "4",
                "--input-format",
                "coco",
            )
        )
        assert "not valid JSON: a Parquet file" in line
        assert "PAR1" not in line and "b'" not in line and "\\x" not in line

    def test_semicolon_csv_gets_a_delimiter_hint(self, tmp_path: Path) -> None:
        data = tmp_path / "labels.csv"
        data.write_text("id;label\n1;0\n2;1\n3;2\n")
        line = one_error_line(run_here("validate", str(data), "--classes", "4"))
        assert "LG001" in line and "semicolon-separated" in line
        assert "sep=';'" in line

    @pytest.mark.slow  # imports datasets to write the folder
    def test_save_to_disk_without_classlabel_says_why_k_is_unknown(self, tmp_path: Path) -> None:
        datasets = pytest.importorskip("datasets")
        folder = tmp_path / "ds"
        datasets.Dataset.from_dict({"text": ["a", "b"], "label": [0, 1]}).save_to_disk(folder)
        line = one_error_line(run_here("validate", str(folder)))
        assert line.startswith("labelgate: error: --classes K is required: K cannot be read")
        assert "no ClassLabel feature" in line


@pytest.mark.slow  # Great Expectations, imported here: on the engines worker, which imports it too
@pytest.mark.xdist_group("engines")
class TestGx:
    def test_no_progress_means_no_gx_bars(self) -> None:
        pytest.importorskip("great_expectations")
        result = run_here(
            "validate",
            str(SAMPLES / "oob_0_2_4.parquet"),
            "--classes",
            "4",
            "--engine",
            "gx",
            "--no-progress",
        )
        assert result.returncode == 1
        assert "Calculating Metrics" not in result.stderr and "it/s" not in result.stderr

    def test_export_gx_keeps_the_pandera_section(self, tmp_path: Path) -> None:
        pytest.importorskip("great_expectations")
        out = tmp_path / "suite.json"
        schema = ROOT / "schemas" / "image_classification.yaml"
        result = run_here("export", "gx", str(schema), "-o", str(out))
        assert result.returncode == 0, result.stderr
        found = {
            (e["type"], json.dumps(e["kwargs"]))
            for e in json.loads(out.read_text())["expectations"]
        }
        assert (
            "expect_column_values_to_match_regex",
            json.dumps({"column": "path", "regex": "^images/"}),
        ) in found
        assert (
            "expect_column_values_to_be_in_set",
            json.dumps({"column": "source", "value_set": ["web", "vendor"]}),
        ) in found


class TestExportPandera:
    @pytest.mark.slow  # imports pandera
    def test_keeps_the_pandera_section(self, tmp_path: Path) -> None:
        out = tmp_path / "schema.yaml"
        schema = ROOT / "schemas" / "image_classification.yaml"
        result = run_here("export", "pandera", str(schema), "-o", str(out))
        assert result.returncode == 0, result.stderr
        import pandera.pandas as pa

        import labelgate.engines.pandera  # registers labelgate's checks, so pandera reads them back

        assert labelgate.engines.pandera.export_schema is not None
        back = pa.DataFrameSchema.from_yaml(out)
        checks = {c: [k.name for k in back.columns[c].checks] for c in ("path", "source")}
        assert checks == {"path": ["str_startswith"], "source": ["isin"]}
        assert back.columns["source"].checks[0].statistics["allowed_values"] == ["web", "vendor"]
        assert "labelgate_class_index" in out.read_text()  # labelgate's own rules stay

    def test_exported_schema_judges_the_other_columns(self) -> None:
        import pandas as pd

        from labelgate.contract import Contract
        from labelgate.engines.pandera import export_schema

        built = export_schema(Contract.from_yaml(ROOT / "schemas" / "image_classification.yaml"))
        good = pd.DataFrame(
            {
                "label": [0, 1],
                "id": [1, 2],
                "label_name": ["cat", "dog"],
                "path": ["images/a.jpg", "images/b.jpg"],
                "source": ["web", "vendor"],
            }
        )
        built.validate(good)
        import pandera.errors

        with pytest.raises(pandera.errors.SchemaError):
            built.validate(good.assign(path=["tmp/a.jpg", "images/b.jpg"]))


@pytest.mark.slow  # two scans
def test_diff_header_names_its_base() -> None:
    args = ("diff", "clean.parquet", "oob_0_2_4.parquet", "--classes", "4")
    text = run_here(*args, cwd=SAMPLES).stdout
    assert text.splitlines()[0] == "labelgate diff oob_0_2_4.parquet against base clean.parquet"
    markdown = run_here(*args, "--format", "markdown", cwd=SAMPLES).stdout
    assert "Input: `oob_0_2_4.parquet` against base `clean.parquet`" in markdown


def report_with(fix: str, value: object, pixels: int | None = None) -> Report:
    example = Example(row=0, id="mask_0.png", batch=0, source="web", value=value, pixels=pixels)
    finding = Finding("LG038", "error", 1, "message", fix, "masks", examples=(example,))
    return Report(
        findings=(finding,),
        counts={"rows": 1, "usable": 0, "ignored": 0, "rejected": 1},
        input={"files": [{"path": "masks/rgb"}]},
        environment={"labelgate": "0.1.0", "python": "3.11.7", "pyarrow": "21.0.0"},
        contract={"num_classes": 3, "ignore_index": -100, "task": "segmentation"},
        batches={"count": 1, "size": 32, "drop_last": False, "shuffle_seed": None, "failing": []},
        sources=[],
        classes=[],
    )


class TestNoBreak:
    def test_a_number_keeps_its_unit_in_the_text_report(self) -> None:
        colours = ", ".join(f"#00{i:02x}00 (0, {i}, 0): 188 px" for i in range(12))
        text = render_text(report_with("fix", f"12 colours: {colours}"), width=100)
        assert "188 px" in text
        lines = text.splitlines()
        assert not any(re.search(r"\b188$", line) for line in lines)
        assert not any(line.strip().startswith("px") for line in lines)

    def test_flags_and_units_do_not_break_in_the_html_fix_column(self) -> None:
        page = render_html(report_with("declare --ignore-index 255 for the 188 px borders", 255))
        assert '<span class="nw">--ignore-index 255</span>' in page
        assert '<span class="nw">188 px</span>' in page
        assert ".nw{white-space:nowrap}" in page

    def test_human_formats_write_no_none_for_a_missing_id(self) -> None:
        null = Finding("LG003", "error", 1, "null", "fix", "rows", examples=(Example(row=3),))
        bare = dataclasses.replace(report_with("fix", None), findings=(null,))
        for fmt in ("text", "junit", "markdown", "html", "github"):
            assert "None" not in render(bare, fmt), fmt
