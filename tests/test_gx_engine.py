"""The contract as a Great Expectations suite, and GX as an engine that agrees with the default one."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate import Contract
from tests.conftest import ROOT, SAMPLES, cli_here, run_cli_without
from tests.test_pandera_engine import (
    ENGINE_SAMPLES,
    agree_on_random_file,
    lg010_rows,
    named_rows,
    on_sample,
    random_labels,
    rows_by_code,
    same_verdict,
    write_named,
)

# Whether GX is installed, asked without importing it: collection stays free of its import
if importlib.util.find_spec("great_expectations") is None:
    if os.environ.get("CI"):
        raise ImportError("great_expectations")  # CI installs the gx extra (.ci/run)
    pytest.skip(
        "great-expectations is not installed (pip install '.[gx]')", allow_module_level=True
    )

from labelgate.engines.gx import suite_json, validate_with_gx

# engines: the full tier only; one worker runs the engine modules (pandas, pandera and GX imported once)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("engines")]


class TestSuite:
    def test_export_reads_back(self, tmp_path: Path) -> None:
        out = tmp_path / "suite.json"
        result = cli_here(
            "export", "gx", str(ROOT / "schemas" / "image_classification.yaml"), "-o", str(out)
        )
        assert result.returncode == 0, result.stderr
        doc = json.loads(out.read_text())
        kinds = [e["type"] for e in doc["expectations"]]
        assert kinds[:5] == [
            "expect_column_values_to_not_be_null",
            "expect_column_values_to_be_in_set",
            "expect_column_values_to_be_between",
            "expect_column_values_to_be_unique",
            "expect_column_pair_values_to_be_in_set",
        ]
        between = doc["expectations"][2]["kwargs"]
        assert between["max_value"] == 3 and "label != -100" in json.dumps(between["row_condition"])
        # then the contract's own pandera: section (path, source), as tests/test_wording.py holds
        assert {e["kwargs"]["column"] for e in doc["expectations"][5:]} == {"path", "source"}
        import great_expectations as gx

        again = gx.ExpectationSuite(**doc)
        assert len(again.expectations) == len(doc["expectations"])

    def test_suite_json_without_a_context(self) -> None:
        assert suite_json(Contract(num_classes=2, label_column="y"))["expectations"]


class TestAgreement:
    @pytest.mark.parametrize("command", ENGINE_SAMPLES, ids=lambda c: c[19:70])
    def test_samples(self, command: str) -> None:
        default, through = on_sample(command, validate_with_gx)
        assert rows_by_code(default) == rows_by_code(through)
        assert default.counts == through.counts
        assert same_verdict(default, through)
        (said,) = [n for n in through.notes if n.startswith("engine gx")]
        assert said.endswith("labelgate ran every other check on the same input")

    @settings(
        max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(labels=random_labels(40), ids=st.lists(st.integers(0, 15), min_size=40, max_size=40))
    def test_random_files(self, labels: list[int | None], ids: list[int], tmp_path: Path) -> None:
        agree_on_random_file(labels, ids, tmp_path, validate_with_gx)


class TestCommand:
    def test_engine_and_data_docs(self, tmp_path: Path) -> None:
        docs = tmp_path / "docs"
        result = cli_here(
            "validate",
            "oob_0_2_4.parquet",
            "-k",
            "4",
            "--engine",
            "gx",
            "--gx-docs",
            str(docs),
            cwd=SAMPLES,
        )
        assert result.returncode == 1 and "engine: gx" in result.stdout
        assert list(docs.rglob("index.html"))

    def test_docs_need_the_gx_engine(self) -> None:
        result = cli_here("validate", "oob_0_2_4.parquet", "-k", "4", "--gx-docs", "d", cwd=SAMPLES)
        assert result.returncode == 2 and "--gx-docs needs --engine gx" in result.stderr

    def test_without_gx_a_one_line_hint(self) -> None:
        args = ("validate", "oob_0_2_4.parquet", "-k", "4", "--engine", "gx")
        result = run_cli_without(("great_expectations",), *args, cwd=SAMPLES)
        assert result.returncode == 2
        assert (
            result.stderr.strip()
            == "labelgate: error: the gx engine and export need Great Expectations: pip install 'labelgate[gx]'"
        )


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=named_rows())
def test_label_name_agreement(case: tuple[list[int], list[str]], tmp_path: Path) -> None:
    path, contract, expected = write_named(tmp_path, *case)
    assert lg010_rows(validate_with_gx([path], contract, max_examples=0)) == expected
