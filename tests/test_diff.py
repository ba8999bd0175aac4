"""labelgate diff and pin: what blocks a dataset pull request."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate import ClassMap, Contract
from labelgate.commands.diff import diff
from tests.conftest import SAMPLES
from tests.support.inproc import run_here

pytestmark = pytest.mark.slow  # the full tier only: each command run end to end

NAMES = ["cat", "dog", "bird", "fish"]


def write(
    path: Path, labels: list[int], *, ids: list[str] | None = None, sources: list[str] | None = None
) -> str:
    n = len(labels)
    columns: dict[str, list[object]] = {
        "id": list(ids or [f"r{i}" for i in range(n)]),
        "label": list(labels),
        "label_name": [NAMES[v] if 0 <= v < 4 else "other" for v in labels],
    }
    if sources is not None:
        columns["source"] = list(sources)
    pq.write_table(pa.table(columns), path)
    return str(path)


def codes(report: object) -> dict[str, str]:
    return {f.code: f.severity for f in report.findings}  # type: ignore[attr-defined]


@pytest.fixture
def base(tmp_path: Path) -> str:
    return write(tmp_path / "base.parquet", [0, 1, 2, 3] * 25)


class TestDiff:
    def test_unchanged_passes(self, base: str) -> None:
        report = diff([base], [base], Contract(num_classes=4), Contract(num_classes=4))
        assert not report.failed
        assert not {c for c in codes(report) if c >= "LG020"}
        assert report.diff is not None and report.diff["rows"]["changed"] == 0

    def test_reordered_map_blocks_unless_the_version_changes(self, base: str) -> None:
        before = Contract(num_classes=4, class_map=ClassMap.from_names(NAMES), version="1")
        after = Contract(
            num_classes=4,
            class_map=ClassMap.from_names(["dog", "cat", "bird", "fish"]),
            version="1",
        )
        report = diff([base], [base], before, after)
        assert codes(report)["LG020"] == "error" and report.failed
        lg020 = next(f for f in report.findings if f.code == "LG020")
        assert "reordered" in lg020.message and "'dog' 1 -> 0" in lg020.message
        bumped = diff([base], [base], before, after.replace(version="2"))
        assert codes(bumped)["LG020"] == "info"

    def test_renamed_class(self, base: str) -> None:
        before = Contract(num_classes=4, class_map=ClassMap.from_names(NAMES))
        after = Contract(
            num_classes=4, class_map=ClassMap.from_names(["cat", "dog", "parrot", "fish"])
        )
        lg020 = next(f for f in diff([base], [base], before, after).findings if f.code == "LG020")
        assert "renamed 2: 'bird' -> 'parrot'" in lg020.message

    def test_new_values_gone_classes_shares_and_relabels(self, base: str, tmp_path: Path) -> None:
        labels = [0, 1, 1, 3] * 25
        labels[5] = 7
        head = write(tmp_path / "head.parquet", labels)
        report = diff([base], [head], Contract(num_classes=4), Contract(num_classes=4))
        found = codes(report)
        assert found["LG021"] == "error"  # 7 is new
        assert found["LG022"] == "warning"  # class 2 is gone
        assert found["LG023"] == "warning"  # class 1's share doubled
        lg025 = next(f for f in report.findings if f.code == "LG025")
        assert lg025.count == 26  # every r..2 row became 1, and r5 became 7
        assert {"id": "r5", "base": 1, "head": 7} in lg025.details["changes"]

    def test_rows_added_and_removed_by_id(self, base: str, tmp_path: Path) -> None:
        kept = range(10, 110)  # r0..r9 removed, r100..r109 added, the rest as they were
        head = write(tmp_path / "head.parquet", [i % 4 for i in kept], ids=[f"r{i}" for i in kept])
        report = diff([base], [head], Contract(num_classes=4), Contract(num_classes=4))
        assert report.diff is not None
        assert report.diff["rows"] == {"compared": True, "added": 10, "removed": 10, "changed": 0}

    def test_cli_formats(self, base: str, tmp_path: Path) -> None:
        head = write(tmp_path / "head.parquet", [0, 1, 2, 9] * 25)
        out = tmp_path / "diff.json"
        result = run_here("diff", base, head, "-k", "4", "--format", "json", "-o", str(out))
        assert result.returncode == 1
        doc = json.loads(out.read_text())
        assert doc["diff"]["base"]["counts"]["rows"] == 100
        assert {"LG004", "LG021"} <= {f["code"] for f in doc["findings"]}
        html = run_here("diff", base, head, "-k", "4", "--format", "html")
        assert html.returncode == 1 and "<h1>labelgate diff" in html.stdout


class TestPin:
    def test_pin_then_a_changed_map_fails(self, tmp_path: Path) -> None:
        schema = tmp_path / "contract.yaml"
        schema.write_text(
            "# pets\nversion: '1'\nnum_classes: 4\nclass_names: [cat, dog, bird, fish]\n"
        )
        result = run_here("pin", str(schema))
        assert result.returncode == 0 and "pinned" in result.stdout
        text = schema.read_text()
        assert text.startswith("# pets\n") and "class_map_fingerprint: sha256:" in text
        assert run_here("pin", str(schema)).returncode == 0
        assert schema.read_text().count("class_map_fingerprint") == 1  # idempotent
        clean = str(SAMPLES / "clean.parquet")
        assert run_here("validate", clean, "--schema", str(schema)).returncode == 0
        schema.write_text(
            schema.read_text().replace("[cat, dog, bird, fish]", "[dog, cat, bird, fish]")
        )
        result = run_here("validate", clean, "--schema", str(schema), "--format", "json")
        assert result.returncode == 1
        lg018 = next(f for f in json.loads(result.stdout)["findings"] if f["code"] == "LG018")
        assert lg018["severity"] == "error" and "the class map changed" in lg018["message"]

    def test_pin_needs_a_class_map(self, tmp_path: Path) -> None:
        schema = tmp_path / "contract.yaml"
        schema.write_text("num_classes: 4\n")
        result = run_here("pin", str(schema))
        assert result.returncode == 2 and "no class_names to pin" in result.stderr

    def test_data_map_checked_against_the_pin(self, tmp_path: Path) -> None:
        fingerprint = ClassMap.from_names(NAMES).fingerprint()
        head = write(tmp_path / "h.parquet", [0, 1, 2, 3] * 5)
        ok = run_here("validate", head, "-k", "4", "--schema", _pinned(tmp_path, fingerprint))
        assert ok.returncode == 0, ok.stdout
        wrong = ClassMap.from_names(["dog", "cat", "bird", "fish"]).fingerprint()
        bad = run_here("validate", head, "-k", "4", "--schema", _pinned(tmp_path, wrong))
        assert bad.returncode == 1 and "LG018" in bad.stdout


def _pinned(tmp_path: Path, fingerprint: str) -> str:
    schema = tmp_path / "pinned.yaml"
    schema.write_text(f"num_classes: 4\nclass_map_fingerprint: {fingerprint}\n")
    return str(schema)
