"""The check catalog is the one list of codes: everything that names a check agrees with it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from labelgate import Contract
from labelgate.checks import all_checks
from labelgate.checks.formats import FORMAT_CODES
from labelgate.commands.diff import DIFF_CODES, diff
from labelgate.contract.contract import CHECK_CODES
from labelgate.core.annotations import AnnotationFacts
from labelgate.core.catalog import (
    CATALOG,
    CODES,
    codes_in,
    codes_module,
    codes_raised_by,
    engine_codes,
    entry,
)
from labelgate.core.codes import READER_CODES
from labelgate.core.findings import apply_severity, finding
from labelgate.core.report import Finding
from labelgate.run.validation import report_of
from tests.conftest import ROOT


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\| LG\d{3} \|", line)]


def expected_rows() -> list[str]:
    return [f"| {e.code} | {e.finds} | {e.shown_severity or e.severity} |" for e in CATALOG]


class TestCatalog:
    def test_codes_are_consecutive_and_unique(self) -> None:
        assert list(CODES) == [f"LG{n:03d}" for n in range(1, len(CODES) + 1)]

    def test_every_validation_code_has_one_registered_check(self) -> None:
        registered = all_checks()
        wanted = set(CODES) - set(codes_in("diff"))
        assert set(registered) == wanted
        for code, spec in registered.items():
            assert (spec.title, spec.severity) == (entry(code).title, entry(code).severity)

    def test_contract_accepts_exactly_the_catalog(self) -> None:
        assert tuple(CHECK_CODES) == CODES

    def test_json_schema_lists_exactly_the_catalog(self) -> None:
        path = ROOT / "schemas" / "contract.schema.json"
        schema = json.loads(path.read_text())
        names = schema["properties"]["severity"]["propertyNames"]
        if os.environ.get("LABELGATE_REGOLD"):
            names["enum"] = list(CODES)
            path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
        assert names == {"enum": list(CODES)}

    def test_the_code_type_is_generated_from_the_catalog(self) -> None:
        """labelgate/core/codes.py (the Code type mypy checks every literal code against)."""
        path = ROOT / "src" / "labelgate" / "core" / "codes.py"
        if os.environ.get("LABELGATE_REGOLD"):
            path.write_text(codes_module())
        assert path.read_text() == codes_module()
        assert tuple(READER_CODES) and set(READER_CODES) == set(codes_raised_by("reader"))
        assert codes_raised_by("reader") == FORMAT_CODES

    def test_a_reader_reporting_a_code_it_does_not_own_is_an_error(self) -> None:
        facts = AnnotationFacts(format="x", why="test")
        with pytest.raises(ValueError, match="not a reader's code"):
            facts.hit("LG004", message="m", fix="f")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="not a reader's code"):
            facts.hit("LG999", message="m", fix="f")  # type: ignore[arg-type]
        facts.hit("LG027", message="m", fix="f")
        assert facts.hits["LG027"].count == 1

    def test_finding_takes_its_severity_from_the_catalog(self) -> None:
        f = finding("LG014", count=2, message="m")
        assert (f.severity, f.count) == ("warning", 2)
        assert finding("LG011", count=1, message="m", severity="warning").severity == "warning"
        with pytest.raises(ValueError, match="not a check code"):
            finding("LG999", count=1, message="m")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="severity"):
            finding("LG004", count=1, message="m", severity="fatal")

    def test_engine_translators_name_only_catalog_codes(self) -> None:
        from labelgate.engines import Translator

        t = Translator("x", lambda value, k, ignore: "LG004")
        t.register("LG003", "not_null")
        t.register("LG002", "integral*")
        assert t.code("not_null", None, 4, -100) == "LG003"
        assert t.code("integral_label", 1.5, 4, -100) == "LG002"
        assert t.code("other", 9, 4, -100) == "LG004"
        with pytest.raises(ValueError, match="not a check code"):
            t.register("LG999", "y")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="twice"):
            t.register("LG014", "not_null")

    @pytest.mark.parametrize("doc", ["README.md", "docs/checks.md"])
    def test_tables_follow_the_catalog(self, doc: str) -> None:
        assert table_rows((ROOT / doc).read_text()) == expected_rows()

    def test_diff_codes_and_engine_lists_come_from_the_catalog(self) -> None:
        assert list(DIFF_CODES) == [f"LG{n:03d}" for n in range(20, 26)]
        assert set(engine_codes("gx")) == {"LG002", "LG003", "LG004", "LG005", "LG010", "LG014"}
        assert set(engine_codes("pandera")) == set(engine_codes("gx")) | {"LG019"}

    def test_unknown_code_in_a_contract_is_refused(self) -> None:
        from labelgate.errors import ContractError

        with pytest.raises(ContractError, match="LG099"):
            Contract(num_classes=4, severity={"LG099": "off"})


class TestSeverity:
    def test_apply_severity_drops_off_and_resorts(self) -> None:
        found = [Finding("LG012", "warning", 1, "m"), Finding("LG004", "error", 1, "m")]
        out = apply_severity(found, {"LG004": "off", "LG012": "error"})
        assert [(f.code, f.severity) for f in out] == [("LG012", "error")]

    @pytest.mark.parametrize("code", [f"LG{n:03d}" for n in range(20, 26)])
    def test_diff_honours_overrides_for_each_diff_code(self, tmp_path: Path, code: str) -> None:
        base, head = tmp_path / "base.parquet", tmp_path / "head.parquet"
        # Every diff code fires: a class map change (LG020), a new value (LG021), a class gone
        # (LG022), a share shift (LG023), rows added (LG024) and a relabelled id (LG025).
        pq.write_table(
            pa.table(
                {
                    "id": list(range(40)),
                    "label": [0] * 10 + [1] * 10 + [2] * 10 + [3] * 10,
                    "label_name": ["a"] * 10 + ["b"] * 10 + ["c"] * 10 + ["d"] * 10,
                }
            ),
            base,
        )
        pq.write_table(
            pa.table(
                {
                    "id": list(range(45)),
                    "label": [1] + [0] * 29 + [1] * 10 + [4] * 5,
                    "label_name": ["a"] + ["x"] * 29 + ["b"] * 10 + ["e"] * 5,
                }
            ),
            head,
        )
        plain = Contract(num_classes=5)
        report = diff([str(base)], [str(head)], plain, plain)
        assert code in {f.code for f in report.findings}
        quiet = Contract(num_classes=5, severity={code: "off"})
        report = diff([str(base)], [str(head)], quiet, quiet)
        assert code not in {f.code for f in report.findings}
        raised = Contract(num_classes=5, severity={code: "error"})
        report = diff([str(base)], [str(head)], raised, raised)
        assert {f.severity for f in report.findings if f.code == code} == {"error"}


class TestFloatLabels:
    def test_whole_floats_warn_and_fractions_are_lg002(self, tmp_path: Path) -> None:
        path = tmp_path / "f.parquet"
        pq.write_table(
            pa.table({"label": pa.array([0.0, 3.0, 1.0, 2.5, None], pa.float64())}), path
        )
        report = report_of([str(path)], Contract(num_classes=4))
        by = {f.code: f for f in report.findings}
        assert by["LG026"].severity == "warning"
        assert by["LG026"].count == 3
        assert "expected target dtype to be Long or Byte" in by["LG026"].message
        assert by["LG002"].count == 1

    def test_int64_labels_do_not_warn(self, tmp_path: Path) -> None:
        path = tmp_path / "i.parquet"
        pq.write_table(pa.table({"label": pa.array([0, 3, 1], pa.int64())}), path)
        assert "LG026" not in {
            f.code for f in report_of([str(path)], Contract(num_classes=4)).findings
        }

    @pytest.mark.parametrize("kind", ["parquet", "jsonl"])
    def test_digit_strings_are_judged_as_whole_floats(self, tmp_path: Path, kind: str) -> None:
        labels = ["0", "3", "1", "cat", None, "7"]
        path = tmp_path / f"s.{kind}"
        if kind == "parquet":
            pq.write_table(pa.table({"label": pa.array(labels, pa.string())}), path)
        else:
            path.write_text("".join(json.dumps({"label": v}) + "\n" for v in labels))
        report = report_of([str(path)], Contract(num_classes=4))
        by = {f.code: f for f in report.findings}
        assert by["LG026"].severity == "warning"
        assert by["LG026"].count == 4  # 0, 3, 1 and 7 (which is LG004 as well)
        assert "stored as text (string)" in by["LG026"].message
        assert by["LG002"].count == 1 and by["LG004"].count == 1
        assert not any("stored as text" in n for n in report.notes)  # the finding says it

    def test_digit_strings_in_csv_stay_integers(self, tmp_path: Path) -> None:
        path = tmp_path / "s.csv"
        path.write_text('label\n"0"\n"3"\n1\n2\n')
        report = report_of([str(path)], Contract(num_classes=4))
        assert report.counts["usable"] == 4
        assert {f.code for f in report.findings} <= {"LG013"}

    def test_strings_cannot_become_a_target(self) -> None:
        torch = pytest.importorskip("torch")
        with pytest.raises(ValueError, match="too many dimensions 'str'"):
            torch.tensor(["0", "3"])

    def test_the_wording_is_what_torch_does(self) -> None:
        torch = pytest.importorskip("torch")
        logits = torch.zeros(3, 4)
        with pytest.raises(RuntimeError, match="expected target dtype to be Long or Byte"):
            torch.nn.functional.cross_entropy(logits, torch.tensor([0.0, 3.0, 1.0]))
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([0.0, 3.0, 1.0]).long())
        assert torch.isfinite(loss)
