"""Batch lists in the report: the JSON document lists the first BATCHES_LISTED of each, with its
count, and every batch with ``--all-batches``; the report value and the commands keep them all."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import jsonschema
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import labelgate
from labelgate.core.report import BATCHES_LISTED, Report, shown_batches
from labelgate.render import FORMATS, render
from tests.conftest import ROOT, cli_here

SIZE = 32  # the default batch size
SCHEMA = json.loads((ROOT / "schemas" / "report.schema.json").read_text())


def one_in_ten(path: Path, rows: int) -> list[int]:
    """Labels of K=4 where every tenth batch fails: an out-of-range label in batches 0, 20,
    40..., every target ignored in batches 10, 30, 50...; returns the failing batches, found
    from the labels written."""
    labels = (np.arange(rows) % 4).astype(np.int64)
    per_batch = labels.reshape(-1, SIZE)
    per_batch[0::20, 0] = 7
    per_batch[10::20] = -100
    pq.write_table(pa.table({"label": labels}), path)
    bad = (per_batch >= 4).any(axis=1) | (per_batch == -100).all(axis=1)
    return [int(b) for b in np.flatnonzero(bad)]


@pytest.fixture(scope="module")
def million(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, list[int]]:
    path = tmp_path_factory.mktemp("million") / "labels.parquet"
    failing = one_in_ten(path, 1_000_000)
    return labelgate.validate(str(path), classes=4), failing


def by_code(doc: dict[str, object]) -> dict[str, dict[str, object]]:
    findings = doc["findings"]
    assert isinstance(findings, list)
    return {f["code"]: f for f in findings}


class TestMillionRows:
    """1,000,000 rows, 31,250 batches of 32, one in ten failing (3,125)."""

    def test_json_stays_small_and_says_what_it_leaves_out(
        self, million: tuple[Report, list[int]]
    ) -> None:
        report, failing = million
        text = render(report, "json")
        assert len(text.encode()) < 1_000_000
        doc = json.loads(text)
        b = doc["batches"]
        assert b["count"] == 31_250
        assert len(failing) == 3_125 and b["failing_count"] == 3_125
        assert b["with_rejected"] == 1_563 and b["no_usable"] == 1_562
        assert b["failing"] == failing[:BATCHES_LISTED] == list(range(0, 10_000, 10))
        jsonschema.validate(doc, SCHEMA)
        found = by_code(doc)
        assert found["LG004"]["batch_count"] == found["LG004"]["count"] == 1_563
        assert found["LG004"]["batches"] == list(range(0, 20_000, 20))
        assert found["LG007"]["batch_count"] == found["LG007"]["count"] == 1_562
        assert found["LG007"]["batches"] == list(range(10, 20_000, 20))

    def test_all_batches_lists_the_uncapped_list(self, million: tuple[Report, list[int]]) -> None:
        report, failing = million
        doc = json.loads(render(dataclasses.replace(report, all_batches=True), "json"))
        jsonschema.validate(doc, SCHEMA)
        assert doc["batches"]["failing"] == failing == report.batches["failing"]
        assert doc["batches"]["failing_count"] == len(failing)
        found = by_code(doc)
        assert found["LG004"]["batches"] == failing[0::2] == list(report.findings[0].batches)
        assert found["LG007"]["batches"] == failing[1::2]
        assert all(f["batch_count"] == len(f["batches"]) for f in found.values())

    def test_the_report_value_keeps_every_batch(self, million: tuple[Report, list[int]]) -> None:
        report, failing = million
        assert report.batches["failing"] == failing  # smoke --before and repro act on these
        assert {f.code: len(f.batches) for f in report.findings} == {"LG004": 1563, "LG007": 1562}

    def test_markdown_says_how_many_more(self, million: tuple[Report, list[int]]) -> None:
        text = render(million[0], "markdown")
        assert "failing batches: #0, #10, " in text and "#190 (and 3105 more)" in text

    def test_html_draws_every_failing_batch(self, million: tuple[Report, list[int]]) -> None:
        page = render(million[0], "html")
        assert "3125 batches failing" in page
        # bins of 157 batches: one far past the JSON's first 1000 failing batches, drawn whole
        assert "batches 30929-31085: 16 failing" in page


class TestOption:
    @pytest.fixture
    def labels(self, tmp_path: Path) -> tuple[Path, list[int]]:
        path = tmp_path / "labels.parquet"
        return path, one_in_ten(path, SIZE * 20_000)  # 2,000 failing batches

    def test_validate_keyword(self, labels: tuple[Path, list[int]]) -> None:
        path, failing = labels
        trimmed = labelgate.validate(str(path), classes=4).to_dict()
        every = labelgate.validate(str(path), classes=4, all_batches=True)
        assert trimmed["batches"]["failing"] == failing[:BATCHES_LISTED]
        assert every.all_batches and every.to_dict()["batches"]["failing"] == failing
        assert json.loads(every.to_json())["batches"]["failing_count"] == 2_000

    @pytest.mark.parametrize("flag", [(), ("--all-batches",)])
    def test_cli_flag(self, labels: tuple[Path, list[int]], flag: tuple[str, ...]) -> None:
        path, failing = labels
        done = cli_here("validate", str(path), "--classes", "4", "--format", "json", *flag)
        assert done.returncode == 1, done.stderr
        b = json.loads(done.stdout)["batches"]
        assert b["failing"] == (failing if flag else failing[:BATCHES_LISTED])
        assert b["failing_count"] == 2_000

    def test_diff_takes_the_flag(self, labels: tuple[Path, list[int]]) -> None:
        path, failing = labels
        args = ("diff", str(path), str(path), "--classes", "4", "--format", "json")
        doc = json.loads(cli_here(*args, "--all-batches").stdout)
        assert doc["batches"]["failing"] == failing

    def test_every_format_renders_a_trimmed_report(self, labels: tuple[Path, list[int]]) -> None:
        report = labelgate.validate(str(labels[0]), classes=4)
        for fmt in FORMATS:
            assert render(report, fmt)


class TestShown:
    def test_says_how_many_more(self) -> None:
        assert shown_batches(list(range(25)), mark="#").endswith("#19 (and 5 more)")
        assert shown_batches([3, 4], total=10) == "3, 4 (and 8 more)"
        assert shown_batches([1, 2]) == "1, 2" and shown_batches([]) == ""

    def test_a_report_built_by_hand_counts_its_list(self) -> None:
        report = Report(
            findings=(),
            counts={},
            input={},
            environment={},
            contract={},
            batches={"count": 5000, "size": 32, "failing": list(range(1500))},
            sources=[],
            classes=[],
        )
        b = report.to_dict()["batches"]
        assert b["failing_count"] == 1500 and len(b["failing"]) == BATCHES_LISTED


class TestSmokePrediction:
    def test_lists_the_first_and_counts_them_all(self) -> None:
        from labelgate.commands.smoke import SmokeRun
        from labelgate.render.smoke import SmokeVerdict, render_smoke

        predicted = list(range(0, 30_000, 10))
        before = SmokeRun("raw.parquet", expected=3_000, incomplete="stopped after 1 failed batch")
        verdict = SmokeVerdict(SmokeRun("fixed.parquet", expected=3_000), before, predicted)
        doc = json.loads(render_smoke(verdict, "json"))["before"]
        assert doc["predicted_failures"] == predicted[:BATCHES_LISTED]
        assert doc["predicted_count"] == 3_000
        assert "batches: 0, 10, 20, " in render_smoke(verdict, "text")
        assert "190 (and 2980 more); the raw file" in render_smoke(verdict, "text")
