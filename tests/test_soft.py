"""The soft task (LG015): each row K finite, non-negative probabilities summing to 1.

PyTorch checks none of this, so the model here is the rule itself, held to random rows.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labelgate import Contract, ContractError
from labelgate.run.validation import report_of
from tests.conftest import SAMPLES, cli_here

TOL = 1e-3


@st.composite
def soft_rows(draw: st.DrawFn) -> tuple[int, list[list[float] | None]]:
    k = draw(st.integers(min_value=1, max_value=5))
    good = st.lists(st.floats(0, 1), min_size=k, max_size=k).map(
        lambda r: [v / s for v in r] if (s := sum(r)) > 0 else [1.0] + [0.0] * (len(r) - 1)
    )
    anything = st.lists(
        st.one_of(st.floats(-1, 2), st.just(math.nan), st.just(math.inf)),
        min_size=0,
        max_size=k + 1,
    )
    rows = draw(st.lists(st.one_of(good, good, anything, st.none()), min_size=1, max_size=40))
    return k, rows


def rule(row: list[float] | None, k: int) -> str:
    if row is None:
        return "LG003"
    ok = (
        len(row) == k and all(math.isfinite(v) and v >= 0 for v in row) and abs(sum(row) - 1) <= TOL
    )
    return "ok" if ok else "LG015"


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=soft_rows())
def test_flags_exactly_the_rows_that_are_not_distributions(
    case: tuple[int, list[list[float] | None]], tmp_path: Path
) -> None:
    k, rows = case
    path = tmp_path / "soft.parquet"
    pq.write_table(pa.table({"label": pa.array(rows, pa.list_(pa.float64()))}), path)
    report = report_of([str(path)], Contract(num_classes=k, task="soft"), max_examples=0)
    expected = {
        code: [i for i, r in enumerate(rows) if rule(r, k) == code] for code in ("LG003", "LG015")
    }
    for code, want in expected.items():
        found = next((f for f in report.findings if f.code == code), None)
        assert ([e.row for e in found.examples] if found else []) == want
    assert report.counts["usable"] == sum(rule(r, k) == "ok" for r in rows)


class TestSoft:
    def test_detected_from_a_float_list_column(self) -> None:
        report = report_of([str(SAMPLES / "soft_labels.parquet")], Contract(num_classes=4))
        assert report.contract["task"] == "soft"
        (f,) = [f for f in report.findings if f.code == "LG015"]
        assert [e.row for e in f.examples] == [5, 17, 30]
        assert f.details["reasons"] == {"negative": 1, "length": 1, "sum": 1}
        assert report.classes == []  # a soft row is not one class

    def test_tolerance_from_the_contract(self, tmp_path: Path) -> None:
        path = tmp_path / "s.parquet"
        pq.write_table(pa.table({"label": pa.array([[0.5, 0.49]], pa.list_(pa.float64()))}), path)
        strict = report_of([str(path)], Contract(num_classes=2))
        loose = report_of([str(path)], Contract(num_classes=2, soft_tolerance=0.05))
        assert "LG015" in {f.code for f in strict.findings} and not loose.failed
        with pytest.raises(ContractError, match="soft_tolerance"):
            Contract(num_classes=2, soft_tolerance=1.5)

    @pytest.mark.slow
    def test_fix_quarantines_and_smoke_runs_the_rest(self, tmp_path: Path) -> None:
        fixed, rejected = tmp_path / "f.parquet", tmp_path / "q.parquet"
        result = cli_here(
            "fix",
            "soft_labels.parquet",
            "-k",
            "4",
            "--out",
            str(fixed),
            "--quarantine",
            str(rejected),
            cwd=SAMPLES,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert pq.read_table(rejected).column("labelgate_reason").to_pylist() == ["LG015"] * 3
        assert pq.read_table(fixed).num_rows == 33
        smoke = cli_here(
            "smoke",
            str(fixed),
            "-k",
            "4",
            "--device",
            "cpu",
            "--before",
            str(SAMPLES / "soft_labels.parquet"),
        )
        assert smoke.returncode == 0, smoke.stdout
        assert "target (32, 4) torch.float32" in smoke.stdout
