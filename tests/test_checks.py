"""Checks that the samples do not exercise: each asserted on a small file built for it."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate import Batching, Contract
from labelgate.core.report import Report
from labelgate.run.validation import report_of


def run(tmp: Path, columns: dict[str, list[object]], **contract: object) -> Report:
    path = tmp / "labels.parquet"
    pq.write_table(pa.table(columns), path)
    contract.setdefault("num_classes", 4)
    return report_of([str(path)], Contract(**contract))  # type: ignore[arg-type]


def by_code(report: Report) -> dict[str, list[object]]:
    out: dict[str, list[object]] = {}
    for f in report.findings:
        out.setdefault(f.code, []).append(f)
    return out


class TestEmptyAndUnusable:
    def test_empty_file(self, tmp_path: Path) -> None:
        path = tmp_path / "empty.parquet"
        pq.write_table(pa.table({"label": pa.array([], pa.int64())}), path)
        report = report_of([str(path)], Contract(num_classes=4))
        (f,) = report.findings
        assert (f.code, f.message) == ("LG008", "the input holds no rows")
        assert report.failed

    def test_nothing_usable(self, tmp_path: Path) -> None:
        report = run(tmp_path, {"label": [-100, -100, -100]})
        assert {"LG007", "LG008"} <= set(by_code(report))


class TestLastBatch:
    def test_single_row_last_batch_is_a_warning(self, tmp_path: Path) -> None:
        report = run(tmp_path, {"label": [0, 1, 2, 3, 0]}, batching=Batching(size=4))
        (f,) = by_code(report)["LG013"]
        assert f.severity == "warning" and "BatchNorm" in f.message  # type: ignore[attr-defined]

    def test_drop_last_drops_the_batch_and_its_failures(self, tmp_path: Path) -> None:
        report = run(
            tmp_path, {"label": [0, 1, 2, 3, 9]}, batching=Batching(size=4, drop_last=True)
        )
        codes = by_code(report)
        assert codes["LG013"][0].severity == "info"  # type: ignore[attr-defined]
        (lg004,) = codes["LG004"]
        assert lg004.batches == ()  # type: ignore[attr-defined]
        assert lg004.examples[0].batch is None  # type: ignore[attr-defined]
        assert report.batches["count"] == 1 and report.batches["dropped_rows"] == 1


class TestIds:
    def test_increasing_ids_need_no_second_pass(self, tmp_path: Path) -> None:
        report = run(tmp_path, {"id": [1, 5, 9, 12], "label": [0, 1, 2, 3]})
        assert "LG014" not in by_code(report)

    @pytest.mark.parametrize("ids", [[3, 1, 2, 1, 3], ["b", "a", "c", "a", "b"]])
    def test_duplicates_named_by_row_and_id(self, tmp_path: Path, ids: list[object]) -> None:
        report = run(tmp_path, {"id": ids, "label": [0, 1, 2, 3, 0]})
        (f,) = by_code(report)["LG014"]
        assert f.count == 2 and f.severity == "warning"  # type: ignore[attr-defined]
        assert [(e.row, e.id) for e in f.examples] == [(3, ids[3]), (4, ids[4])]  # type: ignore[attr-defined]


class TestContractDriven:
    def test_expected_rows(self, tmp_path: Path) -> None:
        report = run(tmp_path, {"label": [0, 1, 2]}, expected_rows=5)
        (f,) = by_code(report)["LG017"]
        assert f.count == 2 and "truncated" in f.message  # type: ignore[attr-defined]

    def test_severity_override_and_off(self, tmp_path: Path) -> None:
        severity = MappingProxyType({"LG004": "warning", "LG013": "off"})
        report = run(tmp_path, {"label": [0, 1, 2, 3, 4]}, severity=severity)
        codes = by_code(report)
        assert codes["LG004"][0].severity == "warning"  # type: ignore[attr-defined]
        assert "LG013" not in codes
        assert not report.failed
        assert Report(**{**_fields(report), "strict": True}).failed

    def test_weights_zero_batch(self, tmp_path: Path) -> None:
        report = run(
            tmp_path,
            {"label": [0, 0, 1, 2]},
            batching=Batching(size=2),
            class_weights=(0.0, 1.0, 1.0, 1.0),
        )
        (f,) = by_code(report)["LG007"]
        assert f.batches == (0,) and "weight 0" in f.message  # type: ignore[attr-defined]


class TestUsage:
    def test_rare_class_is_info(self, tmp_path: Path) -> None:
        report = run(tmp_path, {"label": [0] * 100 + [1] * 100 + [2] * 100 + [3]})
        (f,) = by_code(report)["LG012"]
        assert f.severity == "info" and f.details["classes"] == [3]  # type: ignore[attr-defined]


def _fields(report: Report) -> dict[str, object]:
    return {name: getattr(report, name) for name in Report.__dataclass_fields__}
