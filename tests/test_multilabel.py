"""Multi-hot targets (task: multilabel) against BCEWithLogitsLoss: labelgate flags exactly the rows
that are not K finite values in [0, 1], the rows for which some logit gives a negative loss."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labelgate import Contract
from labelgate.validation import run

from .conftest import run_cli

torch = pytest.importorskip("torch")

K = 3
value = st.sampled_from([0.0, 1.0, 0.0, 1.0, 0.25, -1.0, 2.0, 1.0000001, math.nan, math.inf, None])
row = st.one_of(
    st.lists(value, min_size=K, max_size=K),
    st.lists(value, min_size=0, max_size=K + 1),
)


def bce_can_go_negative(target: list[float]) -> bool:
    """Whether BCEWithLogitsLoss on this target is negative or not finite for some logit."""
    t = torch.tensor(target, dtype=torch.float64)
    for x in torch.linspace(-30, 30, 61, dtype=torch.float64):
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            x.expand(len(target)), t, reduction="none"
        )
        if not torch.isfinite(loss).all() or (loss < 0).any():
            return True
    return False


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=40))
def test_flagged_rows_are_exactly_the_rows_bce_misreads(rows: list[list[Any]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.parquet"
        pq.write_table(pa.table({"labels": pa.array(rows, pa.list_(pa.float64()))}), path)
        contract = Contract(num_classes=K, task="multilabel", label_column="labels")
        report = run([str(path)], contract, max_examples=0).report
    flagged = {e.row for f in report.findings if f.code == "LG034" for e in f.examples}
    for i, target in enumerate(rows):
        if len(target) != K:
            assert i in flagged  # BCE raises on a shape mismatch in a batch
            continue
        blank = any(v is None for v in target)
        misread = blank or bce_can_go_negative([float(v) for v in target])  # type: ignore[arg-type]
        assert (i in flagged) == misread, (i, target)


def test_jsonl_with_uncertain_and_blank_labels(tmp_path: Path) -> None:
    rows = [[1, 0, 0], [0, -1, 1], [0, 0, 0], [1, None, 0], [0, 0, 1]] * 4
    path = tmp_path / "chexpert.jsonl"
    path.write_text("".join(json.dumps({"id": i, "labels": r}) + "\n" for i, r in enumerate(rows)))
    result = run_cli(
        "validate", str(path), "--classes", "3", "--task", "multilabel", "--format", "json"
    )
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    (lg034,) = [f for f in doc["findings"] if f["code"] == "LG034"]
    assert lg034["count"] == 8 and [e["id"] for e in lg034["examples"][:2]] == [1, 3]
    assert lg034["details"]["classes"] == {"1": 8}
    assert "below 0" in lg034["message"] and "blank" in lg034["message"]
    (lg035,) = [f for f in doc["findings"] if f["code"] == "LG035"]
    assert lg035["count"] == 4
    assert [c["count"] for c in doc["classes"]] == [4, 0, 4]  # positives of the usable rows
    assert any(f["code"] == "LG012" for f in doc["findings"])  # class 1 never positive


def test_multilabel_needs_a_list_column(tmp_path: Path) -> None:
    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"label": [0, 1]}), path)
    result = run_cli("validate", str(path), "--classes", "2", "--task", "multilabel")
    assert result.returncode == 2 and "multilabel" in result.stderr
